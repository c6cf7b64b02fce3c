package analysis

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// calibrationStudy is a design of configs × scenarios × runs per cell
// with normal scenario and configuration × scenario effects, in metric
// TC (bounded to 0–100) or, discrete, TA (0, 50 or 100).
func calibrationStudy(configs, scenarios, runs int, seed uint64, discrete bool) ([][]float64, []string, []string) {
	rng := rand.New(rand.NewPCG(seed, 7))
	var values [][]float64
	var scen, conf []string
	sEff := make([]float64, scenarios)
	for s := range sEff {
		sEff[s] = 8 * rng.NormFloat64()
	}
	for c := range configs {
		for s := range scenarios {
			cs := 4 * rng.NormFloat64()
			for range runs {
				x := 40 + 2*float64(c) + sEff[s] + cs + 12*rng.NormFloat64()
				row := slices.Repeat([]float64{math.NaN()}, numMetrics)
				if discrete {
					row[mTA] = 50 * math.Round(min(2, max(0, x/50)))
				} else {
					row[mTC] = min(100, max(0, x))
				}
				values = append(values, row)
				scen = append(scen, fmt.Sprintf("s%02d", s))
				conf = append(conf, fmt.Sprintf("c%02d", c))
			}
		}
	}
	return values, scen, conf
}

