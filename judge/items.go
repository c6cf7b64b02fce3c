package judge

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/gymlens/gymlens/ingest/rows"
)

//go:embed prompts/*.txt
var promptFS embed.FS

// Metrics the judge scores.
const (
	TC  = "tc"
	TA  = "ta"
	TRJ = "trj"
)

// PromptVersion is the version of each metric's prompt; it is stored with
// every judgment and is part of the cache key, so a new version re-asks
// everything it covers. Edit a prompt, bump its version.
var PromptVersion = map[string]string{TC: "tc/v1", TA: "ta/v1", TRJ: "trj/v1"}

// promptFile is the embedded file of each metric's current prompt.
var promptFile = map[string]string{TC: "tc_v1.txt", TA: "ta_v1.txt", TRJ: "trj_v1.txt"}

// Prompt returns a metric's prompt text.
func Prompt(metric string) string {
	b, err := promptFS.ReadFile("prompts/" + promptFile[metric])
	if err != nil {
		panic("judge: no prompt for " + metric) // embedded: cannot happen
	}
	return string(b)
}

// Record is one trajectory record as a judge sees it.
type Record struct {
	Seq    int64  `json:"seq"`
	Time   string `json:"time,omitempty"` // none for an Inspect sample's messages
	Actor  string `json:"actor"`
	Kind   string `json:"kind"`
	Task   string `json:"task,omitempty"`
	Text   string `json:"text,omitempty"`
	Tool   string `json:"tool,omitempty"`
	Args   string `json:"args,omitempty"`
	Result string `json:"result,omitempty"`
}

// Item is one question to a judge: the data it sees and where the answer
// belongs. RunID and Task are for the warehouse; Data holds no model,
// harness or configuration.
type Item struct {
	Metric, RunID, Task string
	data                []byte   // the item's data as JSON
	Records             []Record // the records the judge may cite
	System, User        string   // the rendered prompt
	Hash                string   // sha256 of the rendered prompt: the cache key's input part
	SourceKey           string   // what the input was made from (see sourceKey)
	Tokens              int      // estimated input tokens (kept when the text is not)
}

func record(e rows.JudgeEvent) Record {
	r := Record{Seq: e.Seq, Actor: e.Actor, Kind: e.Kind, Task: e.Task, Text: e.Text, Tool: e.Tool, Args: e.Args, Result: e.Result}
	if !e.T.IsZero() {
		r.Time = e.T.UTC().Format("2006-01-02T15:04:05Z07:00")
	}
	return r
}

// Items builds the judge items of one run for a metric, deterministically:
//
//   - tc: one per active task: its id, rubric and chosen depth, and the
//     records credited to it up to its final turn;
//   - trj: one per active task: the persona (group and label), the
//     scenario (title, domain) and what the user saw up to the task's
//     final turn (visible records, the user's own, notifications);
//   - ta: one per run whose scenario has a decision window: the two
//     competing tasks in id order, unlabelled, and every record inside it.
func Items(run *rows.JudgeRun, metric string) []Item {
	rb := Builtin(metric)
	if rb == nil {
		return nil
	}
	return rb.Items(run)
}

