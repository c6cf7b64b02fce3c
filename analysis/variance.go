package analysis

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/gymlens/gymlens/analysis/stat"
	"github.com/gymlens/gymlens/ingest/rows"
)

// Variance components of a metric's run values, by term of the design.
const (
	VarScenario       = "scenario"
	VarPersona        = "persona"         // within its scenario
	VarConfigScenario = "config×scenario" // a configuration's own luck with a scenario
	VarConfigPersona  = "config×persona"
	VarResidual       = "repetition" // the residual: runs of one configuration, scenario and persona
)

// VarianceTerms are the random terms, in the order reported.
var VarianceTerms = []string{VarScenario, VarPersona, VarConfigScenario, VarConfigPersona, VarResidual}

// VarianceComponents is where a metric's variance comes from, in a
// design of configurations (fixed) × scenarios × personas within each
// scenario × repetitions, with random scenario, persona, configuration ×
// scenario and configuration × persona effects and a residual:
//
//	y = μ + config + scenario + persona(scenario) + config×scenario + config×persona(scenario) + e.
type VarianceComponents struct {
	Metric string
	// Group is the breakdown's group (--by), nil for all the runs.
	Group                        map[string]string
	Method                       string // the estimator used
	Configs, Scenarios, Personas int
	Repetitions                  int
	Terms                        []VarianceTerm
	// ICC is the correlation of two runs of one configuration in one
	// scenario (other personas): (σ²_scenario + σ²_config×scenario) /
	// total. DesignEffect is how many times the variance of a
	// configuration's mean exceeds what runs taken as independent would
	// give: Var(mean) / (total / runs).
	ICC, DesignEffect Estimate
	Notes             []string
}

// VarianceTerm is one term's variance and share of the total.
type VarianceTerm struct {
	Term     string
	Variance Estimate
	Share    Estimate // of the sum of the terms
}

// design is a balanced design's values: y[c][s][p][r].
type design struct {
	C, S, P, R int
	y          [][][][]float64
	// Within each scenario (prepare): ycs[c][s], ys[s], and its sums of
	// squares of persona, configuration × persona and residual.
	ycs                [][]float64
	ys, ssP, ssCP, ssE []float64
}

// balancedDesign lays the runs' values of one metric out as a balanced
// design, or says why they are not one.
func balancedDesign(runs []rows.RunRow, values [][]float64, metric int) (*design, []string, error) {
	type cell struct{ c, s, p string }
	cells := map[cell][]float64{}
	configs, scenarios := map[string]bool{}, map[string]bool{}
	personas := map[string]map[string]bool{}
	for i, r := range runs {
		x := values[i][metric]
		if math.IsNaN(x) {
			continue
		}
		k := cell{r.ConfigID, r.Scenario, r.Persona}
		cells[k] = append(cells[k], x)
		configs[r.ConfigID], scenarios[r.Scenario] = true, true
		if personas[r.Scenario] == nil {
			personas[r.Scenario] = map[string]bool{}
		}
		personas[r.Scenario][r.Persona] = true
	}
	cs, ss := slices.Sorted(maps.Keys(configs)), slices.Sorted(maps.Keys(scenarios))
	if len(cs) < 2 || len(ss) < 2 {
		return nil, nil, NoDataf("variance: %d configurations and %d scenarios with a value: at least two of each are needed", len(cs), len(ss))
	}
	P := len(personas[ss[0]])
	// The runs per cell most cells have (a cell that differs is named).
	sizes := map[int]int{}
	for _, v := range cells {
		sizes[len(v)]++
	}
	R := 0
	for n, k := range sizes {
		if k > sizes[R] || k == sizes[R] && n > R {
			R = n
		}
	}
	d := &design{C: len(cs), S: len(ss), P: P, R: R}
	for _, c := range cs {
		var byS [][][]float64
		for _, s := range ss {
			ps := slices.Sorted(maps.Keys(personas[s]))
			if len(ps) != P {
				return nil, cs, unbalanced(fmt.Sprintf("scenario %s has %d personas, %s %d", s, len(ps), ss[0], P))
			}
			var byP [][]float64
			for _, p := range ps {
				v := cells[cell{c, s, p}]
				if len(v) != R {
					return nil, cs, unbalanced(fmt.Sprintf("%s on %s/%s has %d runs with a value, %d elsewhere", c, s, p, len(v), R))
				}
				byP = append(byP, v)
			}
			byS = append(byS, byP)
		}
		d.y = append(d.y, byS)
	}
	if R < 2 {
		return nil, cs, NoDataf("variance: %d repetitions: two or more are needed to tell the repetition from the configuration × persona term", R)
	}
	d.prepare() // before any resample: the bootstrap's workers only read it
	return d, cs, nil
}

