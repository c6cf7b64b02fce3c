package analysis

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"

	"gonum.org/v1/gonum/integrate/quad"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/gymlens/gymlens/analysis/stat"
)

// PowerDesign is a paired comparison of two configurations run on the
// same S scenarios × P personas × R repetitions, tested at level Alpha
// (two-sided) with power Power.
type PowerDesign struct {
	Scenarios, Personas, Repetitions int
	Alpha, Power                     float64
}

// PowerResult is a metric's minimum detectable effect in a design, and,
// for a difference Delta, the scenarios it needs.
type PowerResult struct {
	Metric string
	PowerDesign
	// SE is the standard error of the difference of the two means:
	//
	//	SE² = 2 (σ²_config×scenario / S + σ²_config×persona / (S P) + σ²_e / (S P R)),
	//
	// the scenario and persona effects, shared by both sides, cancelling.
	SE float64
	// MDE is the smallest true difference the two-sided paired t-test
	// over scenarios (S − 1 degrees of freedom) detects at level Alpha
	// with the power asked for: SE times the noncentrality λ at which the
	// noncentral t(S − 1, λ) passes ±t_{1−α/2, S−1} with that probability
	// (MDE, TPower). gymlens compare's test (the expanded percentile
	// interval, inverted) has the same power there within simulation
	// error (gymlens-bench size; docs/statistics.md).
	MDE float64
	// Delta and ScenariosNeeded: the fewest scenarios (with P and R as
	// given) whose MDE is at most Delta; 0 when Delta is not asked for, −1
	// when no number up to 100,000 is enough.
	Delta           float64
	ScenariosNeeded int
}

// MDE is the minimum detectable effect of a design for variance
// components v (in VarianceTerms' order): SE times the noncentrality at
// which the two-sided t-test with S − 1 degrees of freedom has the power
// asked for (TPower), found by bisection. (The textbook (t_{1−α/2} +
// t_power)·SE is lower: at α = .05 and power .8 by 0.13% at 10 scenarios
// and 1.2% at 5; at α = .01 by 1.9% and 5.7%; testdata/make_power_refs.py.)
func MDE(v [5]float64, d PowerDesign) (se, mde float64) {
	S, P, R := float64(d.Scenarios), float64(d.Personas), float64(d.Repetitions)
	se = math.Sqrt(2 * (v[2]/S + v[3]/(S*P) + v[4]/(S*P*R)))
	return se, stat.Portable(float64(mdeRoot(S-1, d.Alpha, d.Power) * se)) // found through TPower: Portable
}

// mdeRoots keeps the noncentrality the two-sided t-test with df degrees
// of freedom needs to reach a power at a level, by [3]float64{df, alpha,
// power}: a report asks it for every metric and group of one design, and
// each answer is a hundred quadratures.
var mdeRoots sync.Map

// mdeRoot is the noncentrality λ with TPower(df, t_{1−α/2, df}, λ) = power,
// by bisection.
func mdeRoot(df, alpha, power float64) float64 {
	key := [3]float64{df, alpha, power}
	if v, ok := mdeRoots.Load(key); ok {
		return v.(float64)
	}
	tc := stat.Portable(distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(1 - float64(alpha/2)))
	lo, hi := 0.0, 1.0
	for TPower(df, tc, hi) < power {
		hi *= 2
	}
	for range 100 {
		mid := (lo + hi) / 2
		if TPower(df, tc, mid) < power {
			lo = mid
		} else {
			hi = mid
		}
	}
	root := (lo + hi) / 2
	mdeRoots.Store(key, root)
	return root
}

// TPower is the power of the two-sided t-test with df degrees of freedom
// and critical value tc when the statistic's noncentrality is lambda:
// P(|T| > tc) for T = (Z + λ)/√(V/df), Z normal and V χ²(df), as
//
//	∫ [Φ̄(tc·u/√df − λ) + Φ(−tc·u/√df − λ)] · 2u·f_χ²(u²) du,
//
// over u = √V (which takes the density's singularity at 0 away), by
// Gauss–Legendre quadrature on [0, √(df + 40√(2 df) + 100)].
func TPower(df, tc, lambda float64) float64 {
	chi := distuv.ChiSquared{K: df}
	top := math.Sqrt(df + float64(40*math.Sqrt(2*df)) + 100)
	s := math.Sqrt(df)
	f := func(u float64) float64 {
		g := 2 * u * chi.Prob(u*u)
		return g * (float64(distuv.UnitNormal.Survival(float64(tc*u/s)-lambda)) + float64(distuv.UnitNormal.CDF(float64(-tc*u/s)-lambda)))
	}
	// Two panels: most of the mass lies near √df.
	mid := math.Sqrt(df)
	return stat.Portable(quad.Fixed(f, 0, mid, 200, nil, 0) + quad.Fixed(f, mid, top, 200, nil, 0))
}

