package analysis

import (
	"bytes"
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/gymlens/gymlens/ingest/rows"
)

var updateGolden = flag.Bool("update", false, "rewrite testdata/statistics.golden")

// goldenCase is a fixed design (4 configurations × 12 scenarios × 3
// personas × 2 repetitions) with three correlated metrics drawn from a
// seeded generator: the same numbers on every machine.
func goldenCase() ([]rows.RunRow, [][]float64, []string, []Group) {
	rng := rand.New(rand.NewPCG(20, 12))
	var runs []rows.RunRow
	var values [][]float64
	var scen []string
	groups := make([]Group, 4)
	scenEffect := make([]float64, 12)
	for s := range scenEffect {
		scenEffect[s] = float64(rng.NormFloat64() * 0.1)
	}
	for c := range 4 {
		groups[c].Key = map[string]string{"config": fmt.Sprintf("c%d", c)}
		for s := range 12 {
			for p := range 3 {
				for r := range 2 {
					// float64(…) around each product: no fused multiply-add.
					tc := 0.5 + float64(0.05*float64(c)) + scenEffect[s] + float64(0.02*float64(p)) + float64(rng.NormFloat64()*0.08)
					ta := 0.3 + float64(0.4*tc) + float64(rng.NormFloat64()*0.05)
					trd := float64(rng.IntN(2))
					groups[c].Runs = append(groups[c].Runs, len(values))
					runs = append(runs, rows.RunRow{ConfigID: fmt.Sprintf("c%d", c), Scenario: fmt.Sprintf("s%d", s), Persona: fmt.Sprintf("p%d", p), Rep: r})
					values = append(values, []float64{tc, ta, trd})
					scen = append(scen, fmt.Sprintf("s%d", s))
				}
			}
		}
	}
	return runs, values, scen, groups
}

