package pare

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/valyala/fastjson"

	"github.com/gymlens/gymlens/ingest/rows"
	"github.com/gymlens/gymlens/ingest/runlog"
)

// Statuses are the run outcomes PARE and Meta-ARE write.
var Statuses = []string{"success", "failed", "exception", "no_validation"}

// CountFields are PARE's stored per-run counts, in the order of
// Result.Counts.
var CountFields = []string{"proposal_count", "acceptance_count", "read_only_actions", "write_actions", "number_of_turns"}

// Capabilities and Phases are Gaia2's capability and phase names, as
// Meta-ARE names its output folders.
var (
	Capabilities = []string{"execution", "search", "adaptability", "time", "ambiguity", "mini"}
	Phases       = []string{"standard", "agent2agent", "noise"}
)

// Result is one scenario run as a result file lists it: a row of PARE's
// *_result.json or a line of Meta-ARE's output.jsonl.
type Result struct {
	Line                                       int    // where the row starts in its file (1-based)
	Source                                     string // pare or are
	Scenario                                   string
	RunNumber                                  *int
	Status                                     string   // one of Statuses
	Success                                    *float64 // 1 or 0; nil when the run was not validated
	HasException                               bool
	ExceptionType, ExceptionMessage, Rationale string
	ExportPath                                 string // the trace's path, as written
	RunDuration, JobDuration                   *float64
	UserModel, ProactiveModel                  string
	ObserveModel, ExecuteModel, AgentType      string
	ToolFailure                                *float64
	EnvEvents                                  *int
	Capability, Phase                          string  // Meta-ARE
	Model                                      string  // Meta-ARE: the agent's model, when known
	Counts                                     [5]*int // CountFields
	ProposalRate, AcceptanceRate               *float64
	Fields                                     json.RawMessage // the row as written
}

// ConfigID names the configuration a result belongs to: for PARE its
// proactive and user models (PARE's aliases), and the noise settings when
// any is on; for Meta-ARE the agent's model.
func (r *Result) ConfigID() string {
	if r.Source == "are" {
		if r.Model == "" {
			return "unknown model"
		}
		return r.Model
	}
	if n := r.Noise(); n != "none" {
		return runlog.JoinID(r.ProactiveModel, r.UserModel, n)
	}
	return runlog.JoinID(r.ProactiveModel, r.UserModel)
}

// Noise describes the noise settings: PARE's tool failure probability and
// environment events per minute, or Meta-ARE's phase.
func (r *Result) Noise() string {
	if r.Source == "are" {
		if r.Phase == "" {
			return "unknown"
		}
		return r.Phase
	}
	var parts []string
	if r.ToolFailure != nil && *r.ToolFailure > 0 {
		parts = append(parts, "tfp="+strconv.FormatFloat(*r.ToolFailure, 'g', -1, 64))
	}
	if r.EnvEvents != nil && *r.EnvEvents > 0 {
		parts = append(parts, "epm="+strconv.Itoa(*r.EnvEvents))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, " ")
}

// NoiseLabel is the value of the noise dimension, one vocabulary for result
// rows and traces alike: "none", "tool" (tool failures), "env"
// (environment events) or "tool+env".
func NoiseLabel(tool, env bool) string { return rows.NoiseLabel(tool, env) }

// NoiseClass is the result's noise dimension (NoiseLabel): for PARE, tool
// failures when the tool failure probability is above 0 and environment
// events when their rate is; for Meta-ARE, Gaia2's noise phase adds both
// and its other phases neither ("unknown" without a phase).
func (r *Result) NoiseClass() string {
	if r.Source == "are" {
		switch r.Phase {
		case "":
			return "unknown"
		case "noise":
			return NoiseLabel(true, true)
		}
		return NoiseLabel(false, false)
	}
	return NoiseLabel(r.ToolFailure != nil && *r.ToolFailure > 0, r.EnvEvents != nil && *r.EnvEvents > 0)
}

// Key is the run a result is about: scenario, run number, configuration.
func (r *Result) Key() string {
	run := "?"
	if r.RunNumber != nil {
		run = strconv.Itoa(*r.RunNumber)
	}
	return fmt.Sprintf("%s_run_%s | %s", r.Scenario, run, r.ConfigID())
}

// FileError is a result or report file that cannot be read, with where.
type FileError struct {
	Path       string
	Line       int // 0: not known
	Field, Msg string
}

