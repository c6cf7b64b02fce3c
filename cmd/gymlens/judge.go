package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/urfave/cli/v3"

	"github.com/gymlens/gymlens/ingest"
	"github.com/gymlens/gymlens/judge"
	"github.com/gymlens/gymlens/reports"
)

func judgeCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "judge",
		Usage: "rerun LLM-as-judge scoring against OpenAI-compatible endpoints, cached in the warehouse",
		Description: "--judge NAME=MODEL[@BASE_URL] (repeat for several judges; the metrics average them); several base URLs,\n" +
			"NAME=MODEL@URL1,URL2,…, are a pool of servers of that model: each request goes to the one with the fewest in\n" +
			"flight (--concurrency each), and one that fails 3 requests in a row leaves the pool for 30 s (doubling). The API key\n" +
			"comes from $GYMLENS_<NAME>_API_KEY, else $OPENAI_API_KEY; none is needed where the endpoint needs none.\n" +
			"Answers are cached by model, parameters, prompt version and rendered input: a rerun with nothing\n" +
			"changed sends nothing. Every answer is saved as it arrives, so an interrupted run resumes where it stopped.\n" +
			"--batch sends through the endpoint's Files and Batches API instead: the batch's id is kept in the warehouse, and\n" +
			"the next --batch run collects it (or --batch-wait waits for it), then submits what failed or expired.\n" +
			"--source inspect judges the Inspect samples instead, every sample at every epoch, each one's transcript (messages,\n" +
			"tool calls, tool results; no model or configuration named) the input of --prompt rubrics of item: run (docs/judge.md).",
		Flags: append(judgeFlags(),
			&cli.BoolFlag{Name: "dry-run", Usage: "print calls, cache hits and estimated input tokens; send nothing"},
			&cli.BoolFlag{Name: "costs", Usage: "print the calls, tokens and cost of every judge so far, and stop"},
			&cli.BoolFlag{Name: "batch", Usage: "through the endpoint's Batches API (half price): submit what is to ask, or collect the batch submitted before"},
			&cli.BoolFlag{Name: "batch-wait", Usage: "with --batch: wait for the batch to end, then collect it"},
			&cli.DurationFlag{Name: "batch-poll", Value: 30 * time.Second, Usage: "with --batch-wait: ask the batch's status every `DURATION`"},
		),
		Commands: []*cli.Command{exportBatchCommand(e), importBatchCommand(e)},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			format, err := outputFormat(cmd, "table", reports.ResultFormats...)
			if err != nil {
				return err
			}
			if cmd.Bool("costs") {
				return reading(ctx, cmd, func(format string, w *ingest.Warehouse) error {
					cols, rows, err := w.JudgeCosts(ctx)
					if err != nil {
						return err
					}
					return reports.WriteResult(e.stdout, format, &reports.Result{Columns: cols, Rows: rows})
				})
			}
			w, st, opt, err := judgeSetup(ctx, cmd, cmd.Bool("dry-run"))
			if err != nil {
				return err
			}
			defer w.Close()
			opt.DryRun = cmd.Bool("dry-run")
			var bar *progressbar.ProgressBar
			if e.terminal && !cmd.Bool("quiet") && !opt.DryRun {
				opt.Progress = func(p judge.Progress) {
					if bar == nil {
						bar = newBar(e, p.Total, progressbar.OptionSetPredictTime(true))
					}
					bar.ChangeMax64(p.Total)
					bar.Describe(p.String())
					bar.Set64(p.Settled())
				}
			}
			var batch *judge.BatchOptions
			if cmd.Bool("batch") {
				batch = &judge.BatchOptions{Wait: cmd.Bool("batch-wait"), Poll: cmd.Duration("batch-poll"), Say: func(s string) { fmt.Fprintln(e.stderr, "batch: "+s) }}
			}
			reps, runErr := judge.RunOrBatch(ctx, st, opt, batch)
			if bar != nil {
				bar.Finish()
			}
			if err := printJudgeReports(e, format, reps, opt.DryRun); err != nil {
				return err
			}
			if errors.Is(runErr, context.Canceled) {
				return interrupted{fmt.Sprintf("the %d answers received in this run are saved in %s; run the same command again to ask only the rest", judge.Sent(reps), w.Path)}
			}
			return runErr
		},
	}
}

