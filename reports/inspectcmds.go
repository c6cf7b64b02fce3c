package reports

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/gymlens/gymlens/analysis"
	"github.com/gymlens/gymlens/ingest/rows"
)

// InspectCostStore is a warehouse that gives the Inspect samples' tokens
// and times.
type InspectCostStore interface {
	LoadInspectCosts(ctx context.Context) ([]rows.InspectCost, error)
}

// InspectTableNames are the tables of Inspect runs (table --source
// inspect NAME, and the Inspect report), in the report's order.
var InspectTableNames = []string{"main", "comparisons", "rank", "variance", "power", "correlations", "costs"}

// refuseForInspect refuses the parameters set that mean nothing for
// Inspect runs (selection of Proactivity-Gym runs, judges, two-level
// intervals), naming the command.
func (x *Exec) refuseForInspect(command string, names ...string) error {
	why := map[string]string{
		"where":       "Inspect runs are chosen by task and configuration as the warehouse holds them",
		"metrics":     "every Inspect scorer is analysed, each task and scorer apart",
		"judge":       "Inspect scores come from the logs' scorers, not from judges",
		"two-level":   "the Inspect intervals resample samples (each sample's epochs averaged)",
		"judge-noise": "Inspect scores come from the logs' scorers, not from judges",
		"by":          "each task and scorer is one design already",
		"personas":    "Inspect samples have no personas",
		"digits":      "the Inspect tables are written with their own decimals",
		"mark":        "Inspect tables mark nothing: their intervals and the comparisons say what differs",
		"families":    "judge bias is measured on the judges of Proactivity-Gym runs (agree --source inspect compares scorers and judges)",
	}
	for _, n := range names {
		if x.IsSet(n) {
			return analysis.Optionf("%s --source inspect: --%s does not apply: %s", command, n, why[n])
		}
	}
	return nil
}

// inspectCosts reads the samples' tokens and times.
func (x *Exec) inspectCosts(ctx context.Context) ([]rows.InspectCost, error) {
	w, err := x.Warehouse(ctx)
	if err != nil {
		return nil, err
	}
	s, ok := w.(InspectCostStore)
	if !ok {
		return nil, analysis.Optionf("--source inspect: %s holds no Inspect tables", x.Name)
	}
	return s.LoadInspectCosts(ctx)
}

// inspectRename relabels a study-design result for Inspect runs: the
// scenario is the sample, the repetition the epoch; the persona rows
// and columns (always 0 and 1 here) are dropped.
func inspectRename(r *Result) *Result {
	names := map[string]string{"scenarios": "samples", "repetitions": "epochs", "scenarios_needed": "samples_needed",
		analysis.VarScenario: "sample", analysis.VarConfigScenario: "config×sample", analysis.VarResidual: "epoch", "n_runs": "n_values"}
	drop := map[int]bool{}
	out := &Result{}
	for i, c := range r.Columns {
		if c == "personas" {
			drop[i] = true
			continue
		}
		if n, ok := names[c]; ok {
			c = n
		}
		out.Columns = append(out.Columns, c)
	}
	term := slices.Index(r.Columns, "term")
	for _, row := range r.Rows {
		if term >= 0 {
			t, _ := row[term].(string)
			if t == analysis.VarPersona || t == analysis.VarConfigPersona {
				continue
			}
		}
		var nr []any
		for i, v := range row {
			if drop[i] {
				continue
			}
			if i == term {
				if n, ok := names[v.(string)]; ok {
					v = n
				}
			}
			nr = append(nr, v)
		}
		out.Rows = append(out.Rows, nr)
	}
	return out
}

// inspectFoot says scenarios as samples in a footnote.
func inspectFoot(foot []string) []string {
	out := make([]string, len(foot))
	for i, f := range foot {
		out[i] = strings.NewReplacer("scenarios", "samples", "scenario", "sample").Replace(f)
	}
	return out
}

func (x *Exec) varianceInspect(ctx context.Context) error {
	d, boot, err := x.inspectInputs(ctx, "variance", "where", "metrics", "judge", "by")
	if err != nil {
		return err
	}
	vcs, skipped, err := analysis.InspectVariance(d, boot)
	if err != nil {
		return err
	}
	for _, s := range skipped {
		x.note("left out: %s", s)
	}
	for _, vc := range vcs {
		for _, n := range vc.Notes {
			x.note("%s: %s", vc.Metric, inspectNote(n))
		}
	}
	secs := InspectVarianceSections(x.Format, vcs)
	return x.Writer().Sections(secs, x.footnotes(nil, boot, "samples"))
}

// inspectNote words a variance note for Inspect runs.
func inspectNote(n string) string {
	if strings.HasPrefix(n, "one persona per scenario") {
		return "an Inspect sample is one unit: the persona terms are not in the design (0)"
	}
	return strings.NewReplacer("scenarios", "samples", "scenario", "sample", "repetitions", "epochs", "repetition", "epoch").Replace(n)
}

