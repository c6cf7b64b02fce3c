package analysis

import (
	"fmt"
	"maps"
	"math"
	"slices"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/diff/fd"
	"gonum.org/v1/gonum/lapack/lapack64"
	"gonum.org/v1/gonum/optimize"

	"github.com/gymlens/gymlens/analysis/stat"
	"github.com/gymlens/gymlens/ingest/rows"
)

// REML for the variance components of an unbalanced design (cells with
// unequal repetitions, missing cells, scenarios with different numbers of
// personas), where the ANOVA estimator is not defined. The model is the
// one VarianceComponents describes: fixed configuration means, random
// scenario, persona(scenario), configuration × scenario and configuration
// × persona(scenario) effects, and a residual.
//
// The restricted likelihood is computed from Henderson's mixed-model
// equations with the random effects scaled by θ_k = σ_k/σ (so that a
// component of 0 is an ordinary point, as lme4 does):
//
//	M = [X Zθ]ᵀ[X Zθ] + diag(0, I),  b = [X Zθ]ᵀ y,
//	r = yᵀy − bᵀ M⁻¹ b,  σ̂² = r / (n − p),
//	−2 ℓ_R = (n − p)(1 + log 2π + log σ̂²) + log |M|.
//
// M is never formed whole. Each configuration × persona effect touches one
// cell's runs alone, so it is eliminated in closed form (a cell with n
// runs and sum T then acts as n/d runs with sum T/d, d = θ²n + 1); what
// remains of a scenario — its own effect, its personas' and its
// configurations' — couples only to the configuration means, so each
// scenario's block is eliminated by a small Cholesky factorisation, and
// the configuration means' block last. A scenario drawn w times by the
// cluster bootstrap is w independent scenarios: its block counts w times.
// Everything depends on the data through each cell's count and sum and
// the total sum of squares.
type remlData struct {
	C, S int
	P    []int         // personas of each scenario
	n, t [][][]float64 // [scenario][config][persona]: runs and their sum
	yy   []float64     // sum of squares of each scenario's values
	runs []float64     // runs of each scenario
}

// remlDesign gathers the cells of one metric's values, or says why there
// is nothing to estimate.
func remlDesign(runs []rows.RunRow, values [][]float64, metric int) (*remlData, error) {
	configs, scenarios := map[string]int{}, map[string]int{}
	personas := map[string]map[string]int{}
	for i, r := range runs {
		if math.IsNaN(values[i][metric]) {
			continue
		}
		configs[r.ConfigID], scenarios[r.Scenario] = 0, 0
		if personas[r.Scenario] == nil {
			personas[r.Scenario] = map[string]int{}
		}
		personas[r.Scenario][r.Persona] = 0
	}
	cs, ss := slices.Sorted(maps.Keys(configs)), slices.Sorted(maps.Keys(scenarios))
	if len(cs) < 2 || len(ss) < 2 {
		return nil, NoDataf("variance: %d configurations and %d scenarios with a value: at least two of each are needed", len(cs), len(ss))
	}
	for i, c := range cs {
		configs[c] = i
	}
	d := &remlData{C: len(cs), S: len(ss), P: make([]int, len(ss)), yy: make([]float64, len(ss)), runs: make([]float64, len(ss))}
	for i, s := range ss {
		scenarios[s] = i
		for k, p := range slices.Sorted(maps.Keys(personas[s])) {
			personas[s][p] = k
		}
		d.P[i] = len(personas[s])
		byC := make([][]float64, d.C)
		byCT := make([][]float64, d.C)
		for c := range byC {
			byC[c], byCT[c] = make([]float64, d.P[i]), make([]float64, d.P[i])
		}
		d.n, d.t = append(d.n, byC), append(d.t, byCT)
	}
	repeated := false
	for i, r := range runs {
		x := values[i][metric]
		if math.IsNaN(x) {
			continue
		}
		s, c, p := scenarios[r.Scenario], configs[r.ConfigID], personas[r.Scenario][r.Persona]
		d.n[s][c][p]++
		d.t[s][c][p] += x
		d.yy[s] += float64(x * x)
		d.runs[s]++
		repeated = repeated || d.n[s][c][p] > 1
	}
	if !repeated {
		return nil, NoDataf("variance: no configuration ran twice on one scenario and persona: the repetition variance cannot be told from the configuration × persona one")
	}
	return d, nil
}

