package reports

import (
	"context"
	"fmt"
	"maps"
	"math"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gymlens/gymlens/analysis"
	"github.com/gymlens/gymlens/ingest/rows"
	"github.com/gymlens/gymlens/plots"
)

// Store is what a Dataset reads: the warehouse (ingest.Warehouse) or
// anything else that hands out the typed rows.
type Store interface {
	// LoadRunsWith reads every run with its active tasks and judgments,
	// calling visit on each as it is read; with dropTasks the runs
	// returned keep no tasks.
	LoadRunsWith(ctx context.Context, visit func(i int, r *rows.RunRow), dropTasks bool) ([]rows.RunRow, error)
	// LoadRatings reads every human rating.
	LoadRatings(ctx context.Context) ([]rows.RatingRow, error)
}

// Keep says what of the runs' tasks a Dataset keeps once their metric
// values are computed (a batch of runs at a time), so that memory holds
// what the caller needs, not every judgment.
type Keep int

const (
	KeepValues    Keep = iota // neither tasks nor judgments
	KeepTaskNames             // the active tasks, without their judgments
	// KeepPacked keeps the tasks and judgments encoded
	// (analysis.PackedRuns), a few tens of bytes a task: the runs of
	// Values and Selected hold none, and the agreement tables decode a
	// run at a time (RunSet). For the agreement tables (TableKeep),
	// figures, the report, agree and notebooks.
	KeepPacked
	KeepTasks // tasks and judgments, as rows in the runs
)

// Options choose the runs, the judge and the statistics of a Dataset.
type Options struct {
	// Name names the warehouse in messages.
	Name string
	// Where keeps the runs whose value of each dimension is one of those
	// listed (analysis.Dimensions).
	Where map[string][]string
	// Metrics are the metrics of Values().Metrics (AllMetrics names);
	// empty: the four main ones.
	Metrics []string
	// Judge uses one judge's judgments instead of the judges' average.
	Judge string
	// Judges are the two judges a judge-agreement table compares; empty:
	// the only two there are.
	Judges    []string
	Bootstrap analysis.BootstrapOptions
	// StudyResamples are the resamples of the human study's bootstrap
	// (participants resampled); 0: 20,000.
	StudyResamples int
	// Keep: what of the tasks to keep (KeepPacked for the agreement
	// tables, figures and the report; TableKeep says which a table needs).
	Keep Keep
	// Figures: the metric of the one-metric figures ("": TC), the study
	// question of human-trust ("": trust), the harness switch FROM,TO of
	// harness-switch (empty: CC,OC).
	FigureMetric, Question string
	Switch                 []string
	// Progress, when not nil, is told what the dataset is doing, for a
	// long read (never concurrently).
	Progress func(Progress)
	// JudgeNoise makes the metrics' intervals include the judges' own
	// noise (analysis.JudgeNoise): it needs judgments asked again (judge
	// --repeats), and keeps the tasks.
	JudgeNoise bool
	// Families is the families file (name,family) the judge-bias table
	// measures self-preference with; "": length bias alone.
	Families string
	// Mark is how tables with a row per configuration mark values: ""
	// or "rank" (best bold, second underlined), "significance" (bold: the
	// best and every configuration not distinguishable from it,
	// TiesWithBest) or "none".
	Mark string
}

// Progress is a step of a long read: what, how far, out of how many (-1:
// not known).
type Progress struct {
	Stage       string
	Done, Total int64
}

// Values are the runs with their metric values (every metric of
// analysis.AllMetrics, in its order), what each lacks, and its scenario.
type Values struct {
	Runs     []rows.RunRow
	Values   [][]float64
	Missing  []analysis.Missing
	Scenario []string
	Metrics  []int // Options.Metrics as places in AllMetrics
	// With KeepTaskNames, run i's active tasks are
	// taskNames[taskOff[i]:taskOff[i+1]] (interned), and its row holds
	// none: a string a task, where the task rows took about 4 KB a run
	// (annotate sample at --scale 100 peaked at 1,374 MB).
	taskOff   []int32
	taskNames []string
}

// Dataset is what tables, figures and reports are computed from: each
// part read from the store once however many outputs use it, and each
// estimate computed once however many tables show it.
type Dataset struct {
	ctx     context.Context
	store   Store
	opt     Options
	values  *Values
	packed  *analysis.PackedRuns // with KeepPacked: every run's tasks
	sel     []rows.RunRow
	selIdx  []int // the runs of sel, as places in values.Runs
	ratings *analysis.PackedRatings
	loaded  bool
	summary map[string][]analysis.GroupEstimate
	// calibration holds each calibration asked (Calibration).
	calibration map[string]*analysis.Calibration
	rubrics     []string // the store's rubrics' metrics (custom.NAME, then its fields)
	noise       *analysis.JudgeNoise
	cover       *analysis.JudgeCoverage // the judges' items (nil with one judge)
	date        *time.Time
	// packOnly, when not nil, says which runs' tasks KeepPacked keeps
	// (the others are kept without them); noiseOnly: the tasks are kept
	// for the judges' noise alone (Options.JudgeNoise raised Keep).
	packOnly  func(runID string) bool
	noiseOnly bool
}

