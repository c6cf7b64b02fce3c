package judge

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"

	"github.com/gymlens/gymlens/ingest/rows"
)

// CustomPrefix begins the name of every metric a user rubric defines:
// custom.NAME, its score fields custom.NAME.FIELD.
const CustomPrefix = "custom."

// Item kinds a rubric judges: the built-in metrics' items, or a task's or
// a run's records of the kinds and actors it selects.
const (
	ItemTask = "task"
	ItemRun  = "run"
)

// ItemKinds are the item kinds a rubric may name.
var ItemKinds = []string{TC, TRJ, TA, ItemTask, ItemRun}

// ScoreField is one score of a rubric's answer: its name in the answer,
// its range, and its levels when the schema lists them (an enum).
type ScoreField struct {
	Name     string    `json:"name"`
	Min      float64   `json:"min"`
	Max      float64   `json:"max"`
	Levels   []float64 `json:"levels,omitempty"`
	column   string    // the judgments column of a built-in score
	integral bool      // the schema's type is integer
}

// Rubric is a judge prompt: what it judges, what it tells the judge and
// the answer it expects. The three built-in metrics are rubrics; a user
// writes more (LoadRubrics), each a metric of its own, custom.NAME.
type Rubric struct {
	Metric  string // tc, ta, trj or custom.NAME
	Version string // the prompt version stored with every judgment: tc/v1, NAME/vN
	Item    string // one of ItemKinds
	// Kinds and Actors select the records of task and run items (empty:
	// all); Visible keeps only what the user saw (visible records, the
	// user's own, notifications).
	Kinds, Actors []string
	Visible       bool
	Instructions  string
	Scores        []ScoreField
	Path          string // the file it was read from ("" built in)
	schema        map[string]any
	compiled      *jsonschema.Schema
	evidence      bool   // the answer carries evidence to check
	digest        string // sha256 of everything that shapes a request
	source        string // the file's text
}

// Custom says whether the rubric is a user's.
func (rb *Rubric) Custom() bool { return strings.HasPrefix(rb.Metric, CustomPrefix) }

// RunLevel says whether the rubric judges whole runs (one item a run).
func (rb *Rubric) RunLevel() bool { return rb.Item == TA || rb.Item == ItemRun }

// Schema is the JSON Schema of the rubric's answer, for structured output.
func (rb *Rubric) Schema() map[string]any { return rb.schema }

// Definition is what the warehouse keeps of a rubric, for the metrics
// made from its judgments.
func (rb *Rubric) Definition() rows.Rubric {
	d := rows.Rubric{Metric: rb.Metric, Prompt: rb.Version, Item: rb.Item, Level: "task", Digest: rb.digest, Text: rb.source}
	if rb.RunLevel() {
		d.Level = "run"
	}
	for _, f := range rb.Scores {
		d.Scores = append(d.Scores, rows.RubricScore{Name: f.Name, Min: f.Min, Max: f.Max, Levels: f.Levels})
	}
	return d
}

var builtins = func() map[string]*Rubric {
	num := func(lo, hi float64, names ...string) []ScoreField {
		var out []ScoreField
		for _, n := range names {
			out = append(out, ScoreField{Name: n, Min: lo, Max: hi, column: n})
		}
		return out
	}
	m := map[string]*Rubric{
		TC:  {Metric: TC, Item: TC, Scores: num(0, 1, "correctness", "grounding", "completeness", "artifact_quality")},
		TRJ: {Metric: TRJ, Item: TRJ, Scores: num(1, 5, "understandability", "competence", "reliability", "attachment", "faith")},
		TA: {Metric: TA, Item: TA, Scores: []ScoreField{{Name: "now", Min: 0, Max: 1, Levels: []float64{0, 1}, column: "ta_now"},
			{Name: "later", Min: 0, Max: 1, Levels: []float64{0, 1}, column: "ta_later"},
			{Name: "cq", Min: 0, Max: 1, Levels: []float64{0, 0.5, 1}, column: "ta_cq"}}},
	}
	for k, rb := range m {
		rb.Version, rb.Instructions, rb.evidence = PromptVersion[k], Prompt(k), true
		rb.schema = Schema(k)
	}
	return m
}()

// Builtin is the rubric of a built-in metric (tc, ta, trj), or nil.
func Builtin(metric string) *Rubric {
	rb := builtins[metric]
	if rb == nil {
		return nil
	}
	// PromptVersion may be changed (tests do): a copy follows it.
	cp := *rb
	cp.Version = PromptVersion[metric]
	return &cp
}

