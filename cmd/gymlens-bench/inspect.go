package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/gymlens/gymlens/analysis"
	"github.com/gymlens/gymlens/ingest"
	"github.com/gymlens/gymlens/ingest/inspect"
	"github.com/gymlens/gymlens/internal/sample"
)

// benchInspect generates Inspect .eval logs (one of many samples of
// about 0.6 MB each; one with a single chunked sample) and measures, each
// in a child process, reading them (MB/s of uncompressed JSON, peak RSS)
// and, with --ingest, ingesting them into a new warehouse.
func benchInspect(args []string) error {
	fl := flag.NewFlagSet("inspect", flag.ExitOnError)
	mb := fl.Int("mb", 256, "uncompressed JSON of the generated log of many samples, `MB`")
	chunkedMB := fl.Int("chunked-mb", 0, "also a log of one chunked sample of this many `MB` (0: none)")
	withIngest := fl.Bool("ingest", false, "also ingest each log into a new warehouse")
	evals := fl.Int("evals", 0, "also: `N` logs of 500 samples × 5 epochs ingested, then metrics --source inspect timed (0: none)")
	dir := fl.String("dir", "", "work folder (default: a new one under $TMPDIR)")
	keep := fl.Bool("keep", false, "keep the work folder")
	fl.Parse(args)
	work := *dir
	if work == "" {
		var err error
		if work, err = os.MkdirTemp("", "gymlens-bench-inspect-"); err != nil {
			return err
		}
	}
	if !*keep {
		defer os.RemoveAll(work)
	}
	type logSpec struct {
		name string
		opt  sample.InspectOptions
	}
	// An item (a message, a model event and a pooled message) is about
	// 3 KB of JSON; a sample of 200 items about 0.6 MB.
	specs := []logSpec{{"samples.eval", sample.InspectOptions{Samples: max(1, *mb*1_000_000/595_000), Epochs: 1, Items: 200, Seed: 1}}}
	if *chunkedMB > 0 {
		specs = append(specs, logSpec{"chunked.eval", sample.InspectOptions{Samples: 1, Epochs: 1, Items: *chunkedMB * 1_000_000 / 2_010, Chunked: true, Seed: 2}})
	}
	fmt.Println("log           samples  compressed MB  JSON MB  read s  read MB/s  read peak RSS MB  ingest s  ingest peak RSS MB")
	for _, sp := range specs {
		path := filepath.Join(work, sp.name)
		jsonBytes, err := sample.WriteInspectEval(path, sp.opt)
		if err != nil {
			return err
		}
		st, err := os.Stat(path)
		if err != nil {
			return err
		}
		wall, rss, err := measure("inspect-read", path)
		if err != nil {
			return err
		}
		line := fmt.Sprintf("%-12s  %7d  %13.1f  %7.1f  %6.2f  %9.1f  %16.0f", sp.name, sp.opt.Samples*sp.opt.Epochs, float64(st.Size())/1e6,
			float64(jsonBytes)/1e6, wall.Seconds(), float64(jsonBytes)/1e6/wall.Seconds(), float64(rss)/1e6)
		if *withIngest {
			db := filepath.Join(work, sp.name+".duckdb")
			iwall, irss, err := measure("ingest", db, path)
			if err != nil {
				return err
			}
			line += fmt.Sprintf("  %8.2f  %18.0f", iwall.Seconds(), float64(irss)/1e6)
			os.Remove(db)
		}
		fmt.Println(line)
		os.Remove(path)
	}
	if *evals > 0 {
		logs := filepath.Join(work, "evals")
		if err := os.MkdirAll(logs, 0o755); err != nil {
			return err
		}
		for i := range *evals {
			opt := sample.InspectOptions{Samples: 500, Epochs: 5, Items: 0, Seed: uint64(100 + i)}
			if _, err := sample.WriteInspectEval(filepath.Join(logs, fmt.Sprintf("e%02d.eval", i)), opt); err != nil {
				return err
			}
		}
		db := filepath.Join(work, "evals.duckdb")
		iwall, irss, err := measure("ingest", db, logs)
		if err != nil {
			return err
		}
		mwall, mrss, err := measure("inspect-metrics", db)
		if err != nil {
			return err
		}
		fmt.Printf("%d evals × 500 samples × 5 epochs: ingest %.2f s (peak RSS %.0f MB); metrics --source inspect %.2f s (peak RSS %.0f MB)\n",
			*evals, iwall.Seconds(), float64(irss)/1e6, mwall.Seconds(), float64(mrss)/1e6)
	}
	return nil
}

// inspectMetrics is the child job inspect-metrics: what metrics
// --source inspect computes, on a warehouse.
func inspectMetrics(db string) error {
	ctx := context.Background()
	w, err := ingest.Open(ctx, db, ingest.OpenOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	defer w.Close()
	d, err := w.LoadInspect(ctx)
	if err != nil {
		return err
	}
	_, err = analysis.InspectMeans(d, "", analysis.BootstrapOptions{Seed: 1})
	return err
}

// countSink counts what a reader gives, keeping nothing.
type countSink struct{ items, samples int }

func (c *countSink) Begin(*inspect.Eval) error                 { return nil }
func (c *countSink) Item(*inspect.Sample, *inspect.Item) error { c.items++; return nil }
func (c *countSink) Sample(*inspect.Sample) error              { c.samples++; return nil }
func (c *countSink) End(*inspect.Eval) error                   { return nil }

// readInspect is the child job inspect-read.
func readInspect(path string) error {
	var c countSink
	if err := inspect.ReadFile(path, &c); err != nil {
		return err
	}
	if c.samples == 0 {
		return fmt.Errorf("%s: no sample read", path)
	}
	return nil
}
