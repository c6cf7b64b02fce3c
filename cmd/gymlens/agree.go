package main

import (
	"context"
	"fmt"

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
				format, err := outputFormat(cmd, "table", reports.Formats...)
				if err != nil {
					return err
				}
				return agreeInput(e, cmd, format)
			}
			return analysing(ctx, cmd, func(format string, w *ingest.Warehouse) error {
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

// footnotes prints the notes to stderr (unless --quiet) and returns the
// footnote that says how the intervals were made.
func footnotes(e *env, cmd *cli.Command, notes []string, opt analysis.BootstrapOptions, clusters string) []string {
	if !cmd.Bool("quiet") {
		for _, n := range notes {
			fmt.Fprintln(e.stderr, "note:", n)
		}
	}
	return []string{fmt.Sprintf("%g%% intervals; bootstrap: %s, clusters = %s, %d resamples, seed %d",
		100*opt.Level, opt.Method, clusters, opt.Resamples, opt.Seed)}
}

func agreeJudges(ctx context.Context, e *env, cmd *cli.Command, format string, w *ingest.Warehouse) error {
	ds, err := dataset(ctx, cmd, w, reports.KeepTasks)
	if err != nil {
		return err
	}
	opt := ds.Bootstrap()
	ja, err := ds.Judges()
	if err != nil {
		return err
	}
	A, B, cont, bin, cfg := ja.A, ja.B, ja.Continuous, ja.Binary, ja.Configuration
	secs := []reports.Section{
		reports.AgreementSection("continuous", fmt.Sprintf("Continuous scores, A = %s, B = %s (tasks; TC on 0–100, TR-J on 1–5)", A, B), format, cont),
		reports.AgreementSection("binary", fmt.Sprintf("TA labels, A = %s, B = %s (runs; rates and agreement in percent)", A, B), format, bin),
		reports.AgreementSection("configuration", "Configuration level: correlation of the configurations' means", format, cfg),
	}
	return writer(e, cmd, format).Sections(secs, footnotes(e, cmd, nil, opt, "scenarios"))
}
