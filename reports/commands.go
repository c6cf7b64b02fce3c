package reports

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/gymlens/gymlens/analysis"
	"github.com/gymlens/gymlens/analysis/stat"
	"github.com/gymlens/gymlens/ingest/rows"
	"github.com/gymlens/gymlens/plots"
)

// Commands are the reading commands, in the order a notebook lists them.
var Commands = []*Command{
	{
		Name: "table", Usage: "a paper table: " + strings.Join(TableNames, ", "), ArgsUsage: "NAME",
		Description: "main: the four metrics per model and harness (the paper's Table 7); tc-components, ta-components,\n" +
			"trj-constructs: Tables 8–10; judge-agreement: Tables 4–6 (--judges A,B, the only two judges, or the first two in name order); judge-human;\n" +
			"judge-bias: self-preference (--families FILE) and length;\n" +
			"correlations; by-scenario; by-persona; variance, power, rank (gymlens variance, power, rank); custom: your rubrics'\n" +
			"metrics. --format latex (booktabs, best bold, second underlined), md, csv or html.\n" +
			"--source inspect: the tables of Inspect runs, per task and scorer: main (each configuration's mean), comparisons\n" +
			"(paired by sample), rank, variance, power, correlations (between scorers), costs (tokens and seconds per sample).",
		Params: params([]Param{
			{Name: "intervals", Default: true, Usage: "show the intervals beside the values"},
			whereParam, judgeParam,
			{Name: "judges", Default: "", Usage: "judge-agreement: compare judges `A,B`"},
			{Name: "source", Default: "gym", Usage: "`RUNS` to tabulate: gym (Proactivity-Gym) or inspect (Inspect AI: " + strings.Join(InspectTableNames, ", ") + ")"},
			FamiliesParam,
		}, TableParams(), bootstrapParams()),
		Formats: TableFormats, Default: "md", Run: runTable,
	},
	{
		Name: "plot", Usage: "a paper figure as PNG, SVG and PDF: " + strings.Join(plots.FigureNames, ", "), ArgsUsage: "NAME",
		Description: "model-size: a metric against model size per family; harness-switch: the change per open model (known size)\n" +
			"when switching harness; correlations: the run-level correlation matrix; harness-comparison: the four metrics per\n" +
			"harness; effort: the four metrics against reasoning effort (the model and harness with most effort levels, or\n" +
			"--where); by-scenario, by-persona; human-trust: a study question over checkpoint days by condition.",
		Params: params([]Param{
			{Name: "out", Default: "", Required: true, Usage: "write NAME.png, NAME.svg and NAME.pdf into `DIR`"},
			{Name: "formats", Default: strings.Join(plots.Formats, ","), Usage: "image `FORMATS`"},
			{Name: "size", Default: "", Usage: "`SIZE` for a paper: column (3.3 in wide) or page (6.9 in); default: the figure's own (a single plot one column, panels the page)"},
			{Name: "metric", Default: "TC", Usage: "model-size, harness-switch: the `METRIC`"},
			{Name: "switch", Default: "CC,OC", Usage: "harness-switch: from and to `HARNESS,HARNESS`"},
			{Name: "question", Default: "trust", Usage: "human-trust: the study `QUESTION`"},
			whereParam, judgeParam,
		}, bootstrapParams()),
		Formats: []string{"table"}, Default: "table", Run: runPlot,
	},
	{
		Name:  "metrics",
		Usage: "the 3T metrics (TC, TA, TR-D, TR-J) with cluster-bootstrap intervals, broken down as asked",
		Description: "Dimensions: " + strings.Join(analysis.Dimensions, ", ") + ".\n" +
			"Metrics: " + strings.Join(analysis.AllMetrics, ", ") + ".\n" +
			"Scales: TC and its parts 0–100; TA, TR-D and TA's parts in percent; TR-J 1–5.\n" +
			"The resampling unit is the scenario. Judgments are averaged over judges unless --judge names one.\n" +
			"--source pare: the PARE and Meta-ARE runs instead, with their metrics (" + strings.Join(analysis.PARERunMetrics, ", ") + ",\n" +
			strings.Join(analysis.PooledMetrics, ", ") + ", pass@K, pass^K, pare_pass@k, pare_pass^k) by " + strings.Join(analysis.PAREDimensions, ", ") + " (docs/pare.md).\n" +
			"--source inspect: each Inspect scorer's mean (inspect.SCORER[.KEY]) per configuration and task, epochs averaged within\n" +
			"a sample, the samples resampled (docs/inspect.md); --by meta.FIELD splits it by a field of the samples' metadata,\n" +
			"--cluster meta.FIELD resamples that field's values within each task instead of the samples.",
		Params: params([]Param{
			{Name: "by", Default: "config", Usage: "break down by `DIM[,DIM]` (\"\" for one overall group)"},
			{Name: "source", Default: "gym", Usage: "`RUNS` to measure: gym (Proactivity-Gym), pare (PARE and Meta-ARE) or inspect (Inspect AI: each scorer's mean per configuration and task)"},
			{Name: "pare-report", Default: false, Usage: "with --source pare: the statistics PARE's combined_result.json and Meta-ARE's benchmark_stats.json give, recomputed from the ingested result rows"},
			{Name: "reducer", Default: "mean", Usage: "with --source inspect: each sample's epochs reduced by `R` (mean, median, mode, max, min, pass_at_K, pass_K: all K right, at_least_K)"},
			{Name: "cluster", Default: "", Usage: "with --source inspect: resample the values of `meta.FIELD` of the samples' metadata within each task, not the samples"},
			{Name: "calibration", Default: false, Usage: "instead of the metrics: each --ci method's simulated coverage of the configurations' intervals and the paired test's size at this design (1,000 datasets × 2,000 resamples; with --resamples B below 2,000, B/2 × B)"},
		}, SelectionParams(), bootstrapParams()),
		Formats: Formats, Default: "table", Run: runMetrics,
	},
	{
		Name: "compare", Usage: "paired differences between configurations, with intervals, p-values, Holm and BH",
		ArgsUsage: "CONFIG CONFIG [CONFIG...]",
		Description: "Name configurations by id (\"GPT 5.6 Sol | CD | none\") or key (gpt-5.6-sol_cd_none); every pair\n" +
			"is compared, later minus earlier, on the same resampled scenarios. --harness-switch FROM,TO compares,\n" +
			"for every model and effort run on both, harness TO minus harness FROM (the paper's CC→OC effect).\n" +
			"Each p-value is the interval inverted (p < α exactly when the 1 − α interval excludes 0) and is adjusted\n" +
			"across the pairs, metric by metric. --two-level does not apply here and is refused.\n" +
			"--debias (with --families FILE): each judged metric's difference as measured, leave-family-out (the judges of\n" +
			"the two models' families left out; 3 judges or more) and their difference, the judges' bias, from the same\n" +
			"resamples, a note where the conclusion changes; and where humans rated items, the PPI-corrected difference of\n" +
			"the item means (docs/judge.md). No correction for length: that needs a human reference (agree --bias).",
		Params: params([]Param{
			{Name: "harness-switch", Default: "", Usage: "`FROM,TO` harnesses, per model"},
			{Name: "source", Default: "gym", Usage: "`RUNS` to compare: gym (Proactivity-Gym), pare (PARE and Meta-ARE; name their configurations) or inspect (Inspect AI: name configurations; paired by sample within each task and scorer)"},
			{Name: "debias", Default: false, Usage: "each judged difference as measured and leave-family-out (the judges of the two models' families left out; needs 3 judges and --families), the judges' bias, and the PPI-corrected difference where humans rated"},
			FamiliesParam,
		}, SelectionParams(), bootstrapParams()),
		Formats: Formats, Default: "table", Run: refusing("compare", runCompare, map[string]string{
			"two-level": "the paired bootstrap resamples scenarios alone; the two-level bootstrap is for the metrics' intervals (metrics, table, report)",
		}),
	},
	{
		Name: "corr", Usage: "Pearson and Spearman correlations among the metrics, at run and configuration level",
		Description: "Run level pools the runs of all configurations (as the paper does); configuration level\n" +
			"correlates the configurations' means. Each r has its p-value (t, n−2 df), a Fisher-z interval and\n" +
			"a cluster-bootstrap interval (scenarios resampled). --two-level does not apply here and is refused.\n" +
			"--source inspect: the scorers of each task with two or more, at sample level (a configuration's sample, its epochs\n" +
			"averaged, all configurations pooled) and configuration level; the samples resampled.",
		Params: params(SelectionParams(), []Param{{Name: "source", Default: "gym",
			Usage: "`RUNS` to correlate: gym (Proactivity-Gym: the metrics) or inspect (Inspect AI: the scorers of each task, per sample)"}}, bootstrapParams()),
		Formats: Formats, Default: "table", Run: refusing("corr", runCorr, map[string]string{
			"two-level": "the correlations' bootstrap resamples scenarios alone; the two-level bootstrap is for the metrics' intervals (metrics, table, report)",
		}),
	},
	{
		Name: "variance", Usage: "where each metric's variance comes from: scenario, persona, configuration × scenario, × persona, repetition",
		Description: "For each metric, the variance components of a design of configurations (fixed) × scenarios × personas within\n" +
			"each scenario × repetitions (random scenario, persona, configuration × scenario and × persona, residual), by the\n" +
			"ANOVA estimator of a balanced design, else by REML (saying why); with one persona per scenario (PARE's runs,\n" +
			"--source pare) the persona terms are 0. Each component's share of the total, the correlation of a configuration's\n" +
			"runs within a scenario (ICC) and the design effect (how many times a configuration mean's variance exceeds what\n" +
			"independent runs would give), with cluster-bootstrap intervals (scenarios resampled). --two-level and --judge-noise\n" +
			"do not apply here and are refused. --source inspect: per task and scorer, configurations × samples × epochs (terms\n" +
			"sample, config×sample, epoch; docs/inspect.md).",
		Params:  params(SelectionParams(), []Param{designBy, designSource}, bootstrapParams()),
		Formats: Formats, Default: "table", Run: refusing("variance", runVariance, map[string]string{
			"two-level":   "the components' intervals resample scenarios alone; a two-level bootstrap is for the metrics' intervals (metrics, table, report)",
			"judge-noise": "the components are of the runs' values as the judges' averages give them; the judges' own noise is in agree --self and in the metrics' intervals (metrics --judge-noise)",
		}),
	},
	{
		Name: "power", Usage: "the smallest difference between two configurations a design detects, and the scenarios a difference needs",
		Description: "From each metric's variance components (gymlens variance), for a paired comparison of two configurations on\n" +
			"the same scenarios × personas × repetitions (default: the warehouse's design): the standard error of the\n" +
			"difference (the scenario and persona effects cancel), and the minimum detectable effect of the paired t-test\n" +
			"over scenarios (S − 1 degrees of freedom) at --alpha with --power, exact by the noncentral t; with --delta, the\n" +
			"fewest scenarios whose MDE is at most that difference. se, mde and delta are in each metric's unit (the unit\n" +
			"column): points of TC's 0–100 scale, percentage points of TA and TR-D, points of TR-J's 1–5 scale; so --delta\n" +
			"is per metric, TC=3,TR-J=0.2 (a metric not named gets none), or one number with one metric (--metrics TC).\n" +
			"--two-level, --judge-noise and the bootstrap's options (--resamples, --seed, --level, --ci: the MDE comes from\n" +
			"the components' point estimates) do not apply and are refused.\n" +
			"--source inspect: per task and scorer, two configurations on the same samples (--scenarios: samples, --repetitions:\n" +
			"epochs), with r_implied, the correlation of their per-sample means; --delta D is every scorer's difference.",
		Params: params(SelectionParams(), []Param{
			{Name: "scenarios", Default: 0, Usage: "scenarios `S` of the design (0: the warehouse's)"},
			{Name: "personas", Default: 0, Usage: "personas `P` per scenario (0: the warehouse's)"},
			{Name: "repetitions", Default: 0, Usage: "repetitions `R` (0: the warehouse's)"},
			{Name: "alpha", Default: 0.05, Usage: "the test's two-sided level `A`"},
			{Name: "power", Default: 0.8, Usage: "the power `P` asked for"},
			{Name: "delta", Default: "", Usage: "differences `METRIC=D,…` (each in its metric's unit; one number D with one metric): the scenarios each needs"},
			designBy, designSource,
		}, bootstrapParams()),
		Formats: Formats, Default: "table", Run: refusing("power", runPower, map[string]string{
			"resamples":   "the MDE comes from the variance components' point estimates: nothing is resampled",
			"seed":        "the MDE comes from the variance components' point estimates: nothing is resampled",
			"level":       "the MDE has no interval; the test's level is --alpha",
			"ci":          "the MDE comes from the variance components' point estimates: no interval is drawn",
			"two-level":   "the MDE comes from the variance components, which have no two-level interval",
			"judge-noise": "the standard error of the difference comes from the variance components, which leave the judges' own noise out",
		}),
	},
	{
		Name: "rank", Usage: "how sure each configuration's rank is: rank intervals, P(best), and the configurations tied with the best",
		Description: "Every configuration's estimate of --metric and its rank (1: highest), an interval for the rank and the share of\n" +
			"resamples in which it is first, from one cluster bootstrap that draws the same scenarios for every configuration;\n" +
			"tied_with_best: not distinguishable from the best (paired cluster bootstrap of the difference, Holm-adjusted p ≥ α).\n" +
			"--ci does not apply here and is refused. --source inspect: every task and scorer, the samples resampled.",
		Params: params([]Param{
			{Name: "metric", Default: "TC", Usage: "the `METRIC` to rank on (higher is better; with --source pare: success unless named)"},
			whereParam, judgeParam, designSource,
		}, bootstrapParams()),
		Formats: Formats, Default: "table", Run: refusing("rank", runRank, map[string]string{
			"ci": "rank reports rank intervals and P(best) from the resamples' ranks, not an interval of an estimate: no interval method applies",
		}),
	},
	{
		Name:  "agree",
		Usage: "agreement: judge vs judge (--judges A,B), judge vs humans (--human), any ratings file (--input), or Inspect scorers vs judges and humans (--source inspect)",
		Description: "--judges A,B: for every continuous score both judges' means, Δ (B − A), MAE, Pearson r and Spearman ρ;\n" +
			"for the TA labels both positive rates, Δ, percent agreement and Cohen's κ; and the configuration-level\n" +
			"correlations (the paper's Tables 4, 5 and 6). Intervals: cluster bootstrap, scenarios resampled.\n" +
			"--human: human ratings against the judges (or --judge) on the same run, task and question, with Kendall τ-b,\n" +
			"quadratic-weighted κ and the confusion matrix on 1–5 scales; the humans' own reliability (Krippendorff's α,\n" +
			"pairwise κ); the conflation check (r between TR-J and TC for the judge and for the humans); and the judge mean\n" +
			"corrected by the human labels (prediction-powered inference).\n" +
			"--self JUDGE: the judge against itself on the items it was asked again (gymlens judge --repeats N): per score\n" +
			"Krippendorff's α (nominal for labels, ordinal for TR-J and TA.cq, interval otherwise), ICC(1,1), the flip rate\n" +
			"of binary labels, the within-item SD; then, against each other judge, the share of their disagreement that the\n" +
			"judges' own noise explains. Intervals: bootstrap, items resampled.\n" +
			"--bias: each judge's self-preference, (judge − the other judges) on agents of its family minus the same on\n" +
			"other agents (--families FILE: CSV name,family for every agent model and judge), and its length bias, the slope of\n" +
			"(judge − humans), or (judge − another judge) where no human rated, on the item's length (docs/judge.md).\n" +
			"--input FILE.csv: columns item, rater, value (and optional question); Krippendorff's α at --level, Fleiss' κ,\n" +
			"Cohen's κ and quadratic-weighted κ for two raters, percent agreement. An empty value is a missing rating.\n" +
			"--source inspect: within each task of the Inspect samples, every scorer against every judge's rubric score\n" +
			"(gymlens judge --source inspect), judges against each other on a score, and the humans' mean rating of each\n" +
			"question (ratings with task, sample_id and epoch) against both: the statistics of --judges, binary or\n" +
			"continuous, with intervals from resampling the samples (docs/agreement.md).",
		Params: params([]Param{
			{Name: "judges", Default: "", Usage: "compare judge `A,B`"},
			{Name: "self", Default: "", Usage: "`JUDGE` against itself: its answers to the items it was asked again (judge --repeats)"},
			{Name: "human", Default: false, Usage: "compare the human ratings with the judges"},
			{Name: "pare", Default: false, Usage: "compare PARE's human annotations with its simulated user"},
			{Name: "judge", Default: "", Usage: "with --human: this `JUDGE` alone instead of the judges' average"},
			{Name: "input", Default: "", Usage: "agreement of the ratings in `FILE.csv`"},
			{Name: "bias", Default: false, Usage: "the judges' self-preference (with --families) and length bias"},
			FamiliesParam,
			{Name: "categories", Default: "", Usage: "with --input: the categories in their order, `A,B,C` (text values otherwise count as unordered, nominal)"},
			{Name: "level", Default: analysis.Interval, Usage: "with --input: Krippendorff's α `LEVEL`: nominal, ordinal, interval or ratio"},
			{Name: "source", Default: "gym", Usage: "`RATED`: gym (Proactivity-Gym runs, with a mode above) or inspect (Inspect samples: every scorer, judge rubric score and human question a rater, alone)"},
			whereParam,
		}, BootstrapParams(analysis.DefaultBootstrap.Resamples, "confidence")),
		Formats: Formats, Default: "table", Run: runAgree,
	},
	{
		Name: "human", Usage: "the human-study analyses: ratings over checkpoint days by condition, transitions, acceptance",
		Description: "Reads the ratings that have a day and a condition (e.g. AAA, AMA: one letter per phase, A appropriate,\n" +
			"M misaligned). Per question, the mean by condition and day; the mean change from one checkpoint to the\n" +
			"next by transition type (A→A, A→M, M→A, M→M); the acceptance rate by condition and the paired difference\n" +
			"between every two conditions. Participants (raters) are resampled: 20,000 resamples by default.",
		Params: params(BootstrapParams(20000, "level"), // as the paper's human study
			[]Param{{Name: "acceptance", Default: "acceptance", Usage: "the `QUESTION` that records acceptance (0/1)"}}),
		Formats: Formats, Default: "table", Run: runHuman,
	},
	{
		Name: "query", Usage: "run read-only SQL against the warehouse", ArgsUsage: `"SQL"`,
		// The CLI adds the warehouse's tables and views to the description.
		Description: "The warehouse is opened read-only and the query cannot touch files. One read statement runs (SELECT,\n" +
			"WITH, VALUES, FROM, DESCRIBE, SHOW, SUMMARIZE); its rows are written as they come (--format csv or json\n" +
			"for results of any size; the table format shows the first 10,000).",
		Formats: ResultFormats, Default: "table", Run: runQuery,
	},
	{
		Name: "reconcile", Usage: "compare what PARE and Meta-ARE stored with what gymlens recomputes, and list every mismatch",
		Description: "Each result row (PARE *_result.json, Meta-ARE output.jsonl) linked to an ingested trace: its stored\n" +
			"counts and rates against those recomputed from the trace, and its success against the trace's own verdict.\n" +
			"Each section of a summary report (PARE combined_result.json, Meta-ARE benchmark_stats.json): its statistics\n" +
			"against those recomputed from the ingested result rows, as PARE's and Meta-ARE's report code defines them.\n" +
			"A stored number that is the recomputed one in the other unit (a fraction where the format writes a percent,\n" +
			"or the reverse) is a mismatch of kind \"unit\". --strict exits with status 1 when there is a mismatch.\n" +
			"--source inspect: each metric an Inspect log's results store (accuracy, mean, std, var, stderr) recomputed\n" +
			"over the epoch-reduced scores, as Inspect computes it; equal, differs, or not recomputed (a custom metric, an\n" +
			"unknown reducer), each said (docs/inspect.md).",
		Params: []Param{{Name: "strict", Default: false, Usage: "exit with status 1 when there is a mismatch"},
			{Name: "source", Default: "pare", Usage: "`RESULTS` to reconcile: pare (PARE and Meta-ARE) or inspect (Inspect AI)"}},
		Formats: ResultFormats, Default: "table", Run: runReconcile,
	},
	{
		Name: "decisions", Usage: "PARE's decision points of the ingested PARE traces",
		Description: "A decision point is a proposal the observe-mode agent sent the user before the execute agent's\n" +
			"first tool call, paired with the user's next accept or reject: accept or reject when the user answered\n" +
			"straight away, gather_context when it made other tool calls first; final is whether it accepted in the end.",
		Formats: ResultFormats, Default: "table", Run: runDecisions,
	},
}

