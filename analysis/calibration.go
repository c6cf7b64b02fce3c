package analysis

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/gymlens/gymlens/analysis/stat"
)

// DefaultCalibration is the simulation's size unless asked otherwise
// (metrics --calibration; the report's is reports.ReportCalibration):
// on the sample, 1,000 datasets give a coverage near 95% to a Monte
// Carlo standard error of 0.15 to 0.7 points (docs/statistics.md).
var DefaultCalibration = CalibrationOptions{Datasets: 1000, Resamples: 2000, Seed: 1}

// CalibrationWarnBelow is the simulated coverage under which the
// calibration warns and suggests another interval method.
const CalibrationWarnBelow = 0.93

// calibrationMaxSupport is the most distinct run values a metric may have
// to be simulated as discrete (its values kept on the observed ones):
// TA's {0, ½, 1} and TR-D's shares of a few tasks; TC and TR-J are
// continuous.
const calibrationMaxSupport = 25

// CalibrationOptions sizes the simulation of Calibrate.
type CalibrationOptions struct {
	Datasets  int    // simulated datasets; 0: DefaultCalibration's
	Resamples int    // bootstrap resamples of each interval; 0: DefaultCalibration's
	Seed      uint64 // seeds the datasets and their bootstraps
	// Methods are the interval methods simulated (nil: the bootstrap's
	// own method alone).
	Methods []string
	Workers int // 0: GOMAXPROCS; the results do not depend on it
}

// MethodCalibration is one interval method's coverage and paired test
// size in the simulation.
type MethodCalibration struct {
	Method string
	// Coverage is the share of the configurations' intervals that cover
	// their simulated truth; CoverageSE its Monte Carlo standard error,
	// from the spread of the datasets' shares (a dataset's intervals
	// share its scenarios).
	Coverage, CoverageSE float64
	Intervals            int // intervals counted (configurations × datasets with an interval)
	// Size is the share of paired comparisons with no true difference
	// whose p-value is below 1 − level (the paired test's size); SizeSE
	// its Monte Carlo standard error, from the datasets' shares.
	Size, SizeSE float64
	Tests        int
}

// Calibration is the simulated coverage and test size of one metric's
// intervals at a study's own design.
type Calibration struct {
	Metric                   string
	Configs, Scenarios, Runs int // of the design: configurations, scenarios, runs with the metric
	Pairs                    int // null pairs in each dataset
	Datasets, Resamples      int
	Seed                     uint64
	Level                    float64
	TwoLevel                 bool
	// Lo and Hi bound the simulated run values; Support, when not nil,
	// holds the values a discrete metric takes (the observed ones).
	Lo, Hi  float64
	Support []float64
	// Methods[0] is the bootstrap's own method; any others follow.
	Methods []MethodCalibration
	// Warning, when not empty, says the method in use covers less than
	// CalibrationWarnBelow and which method comes nearest the level.
	Warning string
	// Suggest is the method whose coverage is nearest the level, when
	// Warning is set.
	Suggest string
}

// calModel is the generating model of one metric, fitted to the study.
type calModel struct {
	S       int              // scenarios (slots and sources)
	configs []string         // by index
	mu      []float64        // each configuration's mean over its runs
	u       [][]float64      // u[c][s]: configuration c's scenario effect in source scenario s (shrunken, centred, rescaled)
	pool    [][]float64      // run-level residuals of each configuration
	lo, hi  float64          // range of a run value
	support []float64        // sorted values of a discrete metric, nil otherwise
	runs    []int            // runs with the metric (places in values)
	confOf  []int            // configuration of each of runs
	slotOf  []int            // scenario slot of each of runs
	slots   []string         // scenario names, by slot
	cells   map[[2]int][]int // (config, slot) → runs (places in runs)
	shift   []float64        // added to a configuration's mean (the null pairs)
	pairs   [][2]int         // null pairs: the second's truth equals the first's
}

