// Package rows holds the typed rows that every layer shares — runs, tasks,
// judgments, judge inputs and calls, rescoring inputs, PARE units — as
// plain Go values with no dependency, so that analysis, judge, plots and
// reports (and their test binaries) need not link the warehouse's
// database. The ingest package reads and writes them.
package rows

import (
	"database/sql"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"time"
)

// RunRow is one run with what the 3T metrics need: its configuration and
// place in the design, its active tasks and its judgments.
type RunRow struct {
	RunID, ConfigID, Model, Family, Harness, Effort string
	SizeB                                           float64 // 0 when unknown
	Scenario, Domain, Persona, PersonaGroup         string
	Rep                                             int
	HasTAWindow                                     bool
	Tasks                                           []TaskRow // active tasks
	TA                                              []TAJudgment
	Custom                                          []CustomJudgment // run-level judgments of user rubrics
}

// TaskRow is one active task of a run.
type TaskRow struct {
	Task   string
	Weight float64
	// Rules are the rule-based TC components (evidence, outputs,
	// constraints) in [0,1]; RuleSet says which apply.
	Rules            [3]float64
	RuleSet          [3]bool
	Expected, Chosen string // depths; "" when not logged
	TC               []TCJudgment
	TRJ              []TRJJudgment
	Custom           []CustomJudgment // judgments of user rubrics
}

// CustomJudgment is one judge's scores of an item under a user rubric
// (metric custom.NAME), by score field.
type CustomJudgment struct {
	Metric, Judge string
	Scores        map[string]float64
}

// Rubric is what the warehouse keeps of a user rubric: its metric and
// prompt version, the item it judges (its level: task or run), its scores
// with their ranges, and its text.
type Rubric struct {
	Metric, Prompt, Item, Level string
	Scores                      []RubricScore
	Digest, Text                string
}

// RubricScore is one score of a rubric: its range, and its levels when
// it has a fixed set.
type RubricScore struct {
	Name   string    `json:"name"`
	Min    float64   `json:"min"`
	Max    float64   `json:"max"`
	Levels []float64 `json:"levels,omitempty"`
}

// RepeatSpec names the repeated asks of one judge, model, prompt
// version and metric whose valid answers a judgment is the mean of: the
// parameters of each repeat, and for each item (run, task) the source key
// of its current input (answers to an older input are left out).
type RepeatSpec struct {
	Judge, Model, Prompt, Metric string
	Params                       []string
	Keys                         map[[2]string]string
	// FirstRun and LastRun bound the runs settled (both "": every run).
	FirstRun, LastRun string
}

// RepeatItem is one item a judge was asked several times (distinct
// seeds): the scores of each valid answer, in seed order. Names are the
// scores' names as stored (a judgments column such as correctness or
// ta_now, a rubric's field), sorted, and shared by the items that have the
// same ones; answer a's score Names[k] is Values[a*len(Names)+k], NaN
// when that answer lacks it. Numbers rather than a map an answer: a
// judge asked 150,000 items twice is 300,000 answers to hold.
type RepeatItem struct {
	RunID, Task, Metric, Judge, Scenario string
	Seeds                                []int64
	Names                                []string
	Values                               []float64
}

// Answer is answer a's scores, in the order of Names.
func (it *RepeatItem) Answer(a int) []float64 {
	k := len(it.Names)
	return it.Values[a*k : (a+1)*k : (a+1)*k]
}

// Score is answer a's score name, and whether it has it.
func (it *RepeatItem) Score(a int, name string) (float64, bool) {
	k, ok := slices.BinarySearch(it.Names, name)
	if !ok {
		return 0, false
	}
	v := it.Values[a*len(it.Names)+k]
	return v, !math.IsNaN(v)
}

// RepeatScores lays answers (each a score name → value) out as a
// RepeatItem holds them: the names of every answer, sorted, and the
// values answer by answer, NaN where an answer lacks a name.
func RepeatScores(answers []map[string]float64) (names []string, values []float64) {
	seen := map[string]bool{}
	for _, a := range answers {
		for k := range a {
			if !seen[k] {
				seen[k] = true
				names = append(names, k)
			}
		}
	}
	slices.Sort(names)
	values = make([]float64, 0, len(answers)*len(names))
	for _, a := range answers {
		for _, k := range names {
			v, ok := a[k]
			if !ok {
				v = math.NaN()
			}
			values = append(values, v)
		}
	}
	return names, values
}

