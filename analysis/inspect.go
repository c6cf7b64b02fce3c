package analysis

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/gymlens/gymlens/analysis/stat"
	"github.com/gymlens/gymlens/ingest/rows"
)

// ReduceEpochs reduces one sample's values over its epochs as Inspect's
// reducer of that name does: mean (also Inspect's default, ""), median,
// mode (the most frequent value; the first of the most frequent in
// epoch order), max, min, pass_at_K (Chen et al.'s unbiased estimator
// 1 − C(n−c, K)/C(n, K), c the values ≥ 1), pass_K (all K right:
// C(c, K)/C(n, K)) and at_least_K (1 when at least K values are ≥ 1).
// With fewer than K values pass_at_K and pass_K are NaN, as in Inspect.
// ok is false for a reducer it does not know.
func ReduceEpochs(values []float64, reducer string) (float64, bool) {
	if len(values) == 0 {
		return math.NaN(), true
	}
	count := func() int {
		c := 0
		for _, v := range values {
			if v >= 1 {
				c++
			}
		}
		return c
	}
	n := len(values)
	switch reducer {
	case "", "mean":
		s := 0.0
		for _, v := range values {
			s += v
		}
		return s / float64(n), true
	case "median":
		s := append([]float64(nil), values...)
		sort.Float64s(s)
		if n%2 == 1 {
			return s[n/2], true
		}
		return (s[n/2-1] + s[n/2]) / 2, true
	case "mode":
		best, bestN := values[0], 0
		for i, v := range values {
			k := 0
			for _, u := range values {
				if u == v {
					k++
				}
			}
			if k > bestN || i == 0 {
				best, bestN = v, k
			}
		}
		return best, true
	case "max", "min":
		m := values[0]
		for _, v := range values[1:] {
			if reducer == "max" && v > m || reducer == "min" && v < m {
				m = v
			}
		}
		return m, true
	}
	for _, p := range []string{"pass_at_", "pass_", "at_least_"} {
		ks, ok := strings.CutPrefix(reducer, p)
		if !ok {
			continue
		}
		k, err := strconv.Atoi(ks)
		if err != nil || k < 1 {
			return 0, false
		}
		c := count()
		switch p {
		case "at_least_":
			if c >= k {
				return 1, true
			}
			return 0, true
		case "pass_":
			if n < k {
				return math.NaN(), true
			}
			return binom(c, k) / binom(n, k), true
		default:
			if n < k {
				return math.NaN(), true
			}
			if n-c < k {
				return 1, true
			}
			// 1 − Π_{i=n−c+1}^{n} (1 − k/i), as Inspect computes it.
			prod := 1.0
			for i := n - c + 1; i <= n; i++ {
				prod *= 1 - float64(k)/float64(i)
			}
			return 1 - prod, true
		}
	}
	return 0, false
}

func binom(n, k int) float64 {
	if k < 0 || k > n {
		return 0
	}
	r := 1.0
	for i := 1; i <= k; i++ {
		r = r * float64(n-k+i) / float64(i)
	}
	return r
}

// InspectMetric recomputes one of Inspect's metrics over the epoch-
// reduced values: accuracy and mean (their mean), std and var (sample
// standard deviation and variance, n − 1; 0 under two values), stderr
// (std/√n; 0 under two values). ok is false for any other metric (a
// custom one, bootstrap_stderr, which draws at random, a clustered
// stderr, which needs the samples' metadata).
func InspectMetric(name string, params string, values []float64) (float64, bool) {
	n := float64(len(values))
	mean := 0.0
	for _, v := range values {
		mean += v
	}
	if n > 0 {
		mean /= n
	}
	variance := func() float64 {
		if len(values) < 2 {
			return 0
		}
		ss := 0.0
		for _, v := range values {
			ss += (v - mean) * (v - mean)
		}
		return ss / (n - 1)
	}
	switch name {
	case "accuracy", "mean":
		return mean, true
	case "var":
		return variance(), true
	case "std":
		return math.Sqrt(variance()), true
	case "stderr":
		var p map[string]any
		if json.Unmarshal([]byte(params), &p) == nil && p["cluster"] != nil {
			return 0, false
		}
		if len(values) < 2 {
			return 0, true
		}
		return math.Sqrt(variance()) / math.Sqrt(n), true
	}
	return 0, false
}

// InspectCheck is one stored metric of one eval against gymlens's
// recomputation.
type InspectCheck struct {
	EvalID, Task, Config, Score, Reducer, Metric string
	Stored, Recomputed                           float64
	// Status: equal, differs, or cannot (not recomputed: Note says why).
	Status string
	Note   string
	N      int // the epoch-reduced samples it rests on
}