// Calibrate simulates, for metric m (a place in the rows of values), how
// often the intervals of a table of configuration means cover the truth
// and how often the paired test rejects a true null, at the study's own
// design: its configurations, scenarios and eligible runs (those with a
// value) as they are. Each simulated dataset
//
//   - draws, for each of the study's scenarios, a source scenario from the
//     study's S with replacement, and gives configuration c there its
//     mean μ_c plus its effect u_{c,s} in the source: the deviation of its
//     scenario mean from μ_c shrunken towards 0 by τ²_c/(τ²_c + σ²_c/n_cs)
//     (τ²_c the variance of its scenario means less their noise, σ²_c its
//     within-scenario variance), centred and rescaled to variance τ²_c
//     (Carpenter, Goldstein and Rasbash 2003), every configuration's
//     effect from the same source so that their correlation is kept;
//   - adds to each run a residual drawn from the configuration's observed
//     run-level residuals (run minus its scenario mean, × √(n/(n−1)));
//   - keeps the value inside the metric's range, and on its observed
//     values when it has at most calibrationMaxSupport of them (rounded to
//     one of the two nearest at random, so that the mean is kept).
//
// Each configuration's truth is its expected mean under that model,
// computed exactly (an average over the S sources and the residuals).
// The configurations, ordered by mean, are paired (first and second,
// third and fourth, …) and the second of each pair shifted so that its
// truth equals the first's: those pairs have no true difference. Every
// dataset goes through Summarize (the tables' intervals) and Compare
// (the paired test) with opt's level and two-level choice, once per
// method. Dataset d draws from a generator seeded by (^Seed, d) and its
// bootstraps are seeded by Seed + d (whose resample b draws from (Seed +
// d, b): no stream of the data is one of the bootstraps'), so the
// results do not depend on the number of workers.
func Calibrate(values [][]float64, scenario, config []string, m int, boot BootstrapOptions, opt CalibrationOptions) (*Calibration, error) {
	boot = boot.WithDefaults()
	if opt.Datasets <= 0 {
		opt.Datasets = DefaultCalibration.Datasets
	}
	if opt.Resamples <= 0 {
		opt.Resamples = DefaultCalibration.Resamples
	}
	if opt.Workers <= 0 {
		opt.Workers = runtime.GOMAXPROCS(0)
	}
	methods := opt.Methods
	if len(methods) == 0 {
		methods = []string{boot.Method}
	}
	for _, me := range methods {
		if !slices.Contains(stat.Methods, me) {
			return nil, Optionf("calibration: unknown interval method %q: expected one of %s", me, strings.Join(stat.Methods, ", "))
		}
	}
	name := MetricName(m)
	mod, err := fitCalModel(values, scenario, config, m, name)
	if err != nil {
		return nil, err
	}
	cal := &Calibration{Metric: name, Configs: len(mod.configs), Scenarios: mod.S, Runs: len(mod.runs), Pairs: len(mod.pairs),
		Datasets: opt.Datasets, Resamples: opt.Resamples, Seed: opt.Seed, Level: boot.Level, TwoLevel: boot.TwoLevel,
		Lo: mod.lo, Hi: mod.hi, Support: mod.support}
	truth := make([]float64, len(mod.configs))
	for c := range truth {
		truth[c] = mod.truth(c, mod.shift[c])
	}
	// Each dataset's counts, by method: covered, intervals, rejected, tests.
	counts := make([][]int, opt.Datasets)
	groups := make([]Group, len(mod.configs))
	for c := range groups {
		groups[c] = Group{Key: map[string]string{"config": mod.configs[c]}}
	}
	for k := range mod.runs {
		groups[mod.confOf[k]].Runs = append(groups[mod.confOf[k]].Runs, k)
	}
	scen := make([]string, len(mod.runs))
	for k := range mod.runs {
		scen[k] = mod.slots[mod.slotOf[k]]
	}
	pairs := make([]Pair, len(mod.pairs))
	for p, pr := range mod.pairs {
		pairs[p] = Pair{A: mod.configs[pr[0]], B: mod.configs[pr[1]], RunsA: groups[pr[0]].Runs, RunsB: groups[pr[1]].Runs}
	}
	missing := make([]Missing, len(mod.runs))
	alpha := 1 - boot.Level
	var wg sync.WaitGroup
	next := make(chan int)
	for range opt.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			flat := make([]float64, len(mod.runs))
			vals := make([][]float64, len(mod.runs))
			for k := range vals {
				vals[k] = flat[k : k+1 : k+1]
			}
			src := rand.NewPCG(0, 0)
			rng := rand.New(src)
			for d := range next {
				src.Seed(^opt.Seed, uint64(d)) // apart from the bootstraps' (Seed + d, b)
				mod.draw(rng, flat)
				cnt := make([]int, 4*len(methods))
				for mi, me := range methods {
					bo := BootstrapOptions{Resamples: opt.Resamples, Level: boot.Level, Method: me, Seed: opt.Seed + uint64(d), Workers: 1, TwoLevel: boot.TwoLevel}
					for _, e := range Summarize(groups, vals, missing, scen, []int{0}, bo) {
						c := slices.Index(mod.configs, e.Group["config"])
						if math.IsNaN(e.Lo) || math.IsNaN(e.Hi) {
							continue
						}
						cnt[4*mi+1]++
						if e.Lo <= truth[c] && truth[c] <= e.Hi {
							cnt[4*mi]++
						}
					}
					if len(pairs) > 0 {
						bo.TwoLevel = false // the paired test resamples scenarios alone
						for _, cmp := range Compare(pairs, vals, scen, []int{0}, bo) {
							if math.IsNaN(cmp.P) {
								continue
							}
							cnt[4*mi+3]++
							if cmp.P < alpha {
								cnt[4*mi+2]++
							}
						}
					}
				}
				counts[d] = cnt
			}
		}()
	}
	for d := range opt.Datasets {
		next <- d
	}
	close(next)
	wg.Wait()
	for mi, me := range methods {
		mc := MethodCalibration{Method: me}
		mc.Coverage, mc.CoverageSE, mc.Intervals = shareAcross(counts, 4*mi, 4*mi+1)
		mc.Size, mc.SizeSE, mc.Tests = shareAcross(counts, 4*mi+2, 4*mi+3)
		cal.Methods = append(cal.Methods, mc)
	}
	cal.warn()
	return cal, nil
}