// TCJudgment is one judge's TC diagnostics of a task.
type TCJudgment struct {
	Judge                                           string
	Correctness, Grounding, Completeness, ArtifactQ float64
}

// TRJJudgment is one judge's five trust constructs of a task, in the order
// understandability, competence, reliability, attachment, faith.
type TRJJudgment struct {
	Judge  string
	Scores [5]float64
}

// TAJudgment is one judge's Temporal-Allocation labels of a run.
type TAJudgment struct {
	Judge      string
	Now, Later float64
	CQ         float64
	HasCQ      bool
	// Both is the share of the judge's answers with now and later both 1
	// when the judgment is the mean of repeated asks (HasBoth); otherwise
	// it follows from Now and Later.
	Both    float64
	HasBoth bool
}

// BothShare is the share of the judge's answers that took up the urgent
// task now and deferred the other: 1[now ∧ later], or over repeats the
// mean of it.
func (j TAJudgment) BothShare() float64 {
	if j.HasBoth {
		return j.Both
	}
	if j.Now == 1 && j.Later == 1 {
		return 1
	}
	return 0
}

// PAREResultRow is a run as a PARE or Meta-ARE result file lists it.
type PAREResultRow struct {
	ResultID, Source, Scenario, ConfigID, Status string
	RunNumber                                    int        // -1 when not given
	Success                                      float64    // 1 or 0; NaN when not validated
	RunID                                        string     // the linked trace's run, or ""
	RunDuration, JobDuration                     float64    // NaN when not given
	Counts                                       [5]float64 // PARE's stored counts (pare.CountFields); NaN when not given
	ProposalRate, AcceptanceRate                 float64
	Capability, Phase, Noise                     string // Noise: the noise dimension (pare.NoiseLabel)
	File                                         string
	Line                                         int
}

// The places of PARE's stored counts in PAREResultRow.Counts (the order
// of pare.CountFields).
const (
	CountProposals = iota
	CountAcceptances
	CountReads
	CountWrites
	CountTurns
)

// PARERun is a PARE or Meta-ARE run with what its metrics need.
type PARERun struct {
	RunID, Source, Scenario, ConfigID string
	Skip                              string
	Capability, AppSet                string // "" when not known
	ToolNoise, EnvNoise               bool
	LLMCalls                          int
	// Tokens: prompt + completion tokens of the run's LLM calls; NaN when
	// unknown (the export wrote zeros throughout).
	Tokens float64
	// Success is the trace's own verdict: 1 (Valid), 0 (Invalid), NaN
	// when not given or when the run raised (not validated, as PARE
	// leaves such runs out of its success rate).
	Success   float64
	Events    []PAREEvent
	Decisions []PAREDecision
}

// PAREEvent is a completed event of a PARE run, in time order.
type PAREEvent struct {
	T                                float64
	Actor, Function, Operation, Mode string
	Turn                             int // -1 when not given
}

// PAREDecision is a decision point of a PARE run.
type PAREDecision struct {
	Final                bool
	ProposalT, DecisionT float64
}

// PARETexts are the texts of a PARE run's trace, read for its page:
// Events in the order of PARERun.Events, Proposals in the order of its
// Decisions.
type PARETexts struct {
	Events    []PAREEventText
	Proposals []string
}

// PAREEventText is what an event says: the message it sends (its
// content argument), its other arguments (JSON) and what it returned.
type PAREEventText struct {
	Text, Args, Result string
}

// Snippet is where a run's trajectory first holds a searched text: the
// event and some of its text around the match.
type Snippet struct {
	Seq  int64
	Text string
}

// PAREReportRow is a section of a stored PARE or Meta-ARE summary report.
type PAREReportRow struct {
	Source, Kind, Section, ConfigID string
	Stats                           map[string]float64 // its numeric statistics, as written
	File                            string
	Line                            int
}

// JudgeRun is one run with what judge inputs are built from. It carries
// no model, harness or configuration: judges must not see them.
type JudgeRun struct {
	RunID                 string // for the warehouse only; never put in a prompt
	ConfigID              string // for drawing judge --limit's sample only; never put in a prompt
	Scenario, Domain      string
	ScenarioTitle         string
	Persona, PersonaGroup string
	PersonaLabel          string
	TAStart, TAEnd        *time.Time
	TAUrgent, TADeferable string
	Tasks                 []JudgeTask // active tasks
	Events                []JudgeEvent
	// What the run's and its scenario's records hash to: a judge input
	// built from the same content is the same.
	RunHash, ScenarioHash int64
}