// PackOnly makes a KeepPacked dataset keep the tasks of only the runs
// keep says, the others' heads and values alone: a command that reads
// the tasks of a few runs (agree --self: those with an item asked again)
// then holds no more. Call it before anything is read; such a dataset
// gives its runs to no other (ShareFrom).
func (s *Dataset) PackOnly(keep func(runID string) bool) { s.packOnly = keep }

// Rubrics are the metrics of the store's user rubrics: each custom.NAME,
// then its fields.
func (s *Dataset) Rubrics() []string { return s.rubrics }

// NewDataset checks the options and makes a dataset that reads from store
// when first asked.
func NewDataset(ctx context.Context, store Store, opt Options) (*Dataset, error) {
	defs, err := RegisterRubrics(ctx, store)
	if err != nil {
		return nil, err
	}
	var rubricMain, rubricAll []string
	for _, d := range defs {
		rubricMain, rubricAll = append(rubricMain, d.Metric), append(rubricAll, d.Metric)
		for _, f := range d.Scores {
			rubricAll = append(rubricAll, d.Metric+"."+f.Name)
		}
	}
	if len(opt.Metrics) == 1 && opt.Metrics[0] == "all" {
		opt.Metrics = append(slices.Clone(analysis.AllMetrics), rubricAll...)
	}
	noiseOnly := false
	if opt.JudgeNoise {
		if _, ok := store.(RepeatStore); !ok {
			return nil, analysis.Optionf("--judge-noise: this store keeps no repeated judge answers")
		}
		// The noisy runs' values are computed again in every draw, from
		// their tasks, kept packed (a run decoded at a time): only
		// theirs when nothing else needs tasks.
		noiseOnly = opt.Keep < KeepPacked
		opt.Keep = max(opt.Keep, KeepPacked)
	}
	if len(opt.Metrics) == 0 {
		opt.Metrics = append(slices.Clone(analysis.MainMetrics), rubricMain...)
	}
	for _, n := range opt.Metrics {
		if analysis.MetricIndex(n) < 0 {
			return nil, analysis.Optionf("--metrics: unknown metric %q: expected some of %s", n, strings.Join(analysis.MetricNames(), ", "))
		}
	}
	for d := range opt.Where {
		if err := analysis.CheckDimension(d); err != nil {
			return nil, analysis.Optionf("--where: %v", err)
		}
	}
	return &Dataset{ctx: ctx, store: store, opt: opt, summary: map[string][]analysis.GroupEstimate{}, rubrics: rubricAll, noiseOnly: noiseOnly}, nil
}

// RubricStore is a store that keeps user rubrics (the warehouse).
type RubricStore interface {
	LoadRubrics(ctx context.Context) ([]rows.Rubric, error)
}

// RegisterRubrics makes the metrics of the user rubrics the store keeps
// known to analysis (analysis.RegisterCustom) and returns them; a store
// without rubrics has none.
func RegisterRubrics(ctx context.Context, store any) ([]rows.Rubric, error) {
	rs, ok := store.(RubricStore)
	if !ok {
		return nil, nil
	}
	defs, err := rs.LoadRubrics(ctx)
	if err != nil {
		return nil, err
	}
	analysis.RegisterCustom(defs)
	return defs, nil
}

// Options are the dataset's options.
func (s *Dataset) Options() Options { return s.opt }

// ShareFrom makes s use the runs, metric values and ratings that o has
// already read, when o read what s would (the same judge, and at least the
// tasks s keeps): datasets that differ only in their selection, bootstrap
// or marks then hold the warehouse's runs once (a notebook's blocks). It
// says whether it shared anything.
func (s *Dataset) ShareFrom(o *Dataset) bool {
	if o.store != s.store || o.opt.Judge != s.opt.Judge || o.opt.JudgeNoise != s.opt.JudgeNoise || o.opt.Keep < s.opt.Keep || (o.values == nil && !o.loaded) {
		return false
	}
	if o.opt.Keep == KeepPacked && s.opt.Keep == KeepTaskNames {
		return false // the packed runs hold no task names
	}
	if o.packOnly != nil && s.opt.Keep >= KeepPacked && !(o.noiseOnly && s.noiseOnly) {
		return false // o kept some runs' tasks only
	}
	if o.values != nil && s.values == nil {
		v := *o.values
		v.Metrics = nil
		for _, n := range s.opt.Metrics {
			v.Metrics = append(v.Metrics, analysis.MetricIndex(n))
		}
		s.values, s.noise, s.packed, s.cover = &v, o.noise, o.packed, o.cover
	}
	if o.loaded && !s.loaded {
		s.ratings, s.loaded = o.ratings, true
	}
	return true
}

// Bootstrap are the bootstrap options of the estimates.
func (s *Dataset) Bootstrap() analysis.BootstrapOptions { return s.opt.Bootstrap }

// DataDater is a Store that knows when its data are from.
type DataDater interface {
	// DataDate is the latest time the data record (zero: none).
	DataDate(ctx context.Context) (time.Time, error)
}

