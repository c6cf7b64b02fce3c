package sample

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/zeebo/xxh3"
)

// Options tunes Write.
type Options struct {
	Seed     uint64
	Scale    int    // multiplies the repetitions (3 × Scale per persona and scenario)
	Compress string // "", "gz" or "zst" for the record streams
	// Configs, when > 0, writes only the first Configs configurations of
	// the grid: a small corpus for tests.
	Configs int
}

// Check says what is wrong with o as gymlens sample's flags give it
// (Compress none, gz or zst; Scale at least 1; Configs at most the
// grid's), in their words.
func (o Options) Check() error {
	if o.Scale < 1 {
		return fmt.Errorf("--scale: expected a whole number ≥ 1, found %d", o.Scale)
	}
	if o.Configs < 0 || o.Configs > len(Grid()) {
		return fmt.Errorf("--configs: expected 0 (all) to %d, found %d", len(Grid()), o.Configs)
	}
	switch o.Compress {
	case "none", "gz", "zst":
		return nil
	}
	return fmt.Errorf("--compress: expected none, gz or zst, found %q", o.Compress)
}

// Judges are the three LLM judges of the sample, of the Qwen, GPT and
// Claude families (JudgeFamilies).
var Judges = []string{"judge-qwen3.5-397b", "judge-gpt-5.6-luna", "judge-sonnet-5"}

// JudgeFamilies are the judges' families, in the order of Judges.
var JudgeFamilies = []string{"Qwen", "GPT", "Claude"}

// FamiliesFile is where Write puts the corpus's families (name,family:
// every agent model and judge), for agree --bias and compare --debias.
const FamiliesFile = ".sample/families.csv"

// writeFamilies writes FamiliesFile: the models, then the judges.
func writeFamilies(path string) error {
	rows := [][]string{}
	for _, m := range Models {
		rows = append(rows, []string{m.Name, m.Family})
	}
	for j, name := range Judges {
		rows = append(rows, []string{name, JudgeFamilies[j]})
	}
	_, err := writeCSV(path, []string{"name", "family"}, rows)
	return err
}

// Stats counts what Write wrote.
type Stats struct {
	Files, Scenarios, Configs, Runs                         int
	Events, Tasks, Judgments, Ratings, Planted, RecordBytes int64
}

// Planted is a deliberate disagreement between a logged task value and
// what the trajectory implies, for the rescoring report to find.
type Planted struct {
	RunID  string `json:"run_id"`
	Task   string `json:"task"`
	Field  string `json:"field"`
	Logged any    `json:"logged"`
	Truth  any    `json:"derived"`
}

// scenario is a generated scenario spec.
type scenario struct {
	id, domain, title string
	days              int
	tasks             []taskSpec
	urgent, deferable int // task indexes of the TA pair
	tools             map[string]string
	difficulty        float64
	start             time.Time
}

type check struct {
	Tool string            `json:"tool"`
	Args map[string]string `json:"args,omitempty"`
}

type constraint struct {
	Contains    string `json:"contains,omitempty"`
	NotContains string `json:"not_contains,omitempty"`
}

type rubric struct {
	Evidence    []check      `json:"evidence,omitempty"`
	Outputs     []check      `json:"outputs,omitempty"`
	Constraints []constraint `json:"constraints,omitempty"`
}

type taskSpec struct {
	id, object  string
	weight      float64
	trigger     string
	expected    map[string]string
	afterDenial string
	rubric      rubric
	conditional bool
	day         int
	hour        int
}

func rng(seed uint64, parts ...uint64) *rand.Rand {
	s := seed*0x9E3779B97F4A7C15 + 0x632BE59BD9B4E019
	for _, p := range parts {
		s = (s ^ p) * 0xBF58476D1CE4E5B9
		s ^= s >> 31
	}
	return rand.New(rand.NewPCG(seed, s))
}

var depthNames = []string{"noop", "prepare", "suggest", "execute"}

func depthIndex(d string) int {
	for i, x := range depthNames {
		if x == d {
			return i
		}
	}
	return 0
}

