package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The report's main table carries, under it, one calibration line per
// metric (simulated coverage with its Monte Carlo se, the paired test's
// size) and the simulation's size and seed; the same inputs and seed
// give the same bytes, another seed other digits. metrics --calibration
// prints every --ci method for every metric, the one in use first, and
// refuses what it does not simulate.
func TestReportCalibrationLine(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("writes three reports and simulates a few hundred datasets")
	}
	dir, db := sampleWarehouse(t, 4, 3, true)
	report := func(name, seed string) []byte {
		out := filepath.Join(dir, name)
		if code, _, stderr := gymlens(t, "--db", db, "-q", "report", "--out", out, "--resamples", "200", "--seed", seed); code != 0 {
			t.Fatal(stderr)
		}
		b, err := os.ReadFile(filepath.Join(out, "tables", "main.md"))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	a, b, other := report("a", "1"), report("b", "1"), report("c", "2")
	line := regexp.MustCompile(`(?m)^.*(TC|TA|TR-D|TR-J): 95% intervals: simulated coverage \d+\.\d% \(Monte Carlo se \d+\.\d\) at this design; paired test size \d+\.\d% \(Monte Carlo se \d+\.\d\)\.`)
	if n := len(line.FindAll(a, -1)); n != 4 {
		t.Errorf("main.md: %d calibration lines, want 4:\n%s", n, a)
	}
	if !bytes.Contains(a, []byte("Calibration (expanded-percentile intervals, as in the table): 100 simulated datasets × 200 resamples, seed 1, of this design (3 configurations")) {
		t.Errorf("main.md: no simulation size:\n%s", a)
	}
	if !bytes.Equal(a, b) {
		t.Error("the same inputs and seed: two main tables differ")
	}
	if bytes.Equal(line.Find(a), line.Find(other)) && bytes.Equal(a, other) {
		t.Error("seeds 1 and 2: the same main table")
	}
	code, stdout, stderr := gymlens(t, "--db", db, "metrics", "--calibration", "--resamples", "100", "--metrics", "TC,TA")
	if code != 0 {
		t.Fatal(stderr)
	}
	rows := regexp.MustCompile(`(?m)^(TC|TA) +(expanded-percentile|percentile|bca) +\d+\.?\d* +\d+\.?\d* +\d+\.?\d* +\d+\.?\d* +\d+ +\d+ +(true|false)$`).FindAllStringSubmatch(stdout, -1)
	if len(rows) != 6 || rows[0][2] != "expanded-percentile" || rows[0][3] != "true" || rows[1][3] != "false" || rows[3][1] != "TA" {
		t.Errorf("metrics --calibration: %d rows:\n%s", len(rows), stdout)
	}
	if !strings.Contains(stdout, "50 simulated datasets × 100 resamples, seed 1") {
		t.Errorf("metrics --calibration: no simulation size:\n%s", stdout)
	}
	for _, args := range [][]string{
		{"metrics", "--calibration", "--by", "harness"},
		{"metrics", "--calibration", "--source", "pare"},
		{"metrics", "--calibration", "--judge-noise"},
	} {
		if code, _, stderr := gymlens(t, append([]string{"--db", db}, args...)...); code != 2 || !strings.Contains(stderr, "--calibration") {
			t.Errorf("%v: exit %d, want 2 naming --calibration: %s", args, code, stderr)
		}
	}
}
