package main

import (
	"context"

	"github.com/urfave/cli/v3"

	"github.com/gymlens/gymlens/ingest"
	"github.com/gymlens/gymlens/reports"
)

// dataset turns the selection, bootstrap and figure flags a command has
// into the options of a reports.Dataset over the warehouse.
func dataset(ctx context.Context, cmd *cli.Command, w *ingest.Warehouse, keep reports.Keep) (*reports.Dataset, error) {
	opt := reports.Options{Name: w.Path, Keep: keep, Judge: cmd.String("judge")}
	var err error
	if opt.Bootstrap, err = bootstrapOptions(cmd); err != nil {
		return nil, err
	}
	if opt.Where, err = parseWhere(cmd); err != nil {
		return nil, err
	}
	if hasFlag(cmd, "metrics") {
		opt.Metrics = splitList(cmd.String("metrics"))
	}
	if hasFlag(cmd, "judges") {
		opt.Judges = splitList(cmd.String("judges"))
	}
	if hasFlag(cmd, "resamples") && cmd.IsSet("resamples") {
		opt.StudyResamples = int(cmd.Int("resamples"))
	}
	if hasFlag(cmd, "metric") {
		opt.FigureMetric = cmd.String("metric")
	}
	if hasFlag(cmd, "question") {
		opt.Question = cmd.String("question")
	}
	if hasFlag(cmd, "switch") {
		opt.Switch = splitList(cmd.String("switch"))
	}
	return reports.NewDataset(ctx, w, opt)
}
