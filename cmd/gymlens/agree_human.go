package main

import (
	"context"

	"github.com/urfave/cli/v3"

	"github.com/gymlens/gymlens/ingest"
	"github.com/gymlens/gymlens/reports"
)

func agreeHuman(ctx context.Context, e *env, cmd *cli.Command, format string, w *ingest.Warehouse) error {
	ds, err := dataset(ctx, cmd, w, reports.KeepTasks)
	if err != nil {
		return err
	}
	h, err := ds.Humans(true)
	if err != nil {
		return err
	}
	if err := reports.WriteSections(e.stdout, format, reports.HumanSections(h, format)); err != nil {
		return err
	}
	footer(e, cmd, format, h.Notes, ds.Bootstrap(), "scenarios")
	return nil
}