// shareAcross is the share Σ hits / Σ of over the datasets, and its Monte
// Carlo standard error: the datasets are independent but a dataset's
// intervals are not (they share its scenarios), so the error is a ratio
// estimator's over datasets, √(Σ (hits_d − p·of_d)² / (D(D−1))) / mean of_d.
func shareAcross(counts [][]int, hit, of int) (p, se float64, n int) {
	var h int
	for _, c := range counts {
		h, n = h+c[hit], n+c[of]
	}
	if n == 0 {
		return math.NaN(), math.NaN(), 0
	}
	p = float64(h) / float64(n)
	D := float64(len(counts))
	if D < 2 {
		return p, math.NaN(), n
	}
	var ss float64
	for _, c := range counts {
		r := float64(c[hit]) - float64(p*float64(c[of]))
		ss += float64(r * r)
	}
	return p, math.Sqrt(ss/(D*(D-1))) / (float64(n) / D), n
}

// warn sets Warning and Suggest when the method in use covers less than
// CalibrationWarnBelow.
func (cal *Calibration) warn() {
	own := cal.Methods[0]
	if math.IsNaN(own.Coverage) || own.Coverage >= CalibrationWarnBelow {
		return
	}
	best := own
	for _, mc := range cal.Methods[1:] {
		if math.Abs(mc.Coverage-cal.Level) < math.Abs(best.Coverage-cal.Level) {
			best = mc
		}
	}
	cal.Warning = fmt.Sprintf("%s: the %s interval's simulated coverage at this design is %.1f%%, below %g%%", cal.Metric, own.Method,
		100*own.Coverage, 100*CalibrationWarnBelow)
	if best.Method != own.Method {
		cal.Suggest = best.Method
		cal.Warning += fmt.Sprintf("; --ci %s comes nearest %g%% (%.1f%%)", best.Method, 100*cal.Level, 100*best.Coverage)
	} else if len(cal.Methods) > 1 {
		cal.Warning += "; no other --ci choice comes nearer"
	}
}