// The same seed gives the same calibration whatever the number of
// workers; another seed another.
func TestCalibrateIsDeterministic(t *testing.T) {
	values, scen, conf := calibrationStudy(6, 8, 4, 1, false)
	run := func(seed uint64, workers int) *Calibration {
		c, err := Calibrate(values, scen, conf, mTC, DefaultBootstrap, CalibrationOptions{Datasets: 40, Resamples: 200, Seed: seed, Workers: workers, Methods: Methods})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	a, b, other := run(3, 1), run(3, 3), run(4, 2)
	if !reflect.DeepEqual(a, b) {
		t.Errorf("1 worker and 3 differ:\n%+v\n%+v", a.Methods, b.Methods)
	}
	if reflect.DeepEqual(a.Methods, other.Methods) {
		t.Errorf("seeds 3 and 4 gave the same simulation: %+v", a.Methods)
	}
	if a.Methods[0].Method != Expanded || len(a.Methods) != 3 || a.Pairs != 3 || a.Configs != 6 || a.Scenarios != 8 || a.Runs != 6*8*4 {
		t.Errorf("calibration: %+v", a)
	}
	for _, mc := range a.Methods {
		if mc.Intervals != 40*6 || mc.Tests != 40*3 || mc.CoverageSE <= 0 || mc.SizeSE <= 0 {
			t.Errorf("%s: %+v", mc.Method, mc)
		}
	}
}

// The simulated values stay in the metric's range and, for a discrete
// metric, on its observed values; runs without the metric are left out;
// each configuration's truth is the mean of its simulated means, and the
// second of each null pair has the first's truth.
func TestCalibrationModel(t *testing.T) {
	values, scen, conf := calibrationStudy(5, 6, 3, 2, true)
	values[0][mTA] = math.NaN() // not eligible
	mod, err := fitCalModel(values, scen, conf, mTA, "TA")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(mod.support, []float64{0, 50, 100}) || len(mod.runs) != 5*6*3-1 || mod.runs[0] != 1 {
		t.Fatalf("support %v, %d runs from %d", mod.support, len(mod.runs), mod.runs[0])
	}
	rng := rand.New(rand.NewPCG(1, 2))
	out := make([]float64, len(mod.runs))
	sum := make([]float64, len(mod.configs))
	var n [5]float64
	const D = 4000
	for range D {
		mod.draw(rng, out)
		for k, x := range out {
			if x != 0 && x != 50 && x != 100 {
				t.Fatalf("simulated value %v off the support", x)
			}
			sum[mod.confOf[k]] += x
		}
	}
	for k := range out {
		n[mod.confOf[k]]++
	}
	for c := range sum {
		want := mod.truth(c, mod.shift[c])
		got := sum[c] / (n[c] * D)
		// A configuration mean's sd is about 10 points: 4,000 of them give
		// the mean to about 0.16.
		if math.Abs(got-want) > 0.8 {
			t.Errorf("config %d: mean of simulated means %.3f, truth %.3f", c, got, want)
		}
	}
	if len(mod.pairs) != 2 {
		t.Fatalf("pairs %v", mod.pairs)
	}
	for _, p := range mod.pairs {
		if a, b := mod.truth(p[0], mod.shift[p[0]]), mod.truth(p[1], mod.shift[p[1]]); math.Abs(a-b) > 1e-9 {
			t.Errorf("null pair %v: truths %v and %v", p, a, b)
		}
		if mod.mu[p[0]] > mod.mu[p[1]] {
			t.Errorf("pair %v not in the order of the means", p)
		}
	}
	// A continuous metric: in its scale, off the observed values.
	values, scen, conf = calibrationStudy(3, 5, 4, 3, false)
	mod, err = fitCalModel(values, scen, conf, mTC, "TC")
	if err != nil {
		t.Fatal(err)
	}
	if mod.support != nil || mod.lo != 0 || mod.hi != 100 {
		t.Errorf("TC: support %v, range [%v, %v]", mod.support, mod.lo, mod.hi)
	}
	// Errors: no run, one scenario.
	if _, err := fitCalModel(values, scen, conf, mTRJ, "TR-J"); err == nil {
		t.Error("a metric no run has: no error")
	}
	one := slices.Repeat([]string{"s"}, len(scen))
	if _, err := fitCalModel(values, one, conf, mTC, "TC"); err == nil {
		t.Error("one scenario: no error")
	}
	if _, err := Calibrate(values, scen, conf, mTC, DefaultBootstrap, CalibrationOptions{Methods: []string{"wald"}}); err == nil {
		t.Error("unknown method: no error")
	}
}

// With four scenarios the percentile interval covers far less than 95%:
// the calibration warns, names the metric and suggests the expanded
// percentile interval, whose coverage is nearest 95% (below it too: four
// scenarios drawn from four leave the bootstrap few distinct ones).
func TestCalibrationWarnsAndSuggests(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates 150 datasets × 3 methods (a few seconds)")
	}
	values, scen, conf := calibrationStudy(6, 4, 3, 4, false)
	boot := DefaultBootstrap
	boot.Method = Percentile
	c, err := Calibrate(values, scen, conf, mTC, boot, CalibrationOptions{Datasets: 150, Resamples: 400, Seed: 1, Methods: []string{Percentile, Expanded, BCa}})
	if err != nil {
		t.Fatal(err)
	}
	if c.Methods[0].Coverage >= CalibrationWarnBelow || c.Suggest != Expanded {
		t.Fatalf("coverage %+v, suggest %q", c.Methods, c.Suggest)
	}
	want := "TC: the percentile interval's simulated coverage at this design is"
	if !strings.HasPrefix(c.Warning, want) || !strings.Contains(c.Warning, "--ci expanded-percentile comes nearest 95%") {
		t.Errorf("warning %q", c.Warning)
	}
	// The method in use alone simulated: a warning, nothing to suggest.
	c, err = Calibrate(values, scen, conf, mTC, boot, CalibrationOptions{Datasets: 150, Resamples: 400, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(c.Warning, want) || c.Suggest != "" || strings.Contains(c.Warning, "--ci") {
		t.Errorf("percentile alone: %+v, warning %q", c.Methods, c.Warning)
	}
}

// calibrationCSV reads a testdata file of runs: config, scenario and
// the column named (an empty cell: no value).
func calibrationCSV(t *testing.T, file, column string, m int) ([][]float64, []string, []string) {
	f, err := os.Open(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := slices.Index(recs[0], column)
	var values [][]float64
	var scen, conf []string
	for _, r := range recs[1:] {
		row := slices.Repeat([]float64{math.NaN()}, numMetrics)
		if r[col] != "" {
			if row[m], err = strconv.ParseFloat(r[col], 64); err != nil {
				t.Fatal(err)
			}
		}
		values, scen, conf = append(values, row), append(scen, r[1]), append(conf, r[0])
	}
	return values, scen, conf
}

// The Go simulation against an independent one in numpy
// (testdata/make_calibration_refs.py, which writes its own generating
// model, bootstrap and intervals): on a balanced design with skewed
// values and on the sample corpus's TC and TA, the model's truths agree
// to 1e-9, and the coverage of the expanded percentile and percentile
// intervals and the paired test's size agree within three standard
// errors of their difference.
func TestCalibrationAgainstNumpy(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates 3 designs × 500 datasets × 2,000 resamples (about a minute)")
	}
	b, err := os.ReadFile("testdata/calibration_refs.json")
	if err != nil {
		t.Fatal(err)
	}
	var refs struct {
		Cases []struct {
			Name, File, Column string
			Datasets           int
			Resamples          int
			Pairs              int
			Truths             []float64
			Methods            map[string]map[string]float64
		}
	}
	if err := json.Unmarshal(b, &refs); err != nil {
		t.Fatal(err)
	}
	if len(refs.Cases) != 3 {
		t.Fatalf("%d cases", len(refs.Cases))
	}
	for _, rc := range refs.Cases {
		m := MetricIndex(rc.Column)
		values, scen, conf := calibrationCSV(t, rc.File, rc.Column, m)
		mod, err := fitCalModel(values, scen, conf, m, rc.Column)
		if err != nil {
			t.Fatal(err)
		}
		for c, want := range rc.Truths {
			if got := mod.truth(c, mod.shift[c]); math.Abs(got-want) > 1e-9 {
				t.Errorf("%s: config %s: truth %v, numpy %v", rc.Name, mod.configs[c], got, want)
			}
		}
		c, err := Calibrate(values, scen, conf, m, DefaultBootstrap, CalibrationOptions{Datasets: 500, Resamples: rc.Resamples, Seed: 1, Methods: []string{Expanded, Percentile}})
		if err != nil {
			t.Fatal(err)
		}
		if c.Pairs != rc.Pairs {
			t.Errorf("%s: %d pairs, numpy %d", rc.Name, c.Pairs, rc.Pairs)
		}
		for _, mc := range c.Methods {
			ref := rc.Methods[mc.Method]
			for _, q := range []struct {
				what    string
				go_, se float64
			}{{"coverage", mc.Coverage, mc.CoverageSE}, {"size", mc.Size, mc.SizeSE}} {
				want, wse := ref[q.what], ref[q.what+"_se"]
				tol := 3 * math.Hypot(q.se, wse)
				t.Logf("%-12s %-20s %-8s Go %.2f%% (se %.2f)  numpy %.2f%% (se %.2f)  difference %+.2f (3 se %.2f)", rc.Name, mc.Method, q.what,
					100*q.go_, 100*q.se, 100*want, 100*wse, 100*(q.go_-want), 100*tol)
				if math.Abs(q.go_-want) > tol {
					t.Errorf("%s, %s: %s %.4f, numpy %.4f: differ by more than 3 se (%.4f)", rc.Name, mc.Method, q.what, q.go_, want, tol)
				}
			}
		}
	}
}
