package main

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/gymlens/gymlens/ingest"
	"github.com/gymlens/gymlens/plots"
	"github.com/gymlens/gymlens/reports"
)

func reportCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "report",
		Usage: "every table and figure, an index.html and a manifest.json in one folder",
		Description: "Writes DIR/tables (LaTeX, Markdown, CSV, HTML), DIR/figures (PNG, SVG, PDF), DIR/index.html\n" +
			"(self-contained: figures embedded, no script, nothing fetched; readable on a phone, printable) and\n" +
			"DIR/manifest.json (input files and their SHA-256, tool version, judges and prompt versions, seeds).\n" +
			"A table or figure the warehouse has no data for is left out and listed, with the reason, in both.\n" +
			"The folder is built beside DIR and moved into place: a failure leaves DIR as it was.",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "out", Required: true, Usage: "the report `DIR`"},
			&cli.StringSliceFlag{Name: "where", Usage: "keep runs with `DIM=VALUE` (repeat)"},
			&cli.StringFlag{Name: "judge", Usage: "use one `JUDGE`'s judgments instead of the average"},
			&cli.StringFlag{Name: "judges", Usage: "judge agreement between `A,B` (default: the only two judges)"},
		}, bootstrapFlags()...),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			return reading(ctx, cmd, func(_ string, w *ingest.Warehouse) error {
				t0 := time.Now()
				path, skipped, err := writeReport(ctx, cmd, w, cmd.String("out"))
				if err != nil {
					return err
				}
				if !cmd.Bool("quiet") {
					for _, s := range skipped {
						fmt.Fprintln(e.stderr, "note: left out", s)
					}
					fmt.Fprintf(e.stdout, "wrote %s in %.1f s\n", path, time.Since(t0).Seconds())
				}
				return nil
			})
		},
	}
}

// writeReport computes every table and figure and writes the report folder;
// it returns the path of its index.html and what was left out.
func writeReport(ctx context.Context, cmd *cli.Command, w *ingest.Warehouse, dir string) (string, []string, error) {
	src, err := newSource(ctx, cmd, w)
	if err != nil {
		return "", nil, err
	}
	if _, err := src.values(); err != nil {
		return "", nil, err
	}
	r := &reports.Report{Title: "gymlens report"}
	for _, name := range TableNames {
		ts, err := buildTables(src, name)
		if err != nil {
			if ctx.Err() != nil {
				return "", nil, ctx.Err()
			}
			r.Skipped = append(r.Skipped, fmt.Sprintf("table %s: %v", name, err))
			continue
		}
		r.Tables = append(r.Tables, ts...)
	}
	for _, name := range plots.FigureNames {
		f, err := buildFigure(src, name)
		if err != nil {
			if ctx.Err() != nil {
				return "", nil, ctx.Err()
			}
			r.Skipped = append(r.Skipped, fmt.Sprintf("figure %s: %v", name, err))
			continue
		}
		r.Figures = append(r.Figures, f)
	}
	inputs, err := w.Inputs(ctx)
	if err != nil {
		return "", nil, err
	}
	judges, err := w.JudgeVersions(ctx)
	if err != nil {
		return "", nil, err
	}
	version, err := w.Version(ctx)
	if err != nil {
		return "", nil, err
	}
	abs, _ := filepath.Abs(w.Path)
	study := src.studyOptions()
	r.Manifest = reports.Manifest{Tool: "gymlens", Version: ingest.Version, Warehouse: abs, SchemaVersion: version,
		Inputs: inputs, Judges: judges,
		Bootstrap: reports.Bootstrap{Method: src.opt.Method, Level: src.opt.Level, Resamples: src.opt.Resamples, Seed: src.opt.Seed, Unit: "scenarios"},
		Study:     reports.Bootstrap{Method: study.Method, Level: study.Level, Resamples: study.Resamples, Seed: study.Seed, Unit: "participants"},
	}
	if err := reports.WriteReport(dir, r); err != nil {
		return "", nil, err
	}
	return filepath.Join(dir, "index.html"), r.Skipped, nil
}