// fitCalModel fits the generating model of Calibrate to the study's runs.
func fitCalModel(values [][]float64, scenario, config []string, m int, name string) (*calModel, error) {
	mod := &calModel{cells: map[[2]int][]int{}}
	confIdx, slotIdx := map[string]int{}, map[string]int{}
	var obs []float64
	for i, row := range values {
		x := row[m]
		if math.IsNaN(x) {
			continue
		}
		c, ok := confIdx[config[i]]
		if !ok {
			c = len(mod.configs)
			confIdx[config[i]] = c
			mod.configs = append(mod.configs, config[i])
		}
		s, ok := slotIdx[scenario[i]]
		if !ok {
			s = len(mod.slots)
			slotIdx[scenario[i]] = s
			mod.slots = append(mod.slots, scenario[i])
		}
		k := len(mod.runs)
		mod.runs, mod.confOf, mod.slotOf = append(mod.runs, i), append(mod.confOf, c), append(mod.slotOf, s)
		mod.cells[[2]int{c, s}] = append(mod.cells[[2]int{c, s}], k)
		obs = append(obs, x)
	}
	if len(mod.runs) == 0 {
		return nil, NoDataf("calibration of %s: no run has it", name)
	}
	if len(mod.slots) < 2 {
		return nil, NoDataf("calibration of %s: one scenario: nothing to resample", name)
	}
	C, S := len(mod.configs), len(mod.slots)
	mod.S = S
	// The range: the metric's scale, the observed values of a discrete one.
	distinct := map[float64]bool{}
	for _, x := range obs {
		distinct[math.Round(x/TiePrecision)*TiePrecision] = true
	}
	if len(distinct) <= calibrationMaxSupport {
		for x := range distinct {
			mod.support = append(mod.support, x)
		}
		sort.Float64s(mod.support)
		mod.lo, mod.hi = mod.support[0], mod.support[len(mod.support)-1]
	} else {
		mod.lo, mod.hi = slices.Min(obs), slices.Max(obs)
		if reg, ok := MetricNamed(name); ok {
			switch reg.Scale {
			case "0–100", "percent":
				mod.lo, mod.hi = 0, 100
			case "1–5":
				mod.lo, mod.hi = 1, 5
			}
		}
	}
	mod.mu = make([]float64, C)
	mod.u = make([][]float64, C)
	mod.pool = make([][]float64, C)
	mod.shift = make([]float64, C)
	var all []float64
	for c := range C {
		// Scenario means, the within-scenario variance and the residuals.
		mean := make([]float64, S)
		n := make([]float64, S)
		var sum, runs, ss, df float64
		for s := range S {
			ks := mod.cells[[2]int{c, s}]
			for _, k := range ks {
				mean[s] += obs[k]
			}
			n[s] = float64(len(ks))
			if n[s] == 0 {
				continue
			}
			sum += mean[s]
			runs += n[s]
			mean[s] /= n[s]
			for _, k := range ks {
				r := obs[k] - mean[s]
				ss += float64(r * r)
				if n[s] > 1 {
					mod.pool[c] = append(mod.pool[c], float64(r*math.Sqrt(n[s]/(n[s]-1))))
				}
			}
			df += n[s] - 1
		}
		mod.mu[c] = sum / runs
		all = append(all, mod.pool[c]...)
		var within float64
		if df > 0 {
			within = ss / df
		}
		// τ²: the scenario means' variance less their mean noise.
		var m1, m2, noise, k float64
		for s := range S {
			if n[s] > 0 {
				m1 += mean[s]
				k++
			}
		}
		if k > 0 {
			m1 /= k
		}
		for s := range S {
			if n[s] > 0 {
				d := mean[s] - m1
				m2 += float64(d * d)
				noise += within / n[s]
			}
		}
		tau2 := 0.0
		if k > 1 {
			tau2 = max(0, m2/(k-1)-noise/k)
		}
		u := make([]float64, S)
		var um float64
		for s := range S {
			if n[s] > 0 && tau2 > 0 {
				u[s] = (mean[s] - mod.mu[c]) * tau2 / (tau2 + within/n[s])
			}
			um += u[s]
		}
		um /= float64(S)
		var uv float64
		for s := range S {
			u[s] -= um
			uv += float64(u[s] * u[s])
		}
		uv /= float64(S)
		f := 0.0
		if uv > 0 {
			f = math.Sqrt(tau2 / uv)
		}
		for s := range S {
			u[s] *= f
		}
		mod.u[c] = u
	}
	for c := range C {
		if len(mod.pool[c]) == 0 { // every scenario one run: the others' residuals
			mod.pool[c] = all
		}
		if len(mod.pool[c]) == 0 {
			mod.pool[c] = []float64{0}
		}
	}
	// The null pairs: neighbours by mean, among configurations with runs
	// in two scenarios or more; the second shifted to the first's truth.
	var order []int
	for c := range C {
		var k int
		for s := range S {
			if len(mod.cells[[2]int{c, s}]) > 0 {
				k++
			}
		}
		if k >= 2 {
			order = append(order, c)
		}
	}
	sort.SliceStable(order, func(a, b int) bool { return mod.mu[order[a]] < mod.mu[order[b]] })
	for p := 0; p+1 < len(order); p += 2 {
		a, b := order[p], order[p+1]
		mod.pairs = append(mod.pairs, [2]int{a, b})
		mod.shift[b] = mod.solveShift(b, mod.truth(a, 0))
	}
	return mod, nil
}

