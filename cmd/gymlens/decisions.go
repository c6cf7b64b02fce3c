package main

import (
	"context"

	"github.com/urfave/cli/v3"

	"github.com/gymlens/gymlens/ingest"
	"github.com/gymlens/gymlens/reports"
)

func decisionsCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "decisions",
		Usage: "PARE's decision points of the ingested PARE traces",
		Description: "A decision point is a proposal the observe-mode agent sent the user before the execute agent's\n" +
			"first tool call, paired with the user's next accept or reject: accept or reject when the user answered\n" +
			"straight away, gather_context when it made other tool calls first; final is whether it accepted in the end.",
		Action: func(ctx context.Context, cmd *cli.Command) error {
			return reading(ctx, cmd, func(format string, w *ingest.Warehouse) error {
				cols, rows, err := w.DecisionTable(ctx)
				if err != nil {
					return err
				}
				return reports.WriteResult(e.stdout, format, &reports.Result{Columns: cols, Rows: rows})
			})
		},
	}
}
