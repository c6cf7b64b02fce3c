package main

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/gymlens/gymlens/ingest"
	"github.com/gymlens/gymlens/judge"
	"github.com/gymlens/gymlens/reports"
)

func reportCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "report",
		Usage: "every table and figure, an index.html and a manifest.json in one folder",
		Description: "Writes DIR/tables (LaTeX for one column, NAME.tex, and across the page, NAME.page.tex; Markdown,\n" +
			"CSV, HTML), DIR/figures (PNG, SVG, PDF), DIR/index.html (self-contained: figures embedded, tables sortable,\n" +
			"nothing fetched; readable on a phone, printable) and DIR/manifest.json (input files and their SHA-256,\n" +
			"tool version, judges and prompt versions, seeds).\n" +
			"A table or figure the warehouse has no data for is left out and listed, with the reason, in both.\n" +
			"The folder is built beside DIR and moved into place: a failure leaves DIR as it was.\n" +
			"--source inspect (chosen by itself when the warehouse holds Inspect runs and no Proactivity-Gym run): per task\n" +
			"and scorer the configurations' means, paired comparisons, rank intervals, variance components and power, the\n" +
			"scorers' correlations, and tokens and seconds per configuration (docs/inspect.md); --where, --judge, --judges\n" +
			"and --size do not apply to it and are refused.",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "out", Required: true, Usage: "the report `DIR`"},
			&cli.StringSliceFlag{Name: "where", Usage: "keep runs with `DIM=VALUE` (repeat)"},
			&cli.StringFlag{Name: "judge", Usage: "use one `JUDGE`'s judgments instead of the average"},
			&cli.StringFlag{Name: "judges", Usage: "judge agreement between `A,B` (default: the only two judges, or the first two in name order)"},
			&cli.StringFlag{Name: "families", Usage: reports.FamiliesParam.Usage + " (the judge-bias tables' self-preference)"},
			&cli.StringFlag{Name: "size", Usage: "figure `SIZE` for a paper: column (3.3 in wide) or page (6.9 in); default: each figure's own"},
			&cli.StringFlag{Name: "source", Usage: "`RUNS` to report: gym (Proactivity-Gym) or inspect (Inspect AI); default: inspect when the warehouse holds Inspect runs alone, else gym"},
		}, append(cliFlags(reports.TableParams()[1:]...), bootstrapFlags()...)...),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if err := argsOf(cmd).CheckReport(); err != nil { // before opening anything
				return err
			}
			return reading(ctx, cmd, func(_ string, w *ingest.Warehouse) error {
				t0 := time.Now()
				path, skipped, err := writeReport(ctx, cmd, w, nil, cmd.String("out"))
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

// writeReport computes every table and figure from ds (nil: the dataset
// the flags choose) and writes the report folder; it returns the path of
// its index.html and what was left out.
func writeReport(ctx context.Context, cmd *cli.Command, w *ingest.Warehouse, ds *reports.Dataset, dir string) (string, []string, error) {
	opt, err := argsOf(cmd).TableOptions()
	if err != nil {
		return "", nil, err
	}
	defaults := map[string]any{}
	for _, f := range reportCommand(nil).Flags {
		defaults[f.Names()[0]] = f.Get()
	}
	fo := reports.FolderOptions{Tables: opt, Size: cmd.String("size"), Warehouse: w.FileName(),
		Version: ingest.Version, PromptSHA: judge.PromptSHA256, Step: argsOf(cmd).ReportStep(defaults)}
	r, err := argsOf(cmd).WriteReportFolder(ctx, dir, w, ds, fo, func() (*reports.Dataset, error) { return dataset(ctx, cmd, w, reports.KeepPacked) })
	if err != nil {
		return "", nil, err
	}
	return filepath.Join(dir, "index.html"), r.Skipped, nil
}
