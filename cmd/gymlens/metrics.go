package main

import (
	"context"
	"runtime"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/gymlens/gymlens/analysis"
	"github.com/gymlens/gymlens/ingest"
	"github.com/gymlens/gymlens/reports"
)

// reading runs fn with the output format and the warehouse opened
// read-only: what every command that only reads shares.
func reading(ctx context.Context, cmd *cli.Command, fn func(format string, w *ingest.Warehouse) error) error {
	return readingAs(ctx, cmd, "table", reports.ResultFormats, fn)
}

// analysing is reading for a command whose results are written in every
// format (reports.Formats).
func analysing(ctx context.Context, cmd *cli.Command, fn func(format string, w *ingest.Warehouse) error) error {
	return readingAs(ctx, cmd, "table", reports.Formats, fn)
}

// readingAs is reading for a command whose --format takes other values.
func readingAs(ctx context.Context, cmd *cli.Command, def string, formats []string, fn func(format string, w *ingest.Warehouse) error) error {
	format, err := outputFormat(cmd, def, formats...)
	if err != nil {
		return err
	}
	w, err := ingest.Open(ctx, cmd.String("db"), openOptions(cmd, true, ""))
	if err != nil {
		return err
	}
	defer w.Close()
	return fn(format, w)
}

func bootstrapFlags() []cli.Flag {
	return []cli.Flag{
		&cli.IntFlag{Name: "resamples", Value: analysis.DefaultBootstrap.Resamples, Usage: "bootstrap `N` resamples"},
		&cli.Uint64Flag{Name: "seed", Value: analysis.DefaultBootstrap.Seed, Usage: "bootstrap `SEED`"},
		&cli.FloatFlag{Name: "level", Value: analysis.DefaultBootstrap.Level, Usage: "confidence `LEVEL`"},
		&cli.StringFlag{Name: "ci", Value: analysis.DefaultBootstrap.Method, Usage: "interval `METHOD`: expanded-percentile, percentile or bca"},
	}
}

// selectionFlags choose the runs, the metrics and the judge.
func selectionFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringSliceFlag{Name: "where", Usage: "keep runs with `DIM=VALUE` (repeat; values of one dimension are alternatives)"},
		&cli.StringFlag{Name: "metrics", Value: strings.Join(analysis.MainMetrics, ","), Usage: "`NAMES` to estimate, or \"all\""},
		&cli.StringFlag{Name: "judge", Usage: "use one `JUDGE`'s judgments instead of the average"},
	}
}

func bootstrapOptions(cmd *cli.Command) (analysis.BootstrapOptions, error) {
	if !hasFlag(cmd, "resamples") { // a command without bootstrap flags
		o := analysis.DefaultBootstrap
		o.Workers = runtime.GOMAXPROCS(0)
		return o, nil
	}
	o := analysis.BootstrapOptions{Resamples: int(cmd.Int("resamples")), Seed: cmd.Uint64("seed"), Level: cmd.Float("level"),
		Method: cmd.String("ci"), Workers: runtime.GOMAXPROCS(0)}
	levelFlag := "level"
	if hasFlag(cmd, "confidence") {
		levelFlag = "confidence"
		o.Level = cmd.Float("confidence")
	}
	if err := o.Check(levelFlag); err != nil {
		return o, usageError{err}
	}
	return o, nil
}

func hasFlag(cmd *cli.Command, name string) bool {
	for _, f := range cmd.Flags {
		for _, n := range f.Names() {
			if n == name {
				return true
			}
		}
	}
	return false
}

// confidenceFlags are the bootstrap flags with the confidence level named
// --confidence, for commands whose --level is something else.
func confidenceFlags() []cli.Flag {
	flags := bootstrapFlags()
	for i, f := range flags {
		if f, ok := f.(*cli.FloatFlag); ok && f.Name == "level" {
			c := *f
			c.Name = "confidence"
			flags[i] = &c
		}
	}
	return flags
}

func metricsCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "metrics",
		Usage: "the 3T metrics (TC, TA, TR-D, TR-J) with cluster-bootstrap intervals, broken down as asked",
		Description: "Dimensions: " + strings.Join(analysis.Dimensions, ", ") + ".\n" +
			"Metrics: " + strings.Join(analysis.AllMetrics, ", ") + ".\n" +
			"Scales: TC and its parts 0–100; TA, TR-D and TA's parts in percent; TR-J 1–5.\n" +
			"The resampling unit is the scenario. Judgments are averaged over judges unless --judge names one.\n" +
			"--source pare: the PARE and Meta-ARE runs instead, with their metrics (" + strings.Join(analysis.PARERunMetrics, ", ") + ",\n" +
			strings.Join(analysis.PooledMetrics, ", ") + ", pass@K, pass^K, pare_pass@k, pare_pass^k) by " + strings.Join(analysis.PAREDimensions, ", ") + " (docs/pare.md).",
		Flags: append(append([]cli.Flag{
			&cli.StringFlag{Name: "by", Value: "config", Usage: "break down by `DIM[,DIM]` (\"\" for one overall group)"},
			&cli.StringFlag{Name: "source", Value: "gym", Usage: "`RUNS` to measure: gym (Proactivity-Gym) or pare (PARE and Meta-ARE)"},
			&cli.BoolFlag{Name: "pare-report", Usage: "with --source pare: the statistics PARE's combined_result.json and Meta-ARE's benchmark_stats.json give, recomputed from the ingested result rows"},
		}, selectionFlags()...), bootstrapFlags()...),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			return analysing(ctx, cmd, func(format string, w *ingest.Warehouse) error {
				switch cmd.String("source") {
				case "gym":
				case "pare":
					if cmd.Bool("pare-report") {
						r, err := pareReport(ctx, w)
						if err != nil {
							return err
						}
						return writer(e, cmd, format).Result(r, nil)
					}
					res, err := computePAREMetrics(ctx, cmd, w)
					if err != nil {
						return err
					}
					return writer(e, cmd, format).Result(reports.MetricsOutput(format, splitList(cmd.String("by")), res))
				default:
					return usagef("--source: expected gym or pare, found %q", cmd.String("source"))
				}
				res, err := computeMetrics(ctx, cmd, w)
				if err != nil {
					return err
				}
				return writer(e, cmd, format).Result(reports.MetricsOutput(format, splitList(cmd.String("by")), res))
			})
		},
	}
}

func splitList(s string) []string { return reports.SplitList(s) }

// parseWhere reads --where DIM=VALUE flags: dimension → allowed values.
func parseWhere(cmd *cli.Command) (map[string][]string, error) {
	return parseWhereIn(cmd, nil)
}

// parseWhereIn reads --where; dims, when not nil, are the dimensions
// allowed (the 3T dimensions otherwise).
func parseWhereIn(cmd *cli.Command, dims []string) (map[string][]string, error) {
	return analysis.ParseWhere(cmd.StringSlice("where"), dims, "PARE runs")
}

// computeMetrics reads the runs and estimates the metrics as the flags ask.
func computeMetrics(ctx context.Context, cmd *cli.Command, w *ingest.Warehouse) ([]analysis.GroupEstimate, error) {
	ds, err := dataset(ctx, cmd, w, reports.KeepValues)
	if err != nil {
		return nil, err
	}
	return ds.Metrics(splitList(cmd.String("by")))
}
