// Package runlog reads the gymlens run-log format (version 1): JSON Lines
// streams of run, event, task, judgment, rating and scenario records,
// scenario specs written by hand in JSON or YAML, and human ratings in CSV.
// It validates every record and knows nothing of the warehouse.
package runlog

import (
	"time"

	"github.com/gymlens/gymlens/ingest/rows"
)

// Record types, as they appear in the "type" field.
const (
	TypeScenario = "scenario"
	TypeRun      = "run"
	TypeEvent    = "event"
	TypeTask     = "task"
	TypeJudgment = "judgment"
	TypeRating   = "rating"
)

// RecordTypes lists the record types in the order they are reported.
var RecordTypes = []string{TypeScenario, TypeRun, TypeEvent, TypeTask, TypeJudgment, TypeRating}

// Depths in increasing order: noop < prepare < suggest < execute.
var Depths = []string{"noop", "prepare", "suggest", "execute"}

// DepthRank gives the order of a depth name, or -1.
func DepthRank(d string) int {
	for i, x := range Depths {
		if x == d {
			return i
		}
	}
	return -1
}

var (
	actors     = []string{"agent", "user", "env", "system"}
	eventKinds = []string{"message", "notification", "tool_call", "tool_result", "approval_request", "decision", "schedule", "availability"}
	decisions  = []string{"approve", "decline", "defer"}
	phases     = []string{"interaction", "sleep", "unavailable"}
	statuses   = []string{"ok", "error", "timeout"}
	metrics    = []string{"tc", "ta", "trj"}
	toolDepths = []string{"read", "prepare", "suggest", "execute"}
	actDepths  = []string{"prepare", "suggest", "execute"}
)

// Score names per judged metric.
var (
	TCScores  = []string{"correctness", "grounding", "completeness", "artifact_quality"}
	TAScores  = []string{"now", "later", "cq"}
	TRJScores = []string{"understandability", "competence", "reliability", "attachment", "faith"}
)

// Record is any decoded record.
type Record interface{ RecordType() string }

// Persona is one persona of a scenario.
type Persona struct {
	Name, Group, Label string
}

// TAWindow is a scenario's Temporal-Allocation decision window.
type TAWindow struct {
	Start, End         time.Time
	Urgent, Deferrable string
}

// TaskSpec is one task of a scenario.
type TaskSpec struct {
	ID            string
	Weight        float64
	Trigger       string
	ExpectedDepth map[string]string // persona → depth
	AfterApproval string            // "" means execute
	AfterDenial   string            // "" means the persona's expected depth
	Rubric        []byte            // the rubric as JSON, nil when absent
	Extra         []byte
}

// Scenario is one scenario spec.
type Scenario struct {
	ID, Domain, Title string
	Days              int
	Personas          []Persona // sorted by name
	Tasks             []TaskSpec
	TA                *TAWindow
	Tools             map[string]string
	Extra             []byte
	// IDLine is the line of the scenario's id in a scenario file (0 when
	// unknown), where errors about the whole scenario point.
	IDLine int
}

// Run is one agent configuration on one scenario, persona and repetition.
type Run struct {
	ID, Scenario, Persona string
	Rep                   int
	Model, Harness        string
	Effort, Family        string
	SizeB                 *float64
	Start, End            *time.Time
	Status                string
	Meta                  []byte
	ConfigExtra           []byte
	Extra                 []byte
}

// Event is one record of a run's trajectory. Only what ingest needs to
// check order and references is kept; the warehouse loads the full record.
type Event struct {
	RunID    string
	Seq      int64
	T        time.Time
	Actor    string
	Kind     string
	Task     string
	Decision string
	Ref      *int64
	Extra    []byte
}

// Task is the gym's record of one task in one run.
type Task struct {
	RunID, Task   string
	Active        bool
	ActivatedAt   *time.Time
	FinalSeq      *int64
	ExpectedDepth string
	ChosenDepth   string
	// Rules holds evidence, outputs, constraints; nil is "not applicable"
	// (logged as null) and RulesLogged says whether the gym logged rules.
	Rules       [3]*float64
	RulesLogged bool
	Extra       []byte
}

// Judgment is one LLM judge's output for one item.
type Judgment struct {
	RunID, Task, Metric, Judge, Prompt string
	Scores                             Scores
	Extra                              []byte
}

// ScoreNames lists every score of every metric, in warehouse column order.
var ScoreNames = []string{"correctness", "grounding", "completeness", "artifact_quality", "now", "later", "cq",
	"understandability", "competence", "reliability", "attachment", "faith"}

// Scores holds a judgment's scores by position in ScoreNames.
type Scores struct {
	v   [12]float64
	has uint16
}

func scoreIndex(name string) int {
	for i, n := range ScoreNames {
		if n == name {
			return i
		}
	}
	return -1
}

func (s *Scores) set(name string, f float64) {
	i := scoreIndex(name)
	s.v[i], s.has = f, s.has|1<<i
}

// Get returns the score named name and whether the judge gave it.
func (s *Scores) Get(name string) (float64, bool) {
	i := scoreIndex(name)
	if i < 0 {
		return 0, false
	}
	return s.At(i)
}

// At returns the score at position i of ScoreNames.
func (s *Scores) At(i int) (float64, bool) { return s.v[i], s.has&(1<<i) != 0 }

// Rating is one human rating.
type Rating struct {
	Rater, Question   string
	Value             float64
	RunID, Task, Item string
	Day               *int
	Condition         string
	Extra             []byte
}

func (*Scenario) RecordType() string { return TypeScenario }
func (*Run) RecordType() string      { return TypeRun }
func (*Event) RecordType() string    { return TypeEvent }
func (*Task) RecordType() string     { return TypeTask }
func (*Judgment) RecordType() string { return TypeJudgment }
func (*Rating) RecordType() string   { return TypeRating }

// ConfigID names a configuration (rows.ConfigID).
func ConfigID(model, harness, effort string) string { return rows.ConfigID(model, harness, effort) }

// JoinID joins the parts of a composite id (rows.JoinID).
func JoinID(parts ...string) string { return rows.JoinID(parts...) }

// ConfigKey is a configuration id as a path-safe slug (rows.ConfigKey).
func ConfigKey(model, harness, effort string) string { return rows.ConfigKey(model, harness, effort) }
