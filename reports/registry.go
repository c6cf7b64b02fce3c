package reports

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/gymlens/gymlens/analysis"
	"github.com/gymlens/gymlens/ingest/rows"
	"github.com/gymlens/gymlens/plots"
)

// TableNames are the paper tables, in the report's order.
var TableNames = []string{"main", "tc-components", "ta-components", "trj-constructs", "judge-agreement", "judge-human",
	"judge-bias", "correlations", "by-scenario", "by-persona", "variance", "power", "rank", "custom"}

// metricTables are the tables of metric estimates: their grouping and
// their metrics.
var metricTables = map[string]struct {
	caption string
	dims    []string
	metrics []string
}{
	"main":           {"Main results: the 3T metrics per model and harness", []string{"model", "harness", "effort"}, analysis.MainMetrics},
	"tc-components":  {"Task Capability components", []string{"model", "harness", "effort"}, []string{"TC.evidence", "TC.outputs", "TC.constraints", "TC.semantics", "TC.completion", "TC"}},
	"ta-components":  {"Temporal Allocation: now, later and clarifying questions", []string{"model", "harness", "effort"}, []string{"TA.now", "TA.later", "TA.cq", "TA"}},
	"trj-constructs": {"Judged trust: the five constructs", []string{"model", "harness", "effort"}, []string{"TRJ.understandability", "TRJ.competence", "TRJ.reliability", "TRJ.attachment", "TRJ.faith", "TR-J"}},
	"by-scenario":    {"The 3T metrics per scenario", []string{"scenario"}, analysis.MainMetrics},
	"by-persona":     {"The 3T metrics per persona group", []string{"persona_group"}, analysis.MainMetrics},
}

// TableKeep is what a dataset must keep of the tasks for table name:
// the agreement tables read the judgments, every other table the metric
// values alone.
func TableKeep(name string) Keep {
	if name == "judge-agreement" || name == "judge-human" || name == "judge-bias" {
		return KeepPacked
	}
	return KeepValues
}

// Tables computes what the paper table name shows (TableNames) and lays
// it out: one table, or several for judge-agreement and judge-human.
// A table of values that average the judges notes each judge that
// judged some of their items only (Dataset.JudgeNotes).
func Tables(ds *Dataset, name string) ([]*Table, error) {
	ts, err := tables(ds, name)
	if err != nil || name == "judge-agreement" || name == "judge-human" || name == "judge-bias" {
		return ts, err
	}
	notes, err := ds.JudgeNotes()
	if err != nil {
		return nil, err
	}
	for _, t := range ts {
		for _, n := range notes {
			t.Notes = append(t.Notes, "Note: "+n+".")
		}
	}
	return ts, nil
}