// InspectVarianceSections lays out Inspect variance components as
// VarianceSections does, with the sample for the scenario and the epoch
// for the repetition.
func InspectVarianceSections(format string, vcs []*analysis.VarianceComponents) []Section {
	secs := VarianceSections(format, vcs)
	for i := range secs {
		secs[i].Table = inspectRename(secs[i].Table)
	}
	secs[1].Title = "The design, the correlation of a configuration's epochs of one sample, and the design effect"
	return secs
}

// InspectPowerResult is the power of a paired comparison of two
// configurations on the same samples, per task and scorer, from the
// variance components (point estimates): r_implied is the correlation
// of the two configurations' per-sample means the components imply.
func InspectPowerResult(format string, vcs []*analysis.VarianceComponents, samples, epochs int, alpha, power float64, deltas map[string]float64) (*Result, error) {
	t := &Result{Columns: []string{"metric", "samples", "epochs", "alpha", "power", "r_implied", "se", "mde", "delta", "samples_needed"}}
	for _, vc := range vcs {
		d := analysis.PowerDesign{Scenarios: vc.Scenarios, Personas: 1, Repetitions: vc.Repetitions, Alpha: alpha, Power: power}
		if samples != 0 {
			d.Scenarios = samples
		}
		if epochs != 0 {
			d.Repetitions = epochs
		}
		p, err := analysis.Power(vc, d, deltas[vc.Metric])
		if err != nil {
			return nil, err
		}
		var v [5]float64
		for k, term := range vc.Terms {
			v[k] = term.Variance.Value
		}
		var delta, needed any
		if p.Delta > 0 {
			delta, needed = p.Delta, p.ScenariosNeeded
		}
		var r, se, mde any = analysis.InspectPairR(v, d.Repetitions), p.SE, p.MDE
		if Wide(format) {
			r, se, mde = fmt.Sprintf("%.3f", r), fmt.Sprintf("%.4f", p.SE), fmt.Sprintf("%.4f", p.MDE)
		}
		t.Rows = append(t.Rows, []any{p.Metric, d.Scenarios, d.Repetitions, d.Alpha, d.Power, r, se, mde, delta, needed})
	}
	return t, nil
}

func (x *Exec) powerInspect(ctx context.Context) error {
	if err := x.refuseForInspect("power", "where", "metrics", "judge", "by", "personas"); err != nil {
		return err
	}
	d, err := x.inspectData(ctx)
	if err != nil {
		return err
	}
	vcs, skipped, err := analysis.InspectVariance(d, analysis.BootstrapOptions{Resamples: -1})
	if err != nil {
		return err
	}
	for _, s := range skipped {
		x.note("left out: %s", s)
	}
	var labels []string
	for _, vc := range vcs {
		labels = append(labels, vc.Metric)
	}
	// One number is every task and scorer's difference (Inspect's
	// scorers share no registry of units); LABEL=D names one.
	deltas := map[string]float64{}
	if v, err := strconv.ParseFloat(strings.TrimSpace(x.String("delta")), 64); err == nil {
		if v <= 0 {
			return analysis.Optionf("--delta: expected a difference above 0, found %g", v)
		}
		for _, l := range labels {
			deltas[l] = v
		}
	} else if deltas, err = analysis.ParseDeltas(x.String("delta"), labels); err != nil {
		return err
	}
	t, err := InspectPowerResult(x.Format, vcs, x.Int("scenarios"), x.Int("repetitions"), x.Float("alpha"), x.Float("power"), deltas)
	if err != nil {
		return err
	}
	x.note("mde: of the two-sided paired t-test over samples (S − 1 degrees of freedom), each sample's epochs averaged; --scenarios sets the samples, " +
		"--repetitions the epochs; r_implied: the correlation of two configurations' per-sample means the components imply (the gain of pairing)")
	x.note("from the variance components' estimates (gymlens variance --source inspect), in each scorer's unit; samples_needed −1: more than 100,000")
	return x.Writer().Result(t, nil)
}

// InspectRanks ranks the configurations of every task and scorer run by
// two or more (RankConfigs over the samples as clusters); Metric is
// analysis.InspectLabel.
func InspectRanks(d *rows.InspectData, boot analysis.BootstrapOptions) ([]RankRow, error) {
	designs, err := analysis.InspectDesigns(d)
	if err != nil {
		return nil, err
	}
	var out []RankRow
	for _, r := range designs {
		groups, err := analysis.GroupRuns(r.Runs, []string{"config"}, nil)
		if err != nil {
			return nil, err
		}
		if len(groups) < 2 {
			continue
		}
		scen := make([]string, len(r.Runs))
		for i, run := range r.Runs {
			scen[i] = run.Scenario
		}
		res := RankConfigs(groups, r.Values, scen, 0, boot)
		for i := range res {
			res[i].Metric = r.Label()
		}
		out = append(out, res...)
	}
	if len(out) == 0 {
		return nil, analysis.NoDataf("rank --source inspect: no task and scorer run by two or more configurations")
	}
	return out, nil
}