// CheckPowerDesign says what is wrong with a design, or nil.
func CheckPowerDesign(d PowerDesign) error {
	switch {
	case d.Scenarios < 2:
		return Optionf("--scenarios: expected 2 or more, found %d", d.Scenarios)
	case d.Personas < 1 || d.Repetitions < 1:
		return Optionf("--personas and --repetitions: expected 1 or more, found %d and %d", d.Personas, d.Repetitions)
	case !(d.Alpha > 0 && d.Alpha < 1):
		return Optionf("--alpha: expected a level in (0, 1), found %g", d.Alpha)
	case !(d.Power > 0.5 && d.Power < 1):
		return Optionf("--power: expected a power in (0.5, 1), found %g", d.Power)
	}
	return nil
}

// Power computes a metric's MDE in design d from its variance components
// (VarianceOf's estimates), and with delta > 0 the scenarios needed.
func Power(vc *VarianceComponents, d PowerDesign, delta float64) (PowerResult, error) {
	if err := CheckPowerDesign(d); err != nil {
		return PowerResult{}, err
	}
	var v [5]float64
	for k, t := range vc.Terms {
		v[k] = t.Variance.Value
	}
	out := PowerResult{Metric: vc.Metric, PowerDesign: d, Delta: delta}
	out.SE, out.MDE = MDE(v, d)
	if delta > 0 {
		out.ScenariosNeeded = -1
		// The MDE falls as S grows: the first S below delta, by bisection.
		at := func(s int) float64 {
			e := d
			e.Scenarios = s
			_, m := MDE(v, e)
			return m
		}
		lo, hi := 2, 100000
		if at(hi) <= delta {
			for lo < hi {
				mid := (lo + hi) / 2
				if at(mid) <= delta {
					hi = mid
				} else {
					lo = mid + 1
				}
			}
			out.ScenariosNeeded = lo
		}
	} else if delta < 0 {
		return out, Optionf("--delta: expected a difference above 0, found %g", delta)
	}
	return out, nil
}

// String says a result in a sentence.
func (p PowerResult) String() string {
	return fmt.Sprintf("%s: MDE %.3g on %d scenarios × %d personas × %d repetitions", p.Metric, p.MDE, p.Scenarios, p.Personas, p.Repetitions)
}

// MetricUnit says in words the unit of a difference of a metric's values
// (an MDE, a --delta): points of its scale ("points of the 1–5 scale"),
// percentage points, or the scale's own unit.
func MetricUnit(name string) string {
	m, ok := MetricNamed(name)
	switch {
	case !ok:
		return ""
	case m.Scale == "percent":
		return "percentage points"
	case strings.Contains(m.Scale, "–"):
		return "points of the " + m.Scale + " scale"
	}
	return m.Scale
}

// ParseDeltas reads power's --delta: METRIC=D pairs, comma-separated,
// each a difference in that metric's unit (MetricUnit), for some of the
// metrics analysed (matched without regard to case); or one number D,
// taken only when one metric is analysed, since the metrics' scales
// differ (3 points of TC's 0–100 are not 3 of TR-J's 1–5). Empty: none.
func ParseDeltas(arg string, metrics []string) (map[string]float64, error) {
	out := map[string]float64{}
	if strings.TrimSpace(arg) == "" {
		return out, nil
	}
	if !strings.Contains(arg, "=") {
		if len(metrics) != 1 {
			var units []string
			for _, m := range metrics {
				units = append(units, m+" in "+MetricUnit(m))
			}
			return nil, Optionf("--delta %s: one number for %d metrics whose units differ (%s): give each its metric, --delta %s=%s,…, or name one metric with --metrics",
				arg, len(metrics), strings.Join(units, ", "), metrics[0], strings.TrimSpace(arg))
		}
		arg = metrics[0] + "=" + arg
	}
	for _, part := range strings.Split(arg, ",") {
		k, v, _ := strings.Cut(part, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		name := ""
		for _, m := range metrics {
			if strings.EqualFold(m, k) {
				name = m
			}
		}
		if name == "" {
			return nil, Optionf("--delta: %q is not among the metrics analysed (%s)", k, strings.Join(metrics, ", "))
		}
		if _, ok := out[name]; ok {
			return nil, Optionf("--delta: %s given twice", name)
		}
		d, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(d) || math.IsInf(d, 0) {
			return nil, Optionf("--delta %s=%s: expected a number (in %s)", name, v, MetricUnit(name))
		}
		if d <= 0 {
			return nil, Optionf("--delta %s=%s: expected a difference above 0", name, v)
		}
		out[name] = d
	}
	return out, nil
}