// JudgeEvent is one trajectory record.
type JudgeEvent struct {
	Seq                                 int64
	T                                   time.Time
	Actor, Kind, Task, Text, Tool, Args string
	Result                              string
	Visible                             bool
}

// JudgeTask is an active task.
type JudgeTask struct {
	Task, Chosen string
	FinalSeq     *int64
	Rubric       string // JSON, "" when none
}

// JudgeCall is one answered judge request.
type JudgeCall struct {
	Model, Params, Prompt, InputHash string
	SourceKey                        string // what the input was made from ("" unknown)
	Judge, RunID, Task, Metric       string
	Valid                            bool
	Reason, Answer                   string
	InputTokens, OutputTokens        int64
	CostUSD                          *float64
	Attempts                         int
	Latency                          time.Duration
	// For valid answers: the scores by warehouse column name, and what
	// goes to judgments.
	Scores   map[string]float64
	Reasons  string
	Evidence any
	// Repeats is how many valid answers the scores are the mean of (0 or
	// 1: one answer).
	Repeats int `json:",omitempty"`
	// New says that when the judge planned the call, no call of its
	// model, parameters and prompt had answered its input: saving it
	// replaces no stored call. Not journalled: a call replayed from a
	// journal is saved as any other.
	New bool `json:"-"`
}

// JudgeVersion is a judge and prompt version with the judgments stored.
type JudgeVersion struct {
	Judge     string `json:"judge"`
	Prompt    string `json:"prompt"`
	Metric    string `json:"metric"`
	Judgments int64  `json:"judgments"`
}

// ScoreTask is one active task of a run, with what the gym logged and the
// trajectory records credited to it.
type ScoreTask struct {
	RunID, Scenario, Persona, Task string
	LoggedExpected, LoggedChosen   string // "" when not logged
	RulesLogged                    bool
	LoggedRules                    [3]sql.NullFloat64
	Events                         []ScoreEvent
}

// ScoreEvent is one trajectory record credited to a task.
type ScoreEvent struct {
	Seq                                      int64
	Actor, Kind, Tool, Depth, Decision, Text string
	Args                                     string // JSON object, "" when absent
}

// TaskScore is what rescoring wrote for one task.
type TaskScore struct {
	RunID, Task                        string
	DerivedExpected, DerivedChosen     string
	DerivedRules                       [3]*float64
	EffectiveExpected, EffectiveChosen string
	EffectiveRules                     [3]*float64
	Prefer                             string
}

// ScenarioSpec is what rescoring needs of a scenario.
type ScenarioSpec struct {
	Tools map[string]string      // tool → read/prepare/suggest/execute
	Tasks map[string]TaskSpecRow // task id → spec
}

// TaskSpecRow is one task of a scenario spec.
type TaskSpecRow struct {
	ExpectedDepth map[string]string // persona → depth
	AfterApproval string
	AfterDenial   string // "" means the persona's expected depth
	Rubric        []byte // JSON, nil when absent
}

// InputFile is a file the warehouse was loaded from.
type InputFile struct {
	Path    string         `json:"path"`
	SHA256  string         `json:"sha256"`
	Size    int64          `json:"size_bytes"`
	Format  string         `json:"format"`
	Records map[string]any `json:"records"`
}

// NoiseLabel is the one vocabulary of a PARE run's noise: "tool+env",
// "tool", "env" or "none".
func NoiseLabel(tool, env bool) string {
	switch {
	case tool && env:
		return "tool+env"
	case tool:
		return "tool"
	case env:
		return "env"
	}
	return "none"
}

// RatingRow is one human rating, with the scenario and configuration of
// the run it rates (empty when it rates a study item).
type RatingRow struct {
	Rater, Question    string
	Value              float64
	RunID, Task, Item  string
	Day                int // 0 when not given
	Condition          string
	Scenario, ConfigID string
	File               string
	Line               int
}

// PARESampleRow is a PARE annotation sample and the human decisions on it.
type PARESampleRow struct {
	SampleID, Simulated, Correct string            // Correct: "" when the sample has no answer key
	Humans                       map[string]string // annotator → decision
}