// objective is −2 ℓ_R (without its constant (n − p)(1 + log 2π)) at θ,
// each scenario counted w[s] times (nil: once), and σ̂².
func (d *remlData) objective(theta []float64, w []float64) (f, sigma2 float64) {
	ts, tsp, tcs, tcsp := theta[0], theta[1], theta[2], theta[3]
	C := d.C
	Ad := make([]float64, C*C) // the configuration means' block (upper triangle)
	rb := make([]float64, C)
	var logdet, quad, N, yy float64
	for s := 0; s < d.S; s++ {
		ws := 1.0
		if w != nil {
			ws = w[s]
		}
		if ws == 0 {
			continue
		}
		N += float64(ws * d.runs[s])
		yy += float64(ws * d.yy[s])
		P := d.P[s]
		m := 1 + P + C // the scenario's effect, its personas', its configurations'
		// L (m×m, upper triangle) and B (m×C) accumulated in place.
		Ld := make([]float64, m*m)
		Bd := make([]float64, m*C)
		bs := make([]float64, m)
		aLoc := make([]float64, C)
		rLoc := make([]float64, C)
		var ld, qd float64
		for c := 0; c < C; c++ {
			for p := 0; p < P; p++ {
				n := d.n[s][c][p]
				if n == 0 {
					continue
				}
				T := d.t[s][c][p]
				dd := float64(tcsp*tcsp*n) + 1
				ld += math.Log(dd)
				qd += float64(tcsp*tcsp*T*T) / dd
				wn, wt := n/dd, T/dd
				// v = [β_c, s, sp_p, cs_c] scaled by [1, θs, θsp, θcs].
				idx := [3]int{0, 1 + p, 1 + P + c}
				v := [3]float64{ts, tsp, tcs}
				aLoc[c] += wn
				rLoc[c] += wt
				for i := range 3 {
					Bd[idx[i]*C+c] += float64(wn * v[i])
					bs[idx[i]] += float64(wt * v[i])
					for j := i; j < 3; j++ {
						Ld[idx[i]*m+idx[j]] += float64(float64(wn*v[i]) * v[j])
					}
				}
			}
		}
		for i := range m {
			Ld[i*m+i]++
		}
		// L = UᵀU; Y = U⁻ᵀB and z = U⁻ᵀb give BᵀL⁻¹B = YᵀY, BᵀL⁻¹b = Yᵀz
		// and bᵀL⁻¹b = zᵀz (LAPACK's factorisation: no condition estimate).
		U, ok := lapack64.Potrf(blas64.Symmetric{Uplo: blas.Upper, N: m, Stride: m, Data: Ld})
		if !ok {
			return math.Inf(1), math.NaN()
		}
		var ldL float64
		for i := range m {
			ldL += math.Log(Ld[i*m+i])
		}
		Y := blas64.General{Rows: m, Cols: C, Stride: C, Data: Bd}
		blas64.Trsm(blas.Left, blas.Trans, 1, U, Y)
		z := blas64.Vector{N: m, Inc: 1, Data: bs}
		blas64.Trsv(blas.Trans, U, z)
		logdet += float64(ws * (ld + 2*ldL))
		quad += float64(ws * (qd + blas64.Dot(z, z)))
		for c := 0; c < C; c++ {
			var u float64
			for i := range m {
				u += float64(Bd[i*C+c] * bs[i])
			}
			rb[c] += float64(ws * (rLoc[c] - u))
			Ad[c*C+c] += float64(ws * aLoc[c])
		}
		// A −= ws·YᵀY (upper triangle).
		blas64.Syrk(blas.Trans, -ws, Y, 1, blas64.Symmetric{Uplo: blas.Upper, N: C, Stride: C, Data: Ad})
	}
	U, ok := lapack64.Potrf(blas64.Symmetric{Uplo: blas.Upper, N: C, Stride: C, Data: Ad})
	if !ok {
		return math.Inf(1), math.NaN()
	}
	for i := range C {
		logdet += 2 * math.Log(Ad[i*C+i])
	}
	z := blas64.Vector{N: C, Inc: 1, Data: rb}
	blas64.Trsv(blas.Trans, U, z)
	quad += blas64.Dot(z, z)
	df := N - float64(C)
	r := yy - quad
	if df <= 0 || !(r > 0) {
		return math.Inf(1), math.NaN()
	}
	sigma2 = r / df
	return float64(df*math.Log(sigma2)) + logdet, sigma2
}