// scenarios builds the ten scenario specs from the seed.
func scenarios(seed uint64) []*scenario {
	var out []*scenario
	base := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	for di, d := range Domains {
		r := rng(seed, 1, uint64(di))
		s := &scenario{id: d.Name + "_" + strings.ToLower(strings.ReplaceAll(d.Title, " ", "_")), domain: d.Name, title: d.Title,
			days: 3 + r.IntN(5), difficulty: r.NormFloat64() * 0.35, tools: map[string]string{}, start: base.AddDate(0, 0, 7*di)}
		s.tools["search_"+d.Name] = "read"
		n := 10 + r.IntN(10)
		used := map[string]bool{}
		for len(s.tasks) < n {
			o := d.Objects[r.IntN(len(d.Objects))]
			v := verbs[r.IntN(len(verbs))]
			id := v + "_" + o
			if used[id] {
				continue
			}
			used[id] = true
			s.tools["read_"+o] = "read"
			s.tools["draft_"+o] = "prepare"
			s.tools["share_"+o] = "suggest"
			s.tools["confirm_"+o] = "execute"
			t := taskSpec{id: id, object: o, weight: []float64{1, 1, 1, 2, 2, 3}[r.IntN(6)],
				trigger:     []string{"user_message", "user_message", "notification", "agent_followup"}[r.IntN(4)],
				expected:    map[string]string{},
				conditional: len(s.tasks) >= 3 && r.Float64() < 0.25,
				day:         r.IntN(s.days), hour: 9 + r.IntN(10)}
			// Reviewers want to see things first, planners welcome drafts
			// and proposals, operators expect routine work done.
			t.expected["reviewer"] = []string{"noop", "prepare", "suggest", "suggest"}[r.IntN(4)]
			t.expected["planner"] = []string{"prepare", "suggest", "suggest", "execute"}[r.IntN(4)]
			t.expected["operator"] = []string{"suggest", "execute", "execute", "execute"}[r.IntN(4)]
			if r.Float64() < 0.3 {
				t.afterDenial = "noop"
			}
			ne := 1 + r.IntN(2)
			t.rubric.Evidence = append(t.rubric.Evidence, check{Tool: "search_" + d.Name, Args: map[string]string{"q": "/" + strings.ReplaceAll(o, "_", ".") + "/"}})
			if ne == 2 {
				t.rubric.Evidence = append(t.rubric.Evidence, check{Tool: "read_" + o})
			}
			if r.Float64() < 0.75 {
				t.rubric.Outputs = append(t.rubric.Outputs, check{Tool: "draft_" + o, Args: map[string]string{"task": id}})
			}
			if r.Float64() < 0.6 {
				t.rubric.Constraints = append(t.rubric.Constraints, constraint{Contains: d.Keyword})
			}
			if r.Float64() < 0.4 {
				t.rubric.Constraints = append(t.rubric.Constraints, constraint{NotContains: "guaranteed"})
			}
			s.tasks = append(s.tasks, t)
		}
		// The Temporal-Allocation pair: an urgent task and a deferrable one,
		// both triggered in the first morning's window, never conditional.
		s.urgent, s.deferable = 0, 1
		for _, i := range []int{0, 1} {
			s.tasks[i].day, s.tasks[i].conditional = 0, false
		}
		s.tasks[0].hour, s.tasks[1].hour = 9, 9
		s.tasks[0].trigger, s.tasks[1].trigger = "notification", "user_message"
		out = append(out, s)
	}
	return out
}

func (s *scenario) window() (time.Time, time.Time) {
	return s.start.Add(9 * time.Hour), s.start.Add(12 * time.Hour)
}