func runTable(ctx context.Context, x *Exec) error {
	switch x.String("source") {
	case "inspect":
		return x.tableInspect(ctx)
	case "gym":
	default:
		return analysis.Optionf("--source: expected gym or inspect, found %q", x.String("source"))
	}
	name, err := x.tableName()
	if err != nil {
		return err
	}
	if x.IsSet("families") && name != "judge-bias" {
		return analysis.Optionf("table --families is read by the judge-bias table alone, not %s", name)
	}
	if x.IsSet("layout") && x.Format != "latex" {
		return analysis.Optionf("table --layout does not apply: it sets a LaTeX table's width (--format latex), not a %s one's", x.Format)
	}
	opt, err := x.TableOptions()
	if err != nil {
		return err
	}
	ds, err := x.Dataset(ctx, TableKeep(name))
	if err != nil {
		return err
	}
	tables, err := Tables(ds, name)
	if err != nil {
		return err
	}
	if x.Format != "csv" { // the other formats write the tables' notes
		x.judgesNoted(ds)
	}
	return WriteTables(x.Out, x.Format, tables, opt)
}

// TableParams are the parameters of how paper tables are written.
func TableParams() []Param {
	return []Param{
		{Name: "layout", Default: "column", Usage: "LaTeX `LAYOUT`: column (one column of a two-column paper) or page (table* across both)"},
		{Name: "digits", Default: -1, Usage: "`N` decimals for every value (default: the paper's, two for TC, TA, TR-D and TR-J)"},
		{Name: "mark", Default: "rank", Usage: "`HOW` tables of configurations mark values: rank (best bold, second underlined) or significance (bold: the best and every configuration the paired cluster bootstrap, Holm-adjusted, cannot tell from it)"},
	}
}

