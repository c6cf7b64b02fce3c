package main

import (
	"context"

	"github.com/urfave/cli/v3"

	"github.com/gymlens/gymlens/ingest"
	"github.com/gymlens/gymlens/reports"
)

func compareCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "compare",
		Usage:     "paired differences between configurations, with intervals, p-values, Holm and BH",
		ArgsUsage: "CONFIG CONFIG [CONFIG...]",
		Description: "Name configurations by id (\"GPT 5.6 Sol | CD | none\") or key (gpt-5.6-sol_cd_none); every pair\n" +
			"is compared, later minus earlier, on the same resampled scenarios. --harness-switch FROM,TO compares,\n" +
			"for every model and effort run on both, harness TO minus harness FROM (the paper's CC→OC effect).\n" +
			"p-values are adjusted across the pairs, metric by metric.",
		Flags: append(append([]cli.Flag{
			&cli.StringFlag{Name: "harness-switch", Usage: "`FROM,TO` harnesses, per model"},
			&cli.StringFlag{Name: "source", Value: "gym", Usage: "`RUNS` to compare: gym (Proactivity-Gym) or pare (PARE and Meta-ARE; name their configurations)"},
		}, selectionFlags()...), bootstrapFlags()...),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			sw := splitList(cmd.String("harness-switch"))
			switch {
			case cmd.String("harness-switch") != "" && cmd.Args().Len() > 0:
				return usagef("compare: name configurations or --harness-switch, not both")
			case cmd.String("harness-switch") != "" && len(sw) != 2:
				return usagef("--harness-switch: expected FROM,TO, found %q", cmd.String("harness-switch"))
			case cmd.String("harness-switch") == "" && cmd.Args().Len() < 2:
				return usagef("compare: name at least two configurations (or use --harness-switch)")
			}
			if cmd.String("source") == "pare" {
				if sw != nil {
					return usagef("compare --source pare: name configurations; --harness-switch is for Proactivity-Gym runs")
				}
				return analysing(ctx, cmd, func(format string, w *ingest.Warehouse) error {
					res, err := comparePARE(ctx, cmd, w, cmd.Args().Slice())
					if err != nil {
						return err
					}
					return writer(e, cmd, format).Result(reports.CompareOutput(format, res))
				})
			}
			if s := cmd.String("source"); s != "gym" {
				return usagef("--source: expected gym or pare, found %q", s)
			}
			return analysing(ctx, cmd, func(format string, w *ingest.Warehouse) error { return runCompare(ctx, cmd, e, format, w, sw) })
		},
	}
}

func runCompare(ctx context.Context, cmd *cli.Command, e *env, format string, w *ingest.Warehouse, sw []string) error {
	ds, err := dataset(ctx, cmd, w, reports.KeepValues)
	if err != nil {
		return err
	}
	res, err := ds.Compare(cmd.Args().Slice(), sw)
	if err != nil {
		return err
	}
	return writer(e, cmd, format).Result(reports.CompareOutput(format, res))
}