// ConfigID names a configuration (model, harness, effort) in one string,
// "model | harness | effort" (JoinID: different configurations never share
// an id, whatever their names hold).
func ConfigID(model, harness, effort string) string {
	if effort == "" {
		effort = "none"
	}
	return JoinID(model, harness, effort)
}

// JoinID joins the parts of a composite id with " | ". A "|" or "\" inside
// a part is written "\|" or "\\", so that the id tells its parts apart
// (model "A | B" on harness "C" is "A \| B | C", not the id of model "A" on
// harness "B | C"); parts without them read as they are.
func JoinID(parts ...string) string {
	var b strings.Builder
	for i, p := range parts {
		if i > 0 {
			b.WriteString(" | ")
		}
		if !strings.ContainsAny(p, `|\`) {
			b.WriteString(p)
			continue
		}
		for _, r := range p {
			if r == '|' || r == '\\' {
				b.WriteByte('\\')
			}
			b.WriteRune(r)
		}
	}
	return b.String()
}

// ConfigKey is a configuration id as a path-safe slug, used for Parquet
// partitions: "GPT 5.6 Sol | CD | xhigh" → "gpt-5.6-sol_cd_xhigh".
func ConfigKey(model, harness, effort string) string {
	if effort == "" {
		effort = "none"
	}
	parts := []string{model, harness, effort}
	for i, s := range parts {
		parts[i] = strings.Trim(slugRE.ReplaceAllString(strings.ToLower(s), "-"), "-")
	}
	return strings.Join(parts, "_")
}

var slugRE = regexp.MustCompile(`[^a-z0-9.]+`)

// Thousands writes n with commas between groups of three digits, as every
// layer's summaries and messages show counts.
func Thousands(n int64) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return "-" + Thousands(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// RatingSet is one question of a ratings file: its units (each item's
// values, in rater order), how many items and raters it has, and, with
// two raters, their paired values.
type RatingSet struct {
	Question      string
	Units         [][]float64
	Items, Raters int
	A, B          []float64 // with two raters: the items both rated
	// Unordered: the values are text categories with no order given, so
	// that only nominal statistics mean anything.
	Unordered bool
}

// PAREDecisions are the decisions PARE's user and annotators make.
var PAREDecisions = []string{"accept", "reject", "gather_context"}

// Persona is one persona of a scenario spec: its name, group and label.
type Persona struct {
	Scenario, Name, Group, Label string
}

// EventRow is one event of a run's trajectory, as the viewer shows it:
// args and result as their JSON text.
type EventRow struct {
	Seq               int64
	T                 time.Time
	Actor, Kind, Task string
	Text, Tool, Depth string
	Args, Result      string
	OK                *bool
	Decision, Phase   string
	Ref               int64 // the event it answers (0: none)
	Visible           bool
}

// Steps is what made the warehouse's content, step by step: its ingests
// (with their options and files), the rescoring, and the judge's calls.
type Steps struct {
	Ingests []IngestStep `json:"ingests"`
	Scores  []ScoreStep  `json:"scores"`
	Judge   []JudgeStep  `json:"judge"`
}

// IngestStep is one `gymlens ingest` that loaded files (or the ingest of
// `gymlens demo`): its options and the files it read, in order.
type IngestStep struct {
	Ingest   int            `json:"ingest"`
	Options  map[string]any `json:"options"`
	Files    []string       `json:"files"`
	Records  int64          `json:"records"`
	Rejected int64          `json:"rejected"`
}

// ScoreStep is the rescoring (`gymlens score`): which values the metrics
// use (logged or derived) and for how many tasks.
type ScoreStep struct {
	Prefer string `json:"prefer"`
	Tasks  int64  `json:"tasks"`
}

// JudgeStep is what `gymlens judge` asked one model under one judge name,
// prompt version and parameters: the calls, those whose answer was valid
// (each a judgment), and the prompt's SHA-256 where gymlens knows it (a
// rubric's digest is stored; a built-in prompt's is the caller's to add).
type JudgeStep struct {
	Judge        string `json:"judge"`
	Model        string `json:"model"`
	Prompt       string `json:"prompt"`
	PromptSHA256 string `json:"prompt_sha256,omitempty"`
	Params       string `json:"params"`
	Calls        int64  `json:"calls"`
	Valid        int64  `json:"valid"`
}