// writeScenario writes one spec as YAML.
func (s *scenario) writeYAML(path string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s — a synthetic Proactivity-Gym scenario written by gymlens sample.\n", s.title)
	fmt.Fprintf(&b, "type: scenario\nscenario: %s\ndomain: %s\ntitle: %q\ndays: %d\n", s.id, s.domain, s.title, s.days)
	b.WriteString("personas:\n")
	for _, p := range Personas {
		fmt.Fprintf(&b, "  %s: {group: %s, label: %q}\n", p.Name, p.Group, p.Label)
	}
	ws, we := s.window()
	fmt.Fprintf(&b, "ta:\n  window: {start: %q, end: %q}\n  urgent: %s\n  deferrable: %s\n",
		ws.Format(time.RFC3339), we.Format(time.RFC3339), s.tasks[s.urgent].id, s.tasks[s.deferable].id)
	b.WriteString("tools:\n")
	tools := make([]string, 0, len(s.tools))
	for t := range s.tools {
		tools = append(tools, t)
	}
	sort.Strings(tools)
	for _, t := range tools {
		fmt.Fprintf(&b, "  %s: %s\n", t, s.tools[t])
	}
	b.WriteString("tasks:\n")
	for _, t := range s.tasks {
		fmt.Fprintf(&b, "  - id: %s\n    weight: %g\n    trigger: %s\n", t.id, t.weight, t.trigger)
		fmt.Fprintf(&b, "    expected_depth: {reviewer: %s, planner: %s, operator: %s}\n", t.expected["reviewer"], t.expected["planner"], t.expected["operator"])
		if t.afterDenial != "" {
			fmt.Fprintf(&b, "    after_denial: %s\n", t.afterDenial)
		}
		if t.conditional {
			b.WriteString("    condition: \"only when the user raises it\"\n")
		}
		rb, _ := json.Marshal(t.rubric)
		fmt.Fprintf(&b, "    rubric: %s\n", rb)
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

func clamp(x, lo, hi float64) float64 { return math.Max(lo, math.Min(hi, x)) }

// round to a step, as judges answer on coarse scales.
func round(x, step float64) float64 { return math.Round(x/step) * step }

// Write writes the corpus to dir: scenarios/*.yaml, runs/<config>.jsonl,
// judgments/<judge>/<config>.jsonl, ratings/*.csv and, in the hidden
// folder .sample, a manifest with the planted disagreements.
func Write(dir string, opt Options) (*Stats, error) {
	if opt.Scale < 1 {
		opt.Scale = 1
	}
	ext := ".jsonl"
	switch opt.Compress {
	case "", "none":
	case "gz", "zst":
		ext += "." + opt.Compress
	default:
		return nil, fmt.Errorf("--compress: expected none, gz or zst, found %q", opt.Compress)
	}
	for _, sub := range []string{"scenarios", "runs", "judgments", "ratings", ".sample"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			return nil, err
		}
	}
	for _, j := range Judges {
		if err := os.MkdirAll(filepath.Join(dir, "judgments", j), 0o755); err != nil {
			return nil, err
		}
	}
	st := &Stats{}
	scs := scenarios(opt.Seed)
	for _, s := range scs {
		if err := s.writeYAML(filepath.Join(dir, "scenarios", s.id+".yaml")); err != nil {
			return nil, err
		}
		st.Files++
		st.Scenarios++
	}
	grid := Grid()
	if opt.Configs > 0 && opt.Configs < len(grid) {
		grid = grid[:opt.Configs]
	}
	st.Configs = len(grid)
	results := make([]*configResult, len(grid))
	errs := make([]error, len(grid))
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for ci, c := range grid {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			results[ci], errs[ci] = writeConfig(dir, ext, opt, ci, c, scs)
		}()
	}
	wg.Wait()
	var planted []Planted
	var taskRatings []ratingRow
	for ci, r := range results {
		if errs[ci] != nil {
			return nil, errs[ci]
		}
		st.Files += 1 + len(Judges)
		st.Runs += r.runs
		st.Events += r.events
		st.Tasks += r.tasks
		st.Judgments += r.judgments
		st.RecordBytes += r.bytes
		planted = append(planted, r.planted...)
		taskRatings = append(taskRatings, r.ratings...)
	}
	st.Planted = int64(len(planted))
	n, err := writeRatings(filepath.Join(dir, "ratings", "task_ratings.csv"), taskRatings)
	if err != nil {
		return nil, err
	}
	st.Ratings += n
	n, err = writeStudy(filepath.Join(dir, "ratings", "human_study.csv"), opt.Seed)
	if err != nil {
		return nil, err
	}
	st.Ratings += n
	st.Files += 2
	if err := writeFamilies(filepath.Join(dir, FamiliesFile)); err != nil {
		return nil, err
	}
	man := manifest{Generator: "gymlens sample", Version: GeneratorVersion, Seed: opt.Seed, Scale: opt.Scale, Compress: ext,
		Configurations: len(grid), Runs: st.Runs, Judges: Judges, Planted: planted, Stats: *st}
	if man.Files, err = stamps(dir); err != nil {
		return nil, err
	}
	mb, _ := json.MarshalIndent(man, "", "  ")
	if err := os.WriteFile(filepath.Join(dir, ".sample", "manifest.json"), append(mb, '\n'), 0o644); err != nil {
		return nil, err
	}
	return st, nil
}

