package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/urfave/cli/v3"

	"github.com/gymlens/gymlens/analysis"
	"github.com/gymlens/gymlens/ingest"
	"github.com/gymlens/gymlens/internal/sample"
	"github.com/gymlens/gymlens/reports"
)

// openOptions reads --memory-limit, else uses def ("" for DuckDB's
// default in gymlens, ingest.DefaultMemoryLimit).
func openOptions(cmd *cli.Command, readOnly bool, def string) ingest.OpenOptions {
	mem := cmd.String("memory-limit")
	if mem == "" {
		mem = def
	}
	return ingest.OpenOptions{ReadOnly: readOnly, MemoryLimit: mem}
}

func ingestFlags() []cli.Flag {
	return []cli.Flag{
		&cli.IntFlag{Name: "max-errors", Value: 20, Usage: "report up to `N` errors"},
		&cli.BoolFlag{Name: "skip-invalid", Usage: "load the valid records; write the rejected ones with their reasons to --rejects"},
		&cli.StringFlag{Name: "rejects", Value: "gymlens-rejects.jsonl", Usage: "`FILE` for rejected records (with --skip-invalid)"},
		&cli.IntFlag{Name: "max-rejects", Value: ingest.DefaultMaxRejects, Usage: "write the first `N` rejected records of each input file to --rejects; count the rest"},
		&cli.BoolFlag{Name: "replace", Usage: "replace runs, scenarios and judgments stored with different content"},
	}
}

// ingestOptions reads the arguments and flags shared by ingest and validate.
func ingestOptions(cmd *cli.Command) (string, ingest.IngestOptions, error) {
	opt := ingest.IngestOptions{MaxErrors: int(cmd.Int("max-errors")), SkipInvalid: cmd.Bool("skip-invalid"),
		RejectsPath: cmd.String("rejects"), MaxRejects: int(cmd.Int("max-rejects")), Replace: cmd.Bool("replace")}
	if cmd.Args().Len() == 0 {
		return "", opt, usagef("%s: name at least one file or folder", cmd.Name)
	}
	if err := opt.CheckLimits(); err != nil {
		return "", opt, usageError{err}
	}
	format, err := outputFormat(cmd, "table", reports.ResultFormats...)
	return format, opt, err
}

// newBar is a progress bar on stderr (total -1: a spinner), redrawn at
// most ten times a second and cleared when finished.
func newBar(e *env, total int64, opts ...progressbar.Option) *progressbar.ProgressBar {
	return progressbar.NewOptions64(total, append([]progressbar.Option{progressbar.OptionSetWriter(e.stderr),
		progressbar.OptionThrottle(100 * time.Millisecond), progressbar.OptionClearOnFinish()}, opts...)...)
}

// progressBar draws ingest progress on a terminal: files, records, MB/s.
func progressBar(e *env, quiet bool) (func(ingest.Progress), func()) {
	if quiet || !e.terminal {
		return nil, func() {}
	}
	var bar *progressbar.ProgressBar
	update := func(p ingest.Progress) {
		if bar == nil {
			bar = newBar(e, p.TotalBytes, progressbar.OptionShowBytes(true), progressbar.OptionSetWidth(30), progressbar.OptionSetPredictTime(true))
		}
		bar.Describe(p.String())
		_ = bar.Set64(p.Bytes)
	}
	return update, func() {
		if bar != nil {
			_ = bar.Finish()
		}
	}
}

// load opens the warehouse at db for writing and ingests paths into it,
// with a progress bar on a terminal; on an error the warehouse is closed
// and as it was.
func load(ctx context.Context, e *env, cmd *cli.Command, db string, paths []string, opt ingest.IngestOptions) (*ingest.Warehouse, *ingest.Summary, error) {
	w, err := ingest.Open(ctx, db, openOptions(cmd, false, ingest.IngestMemoryLimit))
	if err != nil {
		return nil, nil, err
	}
	if n := len(w.Leftovers); n > 0 && !cmd.Bool("quiet") {
		fmt.Fprintf(e.stderr, "note: removed %d leftovers of killed ingests beside the warehouse\n", n)
	}
	var done func()
	opt.Progress, done = progressBar(e, cmd.Bool("quiet"))
	sum, err := w.Ingest(ctx, paths, opt)
	done()
	if err != nil {
		w.Close()
		return nil, nil, fmt.Errorf("%w\ningest failed: nothing was written to %s", err, w.Path)
	}
	return w, sum, nil
}

func ingestCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "ingest",
		Usage:     "load run logs, scenario specs and ratings into the warehouse (one transaction)",
		ArgsUsage: "PATH...",
		Description: "Reads *.jsonl, *.jsonl.gz, *.jsonl.zst, scenario *.json/*.yaml/*.yml and ratings *.csv, and PARE / Meta-ARE\n" +
			"traces, result files (*_result.json, combined_result.json, output.jsonl, benchmark_stats.json), annotation samples\n" +
			"(*.parquet) and annotation CSVs (docs/pare.md),\n" +
			"from files and folders (recursively). Every record is validated; on any error nothing is written.\n" +
			"A file whose content was ingested before is skipped.",
		Flags: ingestFlags(),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			format, opt, err := ingestOptions(cmd)
			if err != nil {
				return err
			}
			w, sum, err := load(ctx, e, cmd, cmd.String("db"), cmd.Args().Slice(), opt)
			if err != nil {
				return err
			}
			defer w.Close()
			if err := printSummary(e, cmd, format, "ingested", sum); err != nil {
				return err
			}
			// Result files beside traces: say at once whether they agree.
			if format == "table" && !cmd.Bool("quiet") && sum.Records["pare_result"]+sum.Records["pare_report"] > 0 {
				rc, err := reports.Reconcile(ctx, w)
				if err != nil {
					return err
				}
				fmt.Fprintln(e.stdout, reports.ReconcileLine(rc)+" (gymlens reconcile lists them)")
			}
			return nil
		},
	}
}

func validateCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "validate",
		Usage:     "check files as ingest would, without writing anything",
		ArgsUsage: "PATH...",
		Description: "References may point into the warehouse (--db) when it exists, as they may when ingesting.\n" +
			"Checks that need the loaded events (a task's final_seq) are made by ingest only.",
		Flags: ingestFlags()[:1],
		Action: func(ctx context.Context, cmd *cli.Command) error {
			format, opt, err := ingestOptions(cmd)
			if err != nil {
				return err
			}
			var w *ingest.Warehouse
			if _, err := os.Stat(cmd.String("db")); err == nil {
				if w, err = ingest.Open(ctx, cmd.String("db"), openOptions(cmd, true, "")); err != nil {
					return err
				}
				defer w.Close()
			}
			sum, err := ingest.Validate(ctx, w, cmd.Args().Slice(), opt)
			if err != nil {
				return fmt.Errorf("%w\nvalidation failed", err)
			}
			return printSummary(e, cmd, format, "valid", sum)
		},
	}
}

func printSummary(e *env, cmd *cli.Command, format, verb string, s *ingest.Summary) error {
	if format != "table" {
		cols, row := s.Record()
		return reports.WriteResult(e.stdout, format, &reports.Result{Columns: cols, Rows: [][]any{row}})
	}
	fmt.Fprintln(e.stdout, s.Line(verb))
	if !cmd.Bool("quiet") {
		for _, n := range s.NoteLines() {
			fmt.Fprintln(e.stdout, "note: "+n)
		}
	}
	return nil
}

func sampleFlags() []cli.Flag {
	return []cli.Flag{
		&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "random `SEED`; the same seed writes the same bytes"},
		&cli.IntFlag{Name: "scale", Value: 1, Usage: "multiply the repetitions by `K` (3 × K per persona and scenario)"},
		&cli.IntFlag{Name: "configs", Usage: "write only the grid's first `N` configurations (0: all 26)"},
		&cli.StringFlag{Name: "compress", Value: "none", Usage: "compress the record streams: none, gz or zst"},
	}
}

// writeSample writes the sample corpus the flags ask for into out; with
// reuse, a corpus already there from the same options and untouched is
// kept (sample.Existing), and reused says so.
func writeSample(cmd *cli.Command, out string, reuse bool) (st *sample.Stats, reused bool, err error) {
	opt := sample.Options{Seed: cmd.Uint64("seed"), Scale: int(cmd.Int("scale")), Configs: int(cmd.Int("configs")), Compress: cmd.String("compress")}
	if err := opt.Check(); err != nil {
		return nil, false, usageError{err}
	}
	if st := sample.Existing(out, opt); reuse && st != nil {
		return st, true, nil
	}
	st, err = sample.Write(out, opt)
	return st, false, err
}

func sampleCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "sample",
		Usage: "write a synthetic Proactivity-Gym corpus in the run-log format",
		Description: "10 scenarios (one per domain), 26 configurations (the paper's 23 plus the reasoning-effort\n" +
			"ablation of GPT 5.6 Sol on CD), 3 personas × 3 × K repetitions, three judges (of the Qwen, GPT and Claude families: .sample/families.csv), human ratings.",
		Flags: append([]cli.Flag{&cli.StringFlag{Name: "out", Required: true, Usage: "output `DIR`"}}, sampleFlags()...),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() > 0 {
				return usagef("sample takes no arguments, found %q", cmd.Args().First())
			}
			format, err := outputFormat(cmd, "table", reports.ResultFormats...)
			if err != nil {
				return err
			}
			st, _, err := writeSample(cmd, cmd.String("out"), false)
			if err != nil {
				return err
			}
			return reports.WriteSampleSummary(e.stdout, format, cmd.String("out"), st)
		},
	}
}

// demoBootstrap are the bootstrap flags of demo, whose --seed seeds the
// corpus and the bootstrap alike.
var demoBootstrap = func() []cli.Flag { f := bootstrapFlags(); return []cli.Flag{f[0], f[2], f[3]} }()

func demoCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "demo",
		Usage: "write the sample corpus, ingest it and print a summary",
		Description: "Writes the corpus to DIR/corpus and the warehouse to DIR/gymlens.duckdb (or --db when given),\n" +
			"then prints the configurations and the main results (the four metrics with cluster-bootstrap\n" +
			"intervals; --seed seeds both the corpus and the bootstrap), and ends by writing the report folder\n" +
			"DIR/report (every table and figure, index.html, manifest.json). Run again with the same --seed and --scale, it\n" +
			"reuses the corpus (unless a file of it changed), loads nothing twice and keeps the scores.",
		Flags: append(append([]cli.Flag{&cli.StringFlag{Name: "out", Value: "gymlens-demo", Usage: "output `DIR`"},
			&cli.StringFlag{Name: "by", Value: "config", Hidden: true}, &cli.StringSliceFlag{Name: "where", Hidden: true},
			&cli.StringFlag{Name: "metrics", Value: strings.Join(analysis.MainMetrics, ","), Hidden: true},
			&cli.StringFlag{Name: "judge", Hidden: true}}, sampleFlags()...), demoBootstrap...),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			format, err := outputFormat(cmd, "table", reports.ResultFormats...)
			if err != nil {
				return err
			}
			out := cmd.String("out")
			corpus := filepath.Join(out, "corpus")
			st, reused, err := writeSample(cmd, corpus, true)
			if err != nil {
				return err
			}
			quiet := cmd.Bool("quiet")
			if !quiet && format == "table" {
				fmt.Fprintln(e.stdout, reports.DemoCorpusLine(corpus, st, reused))
			}
			db := filepath.Join(out, "gymlens.duckdb")
			if cmd.IsSet("db") {
				db = cmd.String("db")
			}
			w, sum, err := load(ctx, e, cmd, db, []string{corpus}, ingest.IngestOptions{})
			if err != nil {
				return err
			}
			defer w.Close()
			if format == "table" {
				if err := printSummary(e, cmd, format, "ingested", sum); err != nil {
					return err
				}
			}
			if err := reports.WriteWarehouseSummary(ctx, e.stdout, format, w.Path, w); err != nil {
				return err
			}
			// Scores are written once: a run that ingested nothing finds
			// them current and leaves them (and the counting) alone.
			line, err := reports.RescoreOnce(ctx, w, sum.TotalRecords() > 0)
			if err != nil {
				return err
			}
			if format == "table" {
				fmt.Fprintln(e.stdout, "\n"+line)
			}
			// The main results: configuration × the four metrics.
			// One dataset for the main results and the report: the runs are
			// read once and the main table's estimates are these.
			// The corpus's families, for the report's judge-bias tables.
			opt, err := argsOf(cmd).Options(w.Path, reports.KeepPacked)
			if err != nil {
				return err
			}
			opt.Families = filepath.Join(corpus, sample.FamiliesFile)
			ds, err := reports.NewDataset(ctx, w, opt)
			if err != nil {
				return err
			}
			by := reports.SplitList(cmd.String("by"))
			res, err := ds.Metrics(by)
			if err != nil {
				return err
			}
			if format == "table" {
				fmt.Fprintln(e.stdout, "\nmain results (TC 0–100, TA and TR-D %, TR-J 1–5):")
			}
			if err := writer(e, cmd, format).Result(reports.MetricsOutput(format, by, res)); err != nil {
				return err
			}
			if format == "table" && !quiet {
				if err := reports.WriteDatasetGlossary(ctx, e.stdout, w, ds); err != nil {
					return err
				}
			}
			// Last, the report folder with every table and figure.
			t0 := time.Now()
			page, skipped, err := writeReport(ctx, cmd, w, ds, filepath.Join(out, "report"))
			if err != nil {
				return err
			}
			for _, s := range skipped {
				fmt.Fprintln(e.stderr, "note: left out", s)
			}
			msg := fmt.Sprintf("report: %s (written in %.1f s)", page, time.Since(t0).Seconds())
			if format == "table" {
				fmt.Fprintln(e.stdout, "\n"+msg)
			} else if !quiet {
				fmt.Fprintln(e.stderr, msg)
			}
			return nil
		},
	}
}

func exportCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:        "export",
		Usage:       "write every table as Parquet (large tables hive-partitioned by configuration) or Arrow IPC",
		Description: "--format parquet (default) or arrow.",
		Flags:       []cli.Flag{&cli.StringFlag{Name: "out", Required: true, Usage: "output `DIR`"}},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			return readingAs(ctx, cmd, "parquet", []string{"parquet", "arrow"}, func(format string, w *ingest.Warehouse) error {
				res, err := w.Export(ctx, cmd.String("out"), format)
				if err != nil {
					return err
				}
				if cmd.Bool("quiet") {
					return nil
				}
				cols, rows := ingest.ExportTable(res)
				return reports.WriteResult(e.stdout, "table", &reports.Result{Columns: cols, Rows: rows})
			})
		},
	}
}
