package rows

// InspectSampleQuery selects Inspect samples (one row per sample and
// epoch) for the viewer's list: each field set narrows it ("" and 0 take
// any), Metric keeps the samples that have a score of that metric
// (inspect.SCORER[.KEY]). Limit and Offset page it.
type InspectSampleQuery struct {
	Task, Config, Metric, SampleID string
	Epoch                          int
	Limit, Offset                  int
}

// InspectSampleID names one sample at one epoch of one evaluation (its
// key in the judge's tables is InspectSampleKey).
type InspectSampleID struct {
	EvalID, SampleID string
	Epoch            int
}

// InspectSampleSummary is a sample at one epoch as the viewer's list
// shows it. Tokens are -1 and times NaN where the log gives none.
type InspectSampleSummary struct {
	InspectSampleID
	Task, Config, Model                      string
	Scores                                   []InspectScoreView
	InputTokens, OutputTokens, TotalTokens   int64
	TotalTime, WorkingTime                   float64
	Messages, ModelEvents, ToolEvents, Tools int // Tools: tool errors
	Error, Limit                             string
}

// InspectSampleList is a page of samples and how many the query selects.
type InspectSampleList struct {
	Total   int
	Samples []InspectSampleSummary
}

// InspectFacets are the values a sample list can be narrowed by.
type InspectFacets struct {
	Tasks, Configs, Metrics []string
	Epochs                  []int
}

// InspectScoreView is one scorer's score of a sample as a page shows it:
// its number (Valid false where value_to_float gives none), the value as
// written, the answer and the explanation.
type InspectScoreView struct {
	Scorer, Key, Metric      string
	Value                    float64
	Valid                    bool
	Raw, Answer, Explanation string
}

// InspectUsage is one model's tokens in a sample (-1: not given).
type InspectUsage struct {
	Model                            string
	Input, Output, Total             int64
	CacheRead, CacheWrite, Reasoning int64
}

// InspectToolCall is a tool call an assistant message asks for.
type InspectToolCall struct {
	ID, Function, Arguments string // Arguments: JSON
}

// InspectMessage is a chat message with its attachments resolved: its
// text (the content's text parts joined; other parts named in brackets),
// the tool calls it asks for, and for a tool's answer the call it
// answers and the tool's error. Pool is its place in the message pool
// (-1: not from the pool).
type InspectMessage struct {
	Role, Text                  string
	ToolCalls                   []InspectToolCall
	ToolCallID, Function, Error string
	Pool                        int
}

// InspectEventView is an event of a sample's transcript with its pool
// references resolved. Type is the event's own ("model", "tool",
// "score", …); the fields each type fills are grouped below; JSON holds
// the event as written (attachments resolved) for every other type.
type InspectEventView struct {
	Index     int
	Type      string
	Timestamp string
	Span      string // span_begin: the span's type and name
	// model: the model, its input (expanded from the message pool: Input,
	// with InputRefs naming the pool's ranges), its output, its tokens
	// (-1: not given) and seconds (NaN: not given), the provider call
	// (request and response JSON, call_refs resolved from the call pool).
	Model                                  string
	Input                                  []InspectMessage
	InputRefs                              string
	Output                                 *InspectMessage
	InputTokens, OutputTokens, TotalTokens int64
	Seconds                                float64
	Request, Response                      string
	// tool: the call and its result or error.
	Function, Arguments, Result, ToolError string
	// score: the score and its explanation.
	Score, Answer, Explanation string
	Error                      string // a model's or an error event's
	JSON                       string
}

// InspectSamplePage is what the viewer shows of one sample at one
// epoch: its summary, the evaluation it belongs to, its input, target
// and metadata (JSON), each model's tokens, its scores with their
// explanations, its final conversation (Conversation), its events, the
// message and call pools, and how much of it was cut to the caps
// (Capped names what was).
type InspectSamplePage struct {
	InspectSampleSummary
	Harness, Effort, Status, File string
	Input, Target, Metadata       string
	Usage                         []InspectUsage
	Conversation                  []InspectMessage
	Events                        []InspectEventView
	Pool                          []InspectMessage
	Calls                         []string // the call pool's entries, JSON
	Attachments                   int
	Capped                        []string
}