// statisticsGolden prints every statistic gymlens reports, computed on
// goldenCase, with all the digits a float64 has (%v prints the shortest
// text that reads back to the same bits), so that two machines agree on
// the file only if they agree on every bit.
func statisticsGolden() []byte {
	runs, values, scen, groups := goldenCase()
	missing := make([]Missing, len(values))
	var b bytes.Buffer
	line := func(name string, v any) { fmt.Fprintf(&b, "%s: %+v\n", name, v) }
	for _, method := range []string{"percentile", "bca"} {
		opt := BootstrapOptions{Resamples: 1000, Seed: 7, Method: method}
		line("summarize/"+method, Summarize(groups, values, missing, scen, []int{0, 1, 2}, opt))
	}
	two := BootstrapOptions{Resamples: 500, Seed: 7, TwoLevel: true}
	line("summarize/two-level", Summarize(groups, values, missing, scen, []int{0, 1}, two))
	opt := BootstrapOptions{Resamples: 1000, Seed: 11}
	pairs := []Pair{{A: "c0", B: "c1", RunsA: groups[0].Runs, RunsB: groups[1].Runs}, {A: "c0", B: "c3", RunsA: groups[0].Runs, RunsB: groups[3].Runs}}
	line("compare", Compare(pairs, values, scen, []int{0, 1}, opt))
	config := make([]string, len(runs))
	for i, r := range runs {
		config[i] = r.ConfigID
	}
	line("correlations", Correlations(values, scen, config, []int{0, 1, 2}, opt))
	line("run-correlations", RunCorrelationMatrix(values, scen, []int{0, 1}, opt))
	// Agreement: metric 0 as one judge, metric 1 rescaled as another.
	p := Paired{Score: "tc", Clusters: 12}
	sIndex := map[string]int{}
	for i, v := range values {
		if _, ok := sIndex[scen[i]]; !ok {
			sIndex[scen[i]] = len(sIndex)
		}
		p.A, p.B = append(p.A, v[0]), append(p.B, (v[1]-0.3)/0.4)
		p.Cluster, p.Config = append(p.Cluster, sIndex[scen[i]]), append(p.Config, i/(len(values)/4))
	}
	p.Configs = 4
	line("agreement/continuous", ContinuousAgreement(p, AgreementOptions{Kendall: true, ConfigLevel: true}, opt))
	bp := p
	bp.A, bp.B = nil, nil
	for i, v := range values {
		bp.A, bp.B = append(bp.A, v[2]), append(bp.B, float64(int(v[0]*10)%2))
		_ = i
	}
	line("agreement/binary", BinaryAgreement(bp, opt))
	kp := p
	kp.A, kp.B = nil, nil
	for _, v := range values {
		kp.A, kp.B = append(kp.A, float64(1+int(v[0]*4.99))), append(kp.B, float64(1+int((v[1]-0.3)/0.4*4.99)))
	}
	k, conf := KappaAgreement(kp, "quadratic", opt)
	line("agreement/kappa", k)
	line("agreement/confusion", conf)
	units := make([][]float64, 0, 40)
	for i := 0; i < 120; i += 3 {
		units = append(units, []float64{kp.A[i], kp.B[i], kp.A[i+1]})
	}
	a, how := AlphaWithInterval(units, "interval", opt)
	line("alpha/"+how, a)
	var icc [][]float64
	for i := 0; i+1 < len(values); i += 2 {
		icc = append(icc, []float64{values[i][0], values[i+1][0]})
	}
	line("icc1", ICC1(icc, nil))
	w := make([]float64, len(values))
	for i := range w {
		w[i] = float64(1 + i%3)
	}
	line("weighted-pearson", WeightedPearson(p.A, p.B, w))
	line("ppi", PPIMean(p.B[:200], p.A[200:], p.B[200:], 0.95))
	vopt := BootstrapOptions{Resamples: 300, Seed: 5}
	vc, err := VarianceOf(runs, values, 0, vopt)
	if err != nil {
		line("variance", err)
	} else {
		line("variance", *vc)
		for _, d := range []PowerDesign{{Scenarios: 12, Personas: 3, Repetitions: 2, Alpha: 0.05, Power: 0.8}, {Scenarios: 30, Personas: 3, Repetitions: 1, Alpha: 0.01, Power: 0.9}} {
			pr, err := Power(vc, d, 0.03)
			line("power", fmt.Sprintf("%+v SE:%v MDE:%v Delta:%v ScenariosNeeded:%v err:%v", pr.PowerDesign, pr.SE, pr.MDE, pr.Delta, pr.ScenariosNeeded, err))
		}
	}
	// REML (an unbalanced design) is not here: its search stops where
	// BLAS's sums, which differ between machines in their last bits, say
	// (docs/statistics.md).
	line("tpower", TPower(20, 2.086, 1.7))
	line("ranks", Ranks(groups, values, scen, 0, BootstrapOptions{Resamples: 1000, Seed: 3}))
	for _, m := range []int{0, 2} { // continuous, and discrete (0 or 1)
		c, err := Calibrate(values, scen, config, m, BootstrapOptions{}, CalibrationOptions{Datasets: 20, Resamples: 200, Seed: 9, Methods: Methods})
		if err != nil {
			line("calibration", err)
		} else {
			line("calibration", *c)
		}
	}
	return b.Bytes()
}

