package main

import (
	"context"
	"encoding/csv"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/gymlens/gymlens/analysis"
	"github.com/gymlens/gymlens/ingest"
	"github.com/gymlens/gymlens/judge"
	"github.com/gymlens/gymlens/reports"
)

func annotateCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "annotate",
		Usage: "prepare human annotation",
		Commands: []*cli.Command{{
			Name:  "sample",
			Usage: "a stratified random sample of tasks (or runs) for humans to rate, as a ratings CSV to fill in",
			Description: "Strata are the values of --by (none: one stratum); each gets a share of -n proportional to its size\n" +
				"(largest remainders). Within a stratum, items are drawn without replacement by a generator seeded with --seed.\n" +
				"The CSV has one row per item and question, with rater and value empty, run_id and task, and a context column\n" +
				"with what the user saw (the records a TR-J judge sees). Filled in, it ingests as ratings unchanged.",
			Flags: []cli.Flag{
				&cli.IntFlag{Name: "n", Required: true, Usage: "`N` items"},
				&cli.StringFlag{Name: "by", Usage: "stratify by `DIM` (" + strings.Join(analysis.Dimensions, ", ") + ")"},
				&cli.StringFlag{Name: "unit", Value: "task", Usage: "`UNIT` to rate: task or run"},
				&cli.StringFlag{Name: "questions", Value: "trust,tc", Usage: "`QUESTIONS` to ask about each item"},
				&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "random `SEED`"},
				&cli.StringFlag{Name: "out", Required: true, Usage: "write the sheet to `FILE.csv`"},
				&cli.StringSliceFlag{Name: "where", Usage: "keep runs with `DIM=VALUE` (repeat)"},
			},
			Action: func(ctx context.Context, cmd *cli.Command) error {
				return reading(ctx, cmd, func(_ string, w *ingest.Warehouse) error { return annotateSample(ctx, e, cmd, w) })
			},
		}},
	}
}

type annItem struct {
	run  *ingest.RunRow
	task string
}

func annotateSample(ctx context.Context, e *env, cmd *cli.Command, w *ingest.Warehouse) error {
	n := int(cmd.Int("n"))
	if n <= 0 {
		return usagef("-n: expected a positive number, found %d", n)
	}
	unit := cmd.String("unit")
	if unit != "task" && unit != "run" {
		return usagef("--unit: expected task or run, found %q", unit)
	}
	by := cmd.String("by")
	if by != "" {
		if err := analysis.CheckDimension(by); err != nil {
			return usagef("--by: %v", err)
		}
	}
	questions := splitList(cmd.String("questions"))
	if len(questions) == 0 {
		return usagef("--questions: name at least one question")
	}
	src, err := newSource(ctx, cmd, w)
	if err != nil {
		return err
	}
	src.keep = keepTaskNames // a sample draws tasks; their judgments are not shown
	runs, err := src.selected()
	if err != nil {
		return err
	}
	strata := map[string][]annItem{}
	for i := range runs {
		r := &runs[i]
		key := ""
		if by != "" {
			key = analysis.DimValue(r, by)
		}
		if unit == "run" {
			strata[key] = append(strata[key], annItem{run: r})
			continue
		}
		for _, t := range r.Tasks {
			strata[key] = append(strata[key], annItem{run: r, task: t.Task})
		}
	}
	keys := sortedKeys(strata)
	total := 0
	for _, k := range keys {
		total += len(strata[k])
	}
	if n > total {
		return fmt.Errorf("-n %d: only %d %ss to draw from", n, total, unit)
	}
	// Proportional allocation, largest remainders (ties by stratum order).
	alloc := make([]int, len(keys))
	type rem struct {
		i int
		r float64
	}
	var rems []rem
	given := 0
	for i, k := range keys {
		exact := float64(n) * float64(len(strata[k])) / float64(total)
		alloc[i] = int(exact)
		given += alloc[i]
		rems = append(rems, rem{i, exact - float64(alloc[i])})
	}
	sort.SliceStable(rems, func(a, b int) bool { return rems[a].r > rems[b].r })
	for k := 0; given < n; k++ {
		alloc[rems[k].i]++
		given++
	}
	var chosen []annItem
	for i, k := range keys {
		items := strata[k]
		rng := rand.New(rand.NewPCG(cmd.Uint64("seed"), uint64(i)))
		perm := rng.Perm(len(items))
		pick := perm[:alloc[i]]
		sort.Ints(pick)
		for _, p := range pick {
			chosen = append(chosen, items[p])
		}
	}
	// What the user saw, for the chosen runs.
	need := map[string][]string{} // run → chosen tasks
	for _, it := range chosen {
		need[it.run.RunID] = append(need[it.run.RunID], it.task)
	}
	heads, err := w.JudgeHeads(ctx)
	if err != nil {
		return err
	}
	var sel []*ingest.JudgeRun
	for _, h := range heads {
		if need[h.RunID] != nil {
			sel = append(sel, h)
		}
	}
	history := map[[2]string]string{}
	err = w.ScanJudgeEvents(ctx, sel, false, func(r *ingest.JudgeRun) error {
		for _, task := range need[r.RunID] {
			history[[2]string{r.RunID, task}] = judge.VisibleHistory(r, task)
		}
		return nil
	})
	if err != nil {
		return err
	}
	out := cmd.String("out")
	tmp, err := os.CreateTemp(filepath.Dir(out), ".annotate-*.csv")
	if err != nil {
		return fmt.Errorf("--out: %v", err)
	}
	defer os.Remove(tmp.Name())
	cw := csv.NewWriter(tmp)
	cw.Write([]string{"rater", "question", "value", "run_id", "task", "stratum", "context"})
	for _, it := range chosen {
		stratum := ""
		if by != "" {
			stratum = analysis.DimValue(it.run, by)
		}
		for _, q := range questions {
			// Opened in a spreadsheet: no cell runs as a formula.
			cw.Write(reports.SpreadsheetSafe([]string{"", q, "", it.run.RunID, it.task, stratum, history[[2]string{it.run.RunID, it.task}]}))
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), out); err != nil {
		return err
	}
	if !cmd.Bool("quiet") {
		fmt.Fprintf(e.stdout, "wrote %s: %d %ss × %d questions from %d strata; fill in rater and value, then `gymlens ingest %s`\n",
			out, len(chosen), unit, len(questions), len(keys), out)
	}
	return nil
}
