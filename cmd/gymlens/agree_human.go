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
	return writer(e, cmd, format).Sections(reports.HumanSections(h, format), footnotes(e, cmd, h.Notes, ds.Bootstrap(), "scenarios"))
}
