package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/gymlens/gymlens/analysis"
	"github.com/gymlens/gymlens/ingest"
	"github.com/gymlens/gymlens/ingest/rows"
	"github.com/gymlens/gymlens/ingest/runlog"
	"github.com/gymlens/gymlens/judge"
	"github.com/gymlens/gymlens/reports"
)

func annotateCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "annotate",
		Usage: "human annotation: samples to rate, queues for gymlens serve's /annotate pages, their answers exported",
		Commands: []*cli.Command{{
			Name:  "sample",
			Usage: "a stratified random sample of tasks (or runs) for humans to rate: a ratings CSV to fill in, or a queue to annotate in gymlens serve",
			Description: "Strata are the values of --by (none: one stratum); each gets a share of -n proportional to its size\n" +
				"(largest remainders). Within a stratum, items are drawn without replacement by a generator seeded with --seed.\n" +
				"The CSV has one row per item and question, with rater and value empty, run_id and task, and a context column\n" +
				"with what the user saw (the records a TR-J judge sees). Filled in, it ingests as ratings unchanged.\n" +
				"With --queue the sample is stored in the warehouse as an annotation queue (docs/serve.md), its first\n" +
				"--tutorial items practice items.",
			Flags: []cli.Flag{
				&cli.IntFlag{Name: "n", Required: true, Usage: "`N` items"},
				&cli.StringFlag{Name: "by", Usage: "stratify by `DIM` (" + strings.Join(analysis.Dimensions, ", ") + ")"},
				&cli.StringFlag{Name: "unit", Value: "task", Usage: "`UNIT` to rate: task or run"},
				&cli.StringFlag{Name: "questions", Value: "trust,tc", Usage: "`QUESTIONS` to ask about each item"},
				&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "random `SEED`"},
				&cli.StringFlag{Name: "out", Usage: "write the sheet to `FILE.csv`"},
				&cli.StringFlag{Name: "queue", Usage: "store the sample as the annotation queue `NAME`"},
				&cli.IntFlag{Name: "k", Value: 2, Usage: "with --queue: `K` annotators each item needs"},
				&cli.IntFlag{Name: "tutorial", Usage: "with --queue: the first `T` items are practice items"},
				limitFlags[0], limitFlags[1],
				&cli.StringSliceFlag{Name: "where", Usage: "keep runs with `DIM=VALUE` (repeat)"},
			},
			Action: func(ctx context.Context, cmd *cli.Command) error { return annotateSample(ctx, e, cmd) },
		}, {
			Name:      "queue",
			Usage:     "make an annotation queue from a sheet of `annotate sample` or from the PARE samples ingested",
			ArgsUsage: "NAME",
			Description: "--sheet FILE.csv: the sheet's items and questions; rows whose value is filled in are an answer key, and\n" +
				"their items practice (tutorial) items, shown first, compared with the key and left out of the agreement.\n" +
				"--pare: the PARE annotation samples ingested, decided accept, reject or gather_context; PARE's tutorial\n" +
				"samples first, with their correct decision as the key. Annotate in `gymlens serve` at /annotate/NAME.\n" +
				"An item takes answers from --k annotators (the next is refused) unless --over-assign; the queue takes\n" +
				"answers from at most --max-annotators annotators by name.",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "sheet", Usage: "the items of `FILE.csv`, a sheet of gymlens annotate sample"},
				&cli.BoolFlag{Name: "pare", Usage: "the PARE annotation samples ingested"},
				&cli.IntFlag{Name: "k", Value: 2, Usage: "`K` annotators each item needs"},
				limitFlags[0], limitFlags[1],
			},
			Action: func(ctx context.Context, cmd *cli.Command) error { return annotateQueue(ctx, e, cmd) },
		}, {
			Name:      "export",
			Usage:     "write a queue's answers as a CSV: PARE's annotation columns for a PARE queue, the ratings columns otherwise",
			ArgsUsage: "QUEUE",
			Flags:     []cli.Flag{&cli.StringFlag{Name: "out", Required: true, Usage: "write to `FILE.csv`"}},
			Action:    func(ctx context.Context, cmd *cli.Command) error { return annotateExport(ctx, e, cmd) },
		}},
	}
}