// judgeFlags are the flags of gymlens judge and its batch commands.
func judgeFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "metric", Value: "tc,ta,trj", Usage: "`METRICS` to judge: tc, ta, trj (with --prompt: none unless given)"},
		&cli.StringSliceFlag{Name: "prompt", Usage: "judge with your rubric `FILE` too (YAML or JSON; a folder: each in it): metric custom.NAME"},
		&cli.StringSliceFlag{Name: "judge", Usage: "`NAME=MODEL[@BASE_URL[,BASE_URL…]]`"},
		&cli.StringSliceFlag{Name: "endpoint", Usage: "`NAME=BASE_URL[,BASE_URL…]`: judge NAME's endpoint(s), for a model name that holds '@' (then --judge NAME=MODEL alone)"},
		&cli.IntFlag{Name: "concurrency", Value: 8, Usage: "requests in flight per judge and server (`N`)"},
		&cli.IntFlag{Name: "rpm", Usage: "requests per minute per judge (`N`, 0: no limit)"},
		&cli.IntFlag{Name: "tpm", Usage: "estimated input tokens per minute per judge (`N`, 0: no limit)"},
		&cli.DurationFlag{Name: "timeout", Value: 120 * time.Second, Usage: "per request"},
		&cli.IntFlag{Name: "retries", Value: 5, Usage: "retries of a request that may succeed later"},
		&cli.Int64Flag{Name: "seed", Value: 1, Usage: "sampling `SEED` sent where supported"},
		&cli.IntFlag{Name: "repeats", Value: 1, Usage: "ask each item `N` times, with seeds SEED, SEED+1, …: every answer kept, the judgment their mean (gymlens agree --self)"},
		&cli.FloatFlag{Name: "temperature", Usage: "sampling `T` (0: the most likely answer; repeats differ more above 0)"},
		&cli.IntFlag{Name: "limit", Usage: "`N` items per metric: a stratified random sample, equal shares of configuration × scenario, drawn with --seed"},
		&cli.BoolFlag{Name: "force", Usage: "ask again what is cached"},
		&cli.BoolFlag{Name: "replace", Usage: "let a judge take the name of one whose judgments were ingested from run logs, taking those out (ingest --replace of the logs restores them)"},
		&cli.StringFlag{Name: "prices", Usage: "JSON `FILE`: {\"model\": {\"input\": $ per 1M tokens, \"output\": …}}"},
		&cli.StringSliceFlag{Name: "where", Usage: "judge only runs with `DIM=VALUE` (as in gymlens metrics)"},
		&cli.StringFlag{Name: "source", Value: "gym", Usage: "`ITEMS` to judge: gym (Proactivity-Gym runs) or inspect (every Inspect sample at every epoch, with --prompt rubrics of item: run)"},
	}
}

