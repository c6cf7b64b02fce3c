package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/gymlens/gymlens/analysis"
	"github.com/gymlens/gymlens/ingest"
	"github.com/gymlens/gymlens/reports"
)

func corrCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "corr",
		Usage: "Pearson and Spearman correlations among the metrics, at run and configuration level",
		Description: "Run level pools the runs of all configurations (as the paper does); configuration level\n" +
			"correlates the configurations' means. Each r has its p-value (t, n−2 df), a Fisher-z interval and\n" +
			"a cluster-bootstrap interval (scenarios resampled).",
		Flags: append(selectionFlags(), bootstrapFlags()...),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			return reading(ctx, cmd, func(format string, w *ingest.Warehouse) error { return runCorr(ctx, cmd, e, format, w) })
		},
	}
}

func runCorr(ctx context.Context, cmd *cli.Command, e *env, format string, w *ingest.Warehouse) error {
	ds, err := dataset(ctx, cmd, w, reports.KeepValues)
	if err != nil {
		return err
	}
	if len(ds.Options().Metrics) < 2 {
		return usagef("--metrics: name at least two metrics to correlate")
	}
	values, scen, conf, err := ds.SelectedValues()
	if err != nil {
		return err
	}
	rv, _ := ds.Values()
	res := analysis.Correlations(values, scen, conf, rv.Metrics, ds.Bootstrap())
	return printCorr(e, format, res, cmd.Bool("quiet"))
}

func printCorr(e *env, format string, res []analysis.CorrResult, quiet bool) error {
	if format == "table" {
		t := &reports.Result{Columns: []string{"x", "y", "level", "method", "r", "n", "p", "Fisher-z", "bootstrap"}}
		for _, c := range res {
			t.Rows = append(t.Rows, []any{c.X, c.Y, c.Level, c.Method, fmt.Sprintf("%.3f", c.R), c.N, fmtP(c.P),
				fmt.Sprintf("[%.3f, %.3f]", c.FisherLo, c.FisherHi), fmt.Sprintf("[%.3f, %.3f]", c.Lo, c.Hi)})
		}
		if err := reports.WriteResult(e.stdout, "table", t); err != nil {
			return err
		}
		if !quiet && len(res) > 0 {
			fmt.Fprintf(e.stdout, "%g%% intervals; bootstrap: %s, clusters = scenarios, %d resamples, seed %d\n",
				100*res[0].Estimate.Level, res[0].Estimate.Method, res[0].Resamples, res[0].Seed)
		}
		return nil
	}
	t := &reports.Result{Columns: []string{"x", "y", "level", "method", "r", "n", "p", "ci_low", "ci_high", "ci_method",
		"fisher_low", "fisher_high", "level_ci", "resamples", "seed", "n_clusters", "warnings"}}
	for _, c := range res {
		warn := any(c.Warnings)
		if c.Warnings == nil {
			warn = []string{}
		}
		if format == "csv" {
			warn = strings.Join(c.Warnings, "; ")
		}
		t.Rows = append(t.Rows, []any{c.X, c.Y, c.Level, c.Method, c.R, c.N, c.P, c.Lo, c.Hi, "bootstrap-" + c.Estimate.Method,
			c.FisherLo, c.FisherHi, c.Estimate.Level, c.Resamples, c.Seed, c.Clusters, warn})
	}
	return reports.WriteResult(e.stdout, format, t)
}

func fmtP(p float64) string {
	if p < 0.001 {
		return "<.001"
	}
	return strings.TrimPrefix(fmt.Sprintf("%.3f", p), "0")
}