// anova is the method-of-moments estimate of the five components from the
// expected mean squares of the balanced design, each scenario weighted
// w[s] times (a cluster-bootstrap resample; nil: once), in VarianceTerms'
// order. Negative estimates are returned as they are. What lies within a
// scenario (its means and sums of squares) is computed once (prepare), so
// a resample costs O(configurations × scenarios).
func (d *design) anova(w []float64) [5]float64 {
	if d.ys == nil {
		d.prepare()
	}
	C, P, R := float64(d.C), float64(d.P), float64(d.R)
	weight := func(s int) float64 {
		if w == nil {
			return 1
		}
		return w[s]
	}
	var S float64
	for s := 0; s < d.S; s++ {
		S += weight(s)
	}
	yc := make([]float64, d.C)
	var g float64
	for s := 0; s < d.S; s++ {
		ws := weight(s)
		for c := 0; c < d.C; c++ {
			yc[c] += ws * d.ycs[c][s] / S
		}
		g += ws * d.ys[s] / S
	}
	var ssS, ssP, ssCS, ssCP, ssE float64
	for s := 0; s < d.S; s++ {
		ws := weight(s)
		if ws == 0 {
			continue
		}
		ssS += float64(ws * C * P * R * (d.ys[s] - g) * (d.ys[s] - g))
		ssP += float64(ws * d.ssP[s])
		ssCP += float64(ws * d.ssCP[s])
		ssE += float64(ws * d.ssE[s])
		for c := 0; c < d.C; c++ {
			x := d.ycs[c][s] - yc[c] - d.ys[s] + g
			ssCS += float64(ws * P * R * x * x)
		}
	}
	msS := ssS / (S - 1)
	msP := ssP / (S * (P - 1))
	msCS := ssCS / ((C - 1) * (S - 1))
	msCP := ssCP / ((C - 1) * S * (P - 1))
	msE := ssE / (C * S * P * (R - 1))
	if d.P == 1 {
		// One persona per scenario (PARE's runs have none): the persona
		// terms are not in the design, 0 by construction.
		msP, msCP = msE, msE
	}
	return [5]float64{
		(msS - msCS - msP + msCP) / (C * P * R), // scenario
		(msP - msCP) / (C * R),                  // persona
		(msCS - msCP) / (P * R),                 // config × scenario
		(msCP - msE) / R,                        // config × persona
		msE,                                     // repetition
	}
}

// prepare computes what lies within each scenario: the configuration ×
// scenario and scenario means, and the scenario's sums of squares of the
// persona, configuration × persona and residual terms (which depend on
// no other scenario).
func (d *design) prepare() {
	C, P, R := float64(d.C), float64(d.P), float64(d.R)
	d.ys, d.ssP, d.ssCP, d.ssE = make([]float64, d.S), make([]float64, d.S), make([]float64, d.S), make([]float64, d.S)
	d.ycs = make([][]float64, d.C)
	for c := range d.ycs {
		d.ycs[c] = make([]float64, d.S)
	}
	for s := 0; s < d.S; s++ {
		ycsp := make([][]float64, d.C)
		ysp := make([]float64, d.P)
		for c := 0; c < d.C; c++ {
			ycsp[c] = make([]float64, d.P)
			for p := 0; p < d.P; p++ {
				ycsp[c][p] = mean(d.y[c][s][p])
				d.ycs[c][s] += ycsp[c][p] / P
				ysp[p] += ycsp[c][p] / C
			}
		}
		for p := 0; p < d.P; p++ {
			d.ys[s] += ysp[p] / P
		}
		for p := 0; p < d.P; p++ {
			d.ssP[s] += float64(C * R * (ysp[p] - d.ys[s]) * (ysp[p] - d.ys[s]))
		}
		for c := 0; c < d.C; c++ {
			for p := 0; p < d.P; p++ {
				z := ycsp[c][p] - d.ycs[c][s] - ysp[p] + d.ys[s]
				d.ssCP[s] += float64(R * z * z)
				for _, v := range d.y[c][s][p] {
					d.ssE[s] += float64((v - ycsp[c][p]) * (v - ycsp[c][p]))
				}
			}
		}
	}
}

// VarianceOf estimates where the metric's variance comes from
// (VarianceComponents) over the runs given (a balanced design), with
// cluster-bootstrap intervals over the scenarios (a scenario drawn twice
// counts as two). Negative estimates are set to 0, and a note says so.
//
// With opt.Resamples < 0 it computes the estimates alone (no interval):
// what the power analysis needs.
func VarianceOf(runs []rows.RunRow, values [][]float64, metric int, opt BootstrapOptions) (*VarianceComponents, error) {
	d, _, err := balancedDesign(runs, values, metric)
	var ub unbalanced
	if errors.As(err, &ub) {
		return remlVariance(runs, values, metric, opt, string(ub))
	}
	if err != nil {
		return nil, err
	}
	// Statistics: the five variances, the five shares, ICC, design effect.
	stats := func(w, out []float64) {
		v := d.anova(w)
		var total float64
		for k := range v {
			v[k] = math.Max(0, v[k])
			total += v[k]
		}
		for k := range v {
			out[k] = v[k]
			out[5+k] = v[k] / total
		}
		out[10] = (v[0] + v[2]) / total
		S, P, R := float64(d.S), float64(d.P), float64(d.R)
		varMean := (v[0]+v[2])/S + (v[1]+v[3])/(S*P) + v[4]/(S*P*R)
		out[11] = varMean / (total / (S * P * R))
	}
	var est []Estimate
	if opt.Resamples < 0 {
		point := make([]float64, 12)
		ones := make([]float64, d.S)
		for i := range ones {
			ones[i] = 1
		}
		stats(ones, point)
		for _, x := range point {
			est = append(est, Estimate{Value: x, Lo: math.NaN(), Hi: math.NaN()})
		}
	} else {
		est = stat.ClusterBootstrap(d.S, 12, stats, opt)
	}
	out := &VarianceComponents{Metric: MetricName(metric), Method: "ANOVA (method of moments; balanced design)",
		Configs: d.C, Scenarios: d.S, Personas: d.P, Repetitions: d.R, ICC: est[10], DesignEffect: est[11]}
	raw := d.anova(nil)
	if d.P == 1 {
		out.Notes = append(out.Notes, "one persona per scenario: the persona and configuration × persona terms are not in the design (0)")
	}
	for k, t := range VarianceTerms {
		out.Terms = append(out.Terms, VarianceTerm{Term: t, Variance: est[k], Share: est[5+k]})
		if raw[k] < 0 {
			out.Notes = append(out.Notes, fmt.Sprintf("%s: the estimate %.4g is negative, set to 0 (its variance is too small to tell from noise)", t, raw[k]))
		}
	}
	return out, nil
}