// DataDate is the date a PDF made from the dataset carries:
// $SOURCE_DATE_EPOCH when set (plots.PDFDate), else the latest time the
// store's data record, to the second, else the Unix epoch. It depends
// on the inputs alone, never on when or where the PDF is made.
func (s *Dataset) DataDate() (time.Time, error) {
	if os.Getenv("SOURCE_DATE_EPOCH") != "" || s.store == nil {
		return plots.PDFDate, nil
	}
	if s.date == nil {
		d := plots.PDFDate
		if dd, ok := s.store.(DataDater); ok {
			t, err := dd.DataDate(s.ctx)
			if err != nil {
				return time.Time{}, err
			}
			if !t.IsZero() {
				d = t.UTC().Truncate(time.Second)
			}
		}
		s.date = &d
	}
	return *s.date, nil
}

// StudyBootstrap are the bootstrap options of the human study:
// participants resampled, 20,000 times unless StudyResamples says
// otherwise.
func (s *Dataset) StudyBootstrap() analysis.BootstrapOptions {
	o := s.opt.Bootstrap
	o.Resamples = 20000
	if s.opt.StudyResamples > 0 {
		o.Resamples = s.opt.StudyResamples
	}
	return o
}

// whereText is the selection as the user wrote it, for messages.
func (s *Dataset) whereText() string {
	var parts []string
	for _, d := range slices.Sorted(maps.Keys(s.opt.Where)) {
		for _, v := range s.opt.Where[d] {
			parts = append(parts, d+"="+v)
		}
	}
	return strings.Join(parts, " ")
}

// HeldHeapLimit is the soft limit of Go's heap, for the rest of the
// process, once a dataset that holds every run's tasks (KeepPacked,
// KeepTasks) reads them, when the process's is higher.
const HeldHeapLimit = 576 << 20

// Values are every run with its metric values (with Options.Judge).
func (s *Dataset) Values() (*Values, error) {
	if s.values != nil {
		return s.values, nil
	}
	if s.opt.Keep >= KeepPacked {
		// Go's heap may use less than elsewhere: with DuckDB's pool
		// (ingest.ReadingMemoryLimit) and every run's tasks held, a
		// report of 234,000 runs stays under 1 GB (docs/benchmarks.md).
		if cur := debug.SetMemoryLimit(-1); cur > HeldHeapLimit {
			debug.SetMemoryLimit(HeldHeapLimit)
		}
	}
	// The repeated answers before the runs: the driver's copy of their
	// query's result is gone by the time the runs are read.
	var items []rows.RepeatItem
	if s.opt.JudgeNoise {
		var err error
		if items, err = s.store.(RepeatStore).JudgeRepeats(s.ctx, ""); err != nil {
			return nil, err
		}
		if s.noiseOnly && s.packOnly == nil {
			noisy := map[string]bool{}
			for _, it := range items {
				if len(it.Seeds) >= 2 && (s.opt.Judge == "" || it.Judge == s.opt.Judge) {
					noisy[it.RunID] = true
				}
			}
			s.packOnly = func(id string) bool { return noisy[id] }
		}
	}
	v := &Values{}
	for _, n := range s.opt.Metrics {
		v.Metrics = append(v.Metrics, analysis.MetricIndex(n))
	}
	judge := s.opt.Judge
	judges := map[string]bool{}
	var cover *analysis.JudgeCoverage
	if judge == "" {
		cover = analysis.NewJudgeCoverage()
	}
	var packed *analysis.PackedRuns
	if s.opt.Keep == KeepPacked {
		packed = analysis.NewPackedRuns()
	}
	var interned map[string]string
	if s.opt.Keep == KeepTaskNames {
		v.taskOff, interned = []int32{0}, map[string]string{}
	}
	var err error
	v.Runs, err = s.store.LoadRunsWith(s.ctx, func(i int, r *rows.RunRow) {
		if s.opt.Progress != nil && i%256 == 255 {
			s.opt.Progress(Progress{Stage: "reading runs", Done: int64(i + 1), Total: -1})
		}
		analysis.AddJudges(judges, r)
		if cover != nil {
			cover.Add(r)
		}
		vals, m := analysis.RunValues(r, judge)
		v.Values, v.Missing = append(v.Values, vals), append(v.Missing, m)
		switch s.opt.Keep {
		case KeepTaskNames:
			for _, t := range r.Tasks {
				name, ok := interned[t.Task]
				if !ok {
					name = strings.Clone(t.Task)
					interned[name] = name
				}
				v.taskNames = append(v.taskNames, name)
			}
			v.taskOff = append(v.taskOff, int32(len(v.taskNames))) // runs are visited in order: run i's end is taskOff[i+1]
		case KeepPacked:
			if s.packOnly == nil || s.packOnly(r.RunID) {
				packed.AddTasks(r.Tasks)
			} else {
				packed.AddTasks(nil)
			}
			r.Tasks = nil
		}
	}, s.opt.Keep <= KeepTaskNames)
	if err != nil {
		return nil, err
	}
	if len(v.Runs) == 0 {
		return nil, fmt.Errorf("warehouse %s holds no runs: ingest some first", s.opt.Name)
	}
	if judge != "" && !judges[judge] {
		return nil, analysis.CheckJudge(nil, judge, slices.Sorted(maps.Keys(judges))...)
	}
	if packed != nil {
		packed.Runs = v.Runs
		s.packed = packed
	}
	v.Scenario = make([]string, len(v.Runs))
	for i := range v.Runs {
		v.Scenario[i] = v.Runs[i].Scenario
	}
	if s.opt.JudgeNoise {
		var set analysis.RunSet = analysis.RunSlice(v.Runs)
		if s.packed != nil {
			set = s.packed
		}
		if s.noise = analysis.NewJudgeNoise(set, items, judge, s.opt.Bootstrap); s.noise == nil {
			return nil, analysis.NoDataf("--judge-noise: no judgment of these runs was asked again: judge with --repeats 2 or more first")
		}
		if p := s.opt.Progress; p != nil {
			s.noise.Progress = func(done int64) { p(Progress{Stage: "redrawing the judges' repeated answers", Done: done, Total: -1}) }
		}
	}
	s.values, s.cover = v, cover
	return v, nil
}