// limitFlags are a queue's limits, for the commands that make one.
var limitFlags = []cli.Flag{
	&cli.IntFlag{Name: "max-annotators", Value: rows.DefaultMaxAnnotators, Usage: "the queue takes answers from at most `N` annotators (by name)"},
	&cli.BoolFlag{Name: "over-assign", Usage: "an item takes answers from more than k annotators (otherwise the k+1-th is refused)"},
}

// withLimits is q with the limits the flags give.
func withLimits(cmd *cli.Command, q rows.Queue) rows.Queue {
	q.MaxAnnotators, q.OverAssign = int(cmd.Int("max-annotators")), cmd.Bool("over-assign")
	return q
}

func queueArg(cmd *cli.Command) (string, error) {
	if cmd.Args().Len() != 1 {
		return "", usagef("%s: name one queue", cmd.Name)
	}
	return cmd.Args().First(), nil
}

func annotateSample(ctx context.Context, e *env, cmd *cli.Command) error {
	req := reports.AnnotationSample{N: int(cmd.Int("n")), Tutorial: int(cmd.Int("tutorial")), Unit: cmd.String("unit"), By: cmd.String("by"), Seed: cmd.Uint64("seed"),
		Questions: reports.SplitList(cmd.String("questions")), Sheet: cmd.String("out"), Queue: withLimits(cmd, rows.Queue{Name: cmd.String("queue"), K: int(cmd.Int("k"))})}
	if err := req.Check(); err != nil {
		return err
	}
	var w *ingest.Warehouse
	var err error
	if req.Queue.Name != "" {
		w, err = ingest.Open(ctx, cmd.String("db"), existing(cmd))
	} else {
		w, err = ingest.Open(ctx, cmd.String("db"), openOptions(cmd, true, ""))
	}
	if err != nil {
		return err
	}
	defer w.Close()
	opt, err := argsOf(cmd).Options(w.Path, reports.KeepTaskNames) // a sample draws tasks; their judgments are not shown
	if err != nil {
		return err
	}
	said, err := reports.WriteAnnotationSample(ctx, w, w, opt, req, histories(w))
	if !cmd.Bool("quiet") && len(said) > 0 {
		fmt.Fprintln(e.stdout, strings.Join(said, "\n"))
	}
	return err
}

func annotateQueue(ctx context.Context, e *env, cmd *cli.Command) error {
	name, err := queueArg(cmd)
	if err != nil {
		return err
	}
	q, items, err := reports.QueueFrom(withLimits(cmd, rows.Queue{Name: name, K: int(cmd.Int("k"))}), cmd.String("sheet"), cmd.Bool("pare"), runlog.ReadAnnotationSheet)
	if err != nil {
		return err
	}
	w, err := ingest.Open(ctx, cmd.String("db"), existing(cmd))
	if err != nil {
		return err
	}
	defer w.Close()
	said, err := reports.MakeQueue(ctx, w, w.Path, q, items)
	if err == nil && !cmd.Bool("quiet") {
		fmt.Fprintln(e.stdout, said)
	}
	return err
}

func annotateExport(ctx context.Context, e *env, cmd *cli.Command) error {
	name, err := queueArg(cmd)
	if err != nil {
		return err
	}
	return reading(ctx, cmd, func(_ string, w *ingest.Warehouse) error {
		n, err := reports.ExportQueue(ctx, w, name, cmd.String("out"))
		if err == nil && !cmd.Bool("quiet") {
			fmt.Fprintf(e.stdout, "wrote %s: %d answers of queue %s\n", cmd.String("out"), n, name)
		}
		return err
	})
}

// existing are the options of a command that writes to a warehouse that
// must be there already.
func existing(cmd *cli.Command) ingest.OpenOptions {
	oo := openOptions(cmd, false, "")
	oo.MustExist = true
	return oo
}

// histories is what the user saw of each item, read from w.
func histories(w *ingest.Warehouse) reports.Histories {
	return func(ctx context.Context, need map[string][]string) (map[[2]string]string, error) {
		return judge.VisibleHistories(ctx, w, need)
	}
}
