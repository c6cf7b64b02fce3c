package main

import (
	"context"

	"github.com/urfave/cli/v3"

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
			return analysing(ctx, cmd, func(format string, w *ingest.Warehouse) error { return runCorr(ctx, cmd, e, format, w) })
		},
	}
}

func runCorr(ctx context.Context, cmd *cli.Command, e *env, format string, w *ingest.Warehouse) error {
	ds, err := dataset(ctx, cmd, w, reports.KeepValues)
	if err != nil {
		return err
	}
	res, err := ds.Correlations()
	if err != nil {
		return err
	}
	return writer(e, cmd, format).Result(reports.CorrOutput(format, res))
}