// TableOptions reads intervals, layout and digits.
func (a *Args) TableOptions() (TableOptions, error) {
	o := TableOptions{Intervals: !a.Has("intervals") || a.Bool("intervals"), Layout: a.String("layout")}
	if o.Layout == "" {
		o.Layout = "column"
	}
	if !slices.Contains(Layouts, o.Layout) {
		return o, analysis.Optionf("--layout: expected column or page, found %q", o.Layout)
	}
	if d := a.Int("digits"); a.IsSet("digits") {
		if d < 0 || d > 6 {
			return o, analysis.Optionf("--digits: expected 0 to 6, found %d", d)
		}
		o.Digits, o.Fixed = d, true
	}
	return o, nil
}

// tableName is the one table the arguments name.
func (x *Exec) tableName() (string, error) {
	if len(x.Pos) != 1 {
		return "", analysis.Optionf("table: name one table: %s", strings.Join(TableNames, ", "))
	}
	if !slices.Contains(TableNames, x.Pos[0]) {
		return "", analysis.Optionf("table: unknown table %q: expected one of %s", x.Pos[0], strings.Join(TableNames, ", "))
	}
	return x.Pos[0], nil
}

// figure computes the one figure the arguments name.
func (x *Exec) figure(ctx context.Context) (*plots.Figure, error) {
	if len(x.Pos) != 1 {
		return nil, analysis.Optionf("plot: name one figure: %s", strings.Join(plots.FigureNames, ", "))
	}
	name := x.Pos[0]
	if !slices.Contains(plots.FigureNames, name) {
		return nil, analysis.Optionf("plot: unknown figure %q: expected one of %s", name, strings.Join(plots.FigureNames, ", "))
	}
	ds, err := x.Dataset(ctx, KeepPacked)
	if err != nil {
		return nil, err
	}
	return Figure(ds, name)
}