// judgeSetup reads the judge's flags into options (judge.Settings) and
// opens the warehouse (read-only for a dry run) and the store of what is
// judged (judge.SourceStore).
func judgeSetup(ctx context.Context, cmd *cli.Command, readOnly bool) (*ingest.Warehouse, judge.BatchStore, judge.RunOptions, error) {
	opt, err := judge.Settings{Source: cmd.String("source"), Where: len(cmd.StringSlice("where")) > 0, Metrics: reports.SplitList(cmd.String("metric")),
		MetricsGiven: cmd.IsSet("metric"), Prompts: cmd.StringSlice("prompt"), Judges: cmd.StringSlice("judge"), Endpoints: cmd.StringSlice("endpoint"),
		Prices: cmd.String("prices"), Limit: int(cmd.Int("limit")), Repeats: int(cmd.Int("repeats")), Force: cmd.Bool("force"), Replace: cmd.Bool("replace"),
		Client: judge.ClientOptions{Concurrency: int(cmd.Int("concurrency")), RPM: int(cmd.Int("rpm")), TPM: int(cmd.Int("tpm")),
			Timeout: cmd.Duration("timeout"), MaxRetries: int(cmd.Int("retries")), Seed: cmd.Int64("seed"), Temperature: cmd.Float("temperature")}}.Options()
	if err != nil {
		return nil, nil, opt, err
	}
	w, err := ingest.Open(ctx, cmd.String("db"), openOptions(cmd, readOnly, ingest.JudgeMemoryLimit))
	if err != nil {
		return nil, nil, opt, err
	}
	st, err := judge.SourceStore(ctx, opt, w, w.InspectJudge)
	if err == nil {
		opt.Runs, err = argsOf(cmd).SelectedRuns(ctx, w, w.Path)
	}
	if err != nil {
		w.Close()
		return nil, nil, opt, err
	}
	return w, st, opt, nil
}

// exportBatchCommand writes the requests a judge run would send as a batch
// input file.
func exportBatchCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "export-batch",
		Usage: "write the requests a judge run would send as a batch input file (OpenAI batch JSONL), for a server without the Batches API",
		Description: "The same selection as gymlens judge with the same flags: one line per distinct input not yet answered,\n" +
			"{custom_id, method, url, body}, the body exactly what a live request sends. Run it where the model is served\n" +
			"(vLLM's run_batch -i FILE -o OUT, or upload it to a Batches API), then gymlens judge import-batch OUT.",
		Flags: append(judgeFlags(), &cli.StringFlag{Name: "out", Required: true, Usage: "write the batch to `FILE.jsonl`"}),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			w, st, opt, err := judgeSetup(ctx, cmd, false)
			if err != nil {
				return err
			}
			defer w.Close()
			reps, said, err := judge.ExportBatchFile(ctx, st, opt, cmd.String("out"))
			for _, n := range judge.ReportNotes(reps) {
				fmt.Fprintln(e.stderr, "note: "+n)
			}
			if err == nil && !cmd.Bool("quiet") {
				fmt.Fprintln(e.stdout, said)
			}
			return err
		},
	}
}

// importBatchCommand saves the answers of a batch's output.
func importBatchCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "import-batch",
		Usage:     "save the answers of a batch's output (and error) files, checked as live answers are, at the batch price",
		ArgsUsage: "OUTPUT.jsonl [ERRORS.jsonl…]",
		Description: "The same selection as the export (the same flags): each answer is matched to its request by custom_id,\n" +
			"checked (its JSON, ranges and cited evidence) and saved as a live answer would be, its cost at the batch price.\n" +
			"Requests the batch reports as failed, and those it does not hold, are left for the next run to ask.",
		Flags: judgeFlags(),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() == 0 {
				return usagef("import-batch: name the batch's output file (and its error file)")
			}
			format, err := outputFormat(cmd, "table", reports.ResultFormats...)
			if err != nil {
				return err
			}
			w, st, opt, err := judgeSetup(ctx, cmd, false)
			if err != nil {
				return err
			}
			defer w.Close()
			reps, runErr := judge.ImportBatchFiles(ctx, st, opt, cmd.Args().Slice()...)
			if err := printJudgeReports(e, format, reps, false); err != nil {
				return err
			}
			return runErr
		},
	}
}

func printJudgeReports(e *env, format string, reps []judge.JudgeReport, dry bool) error {
	if dry && format == "table" {
		fmt.Fprintln(e.stdout, "dry run: nothing sent; 'items − cached' calls would be made")
	}
	for _, n := range judge.ReportNotes(reps) {
		fmt.Fprintln(e.stderr, "note: "+n)
	}
	cols, rows := judge.ReportTable(reps, dry)
	return reports.WriteResult(e.stdout, format, &reports.Result{Columns: cols, Rows: rows})
}
