package main

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/gymlens/gymlens/ingest"
	"github.com/gymlens/gymlens/plots"
	"github.com/gymlens/gymlens/reports"
)

func plotCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "plot",
		Usage:     "a paper figure as PNG, SVG and PDF: " + strings.Join(plots.FigureNames, ", "),
		ArgsUsage: "NAME",
		Description: "model-size: a metric against model size per family; harness-switch: the change per open model (known size)\n" +
			"when switching harness; correlations: the run-level correlation matrix; harness-comparison: the four metrics per\n" +
			"harness; effort: the four metrics against reasoning effort (the model and harness with most effort levels, or\n" +
			"--where); by-scenario, by-persona; human-trust: a study question over checkpoint days by condition.",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "out", Required: true, Usage: "write NAME.png, NAME.svg and NAME.pdf into `DIR`"},
			&cli.StringFlag{Name: "formats", Value: strings.Join(plots.Formats, ","), Usage: "image `FORMATS`"},
			&cli.StringFlag{Name: "metric", Value: "TC", Usage: "model-size, harness-switch: the `METRIC`"},
			&cli.StringFlag{Name: "switch", Value: "CC,OC", Usage: "harness-switch: from and to `HARNESS,HARNESS`"},
			&cli.StringFlag{Name: "question", Value: "trust", Usage: "human-trust: the study `QUESTION`"},
			&cli.StringSliceFlag{Name: "where", Usage: "keep runs with `DIM=VALUE` (repeat)"},
			&cli.StringFlag{Name: "judge", Usage: "use one `JUDGE`'s judgments instead of the average"},
		}, bootstrapFlags()...),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.NArg() != 1 {
				return usagef("plot: name one figure: %s", strings.Join(plots.FigureNames, ", "))
			}
			name := cmd.Args().First()
			if !slices.Contains(plots.FigureNames, name) {
				return usagef("plot: unknown figure %q: expected one of %s", name, strings.Join(plots.FigureNames, ", "))
			}
			formats := splitList(cmd.String("formats"))
			for _, f := range formats {
				if !slices.Contains(plots.Formats, f) {
					return usagef("--formats: expected some of %s, found %q", strings.Join(plots.Formats, ", "), f)
				}
			}
			return reading(ctx, cmd, func(_ string, w *ingest.Warehouse) error {
				ds, err := dataset(ctx, cmd, w, reports.KeepTasks)
				if err != nil {
					return err
				}
				fig, err := reports.Figure(ds, name)
				if err != nil {
					return err
				}
				paths, err := reports.WriteFigure(fig, cmd.String("out"), formats)
				if err != nil {
					return err
				}
				if !cmd.Bool("quiet") {
					fmt.Fprintf(e.stdout, "wrote %s\n", strings.Join(paths, ", "))
				}
				return nil
			})
		},
	}
}