func runPlot(ctx context.Context, x *Exec) error {
	if len(x.Pos) == 1 && slices.Contains(plots.FigureNames, x.Pos[0]) {
		for _, f := range x.Split("formats") {
			if !slices.Contains(plots.Formats, f) {
				return analysis.Optionf("--formats: expected some of %s, found %q", strings.Join(plots.Formats, ", "), f)
			}
		}
	}
	if sz := x.String("size"); sz != "" && !slices.Contains(plots.Sizes, sz) {
		return analysis.Optionf("--size: expected column or page, found %q", sz)
	}
	fig, err := x.figure(ctx)
	if err != nil {
		return err
	}
	if err := fig.Resize(x.String("size")); err != nil {
		return err
	}
	paths, err := WriteFigure(fig, x.String("out"), x.Split("formats"))
	if err != nil {
		return err
	}
	if !x.Quiet {
		fmt.Fprintf(x.Out, "wrote %s\n", strings.Join(paths, ", "))
	}
	return nil
}

func runMetrics(ctx context.Context, x *Exec) error {
	by := x.Split("by")
	if x.IsSet("reducer") && x.String("source") != "inspect" {
		return analysis.Optionf("--reducer is for --source inspect (Inspect's epochs); %s runs have no reducer", x.String("source"))
	}
	if x.IsSet("cluster") && x.String("source") != "inspect" {
		return analysis.Optionf("--cluster is for --source inspect (a field of the samples' metadata); %s runs are resampled by scenario", x.String("source"))
	}
	if x.Bool("calibration") {
		if x.String("source") != "gym" {
			return analysis.Optionf("--calibration simulates Proactivity-Gym's design (configurations × scenarios × personas × repetitions); --source %s is not simulated", x.String("source"))
		}
		if x.IsSet("by") && x.String("by") != "config" {
			return analysis.Optionf("--calibration simulates the intervals of the configurations' means (--by config), not of --by %s", x.String("by"))
		}
		if x.Bool("judge-noise") {
			return analysis.Optionf("--calibration simulates the runs' values, not the judges' repeated answers: --judge-noise is not simulated")
		}
		return x.calibration(ctx)
	}
	switch x.String("source") {
	case "gym":
		ds, err := x.Dataset(ctx, KeepValues)
		if err != nil {
			return err
		}
		res, err := ds.Metrics(by)
		if err != nil {
			return err
		}
		notes, err := ds.JudgeNotes()
		if err != nil {
			return err
		}
		t, foot := MetricsOutput(x.Format, by, res)
		x.judgesNoted(ds)
		for _, n := range notes {
			if Wide(x.Format) {
				foot = append(foot, "note: "+n)
			} else {
				x.note("%s", n) // JSON and CSV keep to their rows
			}
		}
		return x.Writer().Result(t, foot)
	case "inspect":
		return x.metricsInspect(ctx)
	case "pare":
		if x.Bool("pare-report") {
			return x.pareReport(ctx)
		}
		opt, units, err := x.pare(ctx)
		if err != nil {
			return err
		}
		res, err := analysis.PAREEstimates(units, opt)
		if err != nil {
			return x.noPARE(err)
		}
		return x.Writer().Result(MetricsOutput(x.Format, by, res))
	}
	return analysis.Optionf("--source: expected gym, pare or inspect, found %q", x.String("source"))
}