func (e *FileError) Error() string {
	at := e.Path
	if e.Line > 0 {
		at += ":" + strconv.Itoa(e.Line)
	}
	if e.Field != "" {
		return fmt.Sprintf("%s: field %s: %s", at, e.Field, e.Msg)
	}
	return at + ": " + e.Msg
}

// lines maps byte offsets to line numbers.
type lines []int

func newLines(b []byte) lines {
	ls := lines{0}
	for i, c := range b {
		if c == '\n' {
			ls = append(ls, i+1)
		}
	}
	return ls
}

func (ls lines) at(off int) int {
	i, _ := slices.BinarySearch(ls, off+1)
	return i
}

// skipFill moves past white space and commas.
func skipFill(b []byte, off int) int {
	for off < len(b) && strings.IndexByte(" \t\r\n,", b[off]) >= 0 {
		off++
	}
	return off
}

// jsonError turns a decoding error into a FileError with its line.
func jsonError(path string, b []byte, ls lines, err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return &FileError{Path: path, Line: ls.at(int(se.Offset) - 1), Msg: "not JSON: " + se.Error()}
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return &FileError{Path: path, Line: ls.at(len(b) - 1), Msg: "not JSON: the file ends early (truncated?)"}
	}
	return &FileError{Path: path, Msg: "not JSON: " + err.Error()}
}

// element is one value of a JSON list, with the line it starts on.
type element struct {
	raw  json.RawMessage
	line int
}

// listAt reads the list at the top level (key "") or under a top-level
// key, element by element, noting where each starts.
func listAt(path string, b []byte, key string) ([]element, error) {
	ls := newLines(b)
	dec := json.NewDecoder(bytes.NewReader(b))
	tok, err := dec.Token()
	if err != nil {
		return nil, jsonError(path, b, ls, err)
	}
	if key != "" {
		if tok != json.Delim('{') {
			return nil, &FileError{Path: path, Line: 1, Msg: "expected a JSON object"}
		}
		found := false
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return nil, jsonError(path, b, ls, err)
			}
			if k == key {
				found = true
				break
			}
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return nil, jsonError(path, b, ls, err)
			}
		}
		if !found {
			return nil, &FileError{Path: path, Field: key, Msg: "missing"}
		}
		if tok, err = dec.Token(); err != nil {
			return nil, jsonError(path, b, ls, err)
		}
	}
	if tok != json.Delim('[') {
		field := key
		return nil, &FileError{Path: path, Line: ls.at(int(dec.InputOffset()) - 1), Field: field, Msg: "expected a list"}
	}
	var out []element
	for dec.More() {
		start := skipFill(b, int(dec.InputOffset()))
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, jsonError(path, b, ls, err)
		}
		out = append(out, element{raw: raw, line: ls.at(start)})
	}
	if _, err := dec.Token(); err != nil {
		return nil, jsonError(path, b, ls, err)
	}
	return out, nil
}

// row reads the fields of one result row, reporting the first bad one.
type row struct {
	path string
	line int
	m    map[string]json.RawMessage
	err  error
}

func newRow(path string, line int, raw []byte) (*row, error) {
	r := &row{path: path, line: line}
	if err := strictJSON(raw); err != nil {
		err.Path, err.Line = path, line
		return nil, err
	}
	if err := json.Unmarshal(raw, &r.m); err != nil || r.m == nil {
		return nil, &FileError{Path: path, Line: line, Msg: "expected a JSON object"}
	}
	return r, nil
}

// strictJSON holds raw to RFC 8259 and refuses a key given twice in one
// object (encoding/json would keep the last, fastjson the first).
func strictJSON(raw []byte) *FileError {
	if err := runlog.CheckJSON(raw); err != nil {
		return &FileError{Msg: err.Error(), Line: runlog.At("", raw, err).Line}
	}
	v, err := fastjson.ParseBytes(raw)
	if err != nil {
		return &FileError{Msg: "not JSON: " + err.Error()}
	}
	if k := runlog.DuplicateKey(v); k != "" {
		return &FileError{Field: k, Msg: "the key occurs twice in one object (JSON readers differ on which one counts)"}
	}
	return nil
}

func (r *row) fail(field, format string, args ...any) {
	if r.err == nil {
		r.err = &FileError{Path: r.path, Line: r.line, Field: field, Msg: fmt.Sprintf(format, args...)}
	}
}

func (r *row) null(name string) bool {
	v, ok := r.m[name]
	return !ok || string(v) == "null"
}