func tables(ds *Dataset, name string) ([]*Table, error) {
	switch name {
	case "judge-agreement":
		ja, note, err := ds.TableJudges()
		if err != nil {
			return nil, err
		}
		ab := fmt.Sprintf(" (A = %s, B = %s)", ja.A, ja.B)
		ts := []*Table{
			AgreementTable("judge-agreement-continuous", "Judge agreement on continuous scores"+ab+"; TC on 0–100, TR-J on 1–5", ja.Continuous, "scenarios"),
			AgreementTable("judge-agreement-binary", "Judge agreement on the TA labels"+ab, ja.Binary, "scenarios"),
			AgreementTable("judge-agreement-configuration", "Judge agreement between configuration means"+ab, ja.Configuration, "scenarios"),
		}
		if note != "" {
			for _, t := range ts {
				t.Notes = append(t.Notes, note)
			}
		}
		return ts, nil
	case "judge-human":
		h, err := ds.Humans(false)
		if err != nil {
			return nil, err
		}
		out := []*Table{AgreementTable("judge-human", JudgeLabel(h.Judge)+" (A) against the humans' mean rating (B)", h.VsHumans, "scenarios")}
		if h.Conflation != nil {
			out = append(out, AgreementTable("judge-human-conflation", "Conflation check: r(TR-J, TC) for the judge and r(trust, tc) for the humans", h.Conflation, "scenarios"))
		}
		return out, nil
	case "judge-bias":
		return JudgeBiasTables(ds)
	case "correlations":
		values, scen, conf, err := ds.SelectedValues()
		if err != nil {
			return nil, err
		}
		return []*Table{CorrelationTable(analysis.Correlations(values, scen, conf, []int{0, 1, 2, 3}, ds.Bootstrap()))}, nil
	case "variance", "power":
		vcs, err := ds.Variance(name == "power")
		if err != nil {
			return nil, err
		}
		if name == "variance" {
			return []*Table{VarianceTable(vcs)}, nil
		}
		var ps []analysis.PowerResult
		for _, vc := range vcs {
			d := analysis.PowerDesign{Scenarios: vc.Scenarios, Personas: vc.Personas, Repetitions: vc.Repetitions, Alpha: 0.05, Power: 0.8}
			p, err := analysis.Power(vc, d, 0)
			if err != nil {
				return nil, err
			}
			ps = append(ps, p)
		}
		return []*Table{PowerTable(ps)}, nil
	case "rank":
		var all [][]RankRow
		for _, m := range ds.Options().Metrics {
			rs, err := ds.Ranks(m)
			if err != nil {
				return nil, err
			}
			all = append(all, rs)
		}
		return []*Table{RankTable(all)}, nil
	case "custom":
		metrics := ds.Rubrics()
		if len(metrics) == 0 {
			return nil, analysis.NoDataf("no metric of a user rubric: judge with one first (gymlens judge --prompt FILE)")
		}
		dims := []string{"model", "harness", "effort"}
		res, err := ds.Summarize(dims, metrics, nil)
		if err != nil {
			return nil, err
		}
		return []*Table{MetricTable(name, "The metrics of your rubrics (custom.NAME: the mean of its scores) per model and harness", res, dims, metrics)}, nil
	}
	mt, ok := metricTables[name]
	if !ok {
		return nil, analysis.Optionf("table: unknown table %q: expected one of %s", name, strings.Join(TableNames, ", "))
	}
	res, err := ds.Summarize(mt.dims, mt.metrics, nil)
	if err != nil {
		return nil, err
	}
	t := MetricTable(name, mt.caption, res, mt.dims, mt.metrics)
	if ds.opt.Mark == "significance" && slices.Equal(mt.dims, []string{"model", "harness", "effort"}) {
		if err := markTies(ds, t, mt.metrics); err != nil {
			return nil, err
		}
	}
	return []*Table{t}, nil
}

// markTies marks, in a table with a row per configuration, the best
// configuration of each metric and every configuration the paired
// cluster bootstrap cannot tell from it (TiesWithBest), and says so in
// the table's notes.
func markTies(ds *Dataset, t *Table, metrics []string) error {
	ties, err := ds.TiesWithBest(metrics)
	if err != nil {
		return err
	}
	t.Ties = make([][]bool, len(t.Rows))
	key := ""
	for i, r := range t.Rows {
		if r.Keys[0] != "" {
			key = r.Keys[0]
		}
		id := rows.ConfigID(key, r.Keys[1], r.Keys[2])
		t.Ties[i] = make([]bool, len(t.Columns))
		for j, m := range metrics {
			t.Ties[i][j] = ties[m][id]
		}
	}
	a := math.Round((1-ds.Bootstrap().Level)*1e9) / 1e9
	for i, n := range t.Notes {
		t.Notes[i] = strings.Replace(n, " Best value per column in bold, second underlined.", "", 1)
	}
	t.Notes = append(t.Notes, fmt.Sprintf("Bold: the best configuration of each column and every configuration not distinguishable from it: "+
		"paired cluster bootstrap of the difference (the same resampled scenarios on both sides), p-values Holm-adjusted over the comparisons "+
		"with the best, not below %g.", a))
	return nil
}

// JudgeLabel names the judge compared ("" for the judges' average).
func JudgeLabel(j string) string {
	if j == "" {
		return "The judges' average"
	}
	return "Judge " + j
}

// Figure computes what the figure name shows (plots.FigureNames) and
// draws it.
func Figure(ds *Dataset, name string) (*plots.Figure, error) {
	f, err := figure(ds, name)
	if err == nil {
		f.Date, err = ds.DataDate()
	}
	return f, err
}

