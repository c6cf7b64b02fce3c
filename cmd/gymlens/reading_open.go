package main

import (
	"context"

	"github.com/urfave/cli/v3"

	"github.com/gymlens/gymlens/ingest"
	"github.com/gymlens/gymlens/reports"
)

// reading runs fn with the output format (reports.ResultFormats) and the
// warehouse opened read-only.
func reading(ctx context.Context, cmd *cli.Command, fn func(format string, w *ingest.Warehouse) error) error {
	return readingAs(ctx, cmd, "table", reports.ResultFormats, fn)
}

// readingAs is reading for a command whose --format takes other values.
func readingAs(ctx context.Context, cmd *cli.Command, def string, formats []string, fn func(format string, w *ingest.Warehouse) error) error {
	format, err := outputFormat(cmd, def, formats...)
	if err != nil {
		return err
	}
	w, err := ingest.Open(ctx, cmd.String("db"), openOptions(cmd, true, ingest.ReadingMemoryLimit(cmd.Name, false)))
	if err != nil {
		return err
	}
	defer w.Close()
	return fn(format, w)
}
