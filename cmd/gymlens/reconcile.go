package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/gymlens/gymlens/analysis"
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
				rc, err := reconcile(ctx, w)
				if err != nil {
					return err
				}
				if format == "table" {
					fmt.Fprintln(e.stdout, reconcileLine(rc))
					for _, n := range rc.Notes {
						if !cmd.Bool("quiet") {
							fmt.Fprintln(e.stdout, "note: "+n)
						}
					}
				}
				r := &reports.Result{Columns: []string{"where", "item", "field", "stored", "recomputed", "kind", "note"}}
				for _, m := range rc.Mismatches {
					where := m.Where
					if format == "table" { // shorter to read: relative to here
						where = relativePath(where)
					}
					r.Rows = append(r.Rows, []any{where, m.Item, m.Field, jsonNum(m.Stored), jsonNum(m.Recomputed), m.Kind, m.Note})
				}
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

// relativePath writes FILE:LINE with FILE relative to the working folder
// when it is below it or near it (at most two folders up).
func relativePath(where string) string {
	wd, err := os.Getwd()
	if err != nil || !filepath.IsAbs(where) {
		return where
	}
	if rel, err := filepath.Rel(wd, where); err == nil && !strings.HasPrefix(rel, filepath.Join("..", "..", "..")) {
		return rel
	}
	return where
}

func jsonNum(x float64) any {
	if math.IsNaN(x) {
		return nil
	}
	return x
}

func reconcile(ctx context.Context, w *ingest.Warehouse) (*analysis.Reconciliation, error) {
	runs, err := w.LoadPARERuns(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := w.LoadPAREResults(ctx)
	if err != nil {
		return nil, err
	}
	reps, err := w.LoadPAREReports(ctx)
	if err != nil {
		return nil, err
	}
	return analysis.Reconcile(runs, rows, reps), nil
}

func reconcileLine(rc *analysis.Reconciliation) string {
	return fmt.Sprintf("reconcile: %d numbers checked in %d result rows (linked to traces; %d not linked) and %d report sections: %d mismatches",
		rc.Values, rc.RowsChecked, rc.RowsUnlinked, rc.SectionsChecked, len(rc.Mismatches))
}