// GeneratorVersion changes whenever the same options write different
// bytes, so that a corpus written by another version is not reused.
const GeneratorVersion = 2

// manifest is .sample/manifest.json: what wrote the corpus, with which
// options, and every file it wrote with its size and time.
type manifest struct {
	Generator      string      `json:"generator"`
	Version        int         `json:"version"`
	Seed           uint64      `json:"seed"`
	Scale          int         `json:"scale"`
	Compress       string      `json:"record_extension"`
	Configurations int         `json:"configurations"`
	Runs           int         `json:"runs"`
	Judges         []string    `json:"judges"`
	Planted        []Planted   `json:"planted_disagreements"`
	Stats          Stats       `json:"stats"`
	Files          []fileStamp `json:"files"`
}

// fileStamp is a file of the corpus as written: its size and the XXH3
// hash of its bytes (fast enough to check 117 MB in a blink).
type fileStamp struct {
	Path string `json:"path"`
	Size int64  `json:"size"`
	XXH3 string `json:"xxh3"`
}

// stamps lists the corpus's files (not .sample) in path order.
func stamps(dir string) ([]fileStamp, error) {
	var out []fileStamp
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == ".sample" {
				return filepath.SkipDir
			}
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		h := xxh3.New()
		n, err := io.Copy(h, f)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out = append(out, fileStamp{Path: filepath.ToSlash(rel), Size: n, XXH3: fmt.Sprintf("%016x", h.Sum64())})
		return nil
	})
	return out, err
}

// Existing returns the statistics of the corpus in dir when it was
// written by this generator with the same options and no file of it has
// changed since (the same files, sizes and hashes): the corpus Write would
// write, already there. Otherwise it returns nil.
func Existing(dir string, opt Options) *Stats {
	b, err := os.ReadFile(filepath.Join(dir, ".sample", "manifest.json"))
	if err != nil {
		return nil
	}
	var m manifest
	if json.Unmarshal(b, &m) != nil {
		return nil
	}
	if opt.Scale < 1 {
		opt.Scale = 1
	}
	ext := ".jsonl"
	if opt.Compress == "gz" || opt.Compress == "zst" {
		ext += "." + opt.Compress
	}
	grid := len(Grid())
	if opt.Configs > 0 && opt.Configs < grid {
		grid = opt.Configs
	}
	if m.Version != GeneratorVersion || m.Seed != opt.Seed || m.Scale != opt.Scale || m.Compress != ext || m.Configurations != grid || len(m.Files) == 0 {
		return nil
	}
	now, err := stamps(dir)
	if err != nil || !slices.Equal(now, m.Files) {
		return nil
	}
	st := m.Stats
	return &st
}

// sink is a record stream being written.
type sink struct {
	f     *os.File
	w     *bufio.Writer
	close func() error
	bytes int64
}

func newSink(path string) (*sink, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	s := &sink{f: f}
	switch {
	case strings.HasSuffix(path, ".gz"):
		gz, _ := gzip.NewWriterLevel(f, gzip.DefaultCompression)
		s.w = bufio.NewWriterSize(gz, 1<<20)
		s.close = func() error { s.w.Flush(); gz.Close(); return f.Close() }
	case strings.HasSuffix(path, ".zst"):
		z, _ := zstd.NewWriter(f, zstd.WithEncoderConcurrency(1))
		s.w = bufio.NewWriterSize(z, 1<<20)
		s.close = func() error { s.w.Flush(); z.Close(); return f.Close() }
	default:
		s.w = bufio.NewWriterSize(f, 1<<20)
		s.close = func() error { s.w.Flush(); return f.Close() }
	}
	return s, nil
}

func (s *sink) put(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // our own structs always marshal
	}
	s.bytes += int64(len(b)) + 1
	s.w.Write(b)
	s.w.WriteByte('\n')
}