// JudgeNotes name each judge that judged some but not all of the items
// of a metric family that the selected runs' values average (the judges
// that judged an item are averaged for it, so such a judge moves those
// items' values alone): analysis.JudgeCoverage. None with Options.Judge.
func (s *Dataset) JudgeNotes() ([]string, error) {
	groups, err := s.Groups(nil)
	if err != nil {
		return nil, err
	}
	return s.cover.Notes(groups[0].Runs), nil
}

// Groups are the runs Where keeps, grouped by dims.
func (s *Dataset) Groups(dims []string) ([]analysis.Group, error) {
	v, err := s.Values()
	if err != nil {
		return nil, err
	}
	groups, err := analysis.GroupRuns(v.Runs, dims, s.opt.Where)
	if err != nil {
		return nil, err
	}
	if len(groups) == 0 || len(groups[0].Runs) == 0 {
		return nil, analysis.NoDataf("no run matches --where %s", s.whereText())
	}
	return groups, nil
}

// Selected are the runs Where keeps.
func (s *Dataset) Selected() ([]rows.RunRow, error) {
	if s.sel != nil {
		return s.sel, nil
	}
	groups, err := s.Groups(nil)
	if err != nil {
		return nil, err
	}
	idx := groups[0].Runs
	s.selIdx = idx
	every := len(idx) == len(s.values.Runs)
	for k := 0; every && k < len(idx); k++ {
		every = idx[k] == k
	}
	if every {
		s.sel = s.values.Runs // every run, in order: no copy
		return s.sel, nil
	}
	for _, i := range idx {
		s.sel = append(s.sel, s.values.Runs[i])
	}
	return s.sel, nil
}

// SelectedTaskNames gives the active tasks of the i-th run of Selected,
// in their order, from a dataset that keeps them (KeepTaskNames, or one
// that shares the runs of a dataset with their tasks).
func (s *Dataset) SelectedTaskNames() (func(i int) []string, error) {
	sel, err := s.Selected()
	if err != nil {
		return nil, err
	}
	if v := s.values; v.taskOff != nil {
		return func(i int) []string { j := s.selIdx[i]; return v.taskNames[v.taskOff[j]:v.taskOff[j+1]] }, nil
	}
	if s.opt.Keep < KeepTasks && s.opt.Keep != KeepTaskNames {
		return nil, fmt.Errorf("reports: a dataset that keeps no task names (Keep %d) was asked for them: make it with KeepTaskNames", s.opt.Keep)
	}
	return func(i int) []string { return analysis.TaskNames(&sel[i]) }, nil
}

// SelectedSet are the runs Where keeps with their tasks: the Selected
// rows, or with KeepPacked the packed runs, decoded a run at a time.
func (s *Dataset) SelectedSet() (analysis.RunSet, error) {
	if s.opt.Keep < KeepPacked {
		return nil, fmt.Errorf("reports: a dataset that keeps no judgments (Keep %d) was asked for them: make it with KeepPacked", s.opt.Keep)
	}
	runs, err := s.Selected()
	if err != nil || s.packed == nil {
		return analysis.RunSlice(runs), err
	}
	return packedSelection{s.packed, s.selIdx}, nil
}

// packedSelection is the runs of p at the places idx.
type packedSelection struct {
	p   *analysis.PackedRuns
	idx []int
}

func (s packedSelection) Len() int               { return len(s.idx) }
func (s packedSelection) Run(i int) *rows.RunRow { return s.p.Run(s.idx[i]) }
func (s packedSelection) RunID(i int) string     { return s.p.RunID(s.idx[i]) }

// SelectedValues are the values, scenarios and configurations of the
// runs Where keeps.
func (s *Dataset) SelectedValues() (values [][]float64, scen, conf []string, err error) {
	groups, err := s.Groups(nil)
	if err != nil {
		return nil, nil, nil, err
	}
	v := s.values
	for _, i := range groups[0].Runs {
		values, scen, conf = append(values, v.Values[i]), append(scen, v.Scenario[i]), append(conf, v.Runs[i].ConfigID)
	}
	return values, scen, conf, nil
}