func (r *row) str(name string, required bool) string {
	if r.null(name) {
		if required {
			r.fail(name, "missing")
		}
		return ""
	}
	var s string
	if json.Unmarshal(r.m[name], &s) != nil {
		r.fail(name, "expected a string, found %s", r.m[name])
		return ""
	}
	if required && s == "" {
		r.fail(name, "empty")
	}
	return s
}

func (r *row) num(name string) *float64 {
	if r.null(name) {
		return nil
	}
	var f float64
	if json.Unmarshal(r.m[name], &f) != nil || math.IsNaN(f) {
		r.fail(name, "expected a number or null, found %s", r.m[name])
		return nil
	}
	return &f
}

func (r *row) count(name string) *int {
	f := r.num(name)
	if f == nil {
		return nil
	}
	if *f != math.Trunc(*f) || *f < 0 || *f > math.MaxInt32 {
		r.fail(name, "expected a count (a whole number ≥ 0), found %s", r.m[name])
		return nil
	}
	n := int(*f)
	return &n
}

func (r *row) boolean(name string) *bool {
	if r.null(name) {
		return nil
	}
	var v bool
	if json.Unmarshal(r.m[name], &v) != nil {
		r.fail(name, "expected true, false or null, found %s", r.m[name])
		return nil
	}
	return &v
}

func (r *row) rate(name string) *float64 {
	f := r.num(name)
	if f != nil && *f < 0 {
		r.fail(name, "a rate cannot be negative, found %s", r.m[name])
	}
	return f
}

// outcome checks a row's status against its success value.
func (r *row) outcome(res *Result, successField string) {
	if res.Status != "" && !slices.Contains(Statuses, res.Status) {
		r.fail("status", "expected one of %s, found %q", strings.Join(Statuses, ", "), res.Status)
		return
	}
	s := res.Success
	if s != nil && *s != 0 && *s != 1 {
		r.fail(successField, "expected 1, 0 or null, found %s", r.m[successField])
		return
	}
	want := map[string]string{"success": "1", "failed": "0", "exception": "null", "no_validation": "null"}
	got := "null"
	if s != nil {
		got = strconv.FormatFloat(*s, 'g', -1, 64)
	}
	if res.Status == "" {
		switch got {
		case "1":
			res.Status = "success"
		case "0":
			res.Status = "failed"
		default:
			res.Status = "no_validation"
			if res.HasException {
				res.Status = "exception"
			}
		}
		return
	}
	if want[res.Status] != got {
		r.fail(successField, "is %s but status is %q (which goes with %s)", got, res.Status, want[res.Status])
	}
}

// ReadPAREResults reads a PARE result file: a JSON list with one object
// per scenario run, as PARE's benchmark writes to
// <config>_result.json.
func ReadPAREResults(path string, b []byte) ([]Result, error) {
	if json.Valid(b) { // else the reader below says where it breaks
		if err := strictJSON(b); err != nil {
			err.Path = path
			return nil, err
		}
	}
	elems, err := listAt(path, b, "")
	if err != nil {
		return nil, err
	}
	out := make([]Result, 0, len(elems))
	for _, e := range elems {
		r, err := newRow(path, e.line, e.raw)
		if err != nil {
			return nil, err
		}
		res := Result{Line: e.line, Source: "pare", Fields: e.raw}
		res.Scenario = r.str("base_scenario_id", true)
		res.RunNumber = r.count("run_number")
		res.Status = r.str("status", true)
		res.Success = r.num("success_numeric")
		if sb := r.boolean("success_bool"); sb != nil && (res.Success == nil || (*res.Success == 1) != *sb) {
			r.fail("success_bool", "disagrees with success_numeric")
		}
		if h := r.boolean("has_exception"); h != nil {
			res.HasException = *h
		}
		res.ExceptionType, res.ExceptionMessage = r.str("exception_type", false), r.str("exception_message", false)
		res.Rationale, res.ExportPath = r.str("rationale", false), r.str("export_path", false)
		res.RunDuration, res.JobDuration = r.num("run_duration"), r.num("job_duration")
		res.UserModel, res.ObserveModel, res.ExecuteModel = r.str("user_model", false), r.str("observe_model", false), r.str("execute_model", false)
		res.AgentType, res.ProactiveModel = r.str("agent_type", false), r.str("proactive_model", false)
		if res.ProactiveModel == "" && res.ObserveModel != "" {
			res.ProactiveModel = strings.TrimPrefix(res.AgentType+"_", "_") + res.ObserveModel + "_" + res.ExecuteModel
		}
		if res.ProactiveModel == "" {
			r.fail("proactive_model", "missing (and no observe_model to name the configuration by)")
		}
		res.ToolFailure = r.num("tool_failure_probability")
		if res.ToolFailure != nil && (*res.ToolFailure < 0 || *res.ToolFailure > 1) {
			r.fail("tool_failure_probability", "expected a probability in [0, 1], found %s", r.m["tool_failure_probability"])
		}
		res.EnvEvents = r.count("num_env_events_per_minute")
		for i, f := range CountFields {
			res.Counts[i] = r.count(f)
		}
		res.ProposalRate, res.AcceptanceRate = r.rate("proposal_rate"), r.rate("acceptance_rate")
		r.outcome(&res, "success_numeric")
		if r.err != nil {
			return nil, r.err
		}
		out = append(out, res)
	}
	return out, nil
}