func figure(ds *Dataset, name string) (*plots.Figure, error) {
	if name == "human-trust" {
		ratings, err := ds.StudyRows()
		if err != nil {
			return nil, err
		}
		stats, _, err := analysis.Study(StudyRatings(ratings), "acceptance", ds.StudyBootstrap())
		if err != nil {
			return nil, err
		}
		question := "trust"
		if ds.opt.Question != "" {
			question = ds.opt.Question
		}
		return plots.HumanTrust(stats, question)
	}
	if name == "mde" {
		vcs, err := ds.Variance(true)
		if err != nil {
			return nil, err
		}
		var curves []plots.MDECurve
		for _, vc := range vcs {
			c := plots.MDECurve{Metric: vc.Metric, Current: float64(vc.Scenarios)}
			for s := 3; s <= max(40, 2*vc.Scenarios); s++ {
				d := analysis.PowerDesign{Scenarios: s, Personas: vc.Personas, Repetitions: vc.Repetitions, Alpha: 0.05, Power: 0.8}
				p, err := analysis.Power(vc, d, 0)
				if err != nil {
					return nil, err
				}
				c.Scenarios, c.MDE = append(c.Scenarios, float64(s)), append(c.MDE, p.MDE)
			}
			curves = append(curves, c)
		}
		return plots.MDE(curves)
	}
	metric := "TC"
	if ds.opt.FigureMetric != "" {
		metric = ds.opt.FigureMetric
	}
	if analysis.MetricIndex(metric) < 0 {
		return nil, analysis.Optionf("--metric: unknown metric %q: expected one of %s", metric, strings.Join(analysis.MetricNames(), ", "))
	}
	switch name {
	case "rank":
		rs, err := ds.Ranks(metric)
		if err != nil {
			return nil, err
		}
		var pts []plots.RankPoint
		for _, r := range rs {
			pts = append(pts, plots.RankPoint{Label: r.Config, Rank: float64(r.Rank), Lo: float64(r.RankLo), Hi: float64(r.RankHi), PBest: r.PBest})
		}
		return plots.Ranks(pts, metric)
	case "model-size":
		res, err := ds.Summarize([]string{"family", "size"}, []string{metric}, nil)
		if err != nil {
			return nil, err
		}
		return plots.ModelSize(res, metric)
	case "harness-switch":
		sw := []string{"CC", "OC"}
		if ds.opt.Switch != nil {
			sw = ds.opt.Switch
		}
		if len(sw) != 2 {
			return nil, analysis.Optionf("--switch: expected FROM,TO, found %q", strings.Join(sw, ","))
		}
		return harnessSwitch(ds, metric, sw[0], sw[1])
	case "correlations":
		values, scen, _, err := ds.SelectedValues()
		if err != nil {
			return nil, err
		}
		return plots.CorrelationMatrix(analysis.RunCorrelationMatrix(values, scen, []int{0, 1, 2, 3}, ds.Bootstrap()))
	case "harness-comparison":
		res, err := ds.Summarize([]string{"harness"}, analysis.MainMetrics, nil)
		if err != nil {
			return nil, err
		}
		return plots.HarnessComparison(res, analysis.MainMetrics)
	case "by-scenario", "by-persona":
		dim, label := "scenario", "scenario"
		if name == "by-persona" {
			dim, label = "persona_group", "persona group"
		}
		res, err := ds.Summarize([]string{dim}, analysis.MainMetrics, nil)
		if err != nil {
			return nil, err
		}
		return plots.Breakdown(name, label, res, dim, analysis.MainMetrics)
	case "effort":
		where, what, err := ds.effortSelection()
		if err != nil {
			return nil, err
		}
		res, err := ds.Summarize([]string{"effort"}, analysis.MainMetrics, where)
		if err != nil {
			return nil, err
		}
		return plots.Effort(res, analysis.MainMetrics, what)
	}
	return nil, analysis.Optionf("plot: unknown figure %q: expected one of %s", name, strings.Join(plots.FigureNames, ", "))
}

// effortSelection keeps, unless --where already names a model and a
// harness, the model and harness run at the most effort levels.
func (ds *Dataset) effortSelection() (map[string][]string, string, error) {
	v, err := ds.Values()
	if err != nil {
		return nil, "", err
	}
	where := map[string][]string{}
	for k, v := range ds.opt.Where {
		where[k] = v
	}
	if len(where["model"]) == 1 && len(where["harness"]) == 1 {
		return where, fmt.Sprintf(" (%s, %s)", where["model"][0], where["harness"][0]), nil
	}
	groups, err := analysis.GroupRuns(v.Runs, []string{"model", "harness", "effort"}, ds.opt.Where)
	if err != nil {
		return nil, "", err
	}
	levels := map[[2]string]int{}
	var best [2]string
	for _, g := range groups {
		k := [2]string{g.Key["model"], g.Key["harness"]}
		levels[k]++
		if levels[k] > levels[best] || levels[k] == levels[best] && (k[0] < best[0] || k[0] == best[0] && k[1] < best[1]) {
			best = k
		}
	}
	if levels[best] < 2 {
		return nil, "", analysis.NoDataf("effort: no model and harness were run at two effort levels or more")
	}
	where["model"], where["harness"] = []string{best[0]}, []string{best[1]}
	return where, fmt.Sprintf(" (%s, %s)", best[0], best[1]), nil
}

