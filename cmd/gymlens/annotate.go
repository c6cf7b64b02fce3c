package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/gymlens/gymlens/analysis"
	"github.com/gymlens/gymlens/ingest"
	"github.com/gymlens/gymlens/judge"
	"github.com/gymlens/gymlens/reports"
)

func annotateCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "annotate",
		Usage: "prepare human annotation",
		Commands: []*cli.Command{{
			Name:  "sample",
			Usage: "a stratified random sample of tasks (or runs) for humans to rate, as a ratings CSV to fill in",
			Description: "Strata are the values of --by (none: one stratum); each gets a share of -n proportional to its size\n" +
				"(largest remainders). Within a stratum, items are drawn without replacement by a generator seeded with --seed.\n" +
				"The CSV has one row per item and question, with rater and value empty, run_id and task, and a context column\n" +
				"with what the user saw (the records a TR-J judge sees). Filled in, it ingests as ratings unchanged.",
			Flags: []cli.Flag{
				&cli.IntFlag{Name: "n", Required: true, Usage: "`N` items"},
				&cli.StringFlag{Name: "by", Usage: "stratify by `DIM` (" + strings.Join(analysis.Dimensions, ", ") + ")"},
				&cli.StringFlag{Name: "unit", Value: "task", Usage: "`UNIT` to rate: task or run"},
				&cli.StringFlag{Name: "questions", Value: "trust,tc", Usage: "`QUESTIONS` to ask about each item"},
				&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "random `SEED`"},
				&cli.StringFlag{Name: "out", Required: true, Usage: "write the sheet to `FILE.csv`"},
				&cli.StringSliceFlag{Name: "where", Usage: "keep runs with `DIM=VALUE` (repeat)"},
			},
			Action: func(ctx context.Context, cmd *cli.Command) error {
				return reading(ctx, cmd, func(_ string, w *ingest.Warehouse) error { return annotateSample(ctx, e, cmd, w) })
			},
		}},
	}
}

func annotateSample(ctx context.Context, e *env, cmd *cli.Command, w *ingest.Warehouse) error {
	n := int(cmd.Int("n"))
	if n <= 0 {
		return usagef("-n: expected a positive number, found %d", n)
	}
	unit := cmd.String("unit")
	if unit != "task" && unit != "run" {
		return usagef("--unit: expected task or run, found %q", unit)
	}
	by := cmd.String("by")
	if by != "" {
		if err := analysis.CheckDimension(by); err != nil {
			return usagef("--by: %v", err)
		}
	}
	questions := reports.SplitList(cmd.String("questions"))
	if len(questions) == 0 {
		return usagef("--questions: name at least one question")
	}
	ds, err := dataset(ctx, cmd, w, reports.KeepTaskNames) // a sample draws tasks; their judgments are not shown
	if err != nil {
		return err
	}
	runs, err := ds.Selected()
	if err != nil {
		return err
	}
	chosen, strata, err := analysis.StratifiedSample(runs, unit, by, n, cmd.Uint64("seed"))
	if err != nil {
		return err
	}
	history, err := judge.VisibleHistories(ctx, w, analysis.ByRun(chosen))
	if err != nil {
		return err
	}
	out := cmd.String("out")
	if err := reports.WriteAnnotationSheet(out, chosen, questions, history); err != nil {
		return err
	}
	if !cmd.Bool("quiet") {
		fmt.Fprintf(e.stdout, "wrote %s: %d %ss × %d questions from %d strata; fill in rater and value, then `gymlens ingest %s`\n",
			out, len(chosen), unit, len(questions), strata, out)
	}
	return nil
}