// rubricFile is a rubric as written: YAML (or JSON, which is YAML).
type rubricFile struct {
	Name         string                 `yaml:"name"`
	Version      any                    `yaml:"version"`
	Item         string                 `yaml:"item"`
	Records      *rubricRecords         `yaml:"records"`
	Instructions string                 `yaml:"instructions"`
	Answer       map[string]any         `yaml:"answer"`
	Scores       map[string]rubricRange `yaml:"scores"`
}

type rubricRecords struct {
	Kinds   []string `yaml:"kinds"`
	Actors  []string `yaml:"actors"`
	Visible bool     `yaml:"visible"`
}

type rubricRange struct {
	Min *float64 `yaml:"min"`
	Max *float64 `yaml:"max"`
}

var (
	rubricName    = regexp.MustCompile(`^[a-z][a-z0-9_]{0,39}$`)
	rubricVersion = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,19}$`)
	recordKinds   = []string{"message", "notification", "tool_call", "tool_result", "approval_request", "decision", "schedule", "availability"}
	recordActors  = []string{"agent", "user", "env", "system"}
)

// LoadRubrics reads rubric files, and every *.yaml, *.yml and *.json file
// of the folders named, in name order. Every problem is reported before
// any request is made, naming the file, the line where known, and the
// field; two rubrics of one name are refused.
func LoadRubrics(paths []string) ([]*Rubric, error) {
	var files []string
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("--prompt: %w", err)
		}
		if !st.IsDir() {
			files = append(files, p)
			continue
		}
		var found []string
		for _, pat := range []string{"*.yaml", "*.yml", "*.json"} {
			m, _ := filepath.Glob(filepath.Join(p, pat))
			found = append(found, m...)
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("--prompt %s: the folder holds no rubric (*.yaml, *.yml, *.json)", p)
		}
		sort.Strings(found)
		files = append(files, found...)
	}
	var out []*Rubric
	seen := map[string]string{}
	for _, f := range files {
		rb, err := ReadRubric(f)
		if err != nil {
			return nil, err
		}
		if prev, ok := seen[rb.Metric]; ok {
			return nil, fmt.Errorf("%s: field name: rubric %q is also defined by %s", f, strings.TrimPrefix(rb.Metric, CustomPrefix), prev)
		}
		seen[rb.Metric] = f
		out = append(out, rb)
	}
	return out, nil
}

// RubricError is a problem with a rubric file: the file, the line (0:
// unknown) and the field.
type RubricError struct {
	File  string
	Line  int
	Field string
	Err   error
}

func (e *RubricError) Error() string {
	at := e.File
	if e.Line > 0 {
		at = fmt.Sprintf("%s:%d", e.File, e.Line)
	}
	return fmt.Sprintf("%s: field %s: %v", at, e.Field, e.Err)
}

func (e *RubricError) Unwrap() error { return e.Err }

// ReadRubric reads and checks one rubric file.
func ReadRubric(path string) (*Rubric, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--prompt: %w", err)
	}
	return ParseRubric(path, b)
}

// ParseRubric reads and checks a rubric's text (name is its file, for
// messages).
func ParseRubric(name string, b []byte) (*Rubric, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("%s: not YAML or JSON: %w", name, err)
	}
	fail := func(field string, format string, args ...any) error {
		return &RubricError{File: name, Line: lineOf(&doc, strings.Split(field, ".")...), Field: field, Err: fmt.Errorf(format, args...)}
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s: expected a mapping with name, version, item, instructions, answer and scores", name)
	}
	var f rubricFile
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if !rubricName.MatchString(f.Name) {
		return nil, fail("name", "expected a lower-case name of letters, digits and _ (at most 40, starting with a letter), found %q", f.Name)
	}
	version := strings.TrimPrefix(fmt.Sprint(f.Version), "v")
	if f.Version == nil || !rubricVersion.MatchString(version) {
		return nil, fail("version", "expected a version such as 1 or 2.1, found %v", f.Version)
	}
	rb := &Rubric{Metric: CustomPrefix + f.Name, Version: f.Name + "/v" + version, Item: f.Item, Path: name, source: string(b)}
	if !slices.Contains(ItemKinds, f.Item) {
		return nil, fail("item", "expected one of %s, found %q", strings.Join(ItemKinds, ", "), f.Item)
	}
	if f.Records != nil {
		if f.Item != ItemTask && f.Item != ItemRun {
			return nil, fail("records", "only task and run items select records; %s items show what the built-in %s prompt shows", f.Item, f.Item)
		}
		for _, k := range f.Records.Kinds {
			if !slices.Contains(recordKinds, k) {
				return nil, fail("records.kinds", "expected some of %s, found %q", strings.Join(recordKinds, ", "), k)
			}
		}
		for _, a := range f.Records.Actors {
			if !slices.Contains(recordActors, a) {
				return nil, fail("records.actors", "expected some of %s, found %q", strings.Join(recordActors, ", "), a)
			}
		}
		rb.Kinds, rb.Actors, rb.Visible = f.Records.Kinds, f.Records.Actors, f.Records.Visible
	}
	rb.Instructions = strings.TrimSpace(f.Instructions)
	if rb.Instructions == "" {
		return nil, fail("instructions", "missing: the instructions are the judge's system prompt")
	}
	if f.Answer == nil {
		return nil, fail("answer", "missing: the JSON Schema of the judge's answer")
	}
	// The schema as JSON: YAML's values made plain (maps with string keys,
	// float64 numbers), so that the compiler and the request see the same.
	js, err := json.Marshal(f.Answer)
	if err != nil {
		return nil, fail("answer", "cannot be written as JSON: %v", err)
	}
	if err := json.Unmarshal(js, &rb.schema); err != nil {
		return nil, fail("answer", "%v", err)
	}
	doc2, err := jsonschema.UnmarshalJSON(bytes.NewReader(js))
	if err != nil {
		return nil, fail("answer", "%v", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource("answer.json", doc2); err != nil {
		return nil, fail("answer", "not a valid JSON Schema: %v", err)
	}
	if rb.compiled, err = c.Compile("answer.json"); err != nil {
		loc, msg := schemaErr(err)
		return nil, fail(strings.Join(append([]string{"answer"}, loc...), "."), "not a valid JSON Schema: %s", msg)
	}
	if rb.schema["type"] != "object" {
		return nil, fail("answer.type", "expected object: the answer is a JSON object of scores")
	}
	props, _ := rb.schema["properties"].(map[string]any)
	if len(props) == 0 {
		return nil, fail("answer.properties", "missing: the answer's fields, the scores among them")
	}
	// Strict structured output (what gymlens asks for) takes a schema
	// whose every field is required and that allows no other.
	if rb.schema["additionalProperties"] != false {
		return nil, fail("answer.additionalProperties", "expected false: structured output in strict mode allows no field the schema does not name")
	}
	req := map[string]bool{}
	if list, ok := rb.schema["required"].([]any); ok {
		for _, r := range list {
			if s, ok := r.(string); ok {
				req[s] = true
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(props)) {
		if !req[k] {
			return nil, fail("answer.required", "%q is not required: structured output in strict mode requires every field it names", k)
		}
	}
	if len(f.Scores) == 0 {
		return nil, fail("scores", "missing: which answer fields are scores, with their ranges ({min, max})")
	}
	for _, k := range slices.Sorted(maps.Keys(f.Scores)) {
		r := f.Scores[k]
		field := "scores." + k
		if !rubricName.MatchString(k) {
			return nil, fail(field, "expected a lower-case name of letters, digits and _, found %q", k)
		}
		p, ok := props[k].(map[string]any)
		if !ok {
			return nil, fail(field, "the score %q is not a field of the answer's schema (answer.properties)", k)
		}
		if t := p["type"]; t != "number" && t != "integer" {
			return nil, fail(field, "the schema's %q has type %v; a score is a number or an integer", k, t)
		}
		if r.Min == nil || r.Max == nil || !(*r.Min < *r.Max) || math.IsInf(*r.Min, 0) || math.IsInf(*r.Max, 0) {
			return nil, fail(field, "expected {min: LOW, max: HIGH} with LOW < HIGH")
		}
		sf := ScoreField{Name: k, Min: *r.Min, Max: *r.Max, integral: p["type"] == "integer"}
		if en, ok := p["enum"].([]any); ok {
			for _, v := range en {
				x, ok := v.(float64)
				if !ok || x < sf.Min || x > sf.Max {
					return nil, fail(field, "the schema's enum holds %v, outside [%g, %g]", v, sf.Min, sf.Max)
				}
				sf.Levels = append(sf.Levels, x)
			}
			sort.Float64s(sf.Levels)
		}
		rb.Scores = append(rb.Scores, sf)
	}
	if _, ok := props["evidence"]; ok {
		rb.evidence = true
	}
	canon, _ := json.Marshal(struct {
		V, I, Ins string
		K, A      []string
		Vis       bool
		S         map[string]any
		F         []ScoreField
	}{rb.Version, rb.Item, rb.Instructions, rb.Kinds, rb.Actors, rb.Visible, rb.schema, rb.Scores})
	sum := sha256.Sum256(canon)
	rb.digest = hex.EncodeToString(sum[:])
	return rb, nil
}

// schemaErr is where in the schema the compiler's first complaint is,
// and the complaint, without its long preamble.
func schemaErr(err error) ([]string, string) {
	var se *jsonschema.SchemaValidationError
	if !errors.As(err, &se) {
		return nil, err.Error()
	}
	var ve *jsonschema.ValidationError
	if !errors.As(se.Err, &ve) {
		return nil, se.Err.Error()
	}
	for len(ve.Causes) > 0 {
		ve = ve.Causes[0]
	}
	// The leaf's own message: its first line without the location.
	msg := strings.TrimSpace(ve.Error())
	if i := strings.Index(msg, ": "); i >= 0 && strings.HasPrefix(msg, "at ") {
		msg = msg[i+2:]
	}
	return ve.InstanceLocation, msg
}

// lineOf is the line of a key path in a YAML document, or 0.
func lineOf(doc *yaml.Node, path ...string) int {
	if len(doc.Content) == 0 {
		return 0
	}
	n, line := doc.Content[0], 0
	for _, k := range path {
		if n.Kind != yaml.MappingNode {
			return line
		}
		found := false
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == k {
				line, n, found = n.Content[i].Line, n.Content[i+1], true
				break
			}
		}
		if !found {
			return line
		}
	}
	return line
}

// ParseAnswer reads a judge's answer to the rubric: JSON (a Markdown code
// fence around it is accepted), valid against the rubric's schema, every
// score a number in its range (one of its levels where it has levels).
func (rb *Rubric) ParseAnswer(content string) (*Answer, error) {
	if !rb.Custom() {
		return ParseAnswer(rb.Metric, content)
	}
	s := unfence(content)
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(s))
	if err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	if err := rb.compiled.Validate(inst); err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			return nil, fmt.Errorf("does not match the rubric's schema: %s", oneLine(ve))
		}
		return nil, fmt.Errorf("does not match the rubric's schema: %v", err)
	}
	var all map[string]any
	if err := json.Unmarshal([]byte(s), &all); err != nil {
		return nil, fmt.Errorf("not a JSON object: %w", err)
	}
	a := &Answer{Scores: map[string]float64{}}
	if r, ok := all["reasons"].(string); ok {
		a.Reasons = r
	}
	if rb.evidence {
		if ev, ok := all["evidence"]; ok {
			b, _ := json.Marshal(ev)
			if err := json.Unmarshal(b, &a.Evidence); err != nil {
				return nil, fmt.Errorf("evidence malformed: expected a list of {seq, quote}: %w", err)
			}
		}
	}
	for _, f := range rb.Scores {
		x, ok := all[f.Name].(float64)
		if !ok {
			return nil, fmt.Errorf("score %q missing or not a number", f.Name)
		}
		if x < f.Min || x > f.Max {
			return nil, fmt.Errorf("score %q = %g, expected in [%g,%g]", f.Name, x, f.Min, f.Max)
		}
		if len(f.Levels) > 0 && !slices.Contains(f.Levels, x) {
			return nil, fmt.Errorf("score %q = %g, expected one of %v", f.Name, x, f.Levels)
		}
		a.Scores[f.Name] = x
	}
	return a, nil
}

// oneLine is a validation error's message on one line.
func oneLine(ve *jsonschema.ValidationError) string {
	return strings.Join(strings.Fields(ve.Error()), " ")
}

func unfence(content string) string {
	s := strings.TrimSpace(content)
	if strings.HasPrefix(s, "```") {
		s = strings.TrimPrefix(s, "```json")
		s = strings.TrimPrefix(s, "```")
		s = strings.TrimSuffix(strings.TrimSpace(s), "```")
	}
	return s
}

// scoreKey is the warehouse's name of a score: the judgments column of a
// built-in score, the field's name for a custom one.
func (rb *Rubric) scoreKey(name string) string {
	for _, f := range rb.Scores {
		if f.Name == name && f.column != "" {
			return f.column
		}
	}
	return name
}

// schemaName names the answer's schema in a request (letters, digits, _
// and - only).
func (rb *Rubric) schemaName() string { return strings.ReplaceAll(rb.Metric, ".", "_") + "_answer" }

// textDigest is what of the rubric's text a source key holds: the
// built-in prompt's digest, or the user rubric's.
func (rb *Rubric) textDigest() string {
	if rb.Custom() {
		return rb.digest
	}
	return promptDigest(rb.Metric)
}
