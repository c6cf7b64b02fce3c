package main

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/gymlens/gymlens/analysis"
	"github.com/gymlens/gymlens/ingest"
	"github.com/gymlens/gymlens/reports"
)

func agreeCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "agree",
		Usage: "agreement: judge vs judge (--judges A,B), judge vs humans (--human), or any ratings file (--input)",
		Description: "--judges A,B: for every continuous score both judges' means, Δ (B − A), MAE, Pearson r and Spearman ρ;\n" +
			"for the TA labels both positive rates, Δ, percent agreement and Cohen's κ; and the configuration-level\n" +
			"correlations (the paper's Tables 4, 5 and 6). Intervals: cluster bootstrap, scenarios resampled.\n" +
			"--human: human ratings against the judges (or --judge) on the same run, task and question, with Kendall τ-b,\n" +
			"quadratic-weighted κ and the confusion matrix on 1–5 scales; the humans' own reliability (Krippendorff's α,\n" +
			"pairwise κ); the conflation check (r between TR-J and TC for the judge and for the humans); and the judge mean\n" +
			"corrected by the human labels (prediction-powered inference).\n" +
			"--input FILE.csv: columns item, rater, value (and optional question); Krippendorff's α at --level, Fleiss' κ,\n" +
			"Cohen's κ and quadratic-weighted κ for two raters, percent agreement. An empty value is a missing rating.",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "judges", Usage: "compare judge `A,B`"},
			&cli.BoolFlag{Name: "human", Usage: "compare the human ratings with the judges"},
			&cli.BoolFlag{Name: "pare", Usage: "compare PARE's human annotations with its simulated user"},
			&cli.StringFlag{Name: "judge", Usage: "with --human: this `JUDGE` alone instead of the judges' average"},
			&cli.StringFlag{Name: "input", Usage: "agreement of the ratings in `FILE.csv`"},
			&cli.StringFlag{Name: "categories", Usage: "with --input: the categories in their order, `A,B,C` (text values otherwise count as unordered, nominal)"},
			&cli.StringFlag{Name: "level", Value: analysis.Interval, Usage: "with --input: Krippendorff's α `LEVEL`: nominal, ordinal, interval or ratio"},
			&cli.StringSliceFlag{Name: "where", Usage: "keep runs with `DIM=VALUE` (repeat)"},
		}, confidenceFlags()...),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			modes := 0
			for _, f := range []string{"judges", "human", "input", "pare"} {
				if cmd.IsSet(f) {
					modes++
				}
			}
			if modes != 1 {
				return usagef("agree: give one of --judges A,B, --human, --pare or --input FILE.csv")
			}
			if cmd.IsSet("input") {
				format, err := outputFormat(cmd, "table", reports.ResultFormats...)
				if err != nil {
					return err
				}
				return agreeInput(e, cmd, format)
			}
			return reading(ctx, cmd, func(format string, w *ingest.Warehouse) error {
				if cmd.IsSet("judges") {
					return agreeJudges(ctx, e, cmd, format, w)
				}
				if cmd.IsSet("pare") {
					return agreePARE(ctx, e, cmd, format, w)
				}
				return agreeHuman(ctx, e, cmd, format, w)
			})
		},
	}
}

// statTable turns agreement statistics into a section: wide (one row per
// score, "value [lo, hi]" cells) for text, long otherwise.
func statTable(name, title, format string, stats []analysis.AgreementStat) reports.Section {
	if format == "table" {
		var scores, cols []string
		cells := map[[2]string]string{}
		ns := map[string]int{}
		for _, s := range stats {
			if _, ok := ns[s.Score]; !ok {
				scores = append(scores, s.Score)
				ns[s.Score] = s.N
			}
			if !slices.Contains(cols, s.Stat) {
				cols = append(cols, s.Stat)
			}
			cells[[2]string{s.Score, s.Stat}] = fmtEst(s.Estimate)
		}
		t := &reports.Result{Columns: append([]string{"score", "n"}, cols...)}
		for _, sc := range scores {
			row := []any{sc, ns[sc]}
			for _, c := range cols {
				row = append(row, cells[[2]string{sc, c}])
			}
			t.Rows = append(t.Rows, row)
		}
		return reports.Section{Name: name, Title: title, Table: t}
	}
	return reports.Section{Name: name, Title: title, Table: longStats(format, stats)}
}

var longColumns = []string{"score", "statistic", "value", "ci_low", "ci_high", "n", "n_clusters", "ci_method", "level", "resamples", "seed", "warnings"}

func longStats(format string, stats []analysis.AgreementStat) *reports.Result {
	t := &reports.Result{Columns: longColumns}
	for _, s := range stats {
		t.Rows = append(t.Rows, []any{s.Score, s.Stat, s.Value, s.Lo, s.Hi, s.N, s.Clusters, "bootstrap-" + s.Method, s.Level,
			s.Resamples, s.Seed, warnings(format, s.Warnings)})
	}
	return t
}

func warnings(format string, w []string) any {
	if format == "csv" {
		return strings.Join(w, "; ")
	}
	if w == nil {
		return []string{}
	}
	return w
}