// Items builds the rubric's items of one run, deterministically: those of
// the built-in metric it names as its item, or
//
//   - task: one per active task: its id and the records credited to it up
//     to its final turn, of the kinds and actors selected;
//   - run: one per run: every record of the run of the kinds and actors
//     selected.
//
// Records kept for Visible are what the user saw: visible records, the
// user's own, notifications.
func (rb *Rubric) Items(run *rows.JudgeRun) []Item {
	var out []Item
	metric := rb.Metric
	upTo := func(t rows.JudgeTask) int64 {
		if t.FinalSeq != nil {
			return *t.FinalSeq
		}
		return math.MaxInt64
	}
	// Each record is made and encoded once per run: TR-J items repeat the
	// history.
	recs := make([]Record, len(run.Events))
	made := make([]bool, len(run.Events))
	rec := func(i int) Record {
		if !made[i] {
			recs[i], made[i] = record(run.Events[i]), true
		}
		return recs[i]
	}
	enc := make([][]byte, len(run.Events))
	encoded := func(i int) []byte {
		if enc[i] == nil {
			enc[i], _ = json.Marshal(rec(i))
		}
		return enc[i]
	}
	list := func(idx []int) []byte {
		b := []byte{'['}
		for k, i := range idx {
			if k > 0 {
				b = append(b, ',')
			}
			b = append(b, encoded(i)...)
		}
		return append(b, ']')
	}
	records := func(idx []int) []Record {
		rs := make([]Record, len(idx))
		for k, i := range idx {
			rs[k] = rec(i)
		}
		return rs
	}
	keep := func(e rows.JudgeEvent) bool {
		if len(rb.Kinds) > 0 && !slices.Contains(rb.Kinds, e.Kind) {
			return false
		}
		if len(rb.Actors) > 0 && !slices.Contains(rb.Actors, e.Actor) {
			return false
		}
		return !rb.Visible || e.Visible || e.Actor == "user" || (e.Actor == "env" && e.Kind == "notification")
	}
	switch rb.Item {
	case ItemTask:
		for _, t := range run.Tasks {
			var idx []int
			for i, e := range run.Events {
				if e.Task == t.Task && e.Seq <= upTo(t) && keep(e) {
					idx = append(idx, i)
				}
			}
			out = append(out, Item{Metric: metric, RunID: run.RunID, Task: t.Task, Records: records(idx),
				data: object("records", list(idx), "task", str(t.Task))})
		}
	case ItemRun:
		var idx []int
		for i, e := range run.Events {
			if keep(e) {
				idx = append(idx, i)
			}
		}
		out = append(out, Item{Metric: metric, RunID: run.RunID, Records: records(idx), data: object("records", list(idx))})
	case TC:
		for _, t := range run.Tasks {
			var idx []int
			for i, e := range run.Events {
				if e.Task == t.Task && e.Seq <= upTo(t) {
					idx = append(idx, i)
				}
			}
			rubric := taskRubric(t.Rubric)
			out = append(out, Item{Metric: metric, RunID: run.RunID, Task: t.Task, Records: records(idx),
				data: object("chosen_depth", str(t.Chosen), "records", list(idx), "rubric", rubric, "task", str(t.Task))})
		}
	case TRJ:
		persona := object("description", str(run.PersonaLabel), "group", str(run.PersonaGroup))
		scen := object("domain", str(run.Domain), "title", str(run.ScenarioTitle))
		for _, t := range run.Tasks {
			var idx []int
			for i, e := range run.Events {
				if e.Seq > upTo(t) {
					break
				}
				if e.Visible || e.Actor == "user" || (e.Actor == "env" && e.Kind == "notification") {
					idx = append(idx, i)
				}
			}
			out = append(out, Item{Metric: metric, RunID: run.RunID, Task: t.Task, Records: records(idx),
				data: object("persona", persona, "records", list(idx), "scenario", scen, "task", str(t.Task))})
		}
	case TA:
		if run.TAStart == nil || run.TAEnd == nil {
			return nil
		}
		var idx []int
		for i, e := range run.Events {
			if !e.T.Before(*run.TAStart) && !e.T.After(*run.TAEnd) {
				idx = append(idx, i)
			}
		}
		tasks := []string{run.TAUrgent, run.TADeferable}
		sort.Strings(tasks)
		tj, _ := json.Marshal(tasks)
		out = append(out, Item{Metric: metric, RunID: run.RunID, Records: records(idx), data: object("competing_tasks", tj, "records", list(idx))})
	}
	for i := range out {
		render(&out[i], rb)
	}
	return out
}