// BuildReport computes every paper table and figure the dataset can give;
// what it cannot is listed in Skipped with the reason. It stops when ctx
// is done. The caller fills in the manifest and writes it (WriteReport).
func BuildReport(ctx context.Context, ds *Dataset) (*Report, error) {
	if _, err := ds.Values(); err != nil {
		return nil, err
	}
	r := &Report{Title: "gymlens report"}
	for _, name := range TableNames {
		if name == "custom" && len(ds.Rubrics()) == 0 {
			continue // no user rubric: nothing to say
		}
		ts, err := Tables(ds, name)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			r.Skipped = append(r.Skipped, fmt.Sprintf("table %s: %v", name, err))
			continue
		}
		r.Tables = append(r.Tables, ts...)
	}
	// The MDE beside the main table: how far apart two of its rows must be
	// for the design to tell them apart.
	var main, power *Table
	for _, t := range r.Tables {
		switch t.Name {
		case "main":
			main = t
		case "power":
			power = t
		}
	}
	if main != nil && power != nil {
		var parts []string
		for _, row := range power.Rows {
			parts = append(parts, fmt.Sprintf("%s %.2f", row.Keys[0], row.Cells[1].V))
		}
		main.Notes = append(main.Notes, "The smallest difference between two configurations this design detects (paired test over scenarios, α = 0.05, power 0.8; table power): "+
			strings.Join(parts, ", ")+".")
	}
	if main != nil {
		notes, err := CalibrationNotes(ds, analysis.MainMetrics)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			r.Skipped = append(r.Skipped, fmt.Sprintf("calibration of table main: %v", err))
		}
		main.Notes = append(main.Notes, notes...)
	}
	for _, name := range plots.FigureNames {
		f, err := Figure(ds, name)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			r.Skipped = append(r.Skipped, fmt.Sprintf("figure %s: %v", name, err))
			continue
		}
		r.Figures = append(r.Figures, f)
	}
	o, st := ds.Bootstrap(), ds.StudyBootstrap()
	r.Manifest.Bootstrap = Bootstrap{Method: o.Method, Level: o.Level, Resamples: o.Resamples, Seed: o.Seed, Unit: "scenarios"}
	if o.TwoLevel {
		r.Manifest.Bootstrap.Unit = "scenarios, then the runs within each (two-level)"
	}
	r.Manifest.Study = Bootstrap{Method: st.Method, Level: st.Level, Resamples: st.Resamples, Seed: st.Seed, Unit: "participants"}
	date, err := ds.DataDate()
	if err != nil {
		return nil, err
	}
	r.Manifest.PDFDate = date.UTC().Format(time.RFC3339)
	return r, nil
}

// ManifestStore is what a report's manifest records of the warehouse: its
// inputs, the judges' prompt versions, the schema version and the steps
// that made its content.
type ManifestStore interface {
	Inputs(ctx context.Context) ([]rows.InputFile, error)
	JudgeVersions(ctx context.Context) ([]rows.JudgeVersion, error)
	Version(ctx context.Context) (int, error)
	Steps(ctx context.Context) (*rows.Steps, error)
}

// FillManifest records in the report's manifest the tool, its version and
// build, the warehouse (by file name) and what s says of it; promptSHA
// (nil: none) gives the SHA-256 of a built-in prompt version the store
// does not know. The report step (Steps.Report) is the caller's to fill.
func (r *Report) FillManifest(ctx context.Context, s ManifestStore, warehouse, toolVersion string, promptSHA func(string) string) error {
	var err error
	if r.Manifest.Inputs, err = s.Inputs(ctx); err != nil {
		return err
	}
	st, err := s.Steps(ctx)
	if err != nil {
		return err
	}
	r.Manifest.Steps.Ingests, r.Manifest.Steps.Scores, r.Manifest.Steps.Judge = st.Ingests, st.Scores, st.Judge
	for i, j := range st.Judge {
		if j.PromptSHA256 == "" && promptSHA != nil {
			st.Judge[i].PromptSHA256 = promptSHA(j.Prompt)
		}
	}
	r.Manifest.Build = BuildOf()
	if r.Manifest.Judges, err = s.JudgeVersions(ctx); err != nil {
		return err
	}
	if r.Manifest.SchemaVersion, err = s.Version(ctx); err != nil {
		return err
	}
	r.Manifest.Tool, r.Manifest.Version, r.Manifest.Warehouse = "gymlens", toolVersion, filepath.Base(warehouse)
	var steps []*string
	for i := range st.Ingests {
		for k := range st.Ingests[i].Files {
			steps = append(steps, &st.Ingests[i].Files[k])
		}
	}
	r.Manifest.InputRoot = relativeInputs(r.Manifest.Inputs, steps...)
	return nil
}