// value is a run's simulated value from its unbounded one x: kept inside
// [lo, hi], and for a discrete metric rounded to one of the two nearest
// observed values with the probabilities that keep its mean.
func (mod *calModel) value(x float64, rng *rand.Rand) float64 {
	x = min(mod.hi, max(mod.lo, x))
	if mod.support == nil {
		return x
	}
	j := sort.SearchFloat64s(mod.support, x) // support[j-1] < x ≤ support[j]
	if j < len(mod.support) && mod.support[j] == x {
		return x
	}
	a, b := mod.support[j-1], mod.support[j]
	if rng.Float64()*(b-a) < x-a {
		return b
	}
	return a
}

// truth is configuration c's expected mean with its mean shifted by
// delta: (1/S) Σ_s mean over its residuals e of clamp(μ_c + delta + u_cs + e)
// (the rounding of a discrete metric keeps the mean).
func (mod *calModel) truth(c int, delta float64) float64 {
	var t float64
	for s := range mod.S {
		base := mod.mu[c] + delta + mod.u[c][s]
		var sum float64
		for _, e := range mod.pool[c] {
			sum += min(mod.hi, max(mod.lo, base+e))
		}
		t += sum / float64(len(mod.pool[c]))
	}
	return t / float64(mod.S)
}

// solveShift finds the shift of configuration c's mean that makes its
// truth target, by bisection (the truth is nondecreasing in the shift).
func (mod *calModel) solveShift(c int, target float64) float64 {
	lo, hi := -(mod.hi - mod.lo), mod.hi-mod.lo
	for range 100 {
		mid := float64((lo + hi) / 2) // rounded: a halving fuses with the sums after it
		if mod.truth(c, mid) < target {
			lo = mid
		} else {
			hi = mid
		}
		if hi-lo < 1e-12*max(1, mod.hi-mod.lo) {
			break
		}
	}
	return float64((lo + hi) / 2)
}

// draw fills out (a value per run with the metric) with one simulated
// dataset.
func (mod *calModel) draw(rng *rand.Rand, out []float64) {
	src := make([]int, mod.S)
	for s := range src {
		src[s] = rng.IntN(mod.S)
	}
	for k := range mod.runs {
		c := mod.confOf[k]
		pool := mod.pool[c]
		x := mod.mu[c] + mod.shift[c] + mod.u[c][src[mod.slotOf[k]]] + pool[rng.IntN(len(pool))]
		out[k] = mod.value(x, rng)
	}
}