func (x *Exec) rankInspect(ctx context.Context) ([]RankRow, error) {
	if x.IsSet("metric") {
		return nil, analysis.Optionf("rank --source inspect: --metric does not apply: every task and scorer is ranked apart")
	}
	d, boot, err := x.inspectInputs(ctx, "rank", "where", "judge")
	if err != nil {
		return nil, err
	}
	return InspectRanks(d, boot)
}

func (x *Exec) corrInspect(ctx context.Context) error {
	d, boot, err := x.inspectInputs(ctx, "corr", "where", "metrics", "judge")
	if err != nil {
		return err
	}
	res, err := analysis.InspectCorrelations(d, boot)
	if err != nil {
		return err
	}
	t, foot := CorrOutput(x.Format, res)
	return x.Writer().Result(t, inspectFoot(foot))
}

// InspectTables computes the Inspect tables named (InspectTableNames;
// all when none is): what a table cannot be made of is listed in
// skipped, with why. Each table is laid out for a report (ResultTable).
func InspectTables(d *rows.InspectData, costs []rows.InspectCost, boot analysis.BootstrapOptions, names ...string) (tables []*Table, skipped []string, err error) {
	if len(names) == 0 {
		names = InspectTableNames
	}
	boot = boot.WithDefaults()
	over := fmt.Sprintf("%g%% cluster-bootstrap intervals (%s), samples resampled, %d resamples, seed %d; each sample's epochs averaged.",
		100*boot.Level, boot.Method, boot.Resamples, boot.Seed)
	add := func(name, caption string, r *Result, notes ...string) {
		t := ResultTable("inspect-"+name, caption, r)
		t.Notes = notes
		tables = append(tables, t)
	}
	f3 := func(v float64) string {
		if math.IsNaN(v) {
			return "–"
		}
		return fmt.Sprintf("%.3f", v)
	}
	for _, name := range names {
		var err error
		switch name {
		case "main":
			var ms []analysis.InspectMean
			if ms, err = analysis.InspectMeans(d, "", boot); err != nil {
				break
			}
			slices.SortStableFunc(ms, func(a, b analysis.InspectMean) int {
				return strings.Compare(a.Task+"\x00"+a.Metric+"\x00"+a.Config, b.Task+"\x00"+b.Metric+"\x00"+b.Config)
			})
			r := &Result{Columns: []string{"task", "scorer", "config", "samples", "values", "mean", "interval", "warnings"}}
			for _, m := range ms {
				r.Rows = append(r.Rows, []any{m.Task, m.Metric, m.Config, m.Samples, m.Values, f3(m.Value),
					fmt.Sprintf("[%s, %s]", f3(m.Lo), f3(m.Hi)), joinWarnings(m.Warnings)})
			}
			add(name, "Each scorer's mean per task and configuration (Inspect runs)", r, over)
		case "comparisons":
			var res []analysis.Comparison
			for _, task := range inspectTasks(d) {
				sub := inspectTask(d, task)
				configs := slices.Sorted(maps.Keys(inspectConfigs(sub)))
				if len(configs) < 2 {
					continue
				}
				c, err := analysis.CompareInspect(sub, configs, boot)
				if err != nil {
					continue // no scorer with two samples every configuration scored
				}
				res = append(res, c...)
			}
			if len(res) == 0 {
				err = analysis.NoDataf("no task run by two or more configurations on two or more of the same samples")
				break
			}
			r, foot := CompareOutput("md", res)
			add(name, "Paired differences between configurations, by sample within each task and scorer (B − A)", r, foot...)
		case "rank":
			var rr []RankRow
			if rr, err = InspectRanks(d, boot); err != nil {
				break
			}
			r, foot := RankOutput("md", rr, boot)
			add(name, "How sure each configuration's rank is, per task and scorer", inspectRename(r), inspectFoot(foot)...)
		case "variance", "power":
			var vcs []*analysis.VarianceComponents
			var left []string
			o := boot
			if name == "power" {
				o.Resamples = -1
			}
			if vcs, left, err = analysis.InspectVariance(d, o); err != nil {
				break
			}
			for _, l := range left {
				skipped = append(skipped, fmt.Sprintf("table inspect-%s: %s", name, l))
			}
			if name == "variance" {
				secs := InspectVarianceSections("md", vcs)
				add(name, "Variance components of each task and scorer: sample, configuration × sample, epoch", secs[0].Table, over)
				break
			}
			var r *Result
			if r, err = InspectPowerResult("md", vcs, 0, 0, 0.05, 0.8, nil); err != nil {
				break
			}
			add(name, "The smallest difference between two configurations the samples detect (paired t-test over samples, α = 0.05, power 0.8)", r,
				"From the variance components' estimates; r_implied: the correlation of two configurations' per-sample means they imply.")
		case "correlations":
			var cs []analysis.CorrResult
			if cs, err = analysis.InspectCorrelations(d, boot); err != nil {
				break
			}
			r, foot := CorrOutput("md", cs)
			add(name, "Correlations between the scorers of each task (a configuration's sample, epochs averaged)", r, inspectFoot(foot)...)
		case "costs":
			var ms []analysis.InspectMean
			if ms, err = analysis.InspectCosts(d, costs, boot); err != nil {
				break
			}
			r := &Result{Columns: []string{"config", "task", "cost", "samples", "values", "mean per sample", "interval"}}
			for _, m := range ms {
				r.Rows = append(r.Rows, []any{m.Config, m.Task, m.Metric, m.Samples, m.Values, fmt.Sprintf("%.1f", m.Value), fmt.Sprintf("[%.1f, %.1f]", m.Lo, m.Hi)})
			}
			add(name, "Tokens and seconds per sample and epoch, per configuration and task", r, over)
		default:
			return nil, nil, analysis.Optionf("table --source inspect: unknown table %q: expected one of %s", name, strings.Join(InspectTableNames, ", "))
		}
		if err != nil {
			if !errors.Is(err, analysis.ErrNoData) {
				return nil, nil, err
			}
			skipped = append(skipped, fmt.Sprintf("table inspect-%s: %v", name, err))
		}
	}
	return tables, skipped, nil
}