// relativeInputs rewrites the inputs' paths (and the paths more point
// to) relative to the deepest folder they share and returns that
// folder's name, so that a report names no local path (a reader sees
// corpus/runs/… , not /home/…).
func relativeInputs(in []rows.InputFile, more ...*string) string {
	if len(in) == 0 {
		return ""
	}
	split := func(p string) []string { return strings.Split(filepath.ToSlash(filepath.Dir(filepath.Clean(p))), "/") }
	root := split(in[0].Path)
	all := make([]string, 0, len(in)+len(more))
	for _, f := range in[1:] {
		all = append(all, f.Path)
	}
	for _, p := range more {
		all = append(all, *p)
	}
	for _, p := range all {
		d := split(p)
		n := 0
		for n < len(root) && n < len(d) && root[n] == d[n] {
			n++
		}
		root = root[:n]
	}
	dir := filepath.FromSlash(strings.Join(root, "/"))
	if len(root) == 1 && root[0] == "" {
		dir = string(filepath.Separator)
	}
	for i, f := range in {
		if rel, err := filepath.Rel(dir, f.Path); err == nil {
			in[i].Path = filepath.ToSlash(rel)
		}
	}
	for _, p := range more {
		if rel, err := filepath.Rel(dir, *p); err == nil {
			*p = filepath.ToSlash(rel)
		}
	}
	name := filepath.Base(dir)
	if name == "." || name == string(filepath.Separator) {
		return ""
	}
	return name
}

// harnessSwitch builds the harness-switch figure from the paired
// comparisons of every model and effort run on both harnesses.
func harnessSwitch(ds *Dataset, metric, from, to string) (*plots.Figure, error) {
	v, err := ds.Values()
	if err != nil {
		return nil, err
	}
	cs, err := ds.Compare(nil, []string{from, to})
	if err != nil {
		return nil, err
	}
	type me struct{ model, effort string }
	size := map[string]float64{}
	eff := map[string]me{}
	for _, r := range v.Runs {
		size[r.ConfigID] = r.SizeB
		eff[r.ConfigID] = me{r.Model, r.Effort}
	}
	var rows []plots.Switch
	for _, c := range cs {
		if c.Metric != metric {
			continue
		}
		m := eff[c.A]
		rows = append(rows, plots.Switch{Model: m.model, Effort: m.effort, Size: size[c.A], From: c.MeanA, To: c.MeanB, Lo: c.Lo, Hi: c.Hi})
	}
	return plots.HarnessSwitch(rows, metric, from, to, Decimals(metric))
}

// MetricTableSpec is how the metric table name groups its rows (dims) and
// which metrics its columns are, in order; ok is false for a table of
// another kind.
func MetricTableSpec(name string) (dims, metrics []string, ok bool) {
	mt, ok := metricTables[name]
	return mt.dims, mt.metrics, ok
}

// CalibrationNotes are the lines under a table of configuration means:
// for each metric, its intervals' simulated coverage and the paired
// test's size at the study's design (Dataset.Calibration), a warning
// where the coverage falls below analysis.CalibrationWarnBelow (each
// other interval method is then simulated too, and the nearest the
// level suggested; the table's own method is kept), and the
// simulation's size.
func CalibrationNotes(ds *Dataset, metrics []string) ([]string, error) {
	var notes, warns []string
	var last *analysis.Calibration
	for _, m := range metrics {
		c, err := ds.Calibration(m, nil, ReportCalibration)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", m, err)
		}
		if c.Methods[0].Coverage < analysis.CalibrationWarnBelow {
			own := c.Methods[0].Method
			methods := []string{own}
			for _, me := range analysis.Methods {
				if me != own {
					methods = append(methods, me)
				}
			}
			if c, err = ds.Calibration(m, methods, ReportCalibration); err != nil {
				return nil, fmt.Errorf("%s: %w", m, err)
			}
			warns = append(warns, "Warning: "+c.Warning+" (the table keeps "+own+": a method chosen from the data would lose its own coverage).")
		}
		notes = append(notes, m+": "+CalibrationLine(c)+".")
		last = c
	}
	if last != nil {
		notes = append(notes, "Calibration ("+ds.Bootstrap().WithDefaults().Method+" intervals, as in the table): "+CalibrationSizeText(last)+
			". The Monte Carlo se is the simulation's own error, not the uncertainty of the design's estimated effects it plugs in (docs/statistics.md).")
	}
	return append(notes, warns...), nil
}