func fmtEst(e analysis.Estimate) string {
	if math.IsNaN(e.Value) {
		if len(e.Warnings) > 0 {
			return "NaN (" + e.Warnings[len(e.Warnings)-1] + ")"
		}
		return "NaN"
	}
	if math.IsNaN(e.Lo) {
		return fmt.Sprintf("%.3f", e.Value)
	}
	return fmt.Sprintf("%.3f [%.3f, %.3f]", e.Value, e.Lo, e.Hi)
}

// footer prints the notes to stderr and, under a text table, how the
// intervals were made; --quiet prints neither.
func footer(e *env, cmd *cli.Command, format string, notes []string, opt analysis.BootstrapOptions, clusters string) {
	if cmd.Bool("quiet") {
		return
	}
	for _, n := range notes {
		fmt.Fprintln(e.stderr, "note:", n)
	}
	if format == "table" {
		fmt.Fprintf(e.stdout, "%g%% intervals; bootstrap: %s, clusters = %s, %d resamples, seed %d\n",
			100*opt.Level, opt.Method, clusters, opt.Resamples, opt.Seed)
	}
}

// judgeAgreement holds the paper's Tables 4–6 for two judges.
type judgeAgreement struct {
	A, B           string
	cont, bin, cfg []analysis.AgreementStat
}

// compareJudges computes the agreement of the judges --judges names (or,
// when it is not given, of the only two judges there are) on the runs
// --where keeps.
func compareJudges(src *source) (*judgeAgreement, error) {
	cmd, opt := src.cmd, src.opt
	runs, err := src.selected()
	if err != nil {
		return nil, err
	}
	have := analysis.Judges(runs)
	names := splitList(cmd.String("judges"))
	if !cmd.IsSet("judges") && len(have) == 2 {
		names = have
	}
	if len(names) != 2 || names[0] == names[1] {
		return nil, usagef("--judges: expected two different judges A,B, found %q (judges: %s)", cmd.String("judges"), strings.Join(have, ", "))
	}
	for _, n := range names {
		if !slices.Contains(have, n) {
			return nil, fmt.Errorf("--judges: no judgment by %q in the runs selected; judges found: %s", n, strings.Join(have, ", "))
		}
	}
	A, B := names[0], names[1]
	scen, conf := analysis.Index{}, analysis.Index{}
	var cont, bin, cfg []analysis.AgreementStat
	for _, score := range analysis.TaskScores {
		p := analysis.Paired{Score: score}
		for i := range runs {
			r := &runs[i]
			for k := range r.Tasks {
				a, okA := analysis.TaskScore(&r.Tasks[k], score, A)
				b, okB := analysis.TaskScore(&r.Tasks[k], score, B)
				if okA && okB {
					p.Add(a, b, scen.Of(r.Scenario), conf.Of(r.ConfigID))
				}
			}
		}
		if len(p.A) == 0 {
			continue
		}
		p.Clusters, p.Configs = len(scen), len(conf)
		for _, s := range analysis.ContinuousAgreement(p, analysis.AgreementOptions{ConfigLevel: true}, opt) {
			if s.Stat == analysis.StatConfigPearson || s.Stat == analysis.StatConfigSpearman {
				cfg = append(cfg, s)
			} else {
				cont = append(cont, s)
			}
		}
	}
	for _, label := range analysis.TALabels {
		p := analysis.Paired{Score: label}
		for i := range runs {
			r := &runs[i]
			a, okA := analysis.RunLabel(r, label, A)
			b, okB := analysis.RunLabel(r, label, B)
			if okA && okB {
				p.Add(a, b, scen.Of(r.Scenario), conf.Of(r.ConfigID))
			}
		}
		if len(p.A) == 0 {
			continue
		}
		p.Clusters, p.Configs = len(scen), len(conf)
		bin = append(bin, analysis.BinaryAgreement(p, opt)...)
		if label == "TA" {
			for _, s := range analysis.ContinuousAgreement(p, analysis.AgreementOptions{ConfigLevel: true}, opt) {
				if s.Stat == analysis.StatConfigPearson || s.Stat == analysis.StatConfigSpearman {
					cfg = append(cfg, s)
				}
			}
		}
	}
	if len(cont)+len(bin) == 0 {
		return nil, fmt.Errorf("judges %s and %s judged no item in common", A, B)
	}
	return &judgeAgreement{A: A, B: B, cont: cont, bin: bin, cfg: cfg}, nil
}

func agreeJudges(ctx context.Context, e *env, cmd *cli.Command, format string, w *ingest.Warehouse) error {
	src, err := newSource(ctx, cmd, w)
	if err != nil {
		return err
	}
	opt := src.opt
	ja, err := compareJudges(src)
	if err != nil {
		return err
	}
	A, B, cont, bin, cfg := ja.A, ja.B, ja.cont, ja.bin, ja.cfg
	secs := []reports.Section{
		statTable("continuous", fmt.Sprintf("Continuous scores, A = %s, B = %s (tasks; TC on 0–100, TR-J on 1–5)", A, B), format, cont),
		statTable("binary", fmt.Sprintf("TA labels, A = %s, B = %s (runs; rates and agreement in percent)", A, B), format, bin),
		statTable("configuration", "Configuration level: correlation of the configurations' means", format, cfg),
	}
	if err := reports.WriteSections(e.stdout, format, secs); err != nil {
		return err
	}
	footer(e, cmd, format, nil, opt, "scenarios")
	return nil
}
