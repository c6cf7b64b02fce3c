package main

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v3"

	"github.com/gymlens/gymlens/ingest"
	"github.com/gymlens/gymlens/reports"
)

func reconcileCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "reconcile",
		Usage: "compare what PARE and Meta-ARE stored with what gymlens recomputes, and list every mismatch",
		Description: "Each result row (PARE *_result.json, Meta-ARE output.jsonl) linked to an ingested trace: its stored\n" +
			"counts and rates against those recomputed from the trace, and its success against the trace's own verdict.\n" +
			"Each section of a summary report (PARE combined_result.json, Meta-ARE benchmark_stats.json): its statistics\n" +
			"against those recomputed from the ingested result rows, as PARE's and Meta-ARE's report code defines them.\n" +
			"A stored number that is the recomputed one in the other unit (a fraction where the format writes a percent,\n" +
			"or the reverse) is a mismatch of kind \"unit\". --strict exits with status 1 when there is a mismatch.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "strict", Usage: "exit with status 1 when there is a mismatch"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			return reading(ctx, cmd, func(format string, w *ingest.Warehouse) error {
				rc, err := reports.Reconcile(ctx, w)
				if err != nil {
					return err
				}
				if format == "table" {
					fmt.Fprintln(e.stdout, reports.ReconcileLine(rc))
					for _, n := range rc.Notes {
						if !cmd.Bool("quiet") {
							fmt.Fprintln(e.stdout, "note: "+n)
						}
					}
				}
				r := reports.MismatchResult(rc, format == "table")
				if len(r.Rows) > 0 || format != "table" {
					if err := reports.WriteResult(e.stdout, format, r); err != nil {
						return err
					}
				}
				if cmd.Bool("strict") && len(rc.Mismatches) > 0 {
					return fmt.Errorf("reconcile --strict: %d mismatches", len(rc.Mismatches))
				}
				return nil
			})
		},
	}
}