// taskRubric is a task's rubric as a TC item holds it: written again by
// encoding/json (keys sorted, no spaces), or null when it is absent or not
// JSON. Every run of a scenario repeats its tasks' rubrics, so each text
// is written once per process (rubrics; never changed once stored).
func taskRubric(text string) []byte {
	if text == "" {
		return []byte("null")
	}
	if b, ok := rubrics.Load(text); ok {
		return b.([]byte)
	}
	b := []byte("null")
	var v any
	if json.Unmarshal([]byte(text), &v) == nil {
		b, _ = json.Marshal(v)
	}
	rubrics.Store(text, b)
	return b
}

var rubrics sync.Map // task rubric text → taskRubric's bytes

// object writes a JSON object from key, raw-value pairs given in key order.
func object(kv ...any) []byte {
	b := []byte{'{'}
	for i := 0; i+1 < len(kv); i += 2 {
		if i > 0 {
			b = append(b, ',')
		}
		k, _ := json.Marshal(kv[i].(string))
		b = append(b, k...)
		b = append(b, ':')
		b = append(b, kv[i+1].([]byte)...)
	}
	return append(b, '}')
}

func str(s string) []byte {
	b, _ := json.Marshal(s)
	return b
}

// render writes the prompt: the metric's instructions, and the item's data
// as JSON between markers, so that trajectory text stays data.
//
// The hash keys the cache: the prompt version and text, and the data; a
// user rubric's digest adds its schema, scores and record selection.
func render(it *Item, rb *Rubric) {
	it.System = rb.Instructions
	it.User = "BEGIN DATA\n" + string(it.data) + "\nEND DATA"
	it.data = nil
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s", rb.Version, it.System, it.User)
	if rb.Custom() {
		fmt.Fprintf(h, "\x00%s", rb.digest)
	}
	it.Hash = hex.EncodeToString(h.Sum(nil))
}

// Schema is the JSON Schema of a metric's answer, for structured output.
func Schema(metric string) map[string]any {
	num := func(lo, hi float64) map[string]any {
		return map[string]any{"type": "number", "minimum": lo, "maximum": hi}
	}
	props := map[string]any{}
	switch metric {
	case TC:
		for _, k := range []string{"correctness", "grounding", "completeness", "artifact_quality"} {
			props[k] = num(0, 1)
		}
	case TA:
		props["now"] = map[string]any{"type": "number", "enum": []float64{0, 1}}
		props["later"] = map[string]any{"type": "number", "enum": []float64{0, 1}}
		props["cq"] = map[string]any{"type": "number", "enum": []float64{0, 0.5, 1}}
	case TRJ:
		for _, k := range []string{"understandability", "competence", "reliability", "attachment", "faith"} {
			props[k] = num(1, 5)
		}
	}
	props["reasons"] = map[string]any{"type": "string"}
	props["evidence"] = map[string]any{"type": "array", "items": map[string]any{
		"type": "object", "additionalProperties": false, "required": []string{"seq", "quote"},
		"properties": map[string]any{"seq": map[string]any{"type": "integer"}, "quote": map[string]any{"type": "string"}}}}
	req := make([]string, 0, len(props))
	for k := range props {
		req = append(req, k)
	}
	sort.Strings(req)
	return map[string]any{"type": "object", "additionalProperties": false, "required": req, "properties": props}
}

// Answer is a judge's parsed answer.
type Answer struct {
	Scores   map[string]float64
	Reasons  string
	Evidence []Citation
}

// Citation is one piece of evidence a judge cited.
type Citation struct {
	Seq   int64  `json:"seq"`
	Quote string `json:"quote"`
}

