// Package inspect reads the logs of Inspect AI (UKGovernmentBEIS/inspect_ai):
// the .eval archive (header.json, summaries.json, reductions.json, a
// sample per entry samples/{id}_epoch_{e}.json or chunked under
// samples/{id}_epoch_{e}/, a _journal/ while the log is being written)
// and the older single-file .json log. Samples are read one at a time and
// a sample's messages and events one at a time, so that memory holds one
// item whatever the log's size. docs/inspect.md says what is read and how
// it maps onto the warehouse.
package inspect

import (
	"fmt"
	"strings"
)

// NewestVersion is the newest log version this reader knows. Inspect's
// LOG_SCHEMA_VERSION was 3 from March 10 to 18, 2026 (samples with
// message_pool and call_pool), and is 2 again at InspectCommit (the pools
// in events_data). A log of a newer version is refused.
const NewestVersion = 3

// InspectCommit is the commit of UKGovernmentBEIS/inspect_ai whose
// src/inspect_ai/log/ this reader follows.
const InspectCommit = "499e6152e7b8fc8cbd8ac5283536572aa6e4ab17"

// Error is a problem with a log: the file, the zip entry (for a .eval),
// the field within the entry's JSON and what is wrong.
type Error struct {
	File, Entry, Field string
	Offset             int64 // byte offset in the entry's (uncompressed) JSON; -1 when unknown
	Msg                string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Entry != "" {
		fmt.Fprintf(&b, ": entry %s", e.Entry)
	}
	if e.Field != "" {
		fmt.Fprintf(&b, ": field %s", e.Field)
	}
	if e.Offset > 0 {
		fmt.Fprintf(&b, " (byte %d)", e.Offset)
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	return b.String()
}

// Eval is one evaluation's log: what its header says.
type Eval struct {
	File    string
	Format  string // eval or json
	Version int
	EvalID  string // eval.eval_id, else eval.run_id + task id
	RunID   string
	Task    string
	TaskID  string
	// TaskVersion as written (a number or a string).
	TaskVersion string
	Created     string
	Model       string
	ModelArgs   []byte // JSON object
	// Harness is the solver or agent (eval.solver) or the plan's steps
	// joined by "+"; HarnessArgs its arguments (JSON).
	Harness     string
	HarnessArgs []byte
	// Effort is reasoning_effort from the model args or the generate
	// config; "" when neither gives it.
	Effort string
	Status string // started, success, cancelled, error
	Error  string // the eval's error message, if any
	// Incomplete says why the log is not finished (no header.json: still
	// being written, or cut short), or "".
	Incomplete       string
	TotalSamples     *int
	CompletedSamples *int
	Epochs           int
	Reducers         []string
	StartedAt        string
	CompletedAt      string
	// Results are the metrics the log stores (nil Results: no results
	// section, which is not a zero).
	Results    []StoredMetric
	HasResults bool
	Reductions []Reduction
	// Spec is the header's eval section, Plan and Stats its plan and stats
	// (JSON, NaN and infinities as strings).
	Spec, Plan, Stats []byte
	// Duplicates counts sample entries written twice (the last is kept).
	Duplicates int
}

// ConfigKey is the configuration's parts: model, harness, effort.
func (e *Eval) ConfigKey() (model, harness, effort string) {
	return e.Model, e.Harness, e.Effort
}

// StoredMetric is one metric a log's results give for one score.
type StoredMetric struct {
	Score   string // EvalScore.name (the scorer, or scorer/key for dict values)
	Scorer  string // EvalScore.scorer
	Reducer string
	Metric  string // accuracy, mean, stderr, …
	Value   float64
	Params  []byte // JSON
	// Scored and Unscored are the score's scored_samples and
	// unscored_samples (nil: not written).
	Scored, Unscored *int
}

// Reduction is one sample's epoch-reduced value of one scorer, as
// reductions.json stores it.
type Reduction struct {
	Scorer, Reducer string
	SampleID        string
	Key             string // for a dict value, its key
	Value           float64
	Valid           bool // Value is a number (value_to_float gave one)
	Raw             []byte
}

// Sample is one sample at one epoch.
type Sample struct {
	ID    string
	Epoch int
	UUID  string
	// Entry is where it was read: a zip entry, a chunked sample's folder,
	// summaries.json, or samples[i] of a .json log.
	Entry  string
	Layout string // entry, chunked, summary, json
	Scores []Score
	Usage  []Usage
	// TotalTime and WorkingTime in seconds (nil: not written).
	TotalTime, WorkingTime *float64
	StartedAt, CompletedAt string
	Error                  string
	Retries                int
	LimitType              string
	Limit                  *float64
	MessageCount           int // messages in the final conversation (message_count for a summary)
	TurnCount              *int
	Events                 int
	ModelEvents            int
	ToolEvents             int
	ToolErrors             int
	Attachments            int
	PoolMessages           int
	PoolCalls              int
	Metadata               []byte // JSON object
	Input, Target          []byte // JSON
}

// Score is one scorer's value for a sample at an epoch; a dict value
// gives one Score per key.
type Score struct {
	Scorer string
	Key    string
	Value  float64
	// Valid says whether value_to_float gives a number for it (a list,
	// an object, a null or an unknown string does not: stored, not 0).
	Valid       bool
	Raw         []byte // the value as written (JSON)
	Answer      string
	Explanation string
}

// Metric is the warehouse's name for the score: inspect.SCORER or
// inspect.SCORER.KEY.
func (s Score) Metric() string {
	if s.Key == "" {
		return "inspect." + s.Scorer
	}
	return "inspect." + s.Scorer + "." + s.Key
}

// Usage is a sample's token use of one model.
type Usage struct {
	Model                            string
	Input, Output, Total             int64
	CacheRead, CacheWrite, Reasoning *int64
}

// Item kinds.
const (
	KindMessage     = "message"
	KindEvent       = "event"
	KindPoolMessage = "pool_message"
	KindPoolCall    = "pool_call"
	KindAttachment  = "attachment"
)

// Item is one element of a sample's trajectory: a message of the final
// conversation, an event, an entry of the message or call pool, or an
// attachment. Raw is valid only during the Sink call.
type Item struct {
	Kind  string
	Index int    // position in its sequence
	Key   string // an attachment's key
	Type  string // a message's role, an event's type
	Raw   []byte // JSON (attachments: the JSON string)
}

// Sink takes what a reader reads. Items of a sample come before the
// sample itself; Eval comes last, with everything the log says of the
// whole evaluation.
type Sink interface {
	Begin(e *Eval) error
	Item(s *Sample, it *Item) error
	Sample(s *Sample) error
	End(e *Eval) error
}