// inspectTasks are the tasks of d, sorted.
func inspectTasks(d *rows.InspectData) []string {
	set := map[string]bool{}
	for _, e := range d.Evals {
		set[e.Task] = true
	}
	return slices.Sorted(maps.Keys(set))
}

// inspectConfigs are the configurations of d.
func inspectConfigs(d *rows.InspectData) map[string]bool {
	set := map[string]bool{}
	for _, e := range d.Evals {
		set[e.ConfigID] = true
	}
	return set
}

// inspectTask is d restricted to one task's evaluations.
func inspectTask(d *rows.InspectData, task string) *rows.InspectData {
	out := &rows.InspectData{}
	keep := map[string]bool{}
	for _, e := range d.Evals {
		if e.Task == task {
			out.Evals = append(out.Evals, e)
			keep[e.EvalID] = true
		}
	}
	for _, s := range d.Scores {
		if keep[s.EvalID] {
			out.Scores = append(out.Scores, s)
		}
	}
	return out
}

func (x *Exec) tableInspect(ctx context.Context) error {
	tables, opt, err := x.inspectTables(ctx)
	if err != nil {
		return err
	}
	return WriteTables(x.Out, x.Format, tables, opt)
}

// inspectTables computes the one Inspect table the arguments name, and
// reads how to write it.
func (x *Exec) inspectTables(ctx context.Context) ([]*Table, TableOptions, error) {
	var opt TableOptions
	if len(x.Pos) != 1 || !slices.Contains(InspectTableNames, x.Pos[0]) {
		return nil, opt, analysis.Optionf("table --source inspect: name one table: %s", strings.Join(InspectTableNames, ", "))
	}
	if err := x.refuseForInspect("table", "where", "judge", "mark", "digits", "families"); err != nil {
		return nil, opt, err
	}
	if x.IsSet("judges") {
		return nil, opt, analysis.Optionf("table --source inspect: --judges does not apply: Inspect scores come from the logs' scorers, not from judges")
	}
	if x.IsSet("layout") && x.Format != "latex" {
		return nil, opt, analysis.Optionf("table --layout does not apply: it sets a LaTeX table's width (--format latex), not a %s one's", x.Format)
	}
	opt, err := x.TableOptions()
	if err != nil {
		return nil, opt, err
	}
	d, err := x.inspectData(ctx)
	if err != nil {
		return nil, opt, err
	}
	boot, err := x.Bootstrap()
	if err != nil {
		return nil, opt, err
	}
	var costs []rows.InspectCost
	if x.Pos[0] == "costs" {
		if costs, err = x.inspectCosts(ctx); err != nil {
			return nil, opt, err
		}
	}
	tables, skipped, err := InspectTables(d, costs, boot, x.Pos[0])
	if err != nil {
		return nil, opt, err
	}
	if len(tables) == 0 {
		return nil, opt, analysis.NoDataf("%s", strings.TrimPrefix(skipped[0], "table "))
	}
	for _, s := range skipped {
		x.note("left out: %s", s)
	}
	return tables, opt, nil
}