// ParseAnswer reads a judge's answer and checks it against the metric's
// schema: the scores present and in range, evidence well formed. A reply
// wrapped in a Markdown code fence is accepted.
func ParseAnswer(metric, content string) (*Answer, error) {
	s := strings.TrimSpace(content)
	if strings.HasPrefix(s, "```") {
		s = strings.TrimPrefix(s, "```json")
		s = strings.TrimPrefix(s, "```")
		s = strings.TrimSuffix(strings.TrimSpace(s), "```")
	}
	var raw struct {
		Reasons  string     `json:"reasons"`
		Evidence []Citation `json:"evidence"`
	}
	var all map[string]any
	if err := json.Unmarshal([]byte(s), &all); err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	if err := json.Unmarshal([]byte(s), &raw); err != nil {
		return nil, fmt.Errorf("reasons or evidence malformed: %w", err)
	}
	a := &Answer{Scores: map[string]float64{}, Reasons: raw.Reasons, Evidence: raw.Evidence}
	check := func(k string, ok func(float64) bool, want string) error {
		v, has := all[k]
		f, isNum := v.(float64)
		if !has || !isNum {
			return fmt.Errorf("score %q missing or not a number", k)
		}
		if !ok(f) {
			return fmt.Errorf("score %q = %g, expected %s", k, f, want)
		}
		a.Scores[k] = f
		return nil
	}
	var keys []string
	var ok func(float64) bool
	var want string
	switch metric {
	case TC:
		keys, ok, want = []string{"correctness", "grounding", "completeness", "artifact_quality"}, func(f float64) bool { return f >= 0 && f <= 1 }, "in [0,1]"
	case TRJ:
		keys, ok, want = []string{"understandability", "competence", "reliability", "attachment", "faith"}, func(f float64) bool { return f >= 1 && f <= 5 }, "in [1,5]"
	case TA:
		for _, k := range []string{"now", "later"} {
			if err := check(k, func(f float64) bool { return f == 0 || f == 1 }, "0 or 1"); err != nil {
				return nil, err
			}
		}
		if err := check("cq", func(f float64) bool { return f == 0 || f == 0.5 || f == 1 }, "0, 0.5 or 1"); err != nil {
			return nil, err
		}
	}
	for _, k := range keys {
		if err := check(k, ok, want); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// CheckEvidence checks every citation against the item's records: the seq
// must be one of them and the quote must appear in that record's text
// (its text, arguments or result), whitespace normalised.
func CheckEvidence(it *Item, a *Answer) error {
	bySeq := map[int64]Record{}
	for _, r := range it.Records {
		bySeq[r.Seq] = r
	}
	for _, c := range a.Evidence {
		r, ok := bySeq[c.Seq]
		if !ok {
			return fmt.Errorf("cites seq %d, which is not among the records it was shown", c.Seq)
		}
		q := squash(c.Quote)
		if q == "" {
			continue
		}
		if !strings.Contains(squash(r.Text+"\n"+r.Args+"\n"+r.Result), q) {
			return fmt.Errorf("quotes %q, which record %d does not contain", shorten(c.Quote, 60), c.Seq)
		}
	}
	return nil
}

func squash(s string) string { return strings.Join(strings.Fields(s), " ") }

func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// VisibleHistory is what the user saw of a run up to a task's final turn
// (task "" : the whole run), as text for a human rater: one record a line,
// "#seq time actor kind [tool]: text". It shows the records a TR-J judge
// sees, and for a task then what a TC judge reads of it (taskWork).
func VisibleHistory(run *rows.JudgeRun, task string) string {
	upTo := int64(math.MaxInt64)
	for _, t := range run.Tasks {
		if t.Task == task && t.FinalSeq != nil {
			upTo = *t.FinalSeq
		}
	}
	var b strings.Builder
	for _, e := range run.Events {
		if e.Seq > upTo {
			break
		}
		if !(e.Visible || e.Actor == "user" || (e.Actor == "env" && e.Kind == "notification")) {
			continue
		}
		fmt.Fprintf(&b, "#%d %s %s %s", e.Seq, e.T.UTC().Format("2006-01-02 15:04"), e.Actor, e.Kind)
		if e.Tool != "" {
			fmt.Fprintf(&b, " [%s]", e.Tool)
		}
		text := e.Text
		if text == "" {
			text = e.Result
		}
		fmt.Fprintf(&b, ": %s\n", strings.Join(strings.Fields(text), " "))
	}
	for _, t := range run.Tasks {
		if task != "" && t.Task == task {
			taskWork(&b, run, t, upTo)
		}
	}
	return b.String()
}

// taskWork writes what a TC rater needs of a task, as a TC judge reads
// it: the task's expected outcome (its rubric's checks) and the records
// credited to it up to its final turn (the agent's work: tool calls with
// their arguments, results, messages).
func taskWork(b *strings.Builder, run *rows.JudgeRun, t rows.JudgeTask, upTo int64) {
	b.WriteString("\n— Expected (the task's checks): ")
	var rubric map[string][]map[string]any
	if err := json.Unmarshal([]byte(t.Rubric), &rubric); err != nil || len(rubric) == 0 {
		b.WriteString("none given")
	}
	var kinds []string
	for _, kind := range []string{"evidence", "outputs", "constraints"} {
		var checks []string
		for _, c := range rubric[kind] {
			tool, _ := c["tool"].(string)
			rest := map[string]any{}
			for k, v := range c {
				if k != "tool" {
					rest[k] = v
				}
			}
			check := tool
			if len(rest) > 0 {
				j, _ := json.Marshal(rest) // keys sorted
				check = strings.TrimSpace(tool + " " + string(j))
			}
			checks = append(checks, check)
		}
		if len(checks) > 0 {
			kinds = append(kinds, kind+": "+strings.Join(checks, ", "))
		}
	}
	b.WriteString(strings.Join(kinds, "; "))
	fmt.Fprintf(b, "\n— The agent's work on the task (the records credited to it, to its final turn; depth chosen: %s):\n", t.Chosen)
	for _, e := range run.Events {
		if e.Seq > upTo {
			break
		}
		if e.Task != t.Task {
			continue
		}
		fmt.Fprintf(b, "#%d %s %s %s", e.Seq, e.T.UTC().Format("2006-01-02 15:04"), e.Actor, e.Kind)
		if e.Tool != "" {
			fmt.Fprintf(b, " [%s]", e.Tool)
		}
		if e.Args != "" {
			fmt.Fprintf(b, " %s", strings.Join(strings.Fields(e.Args), " "))
		}
		text := e.Text
		if text == "" {
			text = e.Result
		}
		if text != "" {
			fmt.Fprintf(b, ": %s", strings.Join(strings.Fields(text), " "))
		}
		b.WriteString("\n")
	}
}

// VisibleHistories are, for the tasks of runs in need (run → tasks; ""
// for the whole run), what the user saw of the run up to the task
// (VisibleHistory), by run and task: the context column of an annotation
// sheet.
func VisibleHistories(ctx context.Context, w Store, need map[string][]string) (map[[2]string]string, error) {
	history := map[[2]string]string{}
	for after := ""; ; {
		heads, err := w.JudgeHeads(ctx, after, sliceRuns)
		if err != nil || len(heads) == 0 {
			return history, err
		}
		after = heads[len(heads)-1].RunID
		var sel []*rows.JudgeRun
		for _, h := range heads {
			if need[h.RunID] != nil {
				sel = append(sel, h)
			}
		}
		err = w.ScanJudgeEvents(ctx, sel, func(r *rows.JudgeRun) error {
			for _, task := range need[r.RunID] {
				history[[2]string{r.RunID, task}] = VisibleHistory(r, task)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
}

// PromptSHA256 is the SHA-256 of a built-in prompt version's text ("" for
// a version this gymlens does not ship, such as a rubric's, whose digest
// the warehouse keeps).
func PromptSHA256(version string) string {
	for m, v := range PromptVersion {
		if v == version {
			return promptDigest(m)
		}
	}
	return ""
}