// Summarize estimates metrics per group of dims among the runs where
// keeps (nil: Options.Where), once per question asked.
func (s *Dataset) Summarize(dims []string, metrics []string, where map[string][]string) ([]analysis.GroupEstimate, error) {
	v, err := s.Values()
	if err != nil {
		return nil, err
	}
	if where == nil {
		where = s.opt.Where
	}
	key := fmt.Sprint(dims, metrics, where)
	if r, ok := s.summary[key]; ok {
		return r, nil
	}
	groups, err := analysis.GroupRuns(v.Runs, dims, where)
	if err != nil {
		return nil, err
	}
	if len(groups) == 0 {
		return nil, analysis.NoDataf("no run matches --where %s", s.whereText())
	}
	var idx []int
	for _, m := range metrics {
		i := analysis.MetricIndex(m)
		if i < 0 {
			return nil, analysis.Optionf("unknown metric %q: expected one of %s", m, strings.Join(analysis.MetricNames(), ", "))
		}
		idx = append(idx, i)
	}
	r := analysis.SummarizeNoisy(groups, v.Values, v.Missing, v.Scenario, idx, s.opt.Bootstrap, s.noise)
	s.summary[key] = r
	return r, nil
}

// RatingStreamer is a Store that can hand out its ratings one at a time
// (the warehouse): the dataset then never holds them as rows.
type RatingStreamer interface {
	EachRating(ctx context.Context, fn func(*rows.RatingRow)) error
}

// packedRatings reads the ratings once and keeps them packed
// (analysis.PackedRatings: a few bytes a rating).
func (s *Dataset) packedRatings() (*analysis.PackedRatings, error) {
	if s.loaded {
		return s.ratings, nil
	}
	p := &analysis.PackedRatings{}
	if rs, ok := s.store.(RatingStreamer); ok {
		if err := rs.EachRating(s.ctx, p.Add); err != nil {
			return nil, err
		}
	} else {
		r, err := s.store.LoadRatings(s.ctx)
		if err != nil {
			return nil, err
		}
		for i := range r {
			p.Add(&r[i])
		}
	}
	s.ratings, s.loaded = p, true
	return p, nil
}

// Ratings are every human rating.
func (s *Dataset) Ratings() ([]rows.RatingRow, error) {
	return s.RatingsWhere(nil)
}

// RatingsWhere are the human ratings keep keeps (nil: every one), as
// rows.
func (s *Dataset) RatingsWhere(keep func(*rows.RatingRow) bool) ([]rows.RatingRow, error) {
	p, err := s.packedRatings()
	if err != nil {
		return nil, err
	}
	return p.Where(keep), nil
}

// StudyRows are the ratings of the human study: with a day and a
// condition.
func (s *Dataset) StudyRows() ([]rows.RatingRow, error) {
	return s.RatingsWhere(func(g *rows.RatingRow) bool { return g.Condition != "" && g.Day != 0 })
}

// Judges compares the two judges of Options.Judges (or the only two) on
// the runs selected.
func (s *Dataset) Judges() (*analysis.JudgeAgreement, error) {
	runs, err := s.SelectedSet()
	if err != nil {
		return nil, err
	}
	return analysis.CompareJudgesOf(runs, s.opt.Judges, s.opt.Bootstrap)
}

// TableJudges are the judges the judge-agreement table compares:
// Options.Judges, else the only two, else the first two in name order
// with a note saying so.
func (s *Dataset) TableJudges() (*analysis.JudgeAgreement, string, error) {
	if len(s.opt.Judges) > 0 {
		ja, err := s.Judges()
		return ja, "", err
	}
	runs, err := s.SelectedSet()
	if err != nil {
		return nil, "", err
	}
	all := analysis.JudgesOf(runs)
	if len(all) <= 2 {
		ja, err := analysis.CompareJudgesOf(runs, nil, s.opt.Bootstrap)
		return ja, "", err
	}
	ja, err := analysis.CompareJudgesOf(runs, all[:2], s.opt.Bootstrap)
	return ja, fmt.Sprintf("Note: A and B are the first two of the %d judges in name order (%s); --judges A,B chooses others.", len(all), strings.Join(all, ", ")), err
}

// Humans compares the judges (or Options.Judge) with the human ratings
// on the runs selected; reliability adds the humans' own agreement.
func (s *Dataset) Humans(reliability bool) (*analysis.HumanAgreement, error) {
	// The ratings first, while little else is held: reading them costs
	// DuckDB memory that is not all given back (docs/benchmarks.md).
	ratings, err := s.packedRatings()
	if err != nil {
		return nil, err
	}
	runs, err := s.SelectedSet()
	if err != nil {
		return nil, err
	}
	return analysis.CompareHumansOf(runs, ratings.All(), analysis.HumanOptions{Judge: s.opt.Judge, Reliability: reliability, Bootstrap: s.opt.Bootstrap})
}

// StudyRatings are the ratings with a day and a condition: the human
// study's.
func StudyRatings(ratings []rows.RatingRow) []analysis.StudyRating {
	var study []analysis.StudyRating
	for _, g := range ratings {
		if g.Condition != "" && g.Day != 0 {
			study = append(study, analysis.StudyRating{Participant: g.Rater, Question: g.Question, Condition: g.Condition, Day: g.Day, Value: g.Value})
		}
	}
	return study
}