// ReconcileInspect recomputes each stored metric of each eval from the
// scores (reduced over epochs as the eval's reducer says) and compares.
// A score whose name is not its scorer's is a key of a dict value. A
// stored metric gymlens cannot recompute is listed as such, never as
// equal. Values equal within 1e-9 relative (NaN equals NaN).
func ReconcileInspect(d *rows.InspectData) []InspectCheck {
	evals := map[string]rows.InspectEval{}
	for _, e := range d.Evals {
		evals[e.EvalID] = e
	}
	// values[eval|scorer|key][sample] = the epochs' values, epoch order
	type sampleVals struct {
		order []string
		vals  map[string][]float64
		bad   int
	}
	by := map[string]*sampleVals{}
	for _, s := range d.Scores {
		k := s.EvalID + "\x00" + s.Scorer + "\x00" + s.Key
		sv := by[k]
		if sv == nil {
			sv = &sampleVals{vals: map[string][]float64{}}
			by[k] = sv
		}
		if !s.Valid {
			sv.bad++
			continue
		}
		if _, ok := sv.vals[s.SampleID]; !ok {
			sv.order = append(sv.order, s.SampleID)
		}
		sv.vals[s.SampleID] = append(sv.vals[s.SampleID], s.Value)
	}
	var out []InspectCheck
	for _, r := range d.Results {
		e := evals[r.EvalID]
		c := InspectCheck{EvalID: r.EvalID, Task: e.Task, Config: e.ConfigID, Score: r.Score, Reducer: r.Reducer, Metric: r.Metric, Stored: r.Value, Recomputed: math.NaN(), Status: "cannot"}
		key := ""
		if r.Scorer != "" && r.Score != r.Scorer {
			key = r.Score
		}
		scorer := r.Scorer
		if scorer == "" {
			scorer = r.Score
		}
		sv := by[r.EvalID+"\x00"+scorer+"\x00"+key]
		reducer := r.Reducer
		if reducer == "" && len(e.Reducers) == 1 {
			reducer = e.Reducers[0]
		}
		switch {
		case sv == nil:
			c.Note = "no sample scores of this scorer in the warehouse (a log without samples, or a score gymlens does not map)"
		default:
			var reduced []float64
			known := true
			for _, id := range sv.order {
				v, ok := ReduceEpochs(sv.vals[id], reducer)
				if !ok {
					known = false
					break
				}
				reduced = append(reduced, v)
			}
			c.N = len(reduced)
			if !known {
				c.Note = fmt.Sprintf("reducer %q is not one gymlens recomputes", reducer)
				break
			}
			v, ok := InspectMetric(r.Metric, r.Params, reduced)
			if !ok {
				c.Note = fmt.Sprintf("metric %q is not one gymlens recomputes (accuracy, mean, std, var, stderr)", r.Metric)
				break
			}
			c.Recomputed = v
			if closeEnough(v, r.Value) {
				c.Status = "equal"
			} else {
				c.Status = "differs"
				if sv.bad > 0 {
					c.Note = fmt.Sprintf("%d values value_to_float gives no number for: Inspect counts them as 0, gymlens leaves them out", sv.bad)
				}
			}
		}
		out = append(out, c)
	}
	return out
}

func closeEnough(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return math.Abs(a-b) <= 1e-9*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

// InspectMean is one scorer's mean for one configuration on one task.
type InspectMean struct {
	Config, Task, Metric string
	Samples, Values      int // clusters (samples) and sample × epoch values
	Estimate
}

// InspectMeans estimates each scorer's mean per configuration and task:
// the mean over samples of each sample's epochs reduced by reducer (""
// or mean: their mean; pass_at_K: pass@K, pass_K: pass^K, all K right;
// any ReduceEpochs knows), with a cluster bootstrap over the samples (the
// cluster is (task, sample id): ids are unique within a task only). A
// sample whose reduction is NaN (fewer than K epochs) is left out, and
// so are values value_to_float gives no number for, never read as 0.
func InspectMeans(d *rows.InspectData, reducer string, opt BootstrapOptions) ([]InspectMean, error) {
	if len(d.Evals) == 0 {
		return nil, NoDataf("no Inspect evaluation in the warehouse (ingest .eval or .json logs first)")
	}
	if _, ok := ReduceEpochs([]float64{1}, reducer); !ok {
		return nil, Optionf("--reducer: %q is not mean, median, mode, max, min, pass_at_K, pass_K or at_least_K", reducer)
	}
	evals := map[string]rows.InspectEval{}
	for _, e := range d.Evals {
		evals[e.EvalID] = e
	}
	type group struct {
		order []string
		vals  map[string][]float64
		n     int
	}
	groups := map[[3]string]*group{}
	for _, s := range d.Scores {
		if !s.Valid || math.IsNaN(s.Value) {
			continue
		}
		e := evals[s.EvalID]
		k := [3]string{e.ConfigID, e.Task, s.Metric}
		g := groups[k]
		if g == nil {
			g = &group{vals: map[string][]float64{}}
			groups[k] = g
		}
		if _, ok := g.vals[s.SampleID]; !ok {
			g.order = append(g.order, s.SampleID)
		}
		g.vals[s.SampleID] = append(g.vals[s.SampleID], s.Value)
		g.n++
	}
	keys := make([][3]string, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(a, b int) bool {
		for i := range 3 {
			if keys[a][i] != keys[b][i] {
				return keys[a][i] < keys[b][i]
			}
		}
		return false
	})
	var out []InspectMean
	for _, k := range keys {
		g := groups[k]
		var means []float64
		for _, id := range g.order {
			if v, _ := ReduceEpochs(g.vals[id], reducer); !math.IsNaN(v) {
				means = append(means, v)
			}
		}
		if len(means) == 0 {
			continue
		}
		est := stat.ClusterBootstrap(len(means), 1, func(w, o []float64) {
			s, n := 0.0, 0.0
			for i, m := range means {
				s += w[i] * m
				n += w[i]
			}
			o[0] = s / n
		}, opt)[0]
		metric := k[2]
		if reducer != "" && reducer != "mean" {
			metric += " (" + reducer + ")"
		}
		out = append(out, InspectMean{Config: k[0], Task: k[1], Metric: metric, Samples: len(means), Values: g.n, Estimate: est})
	}
	return out, nil
}