// The statistics golden: every statistic's bits on goldenCase. A change
// that moves any of them, on any machine, shows here (go test -run
// StatisticsGolden -update rewrites the file after a deliberate change).
func TestStatisticsGolden(t *testing.T) {
	got := statisticsGolden()
	if out := os.Getenv("GYMLENS_STATISTICS_OUT"); out != "" {
		os.WriteFile(out, got, 0o644) // for the arm64 run's report
	}
	path := filepath.Join("testdata", "statistics.golden")
	if *updateGolden {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		gl, wl := bytes.Split(got, []byte("\n")), bytes.Split(want, []byte("\n"))
		for i := 0; i < len(gl) && i < len(wl); i++ {
			if !bytes.Equal(gl[i], wl[i]) {
				t.Fatalf("%s (GOARCH %s) differs at line %d:\n got %.300s\nwant %.300s", path, runtime.GOARCH, i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("%s (GOARCH %s): %d lines, want %d", path, runtime.GOARCH, len(gl), len(wl))
	}
}

// The statistics on arm64. Go may fuse a multiply and an add into one
// rounding there (not on amd64), so the statistics' own arithmetic is
// written with explicit float64 conversions around products, which
// forbid it. This test builds the package's test binary for arm64 and
// (1) reads the compiler's assembly: no fused multiply-add may come from
// a non-test file of analysis or analysis/stat; (2) runs
// TestStatisticsGolden in it under Debian's qemu-user, so that the
// golden's bits are checked on arm64 too (skipped, saying so, without
// qemu-aarch64).
func TestStatisticsOnArm64(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the arm64 build takes a while")
	}
	if runtime.GOARCH == "arm64" {
		t.Skip("running on arm64: TestStatisticsGolden is the check")
	}
	dir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "analysis.arm64.test")
	build := exec.Command("go", "test", "-c", "-o", bin, "-gcflags=github.com/gymlens/gymlens/analysis/...=-S", ".")
	build.Env = append(os.Environ(), "GOARCH=arm64", "CGO_ENABLED=0")
	var asm, errs bytes.Buffer
	build.Stdout, build.Stderr = &errs, &asm
	if err := build.Run(); err != nil {
		t.Fatalf("building the arm64 test binary: %v\n%.3000s", err, errs.String()+asm.String())
	}
	fused := map[string]bool{}
	for _, l := range bytes.Split(asm.Bytes(), []byte("\n")) {
		if !fusedOp.Match(l) {
			continue
		}
		if m := asmSource.FindSubmatch(l); m != nil {
			src := string(m[1])
			if strings.HasPrefix(src, dir+string(filepath.Separator)) && !strings.HasSuffix(string(m[2]), "_test.go") {
				rel, _ := filepath.Rel(dir, src)
				fused[rel+":"+string(m[3])] = true
			}
		}
	}
	if len(fused) > 0 {
		t.Errorf("fused multiply-adds on arm64 at %s: put float64(…) around the product", strings.Join(slices.Sorted(maps.Keys(fused)), ", "))
	}
	if len(asm.Bytes()) < 1000 {
		t.Fatalf("the compiler printed no assembly (%d bytes): the check above saw nothing", asm.Len())
	}
	qemu, err := exec.LookPath("qemu-aarch64")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("qemu-aarch64 not installed under CI (.ci/run installs qemu-user)")
		}
		t.Skip("qemu-aarch64 not installed (Debian: apt-get install qemu-user): the golden is not run on arm64")
	}
	got := filepath.Join(t.TempDir(), "statistics.arm64")
	run := exec.Command(qemu, bin, "-test.run", "^TestStatisticsGolden$", "-test.count", "1")
	run.Env = append(os.Environ(), "GYMLENS_STATISTICS_OUT="+got)
	if out, err := run.CombinedOutput(); err != nil {
		// Every statistic that differs, by name.
		a, _ := os.ReadFile(got)
		w, _ := os.ReadFile(filepath.Join("testdata", "statistics.golden"))
		al, wl := bytes.Split(a, []byte("\n")), bytes.Split(w, []byte("\n"))
		for i := 0; i < len(al) && i < len(wl); i++ {
			if !bytes.Equal(al[i], wl[i]) {
				name, _, _ := bytes.Cut(wl[i], []byte(":"))
				t.Errorf("arm64 differs at line %d (%s)", i+1, name)
			}
		}
		t.Fatalf("the statistics golden under qemu-aarch64: %v\n%.2000s", err, out)
	}
}

var (
	fusedOp   = regexp.MustCompile(`\bF(N?)M(ADD|SUB)[DS]\b`)
	asmSource = regexp.MustCompile(`\((/[^():]*/([^/():]+\.go)):(\d+)\)`)
)