// pare reads the PARE options and units.
func (x *Exec) pare(ctx context.Context) (analysis.PAREOptions, []analysis.PAREUnit, error) {
	opt := analysis.PAREOptions{By: x.Split("by")}
	var err error
	if opt.Bootstrap, err = x.Bootstrap(); err != nil {
		return opt, nil, err
	}
	if opt.Where, err = x.Where(analysis.PAREDimensions); err != nil {
		return opt, nil, err
	}
	if x.IsSet("metrics") {
		opt.Metrics = x.Split("metrics")
	}
	w, err := x.Warehouse(ctx)
	if err != nil {
		return opt, nil, err
	}
	units, err := PAREUnits(ctx, w)
	return opt, units, err
}

// noPARE names the warehouse when there is no PARE run to measure.
func (x *Exec) noPARE(err error) error {
	if errors.Is(err, analysis.ErrNoPARERuns) {
		return analysis.NoDataf("no PARE or Meta-ARE run to measure in %s (ingest traces or result files first)", x.Name)
	}
	return err
}

func (x *Exec) pareReport(ctx context.Context) error {
	w, err := x.Warehouse(ctx)
	if err != nil {
		return err
	}
	results, err := w.LoadPAREResults(ctx)
	if err != nil {
		return err
	}
	if len(results) == 0 {
		return analysis.NoDataf("no PARE or Meta-ARE result rows in %s: PARE's report is computed from its result files (ingest *_result.json or output.jsonl)", x.Name)
	}
	return x.Writer().Result(PAREReport(results), nil)
}