// unbalanced says why the runs are not a balanced design.
type unbalanced string

func (u unbalanced) Error() string { return "variance: unbalanced design: " + string(u) }

// remlResamples caps the bootstrap of REML estimates, each resample a
// fit of its own (the ANOVA's resamples cost a sum each).
const remlResamples = 200

// remlVariance is VarianceOf for a design that is not balanced: REML
// estimates (remlData), with cluster-bootstrap intervals from at most
// remlResamples resamples, each refitted from the full data's estimate.
// The ICC and the design effect take the design's mean personas per
// scenario and runs per cell.
func remlVariance(runs []rows.RunRow, values [][]float64, metric int, opt BootstrapOptions, why string) (*VarianceComponents, error) {
	d, err := remlDesign(runs, values, metric)
	if err != nil {
		return nil, err
	}
	full, theta, err := d.fit(remlStart(), nil)
	if err != nil {
		return nil, err
	}
	var cells, nRuns, personas float64
	for s := 0; s < d.S; s++ {
		personas += float64(d.P[s])
		nRuns += d.runs[s]
		for c := 0; c < d.C; c++ {
			for p := 0; p < d.P[s]; p++ {
				if d.n[s][c][p] > 0 {
					cells++
				}
			}
		}
	}
	S, P, R := float64(d.S), personas/float64(d.S), nRuns/cells
	stats := func(v [5]float64, out []float64) {
		var total float64
		for k := range v {
			total += v[k]
		}
		for k := range v {
			out[k] = v[k]
			out[5+k] = v[k] / total
		}
		out[10] = (v[0] + v[2]) / total
		varMean := (v[0]+v[2])/S + (v[1]+v[3])/(S*P) + v[4]/(S*P*R)
		out[11] = varMean / (total / (S * P * R))
	}
	var est []Estimate
	notes := []string{fmt.Sprintf("REML: the design is unbalanced (%s); %d runs in %d cells, %.2f runs per cell and %.2f personas per scenario on average", why, int(nRuns), int(cells), R, P)}
	if opt.Resamples < 0 {
		point := make([]float64, 12)
		stats(full, point)
		for _, x := range point {
			est = append(est, Estimate{Value: x, Lo: math.NaN(), Hi: math.NaN()})
		}
	} else {
		o := opt.WithDefaults()
		if o.Resamples > remlResamples {
			notes = append(notes, fmt.Sprintf("intervals from %d resamples, not %d: each is a REML fit of its own", remlResamples, o.Resamples))
			o.Resamples = remlResamples
		}
		est = stat.ClusterBootstrap(d.S, 12, func(w, out []float64) {
			v, _, err := d.fitSized(theta, w, 0)
			if err != nil {
				for k := range out {
					out[k] = math.NaN()
				}
				return
			}
			stats(v, out)
		}, o)
		point := make([]float64, 12)
		stats(full, point)
		for k := range est {
			est[k].Value = point[k]
		}
	}
	out := &VarianceComponents{Metric: MetricName(metric), Method: "REML (restricted maximum likelihood; unbalanced design)",
		Configs: d.C, Scenarios: d.S, Personas: int(math.Round(P)), Repetitions: int(math.Round(R)), ICC: est[10], DesignEffect: est[11], Notes: notes}
	one := d.onePersona()
	if one {
		out.Notes = append(out.Notes, "one persona per scenario: the persona and configuration × persona terms are not in the design (0)")
	}
	for k, t := range VarianceTerms {
		out.Terms = append(out.Terms, VarianceTerm{Term: t, Variance: est[k], Share: est[5+k]})
		if one && (k == 1 || k == 3) {
			continue
		}
		if full[k] < 1e-9*full[4] {
			out.Notes = append(out.Notes, fmt.Sprintf("%s: the estimate is at 0 (REML's boundary: its variance is too small to tell from noise)", t))
		}
	}
	return out, nil
}