// ReadAREOutput reads a Meta-ARE output.jsonl: one JSON object per line
// with task_id, trace_id, score and metadata (scenario_id, run_number,
// status, exception, rationale). The capability and the phase are the
// names of the folders it sits in (…/<phase>/<capability>/output.jsonl),
// when they are Gaia2's; the model is named by a benchmark_stats.json in
// the same folder or one above, when there is one.
func ReadAREOutput(path string, b []byte) ([]Result, error) {
	capability, phase := AREFolders(path)
	model := AREModelNear(path)
	var out []Result
	for i, ln := range bytes.Split(b, []byte("\n")) {
		line := i + 1
		if len(bytes.TrimSpace(ln)) == 0 {
			continue
		}
		var probe any
		if err := json.Unmarshal(ln, &probe); err != nil {
			return nil, &FileError{Path: path, Line: line, Msg: "not JSON (truncated?): " + err.Error()}
		}
		r, err := newRow(path, line, ln)
		if err != nil {
			return nil, err
		}
		res := Result{Line: line, Source: "are", Fields: append(json.RawMessage(nil), ln...), Capability: capability, Phase: phase, Model: model}
		task := r.str("task_id", false)
		res.ExportPath = r.str("trace_id", false)
		res.Success = r.num("score")
		meta := &row{path: path, line: line, m: map[string]json.RawMessage{}}
		if !r.null("metadata") {
			if json.Unmarshal(r.m["metadata"], &meta.m) != nil {
				r.fail("metadata", "expected a JSON object")
			}
		}
		res.Scenario = meta.str("scenario_id", false)
		if res.Scenario == "" {
			res.Scenario = task
		}
		if res.Scenario == "" {
			r.fail("task_id", "missing: a line must name its scenario (task_id or metadata.scenario_id)")
		}
		res.RunNumber = meta.count("run_number")
		res.Status = meta.str("status", false)
		if h := meta.boolean("has_exception"); h != nil {
			res.HasException = *h
		}
		res.ExceptionType, res.ExceptionMessage = meta.str("exception_type", false), meta.str("exception_message", false)
		res.Rationale = meta.str("rationale", false)
		if meta.err != nil {
			fe := meta.err.(*FileError)
			fe.Field = "metadata." + fe.Field
			return nil, fe
		}
		r.outcome(&res, "score")
		if r.err != nil {
			return nil, r.err
		}
		out = append(out, res)
	}
	return out, nil
}

// AREFolders reads the capability and phase from an output file's folders.
func AREFolders(path string) (capability, phase string) {
	dir := filepath.Dir(path)
	if c := filepath.Base(dir); slices.Contains(Capabilities, c) {
		capability = c
		if p := filepath.Base(filepath.Dir(dir)); slices.Contains(Phases, p) {
			phase = p
		}
	}
	return capability, phase
}

// AREModelNear finds the model named by a benchmark_stats.json in the
// output file's folder or up to two above it ("" when none names one).
func AREModelNear(path string) string {
	dir := filepath.Dir(path)
	for range 3 {
		if b, err := os.ReadFile(filepath.Join(dir, "benchmark_stats.json")); err == nil {
			var top struct {
				Metadata struct {
					Model string `json:"model"`
				} `json:"metadata"`
			}
			if json.Unmarshal(b, &top) == nil && top.Metadata.Model != "" {
				return top.Metadata.Model
			}
		}
		up := filepath.Dir(dir)
		if up == dir {
			break
		}
		dir = up
	}
	return ""
}

// Section is one part of a summary report: a PARE configuration of
// combined_result.json, or a Meta-ARE capability (or "global") of
// benchmark_stats.json, with its statistics as written.
type Section struct {
	Line  int
	Name  string // PARE: the configuration's ConfigID; ARE: the capability
	Stats map[string]json.RawMessage
	Raw   json.RawMessage
}