func runCompare(ctx context.Context, x *Exec) error {
	hs := x.String("harness-switch")
	sw := SplitList(hs)
	switch {
	case hs != "" && len(x.Pos) > 0:
		return analysis.Optionf("compare: name configurations or --harness-switch, not both")
	case hs != "" && len(sw) != 2:
		return analysis.Optionf("--harness-switch: expected FROM,TO, found %q", hs)
	case hs == "" && len(x.Pos) < 2:
		return analysis.Optionf("compare: name at least two configurations (or use --harness-switch)")
	}
	var res []analysis.Comparison
	if x.IsSet("families") && !x.Bool("debias") {
		return analysis.Optionf("compare --families is read by --debias alone")
	}
	if x.Bool("debias") && x.String("source") != "gym" {
		return analysis.Optionf("compare --debias is for Proactivity-Gym runs' judged metrics (--source gym), not --source %s", x.String("source"))
	}
	switch x.String("source") {
	case "pare":
		if sw != nil {
			return analysis.Optionf("compare --source pare: name configurations; --harness-switch is for Proactivity-Gym runs")
		}
		opt, units, err := x.pare(ctx)
		if err != nil {
			return err
		}
		if res, err = analysis.ComparePARE(units, opt, x.Pos); err != nil {
			return x.noPARE(err)
		}
	case "gym":
		if x.Bool("debias") {
			return x.compareDebiased(ctx, sw)
		}
		ds, err := x.Dataset(ctx, KeepValues)
		if err != nil {
			return err
		}
		if res, err = ds.Compare(x.Pos, sw); err != nil {
			return err
		}
	case "inspect":
		if sw != nil {
			return analysis.Optionf("compare --source inspect: name configurations; --harness-switch is for Proactivity-Gym runs")
		}
		d, boot, err := x.inspectInputs(ctx, "compare", "where", "metrics", "judge", "judge-noise")
		if err != nil {
			return err
		}
		if res, err = analysis.CompareInspect(d, x.Pos, boot); err != nil {
			return err
		}
	default:
		return analysis.Optionf("--source: expected gym, pare or inspect, found %q", x.String("source"))
	}
	return x.Writer().Result(CompareOutput(x.Format, res))
}

func runVariance(ctx context.Context, x *Exec) error {
	if x.String("source") == "inspect" {
		return x.varianceInspect(ctx)
	}
	vcs, boot, err := x.variance(ctx, false)
	if err != nil {
		return err
	}
	for _, vc := range vcs {
		for _, n := range vc.Notes {
			if vc.Group != nil {
				x.note("%s, %s: %s", groupText(vc.Group), vc.Metric, n)
			} else {
				x.note("%s: %s", vc.Metric, n)
			}
		}
	}
	return x.Writer().Sections(VarianceSections(x.Format, vcs), x.footnotes(nil, boot, "scenarios"))
}

func runPower(ctx context.Context, x *Exec) error {
	if x.String("source") == "inspect" {
		return x.powerInspect(ctx)
	}
	vcs, _, err := x.variance(ctx, true)
	if err != nil {
		return err
	}
	var metrics []string
	for _, vc := range vcs {
		if !slices.Contains(metrics, vc.Metric) {
			metrics = append(metrics, vc.Metric)
		}
	}
	deltas, err := analysis.ParseDeltas(x.String("delta"), metrics)
	if err != nil {
		return err
	}
	t := &Result{Columns: []string{"metric", "unit", "scenarios", "personas", "repetitions", "alpha", "power", "se", "mde", "delta", "scenarios_needed"}}
	grouped := len(vcs) > 0 && vcs[0].Group != nil
	if grouped {
		t.Columns = append([]string{"group"}, t.Columns...)
	}
	for _, vc := range vcs {
		d := analysis.PowerDesign{Scenarios: vc.Scenarios, Personas: vc.Personas, Repetitions: vc.Repetitions, Alpha: x.Float("alpha"), Power: x.Float("power")}
		for name, v := range map[string]*int{"scenarios": &d.Scenarios, "personas": &d.Personas, "repetitions": &d.Repetitions} {
			if n := x.Int(name); n != 0 {
				*v = n
			}
		}
		p, err := analysis.Power(vc, d, deltas[vc.Metric])
		if err != nil {
			return err
		}
		var delta, needed any
		if p.Delta > 0 {
			delta, needed = p.Delta, p.ScenariosNeeded
		}
		row := []any{p.Metric, analysis.MetricUnit(p.Metric), p.Scenarios, p.Personas, p.Repetitions, p.Alpha, p.Power, p.SE, p.MDE, delta, needed}
		if grouped {
			row = append([]any{groupText(vc.Group)}, row...)
		}
		t.Rows = append(t.Rows, row)
	}
	x.note("mde: of the two-sided paired t-test over scenarios (S − 1 degrees of freedom); gymlens compare's test (its interval inverted) " +
		"has the same power there within a point at 10 scenarios (docs/statistics.md, gymlens-bench size)")
	x.note("from the variance components' estimates (gymlens variance); se, mde and delta in each metric's unit; scenarios_needed −1: more than 100,000")
	return x.Writer().Result(t, nil)
}

func runRank(ctx context.Context, x *Exec) error {
	var res []RankRow
	var err error
	switch x.String("source") {
	case "gym":
		var ds *Dataset
		if ds, err = x.Dataset(ctx, KeepValues); err == nil {
			res, err = ds.Ranks(x.String("metric"))
		}
	case "pare":
		res, err = x.pareRanks(ctx)
	case "inspect":
		res, err = x.rankInspect(ctx)
	default:
		err = analysis.Optionf("--source: expected gym, pare or inspect, found %q", x.String("source"))
	}
	if err != nil {
		return err
	}
	opt, err := x.Bootstrap()
	if err != nil {
		return err
	}
	t, foot := RankOutput(x.Format, res, opt)
	if x.String("source") == "inspect" {
		t, foot = inspectRename(t), inspectFoot(foot)
	}
	return x.Writer().Result(t, foot)
}

func runCorr(ctx context.Context, x *Exec) error {
	switch x.String("source") {
	case "inspect":
		return x.corrInspect(ctx)
	case "gym":
	default:
		return analysis.Optionf("--source: expected gym or inspect, found %q", x.String("source"))
	}
	ds, err := x.Dataset(ctx, KeepValues)
	if err != nil {
		return err
	}
	res, err := ds.Correlations()
	if err != nil {
		return err
	}
	return x.Writer().Result(CorrOutput(x.Format, res))
}