// Compare compares configurations pairwise (later minus earlier) on the
// same resampled scenarios, each named by id or by key (ConfigKey); or,
// with harnessSwitch FROM,TO, harness TO against harness FROM for every
// model and effort run on both. P-values are adjusted across the pairs.
func (s *Dataset) Compare(configs, harnessSwitch []string) ([]analysis.Comparison, error) {
	pairs, err := s.comparePairs(configs, harnessSwitch)
	if err != nil {
		return nil, err
	}
	v := s.values
	return analysis.Compare(pairs, v.Values, v.Scenario, v.Metrics, s.opt.Bootstrap), nil
}

// comparePairs are the pairs Compare compares, their runs places in
// Values().Runs.
func (s *Dataset) comparePairs(configs, harnessSwitch []string) ([]analysis.Pair, error) {
	v, err := s.Values()
	if err != nil {
		return nil, err
	}
	groups, err := analysis.GroupRuns(v.Runs, []string{"config"}, s.opt.Where)
	if err != nil {
		return nil, err
	}
	byConfig := map[string]analysis.Group{}
	byKey := map[string]string{}
	for _, g := range groups {
		id := g.Key["config"]
		byConfig[id] = g
		r := v.Runs[g.Runs[0]]
		byKey[rows.ConfigKey(r.Model, r.Harness, r.Effort)] = id
	}
	var pairs []analysis.Pair
	if len(harnessSwitch) == 2 {
		from, to := harnessSwitch[0], harnessSwitch[1]
		if pairs = analysis.HarnessPairs(v.Runs, byConfig, from, to); len(pairs) == 0 {
			return nil, analysis.NoDataf("no model was run on both %s and %s", from, to)
		}
	} else {
		var ids []string
		for _, a := range configs {
			id := a
			if _, ok := byConfig[id]; !ok {
				if id, ok = byKey[a]; !ok {
					return nil, fmt.Errorf("no runs of configuration %q (see gymlens metrics for the configurations)", a)
				}
			}
			ids = append(ids, id)
		}
		for i := 0; i < len(ids); i++ {
			for j := i + 1; j < len(ids); j++ {
				pairs = append(pairs, analysis.Pair{A: ids[i], B: ids[j], RunsA: byConfig[ids[i]].Runs, RunsB: byConfig[ids[j]].Runs})
			}
		}
	}
	return pairs, nil
}

// TiesWithBest finds, for each metric, the configuration with the highest
// estimate and every configuration the paired cluster bootstrap cannot
// tell from it: the difference to the best, on the same resampled
// scenarios, has a two-sided p-value, Holm-adjusted over the comparisons
// with the best, of at least 1 − level. It returns metric → configuration
// → tied (the best is tied with itself).
func (s *Dataset) TiesWithBest(metrics []string) (map[string]map[string]bool, error) {
	v, err := s.Values()
	if err != nil {
		return nil, err
	}
	res, err := s.Summarize([]string{"config"}, metrics, nil)
	if err != nil {
		return nil, err
	}
	groups, err := analysis.GroupRuns(v.Runs, []string{"config"}, s.opt.Where)
	if err != nil {
		return nil, err
	}
	runsOf := map[string][]int{}
	for _, g := range groups {
		runsOf[g.Key["config"]] = g.Runs
	}
	alpha := 1 - s.opt.Bootstrap.Level
	out := map[string]map[string]bool{}
	for _, m := range metrics {
		best, bestV := "", math.Inf(-1)
		for _, r := range res {
			if r.Metric == m && !math.IsNaN(r.Value) && r.Value > bestV {
				best, bestV = r.Group["config"], r.Value
			}
		}
		out[m] = map[string]bool{}
		if best == "" {
			continue
		}
		out[m][best] = true
		var pairs []analysis.Pair
		for _, r := range res {
			if c := r.Group["config"]; r.Metric == m && c != best && !math.IsNaN(r.Value) {
				pairs = append(pairs, analysis.Pair{A: best, B: c, RunsA: runsOf[best], RunsB: runsOf[c]})
			}
		}
		idx := analysis.MetricIndex(m)
		for _, c := range analysis.Compare(pairs, v.Values, v.Scenario, []int{idx}, s.opt.Bootstrap) {
			out[m][c.B] = c.PHolm >= alpha
		}
	}
	return out, nil
}

