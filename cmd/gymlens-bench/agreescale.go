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
	"syscall"
	"time"
)

// benchAgreeScale times `gymlens agree --input` as a user runs it (a
// process per call, the default 10,000 resamples) on continuous ratings,
// where nearly every value is distinct: 20,000 items × 2 raters at every
// level, and 10,000 items × 3 raters at the ordinal level, with each
// call's wall time and peak resident memory against the targets.
func benchAgreeScale(args []string) error {
	fl := flag.NewFlagSet("agree-scale", flag.ExitOnError)
	items2 := fl.Int("items", 20000, "items of the two-rater file")
	items3 := fl.Int("items3", 10000, "items of the three-rater file")
	resamples := fl.Int("resamples", 10000, "bootstrap resamples")
	fl.Parse(args)
	dir, err := os.MkdirTemp("", "gymlens-bench-agree-scale-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "gymlens")
	if err := buildGymlens(bin); err != nil {
		return err
	}
	two, err := writeContinuous(filepath.Join(dir, "two.csv"), *items2, 2, 11)
	if err != nil {
		return err
	}
	three, err := writeContinuous(filepath.Join(dir, "three.csv"), *items3, 3, 12)
	if err != nil {
		return err
	}
	run := func(file, level string) (time.Duration, int64, error) {
		cmd := exec.Command(bin, "agree", "--input", file, "--level", level, "--resamples", strconv.Itoa(*resamples), "-q", "-f", "json")
		t0 := time.Now()
		out, err := cmd.CombinedOutput()
		if err != nil {
			return 0, 0, fmt.Errorf("agree --level %s: %v\n%s", level, err, out)
		}
		return time.Since(t0), cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss * 1024, nil
	}
	fmt.Printf("gymlens agree --input, continuous ratings (nearly every value distinct), %d resamples, a process per call:\n", *resamples)
	for _, lv := range []string{"nominal", "ordinal", "interval", "ratio"} {
		wall, rss, err := run(two, lv)
		if err != nil {
			return err
		}
		fmt.Printf("  %6d items × 2 raters, --level %-8s  %6.2f s  peak RSS %4.0f MB   (targets ≤ 5 s, ≤ 300 MB)\n", *items2, lv, wall.Seconds(), mb(rss))
	}
	wall, rss, err := run(three, "ordinal")
	if err != nil {
		return err
	}
	fmt.Printf("  %6d items × 3 raters, --level ordinal   %6.2f s  peak RSS %4.0f MB   (target ≤ 30 s)\n", *items3, wall.Seconds(), mb(rss))
	return nil
}

// writeContinuous writes a long-format ratings CSV: items × raters of
// positive values to six decimals around a per-item truth.
func writeContinuous(path string, items, raters int, seed uint64) (string, error) {
	f, err := os.Create(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	rng := rand.New(rand.NewPCG(seed, 1))
	cw := csv.NewWriter(f)
	cw.Write([]string{"item", "rater", "value"})
	for i := range items {
		truth := 3 + rng.NormFloat64()
		for r := range raters {
			v := math.Abs(truth + 0.5*rng.NormFloat64())
			cw.Write([]string{"i" + strconv.Itoa(i), "r" + strconv.Itoa(r), strconv.FormatFloat(math.Round(v*1e6)/1e6, 'f', -1, 64)})
		}
	}
	cw.Flush()
	return path, cw.Error()
}