func runAgree(ctx context.Context, x *Exec) error {
	switch x.String("source") {
	case "gym":
	case "inspect":
		for _, f := range []string{"judges", "human", "input", "pare", "self", "bias", "families", "judge", "categories", "level", "where"} {
			if x.IsSet(f) {
				return analysis.Optionf("agree --source inspect compares every scorer, judge and human question of the Inspect samples: --%s does not apply", f)
			}
		}
		return x.agreeInspect(ctx)
	default:
		return analysis.Optionf("--source: expected gym or inspect, found %q", x.String("source"))
	}
	modes := 0
	for _, f := range []string{"judges", "human", "input", "pare", "self", "bias"} {
		if x.IsSet(f) {
			modes++
		}
	}
	if modes != 1 {
		return analysis.Optionf("agree: give one of --judges A,B, --self JUDGE, --human, --pare, --bias or --input FILE.csv")
	}
	if x.IsSet("families") && !x.IsSet("bias") {
		return analysis.Optionf("agree --families is read by --bias alone")
	}
	switch {
	case x.IsSet("bias"):
		return x.agreeBias(ctx)
	case x.IsSet("input"):
		return x.agreeInput()
	case x.IsSet("pare"):
		return x.agreePARE(ctx)
	case x.IsSet("self"):
		return x.agreeSelf(ctx)
	}
	keep := KeepPacked
	ds, err := x.Dataset(ctx, keep)
	if err != nil {
		return err
	}
	if x.IsSet("judges") {
		ja, err := ds.Judges()
		if err != nil {
			return err
		}
		A, B, f := ja.A, ja.B, x.Format
		secs := []Section{
			AgreementSection("continuous", fmt.Sprintf("Continuous scores, A = %s, B = %s (tasks; TC on 0–100, TR-J on 1–5)", A, B), f, ja.Continuous),
			AgreementSection("binary", fmt.Sprintf("TA labels, A = %s, B = %s (runs; rates and agreement in percent)", A, B), f, ja.Binary),
			AgreementSection("configuration", "Configuration level: correlation of the configurations' means", f, ja.Configuration),
		}
		return x.Writer().Sections(secs, x.footnotes(nil, ds.Bootstrap(), "scenarios"))
	}
	h, err := ds.Humans(true)
	if err != nil {
		return err
	}
	return x.Writer().Sections(HumanSections(h, x.Format), x.footnotes(h.Notes, ds.Bootstrap(), "scenarios"))
}

// agreeInput is the agreement of the ratings in a long-format file.
func (x *Exec) agreeInput() error {
	level := x.String("level")
	if err := stat.CheckLevel(level); err != nil {
		return analysis.Optionf("--%v", err)
	}
	opt, err := x.Bootstrap()
	if err != nil {
		return err
	}
	var cats []string
	if c := x.String("categories"); c != "" {
		cats = strings.Split(c, ",")
	}
	sets, err := x.ReadRatings(x.String("input"), cats, level)
	if err != nil {
		return err
	}
	figs := make([]analysis.RatingFigures, len(sets))
	for i, s := range sets {
		figs[i] = analysis.RatingAgreement(s, level, opt)
	}
	return WriteRatingAgreement(x.Writer(), figs, level, opt)
}

// RepeatStore is a warehouse that keeps repeated judge answers.
type RepeatStore interface {
	JudgeRepeats(ctx context.Context, judge string) ([]rows.RepeatItem, error)
}

// agreeSelf compares a judge with itself (analysis.CompareSelf).
func (x *Exec) agreeSelf(ctx context.Context) error {
	w, err := x.Warehouse(ctx)
	if err != nil {
		return err
	}
	rs, ok := w.(RepeatStore)
	if !ok {
		return analysis.NoDataf("this store keeps no repeated judge answers")
	}
	// The answers before the runs: the driver's copy of their query's
	// result is gone by the time the runs are read.
	items, err := rs.JudgeRepeats(ctx, "")
	if err != nil {
		return err
	}
	// The tasks of the runs with an item the judge was asked again are
	// all the noise shares read: only theirs are kept (a dataset of its
	// own, then, shared with no other).
	judge := x.String("self")
	asked := map[string]bool{}
	for _, it := range items {
		if it.Judge == judge {
			asked[it.RunID] = true
		}
	}
	opt, err := x.Options(x.Name, KeepPacked)
	if err != nil {
		return err
	}
	opt.Progress = x.Progress
	ds, err := NewDataset(ctx, w, opt)
	if err != nil {
		return err
	}
	ds.PackOnly(func(id string) bool { return asked[id] })
	set, err := ds.SelectedSet()
	if err != nil {
		return err
	}
	// Only the runs selected (--where).
	keep := make(map[string]bool, set.Len())
	for i := range set.Len() {
		keep[analysis.RunIDOf(set, i)] = true
	}
	sel := items[:0]
	for _, it := range items {
		if keep[it.RunID] {
			sel = append(sel, it)
		}
	}
	s, err := analysis.CompareSelf(judge, sel, set, ds.Bootstrap())
	if err != nil {
		return err
	}
	cols, body := analysis.SelfTable(s)
	ncols, nbody := analysis.NoiseTable(s)
	secs := []Section{{Name: "self", Title: fmt.Sprintf("Judge %s against itself (items asked again)", s.Judge), Table: &Result{Columns: cols, Rows: body}}}
	if len(nbody) > 0 {
		secs = append(secs, Section{Name: "noise", Title: "Share of the disagreement with each other judge that the judges' own noise explains", Table: &Result{Columns: ncols, Rows: nbody}})
		noted := map[string]bool{}
		for _, n := range s.Noise {
			if !n.OtherNoise && !noted[n.Other] {
				noted[n.Other] = true
				x.note("other_noise unknown: %s was not asked every item again, so its noise is left out and the share is %s's noise alone "+
					"(judges alike but for noise give about %s's part of their two noises, ½ for equal noise, not 1); judge it with --repeats 2 or more to count it",
					n.Other, s.Judge, s.Judge)
			}
		}
	}
	return x.Writer().Sections(secs, x.footnotes(nil, ds.Bootstrap(), "items"))
}

// agreePARE compares the human decisions on PARE's annotation samples with
// the simulated user's: the humans' agreement among themselves (Fleiss' κ,
// Krippendorff's α, nominal) and the simulated user against the humans'
// majority (accuracy and Cohen's κ). A sample without annotations is judged
// by its answer key (correct_decision) when it has one.
func (x *Exec) agreePARE(ctx context.Context) error {
	w, err := x.Warehouse(ctx)
	if err != nil {
		return err
	}
	samples, orphans, err := w.LoadPARESamples(ctx)
	if err != nil {
		return err
	}
	if len(samples) == 0 {
		return analysis.NoDataf("no PARE annotation sample in %s: ingest the samples (Parquet) first", x.Name)
	}
	pa := analysis.PAREAgreement(samples, rows.PAREDecisions)
	if err := x.Writer().Result(PAREAgreementResult(pa), nil); err != nil {
		return err
	}
	x.note("%d samples, %d annotators; %d samples with tied annotations and %d with no human decision left out of the comparison; %d annotations of samples not ingested",
		len(samples), pa.Annotators, pa.Ties, pa.Unjudged, orphans)
	return nil
}