// Variance estimates the variance components of each of Options.Metrics
// over the runs Where keeps (analysis.VarianceOf).
//
// Without intervals (pointOnly), the estimates alone.
func (s *Dataset) Variance(pointOnly bool, by ...string) ([]*analysis.VarianceComponents, error) {
	for _, d := range by {
		if err := analysis.CheckDimension(d); err != nil {
			return nil, analysis.Optionf("--by: %w", err)
		}
	}
	if _, err := s.Values(); err != nil {
		return nil, err
	}
	runs, err := s.Selected()
	if err != nil {
		return nil, err
	}
	values, _, _, err := s.SelectedValues()
	if err != nil {
		return nil, err
	}
	// One design per group of --by (all the runs without it).
	groups := []analysis.Group{{}}
	if len(by) > 0 {
		if groups, err = analysis.GroupRuns(runs, by, nil); err != nil {
			return nil, err
		}
	} else {
		for i := range runs {
			groups[0].Runs = append(groups[0].Runs, i)
		}
	}
	var out []*analysis.VarianceComponents
	for _, g := range groups {
		gr, gv := make([]rows.RunRow, len(g.Runs)), make([][]float64, len(g.Runs))
		for k, i := range g.Runs {
			gr[k], gv[k] = runs[i], values[i]
		}
		for _, m := range s.opt.Metrics {
			opt := s.opt.Bootstrap
			if pointOnly {
				opt.Resamples = -1
			}
			vc, err := analysis.VarianceOf(gr, gv, analysis.MetricIndex(m), opt)
			if err != nil {
				if len(by) > 0 {
					return nil, fmt.Errorf("%s, %s: %w", groupText(g.Key), m, err)
				}
				return nil, fmt.Errorf("%s: %w", m, err)
			}
			vc.Group = g.Key
			out = append(out, vc)
		}
	}
	return out, nil
}

// groupText writes a group's key as metrics' CSV does: dim=value,…
func groupText(key map[string]string) string {
	var parts []string
	for _, d := range slices.Sorted(maps.Keys(key)) {
		parts = append(parts, d+"="+key[d])
	}
	return strings.Join(parts, ",")
}

// RankRow is a configuration's rank on a metric and whether it is tied
// with the best.
type RankRow struct {
	analysis.RankEstimate
	TiedWithBest bool
	// Letters is the compact letter display: configurations sharing a
	// letter are not significantly different (every pair's paired
	// cluster bootstrap, Holm-adjusted across all pairs).
	Letters string
}

// Ranks ranks the configurations Where keeps on metric (RankConfigs).
func (s *Dataset) Ranks(metric string) ([]RankRow, error) {
	m := analysis.MetricIndex(metric)
	if m < 0 {
		return nil, analysis.Optionf("--metric: unknown metric %q: expected one of %s", metric, strings.Join(analysis.MetricNames(), ", "))
	}
	v, err := s.Values()
	if err != nil {
		return nil, err
	}
	groups, err := analysis.GroupRuns(v.Runs, []string{"config"}, s.opt.Where)
	if err != nil {
		return nil, err
	}
	if len(groups) == 0 {
		return nil, analysis.NoDataf("no run matches --where %s", s.whereText())
	}
	out := RankConfigs(groups, v.Values, v.Scenario, m, s.opt.Bootstrap)
	if len(out) == 0 {
		return nil, analysis.NoDataf("no configuration has a value of %s", metric)
	}
	return out, nil
}

// RankConfigs ranks the groups (configurations, by Key["config"]) on the
// metric at place m of values (analysis.Ranks), marks those tied with the
// best (the paired cluster bootstrap of each against the best, Holm-
// adjusted p ≥ α, as TiesWithBest) and gives the compact letter display
// from every pair's paired comparison, Holm-adjusted across all pairs.
// The p-values invert the comparisons' intervals (stat.IntervalPValue),
// whose normal tails resolve them below 1/B, as Holm over many pairs
// needs.
func RankConfigs(groups []analysis.Group, values [][]float64, scenario []string, m int, opt analysis.BootstrapOptions) []RankRow {
	var out []RankRow
	var order []string
	runsOf := map[string][]int{}
	for _, g := range groups {
		runsOf[g.Key["config"]] = g.Runs
	}
	for _, r := range analysis.Ranks(groups, values, scenario, m, opt) {
		out = append(out, RankRow{RankEstimate: r})
		order = append(order, r.Config)
	}
	if len(out) == 0 {
		return nil
	}
	alpha := 1 - opt.WithDefaults().Level
	// Tied with the best: each against the best, Holm over those.
	best := out[0].Config
	out[0].TiedWithBest = true
	var vsBest []analysis.Pair
	for _, c := range order[1:] {
		vsBest = append(vsBest, analysis.Pair{A: best, B: c, RunsA: runsOf[best], RunsB: runsOf[c]})
	}
	tied := map[string]bool{}
	for _, c := range analysis.Compare(vsBest, values, scenario, []int{m}, opt) {
		tied[c.B] = c.PHolm >= alpha
	}
	for i := range out[1:] {
		out[i+1].TiedWithBest = tied[out[i+1].Config]
	}
	// Every pair, for the letters.
	var pairs []analysis.Pair
	for i, a := range order {
		for _, b := range order[i+1:] {
			pairs = append(pairs, analysis.Pair{A: a, B: b, RunsA: runsOf[a], RunsB: runsOf[b]})
		}
	}
	different := map[[2]string]bool{}
	for _, c := range analysis.Compare(pairs, values, scenario, []int{m}, opt) {
		if c.PHolm < alpha {
			different[[2]string{c.A, c.B}] = true
		}
	}
	for i, l := range analysis.LetterDisplay(order, different) {
		out[i].Letters = l
	}
	return out
}

