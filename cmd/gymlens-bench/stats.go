package main

import (
	"context"
	"encoding/csv"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gymlens/gymlens/analysis"
	"github.com/gymlens/gymlens/ingest"
	"github.com/gymlens/gymlens/internal/sample"
)

// benchStats times the statistics of issue 3 on the sample corpus: the four
// metrics for every configuration, by scenario and by persona group, and the
// run-level correlation matrix, all with 10,000-resample intervals; then
// runs a straightforward numpy/scipy implementation of the same on the
// same run values (bench_stats.py) and prints the ratio.
func benchStats(args []string) error {
	fl := flag.NewFlagSet("stats", flag.ExitOnError)
	resamples := fl.Int("resamples", 10000, "bootstrap resamples")
	python := fl.String("python", "/usr/bin/python3", "a python3 with numpy and scipy (Debian's python3-scipy)")
	fl.Parse(args)
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "gymlens-bench-stats-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	w, err := sampleWarehouse(ctx, dir, "c", 1)
	if err != nil {
		return err
	}
	defer w.Close()
	runs, err := w.LoadRuns(ctx)
	if err != nil {
		return err
	}
	opt := analysis.BootstrapOptions{Resamples: *resamples, Seed: 1, Method: analysis.Percentile}
	main4 := []int{0, 1, 2, 3}
	t0 := time.Now()
	values := make([][]float64, len(runs))
	missing := make([]analysis.Missing, len(runs))
	scen, conf := make([]string, len(runs)), make([]string, len(runs))
	for i := range runs {
		values[i], missing[i] = analysis.RunValues(&runs[i], "")
		scen[i], conf[i] = runs[i].Scenario, runs[i].ConfigID
	}
	n := 0
	for _, by := range [][]string{{"config"}, {"scenario"}, {"persona_group"}} {
		groups, _ := analysis.GroupRuns(runs, by, nil)
		n += len(analysis.Summarize(groups, values, missing, scen, main4, opt))
	}
	corr := analysis.RunCorrelationMatrix(values, scen, main4, opt)
	goTime := time.Since(t0)
	fmt.Printf("gymlens: %d runs; %d metric estimates (by configuration, scenario, persona group) and %d run-level Pearson correlations,\n"+
		"each with a %d-resample cluster-bootstrap interval: %.3f s\n", len(runs), n, len(corr), *resamples, goTime.Seconds())

	// The same run values for the Python implementation.
	path := filepath.Join(dir, "runs.csv")
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	cw := csv.NewWriter(f)
	cw.Write([]string{"config", "scenario", "persona_group", "TC", "TA", "TRD", "TRJ"})
	for i, r := range runs {
		rec := []string{r.ConfigID, r.Scenario, r.PersonaGroup}
		for _, m := range main4 {
			rec = append(rec, strconv.FormatFloat(values[i][m], 'g', -1, 64))
		}
		cw.Write(rec)
	}
	cw.Flush()
	f.Close()
	peer := func(name string) (float64, error) {
		script := filepath.Join(filepath.Dir(mustExecutableSource()), name)
		out, err := exec.Command(*python, script, path, strconv.Itoa(*resamples)).CombinedOutput()
		if err != nil {
			return 0, fmt.Errorf("%s %s: %v\n%s", *python, script, err, out)
		}
		secs, err := strconv.ParseFloat(strings.TrimSpace(lastLine(string(out))), 64)
		if err != nil {
			return 0, fmt.Errorf("%s printed %q", name, out)
		}
		return secs, nil
	}
	vec, err := peer("bench_stats_vectorized.py")
	if err != nil {
		return err
	}
	fmt.Printf("numpy, vectorized (bench_stats_vectorized.py: resamples as one matrix, bincount sums), the same estimates: %.3f s\n", vec)
	fmt.Printf("ratio: gymlens is %.1f× faster than the vectorized peer\n", vec/goTime.Seconds())
	loop, err := peer("bench_stats.py")
	if err != nil {
		return err
	}
	fmt.Printf("numpy/scipy, a Python loop over the resamples (bench_stats.py, kept for comparison): %.3f s (%.1f×)\n", loop, loop/goTime.Seconds())

	// End to end: the commands as a researcher runs them on the
	// warehouse, process start included, median of five.
	db := w.Path
	w.Close()
	bin := filepath.Join(dir, "gymlens")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/gymlens").CombinedOutput(); err != nil {
		return fmt.Errorf("go build ./cmd/gymlens (run from the repository's root): %w\n%s", err, out)
	}
	var total float64
	for _, c := range [][]string{{"metrics", "--by", "model,harness"}, {"corr"}} {
		var times []float64
		for range 5 {
			cmd := exec.Command(bin, append(append([]string{"--db", db, "-q"}, c...), "--resamples", strconv.Itoa(*resamples))...)
			t := time.Now()
			if out, err := cmd.CombinedOutput(); err != nil {
				return fmt.Errorf("gymlens %s: %v\n%s", strings.Join(c, " "), err, out)
			}
			times = append(times, time.Since(t).Seconds())
		}
		slices.Sort(times)
		total += times[2]
		fmt.Printf("gymlens %s, end to end (process start, the warehouse read, %d resamples): %.3f s (median of 5; %.1f× the vectorized peer's computation)\n",
			strings.Join(c, " "), *resamples, times[2], vec/times[2])
	}
	fmt.Printf("both commands: %.3f s, %.1f× the vectorized peer's computation of its estimates (%.3f s)\n", total, vec/total, vec)
	return nil
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// mustExecutableSource finds this command's source folder (for the Python
// script beside it) from the working folder: run it from the repository.
func mustExecutableSource() string {
	return filepath.Join("cmd", "gymlens-bench", "main.go")
}

// sampleWarehouse writes the sample corpus at scale into dir/name and
// ingests it (only the subfolders named, when any) into dir/name.duckdb.
func sampleWarehouse(ctx context.Context, dir, name string, scale int, only ...string) (*ingest.Warehouse, error) {
	corpus := filepath.Join(dir, name)
	if _, err := sample.Write(corpus, sample.Options{Seed: 1, Scale: scale}); err != nil {
		return nil, err
	}
	w, err := ingest.Open(ctx, filepath.Join(dir, name+".duckdb"), ingest.OpenOptions{})
	if err != nil {
		return nil, err
	}
	paths := []string{corpus}
	if len(only) > 0 {
		paths = paths[:0]
		for _, sub := range only {
			paths = append(paths, filepath.Join(corpus, sub))
		}
	}
	if _, err := w.Ingest(ctx, paths, ingest.IngestOptions{}); err != nil {
		w.Close()
		return nil, err
	}
	return w, nil
}
