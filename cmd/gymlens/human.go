package main

import (
	"context"

	"github.com/urfave/cli/v3"

	"github.com/gymlens/gymlens/ingest"
	"github.com/gymlens/gymlens/reports"
)

func humanCommand(e *env) *cli.Command {
	flags := bootstrapFlags()
	for i, f := range flags {
		if f, ok := f.(*cli.IntFlag); ok && f.Name == "resamples" {
			c := *f
			c.Value = 20000 // as the paper's human study
			flags[i] = &c
		}
	}
	return &cli.Command{
		Name:  "human",
		Usage: "the human-study analyses: ratings over checkpoint days by condition, transitions, acceptance",
		Description: "Reads the ratings that have a day and a condition (e.g. AAA, AMA: one letter per phase, A appropriate,\n" +
			"M misaligned). Per question, the mean by condition and day; the mean change from one checkpoint to the\n" +
			"next by transition type (A→A, A→M, M→A, M→M); the acceptance rate by condition and the paired difference\n" +
			"between every two conditions. Participants (raters) are resampled: 20,000 resamples by default.",
		Flags: append(flags, &cli.StringFlag{Name: "acceptance", Value: "acceptance", Usage: "the `QUESTION` that records acceptance (0/1)"}),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			return analysing(ctx, cmd, func(format string, w *ingest.Warehouse) error {
				opt, err := bootstrapOptions(cmd)
				if err != nil {
					return err
				}
				ds, err := reports.NewDataset(ctx, w, reports.Options{Name: w.Path})
				if err != nil {
					return err
				}
				stats, notes, err := ds.Study(cmd.String("acceptance"), opt)
				if err != nil {
					return err
				}
				return writer(e, cmd, format).Sections(reports.StudySections(stats, format), footnotes(e, cmd, notes, opt, "participants"))
			})
		},
	}
}
