package main

import (
	"encoding/csv"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/gymlens/gymlens/analysis"
	"github.com/gymlens/gymlens/analysis/stat"
)

// benchAgree times Krippendorff's α (interval) with a bootstrap interval
// on items × raters with missing ratings, and a straightforward numpy
// implementation of the same on the same data (bench_agree.py).
func benchAgree(args []string) error {
	fl := flag.NewFlagSet("agree", flag.ExitOnError)
	items := fl.Int("items", 10000, "items")
	raters := fl.Int("raters", 5, "raters")
	missing := fl.Float64("missing", 0.2, "share of ratings missing")
	resamples := fl.Int("resamples", 1000, "bootstrap resamples")
	python := fl.String("python", "/usr/bin/python3", "a python3 with numpy (Debian's python3-numpy)")
	fl.Parse(args)
	rng := rand.New(rand.NewPCG(7, 7))
	data := make([][]float64, *items) // NaN: missing
	for i := range data {
		truth := 3 + rng.NormFloat64()
		data[i] = make([]float64, *raters)
		for r := range data[i] {
			data[i][r] = math.Round((truth+0.6*rng.NormFloat64())*100) / 100
			if rng.Float64() < *missing {
				data[i][r] = math.NaN()
			}
		}
	}
	t0 := time.Now()
	units := make([][]float64, len(data))
	for i, row := range data {
		for _, v := range row {
			if !math.IsNaN(v) {
				units[i] = append(units[i], v)
			}
		}
	}
	a, err := stat.NewAlphaData(units, analysis.Interval)
	if err != nil {
		return err
	}
	est := stat.ClusterBootstrap(a.Pairable, 1, func(w, out []float64) { out[0] = a.Alpha(w) },
		analysis.BootstrapOptions{Resamples: *resamples, Seed: 1, Method: analysis.Percentile})
	goTime := time.Since(t0)
	fmt.Printf("gymlens: Krippendorff's α (interval), %d items × %d raters, %.0f%% missing, with a %d-resample percentile interval: "+
		"α = %.6f [%.4f, %.4f] in %.3f s\n", *items, *raters, 100**missing, *resamples, est[0].Value, est[0].Lo, est[0].Hi, goTime.Seconds())

	dir, err := os.MkdirTemp("", "gymlens-bench-agree-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "ratings.csv")
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	cw := csv.NewWriter(f)
	for _, row := range data {
		rec := make([]string, len(row))
		for r, v := range row {
			if !math.IsNaN(v) {
				rec[r] = strconv.FormatFloat(v, 'g', -1, 64)
			}
		}
		cw.Write(rec)
	}
	cw.Flush()
	f.Close()
	script := filepath.Join("cmd", "gymlens-bench", "bench_agree.py")
	out, err := exec.Command(*python, script, path, strconv.Itoa(*resamples)).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %v\n%s", *python, script, err, out)
	}
	fields := strings.Fields(lastLine(string(out)))
	if len(fields) != 2 {
		return fmt.Errorf("bench_agree.py printed %q", out)
	}
	pyAlpha, _ := strconv.ParseFloat(fields[0], 64)
	pySecs, err := strconv.ParseFloat(fields[1], 64)
	if err != nil {
		return fmt.Errorf("bench_agree.py printed %q", out)
	}
	fmt.Printf("numpy (bench_agree.py), the same α and %d resamples: α = %.6f in %.3f s\n", *resamples, pyAlpha, pySecs)
	fmt.Printf("ratio: gymlens is %.1f× faster (target: gymlens ≤ 2 s)\n", pySecs/goTime.Seconds())
	return nil
}