func runHuman(ctx context.Context, x *Exec) error {
	opt, err := x.Bootstrap()
	if err != nil {
		return err
	}
	w, err := x.Warehouse(ctx)
	if err != nil {
		return err
	}
	ds, err := NewDataset(ctx, w, Options{Name: x.Name})
	if err != nil {
		return err
	}
	stats, notes, err := ds.Study(x.String("acceptance"), opt)
	if err != nil {
		return err
	}
	return x.Writer().Sections(StudySections(stats, x.Format), x.footnotes(notes, opt, "participants"))
}

func runQuery(ctx context.Context, x *Exec) error {
	if len(x.Pos) != 1 {
		return analysis.Optionf("query: expected one SQL statement (quote it), found %d arguments", len(x.Pos))
	}
	w, err := x.Warehouse(ctx)
	if err != nil {
		return err
	}
	// Rows go to the writer as they come: any result in bounded memory.
	var rw *RowWriter
	err = w.QueryFunc(ctx, x.Pos[0], func(cols []string) (err error) {
		rw, err = NewRowWriter(x.Out, x.Format, cols)
		return err
	}, func(vals []any) error { return rw.Row(vals) })
	if err != nil {
		return err
	}
	return rw.Close()
}

func runReconcile(ctx context.Context, x *Exec) error {
	switch x.String("source") {
	case "inspect":
		return x.reconcileInspect(ctx)
	case "pare":
	default:
		return analysis.Optionf("--source: expected pare or inspect, found %q", x.String("source"))
	}
	w, err := x.Warehouse(ctx)
	if err != nil {
		return err
	}
	rc, err := Reconcile(ctx, w)
	if err != nil {
		return err
	}
	if x.Format == "table" {
		fmt.Fprintln(x.Out, ReconcileLine(rc))
		for _, n := range rc.Notes {
			if !x.Quiet {
				fmt.Fprintln(x.Out, "note: "+n)
			}
		}
	}
	r := MismatchResult(rc, x.Format == "table")
	if len(r.Rows) > 0 || x.Format != "table" {
		if err := WriteResult(x.Out, x.Format, r); err != nil {
			return err
		}
	}
	if x.Bool("strict") && len(rc.Mismatches) > 0 {
		return fmt.Errorf("reconcile --strict: %d mismatches", len(rc.Mismatches))
	}
	return nil
}

func runDecisions(ctx context.Context, x *Exec) error {
	w, err := x.Warehouse(ctx)
	if err != nil {
		return err
	}
	cols, rows, err := w.DecisionTable(ctx)
	if err != nil {
		return err
	}
	return WriteResult(x.Out, x.Format, &Result{Columns: cols, Rows: rows})
}

// refusing runs run unless the caller set one of the parameters in why,
// which the command has (they are shared with other commands) but does
// not use: such a parameter is refused, with its reason, rather than
// taken and ignored.
func refusing(command string, run func(ctx context.Context, x *Exec) error, why map[string]string) func(ctx context.Context, x *Exec) error {
	names := slices.Sorted(maps.Keys(why))
	return func(ctx context.Context, x *Exec) error {
		for _, n := range names {
			if x.IsSet(n) {
				return analysis.Optionf("%s --%s does not apply: %s", command, n, why[n])
			}
		}
		return run(ctx, x)
	}
}

// calibration prints metrics --calibration: for each metric and interval
// method (the one asked first), the simulated coverage and test size.
func (x *Exec) calibration(ctx context.Context) error {
	ds, err := x.Dataset(ctx, KeepValues)
	if err != nil {
		return err
	}
	own := ds.Bootstrap().WithDefaults().Method
	methods := []string{own}
	for _, me := range analysis.Methods {
		if me != own {
			methods = append(methods, me)
		}
	}
	t := &Result{Columns: []string{"metric", "method", "coverage", "coverage_se", "size", "size_se", "intervals", "tests", "in_use"}}
	var foot, warns []string
	for _, m := range ds.Options().Metrics {
		c, err := ds.Calibration(m, methods, analysis.DefaultCalibration)
		if err != nil {
			return err
		}
		for i, mc := range c.Methods {
			t.Rows = append(t.Rows, []any{m, mc.Method, round(100*mc.Coverage, 1), round(100*mc.CoverageSE, 2), round(100*mc.Size, 1),
				round(100*mc.SizeSE, 2), mc.Intervals, mc.Tests, i == 0})
		}
		if c.Warning != "" {
			warns = append(warns, "warning: "+c.Warning+" (no method is switched for you: a method chosen from the data loses its own coverage)")
		}
		if len(foot) == 0 {
			foot = append(foot, fmt.Sprintf("%g%% intervals of the configurations' means and the paired test at α = %g; ", 100*c.Level, math.Round((1-c.Level)*1e9)/1e9)+
				CalibrationSizeText(c)+"; coverage and size in percent, with their Monte Carlo standard errors (not the uncertainty of the estimated effects the simulation plugs in)")
		}
	}
	foot = append(foot, "Wilson, Clopper–Pearson and Beta intervals are not offered: they assume independent binary items, and no 3T metric's run value is one (TA a mean of judges' 0/½/1, TR-D a share of tasks), even at an effective n (docs/statistics.md)")
	foot = append(foot, warns...)
	if !Wide(x.Format) {
		for _, f := range foot {
			x.note("%s", f)
		}
		foot = nil
	}
	return x.Writer().Result(t, foot)
}

// round is x to d decimals.
func round(x float64, d int) float64 {
	p := math.Pow(10, float64(d))
	return math.Round(x*p) / p
}