// Metrics estimates Options.Metrics per group of the dimensions by, among
// the runs Where keeps.
func (s *Dataset) Metrics(by []string) ([]analysis.GroupEstimate, error) {
	for _, d := range by {
		if err := analysis.CheckDimension(d); err != nil {
			return nil, analysis.Optionf("--by: %w", err)
		}
	}
	v, err := s.Values()
	if err != nil {
		return nil, err
	}
	groups, err := s.Groups(by)
	if err != nil {
		return nil, err
	}
	return analysis.SummarizeNoisy(groups, v.Values, v.Missing, v.Scenario, v.Metrics, s.opt.Bootstrap, s.noise), nil
}

// Correlations are the correlations among Options.Metrics (at least two)
// over the runs Where keeps, at run and configuration level.
func (s *Dataset) Correlations() ([]analysis.CorrResult, error) {
	if len(s.opt.Metrics) < 2 {
		return nil, analysis.Optionf("--metrics: name at least two metrics to correlate")
	}
	values, scen, conf, err := s.SelectedValues()
	if err != nil {
		return nil, err
	}
	return analysis.Correlations(values, scen, conf, s.values.Metrics, s.opt.Bootstrap), nil
}

// Study is the human study's analyses (analysis.Study) of the ratings
// with a day and a condition, acceptance the question that records
// acceptance, participants resampled (StudyBootstrap unless the options
// say otherwise).
func (s *Dataset) Study(acceptance string, opt analysis.BootstrapOptions) ([]analysis.StudyStat, []string, error) {
	ratings, err := s.StudyRows()
	if err != nil {
		return nil, nil, err
	}
	return analysis.Study(StudyRatings(ratings), acceptance, opt)
}

// ReportCalibration is the size of the report's calibration: smaller
// than metrics --calibration's (analysis.DefaultCalibration, 1,000 ×
// 2,000), so that the report takes seconds more, not a minute
// (docs/statistics.md has the times).
var ReportCalibration = analysis.CalibrationOptions{Datasets: 500, Resamples: 1000}

// CalibrationSize is the simulation's size, full (Datasets × Resamples),
// for intervals asked with resamples resamples: full, or with fewer
// resamples asked (a quick run, a test) B/2 datasets × B resamples, at
// least 20 datasets.
func CalibrationSize(full analysis.CalibrationOptions, resamples int) (datasets, calResamples int) {
	if resamples <= 0 || resamples >= full.Resamples {
		return full.Datasets, full.Resamples
	}
	return max(20, min(full.Datasets, resamples/2)), resamples
}

// Calibration simulates the coverage of metric's configuration intervals
// and the paired test's size at the design of the runs Where keeps
// (analysis.Calibrate), for each of methods (nil: the bootstrap's own),
// at size full (CalibrationSize), seeded by the bootstrap's seed; each
// asked once.
func (s *Dataset) Calibration(metric string, methods []string, full analysis.CalibrationOptions) (*analysis.Calibration, error) {
	m := analysis.MetricIndex(metric)
	if m < 0 {
		return nil, analysis.Optionf("unknown metric %q: expected one of %s", metric, strings.Join(analysis.MetricNames(), ", "))
	}
	key := fmt.Sprint("calibration", metric, methods, full.Datasets, full.Resamples)
	if c, ok := s.calibration[key]; ok {
		return c, nil
	}
	values, scen, conf, err := s.SelectedValues()
	if err != nil {
		return nil, err
	}
	o := s.opt.Bootstrap
	datasets, resamples := CalibrationSize(full, o.WithDefaults().Resamples)
	c, err := analysis.Calibrate(values, scen, conf, m, o, analysis.CalibrationOptions{Datasets: datasets, Resamples: resamples,
		Seed: o.Seed, Methods: methods, Workers: o.Workers})
	if err != nil {
		return nil, err
	}
	if s.calibration == nil {
		s.calibration = map[string]*analysis.Calibration{}
	}
	s.calibration[key] = c
	return c, nil
}

// CalibrationLine is the calibration of one metric in a sentence: "95%
// intervals: simulated coverage 94.1% (Monte Carlo se 0.7) at this
// design; paired test size 4.9%".
func CalibrationLine(c *analysis.Calibration) string {
	mc := c.Methods[0]
	s := fmt.Sprintf("%g%% intervals: simulated coverage %.1f%% (Monte Carlo se %.1f) at this design", 100*c.Level, 100*mc.Coverage, 100*mc.CoverageSE)
	if mc.Tests > 0 {
		s += fmt.Sprintf("; paired test size %.1f%% (Monte Carlo se %.1f)", 100*mc.Size, 100*mc.SizeSE)
	} else {
		s += "; no pair of configurations to test"
	}
	return s
}

// CalibrationSizeText says how large the simulation was and of what
// design.
func CalibrationSizeText(c *analysis.Calibration) string {
	return fmt.Sprintf("%s simulated datasets × %s resamples, seed %d, of this design (%d configurations, %d scenarios, each metric's runs with a value; %d pairs of configurations with no true difference in each)",
		thousands(c.Datasets), thousands(c.Resamples), c.Seed, c.Configs, c.Scenarios, c.Pairs)
}

// thousands writes n with a comma every three digits.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
