package main

import (
	"context"

	"github.com/urfave/cli/v3"

	"github.com/gymlens/gymlens/analysis"
	"github.com/gymlens/gymlens/ingest"
	"github.com/gymlens/gymlens/reports"
)

func scoreCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "score",
		Usage: "rescore every active task from its trajectory: depths and rule-based TC components",
		Description: "Derives the chosen depth, the expected depth (persona, then approvals and denials) and the\n" +
			"evidence, outputs and constraints scores of every active task, stores them beside the logged ones,\n" +
			"and reports every disagreement. The metrics then use the logged values (where logged), or the\n" +
			"derived ones with --prefer derived. Running it again replaces the previous scores.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "prefer", Value: "logged", Usage: "which values the metrics use where both exist: `logged` or derived"},
			&cli.IntFlag{Name: "examples", Value: 5, Usage: "examples to show per kind of disagreement (`N`)"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			format, err := outputFormat(cmd, "table", reports.ResultFormats...)
			if err != nil {
				return err
			}
			derived, err := analysis.PreferDerived(cmd.String("prefer"))
			if err != nil {
				return err
			}
			w, err := ingest.Open(ctx, cmd.String("db"), openOptions(cmd, false, ingest.ReadingMemoryLimit("score", false)))
			if err != nil {
				return err
			}
			defer w.Close()
			rep, err := reports.Rescore(ctx, w, w.Path, derived, int(cmd.Int("examples")))
			if err != nil {
				return err
			}
			return reports.WriteScoreReport(e.stdout, format, rep)
		},
	}
}