// Report is a summary report file.
type Report struct {
	Source, Kind string // pare/combined_result or are/benchmark_stats
	Model        string // ARE: metadata.model
	Sections     []Section
}

// ReadPARECombined reads PARE's combined_result.json: metadata and one
// entry of statistics per configuration (per_config_results).
func ReadPARECombined(path string, b []byte) (*Report, error) {
	if json.Valid(b) { // else the reader below says where it breaks
		if err := strictJSON(b); err != nil {
			err.Path = path
			return nil, err
		}
	}
	elems, err := listAt(path, b, "per_config_results")
	if err != nil {
		return nil, err
	}
	rep := &Report{Source: "pare", Kind: "combined_result"}
	seen := map[string]int{}
	for _, e := range elems {
		r, err := newRow(path, e.line, e.raw)
		if err != nil {
			return nil, err
		}
		res := Result{Source: "pare"}
		res.UserModel = r.str("user_model", true)
		res.ProactiveModel = r.str("proactive_model", true)
		res.ToolFailure = r.num("tool_failure_probability")
		res.EnvEvents = r.count("num_env_events_per_minute")
		for k := range r.m {
			if k == "user_model" || k == "proactive_model" {
				continue
			}
			if string(r.m[k]) != "null" && json.Unmarshal(r.m[k], new(float64)) != nil {
				r.fail(k, "expected a number, found %s", r.m[k])
			}
		}
		if r.err != nil {
			return nil, r.err
		}
		name := res.ConfigID()
		if l, dup := seen[name]; dup {
			return nil, &FileError{Path: path, Line: e.line, Msg: fmt.Sprintf("configuration %q is also on line %d", name, l)}
		}
		seen[name] = e.line
		rep.Sections = append(rep.Sections, Section{Line: e.line, Name: name, Stats: r.m, Raw: e.raw})
	}
	return rep, nil
}

// ReadAREStats reads Meta-ARE's benchmark_stats.json: statistics per
// capability and global ones.
func ReadAREStats(path string, b []byte) (*Report, error) {
	if json.Valid(b) { // else the reader below says where it breaks
		if err := strictJSON(b); err != nil {
			err.Path = path
			return nil, err
		}
	}
	ls := newLines(b)
	var top struct {
		Metadata struct {
			Model string `json:"model"`
		} `json:"metadata"`
		Statistics *struct {
			PerCapability map[string]map[string]json.RawMessage `json:"per_capability"`
			Global        map[string]json.RawMessage            `json:"global"`
		} `json:"statistics"`
	}
	if err := json.Unmarshal(b, &top); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return nil, &FileError{Path: path, Line: ls.at(int(te.Offset) - 1), Field: te.Field, Msg: "expected " + te.Type.String() + ", found " + te.Value}
		}
		return nil, jsonError(path, b, ls, err)
	}
	if top.Statistics == nil {
		return nil, &FileError{Path: path, Field: "statistics", Msg: "missing"}
	}
	rep := &Report{Source: "are", Kind: "benchmark_stats", Model: top.Metadata.Model}
	lineOf := func(key string) int {
		i := bytes.Index(b, []byte(strconv.Quote(key)+":"))
		if i < 0 {
			i = bytes.Index(b, []byte(strconv.Quote(key)))
		}
		if i < 0 {
			return 0
		}
		return ls.at(i)
	}
	names := make([]string, 0, len(top.Statistics.PerCapability))
	for k := range top.Statistics.PerCapability {
		names = append(names, k)
	}
	slices.Sort(names)
	add := func(name string, m map[string]json.RawMessage) error {
		for k, v := range m {
			if k == "capability" {
				continue
			}
			if string(v) != "null" && json.Unmarshal(v, new(float64)) != nil {
				if bytes.HasPrefix(bytes.TrimSpace(v), []byte("{")) { // nested summaries (bootstrap) are kept, not checked
					continue
				}
				return &FileError{Path: path, Line: lineOf(name), Field: "statistics." + name + "." + k, Msg: "expected a number, found " + string(v)}
			}
		}
		raw, _ := json.Marshal(m)
		rep.Sections = append(rep.Sections, Section{Line: lineOf(name), Name: name, Stats: m, Raw: raw})
		return nil
	}
	for _, n := range names {
		if err := add(n, top.Statistics.PerCapability[n]); err != nil {
			return nil, err
		}
	}
	if top.Statistics.Global != nil {
		if err := add("global", top.Statistics.Global); err != nil {
			return nil, err
		}
	}
	return rep, nil
}