// fit maximises the restricted likelihood from start (θ), each scenario
// counted w[s] times, and returns the five components in VarianceTerms'
// order and θ.
func (d *remlData) fit(start []float64, w []float64) ([5]float64, []float64, error) {
	return d.fitSized(start, w, 0.2)
}

// fitSized is fit from a simplex of the given size around start: a coarse
// Nelder–Mead search, then BFGS on central-difference gradients, which
// converges to the top of the likelihood far faster than the simplex.
// Size 0 is BFGS alone (a resample, which starts from the full data's
// estimate, near its own).
func (d *remlData) fitSized(start []float64, w []float64, size float64) ([5]float64, []float64, error) {
	// With one persona per scenario the persona terms are not in the
	// design: θ_persona and θ_config×persona stay 0, the others are found.
	free := []int{0, 1, 2, 3}
	if d.onePersona() {
		free = []int{0, 2}
	}
	full := func(x []float64) []float64 {
		th := make([]float64, 4)
		for i, k := range free {
			th[k] = x[i]
		}
		return th
	}
	f := func(x []float64) float64 { v, _ := d.objective(full(x), w); return v }
	x0 := make([]float64, len(free))
	for i, k := range free {
		x0[i] = start[k]
	}
	start = x0
	p := optimize.Problem{Func: f}
	res := &optimize.Result{Location: optimize.Location{X: slices.Clone(start), F: f(start)}}
	if size > 0 {
		r, err := optimize.Minimize(p, slices.Clone(start), &optimize.Settings{
			Converger: &optimize.FunctionConverge{Absolute: 1e-4, Iterations: 8}, FuncEvaluations: 2000,
		}, &optimize.NelderMead{SimplexSize: size})
		if err != nil && r == nil {
			return [5]float64{}, nil, err
		}
		res = r
	}
	// A resample's estimate feeds an interval's end: 1e-5 of gradient is
	// ample there, and forward differences half the cost.
	formula, threshold := fd.Central, 1e-7
	if size == 0 {
		formula, threshold = fd.Forward, 1e-5
	}
	p.Grad = func(g, x []float64) { fd.Gradient(g, f, x, &fd.Settings{Formula: formula, Step: 1e-5}) }
	// BFGS often ends by "linesearch failed": at the precision of the
	// differences, which is the answer; a worse end is not taken.
	res2, _ := optimize.Minimize(p, res.X, &optimize.Settings{GradientThreshold: threshold, MajorIterations: 200}, &optimize.BFGS{})
	if res2 != nil && res2.F <= res.F {
		res = res2
	}
	theta := full(res.X)
	_, s2 := d.objective(theta, w)
	s2 = stat.Portable(s2) // BLAS and the search may differ in the last bits across machines
	if math.IsNaN(s2) {
		return [5]float64{}, nil, fmt.Errorf("variance: REML did not converge")
	}
	var v [5]float64
	for k := range 4 {
		v[k] = stat.Portable(float64(theta[k]*theta[k]) * s2)
	}
	v[4] = s2
	for k := range theta {
		theta[k] = math.Abs(theta[k])
	}
	return v, theta, nil
}

// remlStart is the first search's start: each σ_k half the residual's σ.
func remlStart() []float64 { return []float64{0.5, 0.5, 0.5, 0.5} }

// onePersona: every scenario has one persona (PARE's runs have none).
func (d *remlData) onePersona() bool {
	for _, p := range d.P {
		if p > 1 {
			return false
		}
	}
	return true
}
