package main

import (
	"context"
	"fmt"

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
			prefer := cmd.String("prefer")
			if prefer != "logged" && prefer != "derived" {
				return usagef("--prefer: expected logged or derived, found %q", prefer)
			}
			w, err := ingest.Open(ctx, cmd.String("db"), openOptions(cmd, false, ""))
			if err != nil {
				return err
			}
			defer w.Close()
			rep, err := rescore(ctx, w, prefer == "derived", int(cmd.Int("examples")))
			if err != nil {
				return err
			}
			return printScoreReport(e, format, rep)
		},
	}
}

// scoreReport is what rescoring found.
type scoreReport struct {
	tasks    int
	counts   map[string]int
	examples []analysis.Disagreement
	prefer   string
}

var disagreementFields = []string{"expected_depth", "chosen_depth", "rules.evidence", "rules.outputs", "rules.constraints"}

func rescore(ctx context.Context, w *ingest.Warehouse, preferDerived bool, examples int) (*scoreReport, error) {
	specs, err := w.LoadScenarioSpecs(ctx)
	if err != nil {
		return nil, err
	}
	sc, err := analysis.NewScorer(specs)
	if err != nil {
		return nil, err
	}
	rep := &scoreReport{counts: map[string]int{}, prefer: "logged"}
	if preferDerived {
		rep.prefer = "derived"
	}
	shown := map[string]int{}
	var scores []ingest.TaskScore
	err = w.ScanScoreTasks(ctx, func(t *ingest.ScoreTask) error {
		d, err := sc.Derive(t)
		if err != nil {
			return err
		}
		rep.tasks++
		for _, x := range analysis.Disagreements(t, d) {
			rep.counts[x.Field]++
			if shown[x.Field] < examples {
				shown[x.Field]++
				rep.examples = append(rep.examples, x)
			}
		}
		scores = append(scores, analysis.Effective(t, d, preferDerived))
		return nil
	})
	if err != nil {
		return nil, err
	}
	if rep.tasks == 0 {
		return nil, fmt.Errorf("warehouse %s has no active tasks to score", w.Path)
	}
	return rep, w.WriteScores(ctx, scores)
}

func printScoreReport(e *env, format string, rep *scoreReport) error {
	if format != "table" {
		t := &reports.Result{Columns: []string{"tasks", "prefer", "field", "disagreements"}}
		for _, f := range disagreementFields {
			t.Rows = append(t.Rows, []any{rep.tasks, rep.prefer, f, rep.counts[f]})
		}
		return reports.WriteResult(e.stdout, format, t)
	}
	total := 0
	for _, n := range rep.counts {
		total += n
	}
	fmt.Fprintf(e.stdout, "scored %s active tasks; %d disagreements between logged and derived values; the metrics use the %s values\n",
		thousands(int64(rep.tasks)), total, rep.prefer)
	t := &reports.Result{Columns: []string{"field", "disagreements"}}
	for _, f := range disagreementFields {
		t.Rows = append(t.Rows, []any{f, rep.counts[f]})
	}
	if err := reports.WriteResult(e.stdout, "table", t); err != nil {
		return err
	}
	if len(rep.examples) > 0 {
		fmt.Fprintln(e.stdout, "\nexamples:")
		x := &reports.Result{Columns: []string{"run", "task", "field", "logged", "derived"}}
		for _, d := range rep.examples {
			x.Rows = append(x.Rows, []any{d.RunID, d.Task, d.Field, d.Logged, d.Derived})
		}
		return reports.WriteResult(e.stdout, "table", x)
	}
	return nil
}
