package rows

import "time"

// RunPage is what the viewer shows of one run besides its values: every
// task (active or not) with its logged and rescored depths and rule
// components, every judgment with its reasons and the records it cites,
// the scenario's TA window and the trajectory. Tasks and TA are the run's
// active tasks and TA labels as the metrics read them (LoadRunTasks).
type RunPage struct {
	Tasks     []TaskRow
	TA        []TAJudgment
	Custom    []CustomJudgment // run-level judgments of user rubrics
	TaskViews []TaskView
	Judgments []JudgmentView
	Events    []EventRow
	Capped    bool          // Events stops at the bound (MaxRunEvents)
	Window    [2]*time.Time // the scenario's TA window (nil: none)
}

// TaskView is one task of a run as logged and as rescored.
type TaskView struct {
	Task                           string
	Active                         bool
	Weight                         float64
	ActivatedAt                    *time.Time
	FinalSeq                       int64 // 0: not logged
	LoggedExpected, LoggedChosen   string
	Rescored                       bool // gymlens score derived this task's depths and rules
	DerivedExpected, DerivedChosen string
	Prefer                         string      // what the metrics use: logged or derived
	Logged, Derived                [3]*float64 // rule components: evidence, outputs, constraints
}

// Citation is a record a judge cites: its sequence number and the words
// quoted.
type Citation struct {
	Seq   int64  `json:"seq"`
	Quote string `json:"quote"`
}

// JudgmentView is one judgment of a run or task with its scores by name,
// its reasons and citations; Latest says whether the metrics use it (the
// newest prompt version of its judge, metric and task).
type JudgmentView struct {
	Task, Metric, Judge, Prompt string
	Scores                      []NamedScore
	Reasons                     string
	Evidence                    []Citation
	Latest                      bool
}

// NamedScore is one score of a judgment.
type NamedScore struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
}
