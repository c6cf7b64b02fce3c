package rows

// InspectEval is an Inspect evaluation as the reading commands need it.
type InspectEval struct {
	EvalID, Task, ConfigID, Model, Harness, Effort string
	Status, Incomplete                             string
	Epochs                                         int
	Reducers                                       []string
	HasResults                                     bool
	File                                           string
}

// InspectScore is one scorer's value for one sample at one epoch; Valid
// is false where value_to_float gives no number (never read as 0).
type InspectScore struct {
	EvalID, SampleID string
	Epoch            int
	Scorer, Key      string
	Metric           string // inspect.SCORER[.KEY]
	Value            float64
	Valid            bool
}

// InspectResult is one metric a log's results store.
type InspectResult struct {
	EvalID, Score, Scorer, Reducer, Metric string
	Value                                  float64
	Params                                 string // JSON
}

// InspectReduction is one epoch-reduced value reductions.json stores.
type InspectReduction struct {
	EvalID, Scorer, Reducer, SampleID, Key string
	Value                                  float64
	Valid                                  bool
}

// InspectData is what the warehouse holds of Inspect evaluations, for
// reconciling and measuring them.
type InspectData struct {
	Evals      []InspectEval
	Scores     []InspectScore
	Results    []InspectResult
	Reductions []InspectReduction
}

// InspectSampleMeta is the values of chosen fields of one sample's
// metadata, as text (Absent where the sample's metadata lacks the field
// or holds null there).
type InspectSampleMeta struct {
	EvalID, SampleID string
	Values           []string
}

// Absent stands for a metadata field a sample does not have.
const Absent = "(absent)"

// InspectCost is what one sample cost at one epoch: its tokens summed
// over its models, and its total and working time in seconds; Has* are
// false where the log gives none.
type InspectCost struct {
	EvalID, SampleID                        string
	Epoch                                   int
	TotalTokens, InputTokens, OutputTokens  float64
	TotalTime, WorkingTime                  float64
	HasTokens, HasTotalTime, HasWorkingTime bool
}
