package analysis

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"

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
			ss += float64((v - mean) * (v - mean))
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

// InspectMean is one scorer's mean for one configuration on one task
// (and, with InspectMeansOptions.By, one value of each metadata field).
type InspectMean struct {
	Config, Task, Metric string
	Groups               []string // the values of InspectMeansOptions.By
	Samples, Values      int      // samples and sample × epoch values
	Clusters             int      // the clusters resampled
	Estimate
}

// InspectMeansOptions chooses how InspectMeansWith groups and resamples.
type InspectMeansOptions struct {
	// Reducer reduces each sample's epochs: "" or mean, median, mode,
	// max, min, pass_at_K (pass@K), pass_K (pass^K: all K right),
	// at_least_K — any ReduceEpochs knows.
	Reducer string
	// By are metadata fields that split each configuration × task, and
	// Cluster one whose values (within a task) are the clusters resampled
	// instead of the samples; Meta gives each sample's values of By and
	// then Cluster, in that order.
	By      []string
	Cluster string
	Meta    []rows.InspectSampleMeta
}

// InspectMetaFields reads --by and --cluster for Inspect runs: --by takes
// config and task (always there) and meta.FIELD, a field of the samples'
// metadata; --cluster is "" (the sample) or meta.FIELD. A field name is
// refused when it is empty or holds a quote or a control character.
func InspectMetaFields(by []string, cluster string) (fields []string, clusterField string, err error) {
	field := func(flag, s string) (string, error) {
		f, ok := strings.CutPrefix(s, "meta.")
		if !ok || f == "" || strings.ContainsAny(f, "\"\\") || strings.IndexFunc(f, unicode.IsControl) >= 0 {
			return "", Optionf("%s with --source inspect: %q is not meta.FIELD (a field of the samples' metadata, without quotes or control characters)", flag, s)
		}
		return f, nil
	}
	for _, b := range by {
		if b == "config" || b == "task" {
			continue
		}
		if !strings.HasPrefix(b, "meta.") {
			return nil, "", Optionf("--by with --source inspect: %q is not config, task or meta.FIELD", b)
		}
		f, err := field("--by", b)
		if err != nil {
			return nil, "", err
		}
		if !slices.Contains(fields, f) {
			fields = append(fields, f)
		}
	}
	if cluster != "" {
		if clusterField, err = field("--cluster", cluster); err != nil {
			return nil, "", err
		}
	}
	return fields, clusterField, nil
}

// InspectMeans estimates each scorer's mean per configuration and task:
// InspectMeansWith, the epochs reduced by reducer, the samples resampled.
func InspectMeans(d *rows.InspectData, reducer string, opt BootstrapOptions) ([]InspectMean, error) {
	return InspectMeansWith(d, InspectMeansOptions{Reducer: reducer}, opt)
}

// InspectMeansWith estimates each scorer's mean per configuration, task
// and value of each o.By field: the mean over samples of each sample's
// epochs reduced by o.Reducer, with a cluster bootstrap over the samples
// (the cluster is (task, sample id): ids are unique within a task only)
// or, with o.Cluster, over the values of that field within the task (the
// mean then weights each sample alike: the resampled clusters' sums over
// their sizes). A sample whose reduction is NaN (fewer than K epochs) is
// left out, and so are values value_to_float gives no number for, never
// read as 0; a sample without the cluster field is an error naming it.
func InspectMeansWith(d *rows.InspectData, o InspectMeansOptions, opt BootstrapOptions) ([]InspectMean, error) {
	reducer := o.Reducer
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
	nMeta := len(o.By)
	if o.Cluster != "" {
		nMeta++
	}
	meta := map[[2]string][]string{}
	for _, m := range o.Meta {
		if len(m.Values) != nMeta {
			return nil, fmt.Errorf("inspect metadata of sample %s of %s: %d values for %d fields", m.SampleID, m.EvalID, len(m.Values), nMeta)
		}
		meta[[2]string{m.EvalID, m.SampleID}] = m.Values
	}
	type group struct {
		order   []string
		vals    map[string][]float64
		cluster map[string]string
		n       int
	}
	const sep = "\x00"
	groups := map[string]*group{}
	var keys []string
	for _, s := range d.Scores {
		if !s.Valid || math.IsNaN(s.Value) {
			continue
		}
		e := evals[s.EvalID]
		parts := []string{e.ConfigID, e.Task, s.Metric}
		var cl string
		if nMeta > 0 {
			vs, ok := meta[[2]string{s.EvalID, s.SampleID}]
			if !ok {
				return nil, fmt.Errorf("inspect sample %s of %s: no metadata read for it", s.SampleID, s.EvalID)
			}
			parts = append(parts, vs[:len(o.By)]...)
			if o.Cluster != "" {
				if cl = vs[len(o.By)]; cl == rows.Absent {
					return nil, Optionf("--cluster meta.%s: sample %s of %s (task %s) has no %s in its metadata", o.Cluster, s.SampleID, s.EvalID, e.Task, o.Cluster)
				}
			}
		}
		k := strings.Join(parts, sep)
		g := groups[k]
		if g == nil {
			g = &group{vals: map[string][]float64{}, cluster: map[string]string{}}
			groups[k] = g
			keys = append(keys, k)
		}
		if _, ok := g.vals[s.SampleID]; !ok {
			g.order = append(g.order, s.SampleID)
			g.cluster[s.SampleID] = cl
		}
		g.vals[s.SampleID] = append(g.vals[s.SampleID], s.Value)
		g.n++
	}
	sort.Strings(keys)
	var out []InspectMean
	for _, k := range keys {
		g := groups[k]
		parts := strings.Split(k, sep)
		// Each cluster's sum and count of the samples' reduced values, the
		// clusters in the order their first sample came.
		var sums, counts []float64
		index := map[string]int{}
		samples := 0
		for _, id := range g.order {
			v, _ := ReduceEpochs(g.vals[id], reducer)
			if math.IsNaN(v) {
				continue
			}
			c := id
			if o.Cluster != "" {
				c = g.cluster[id]
			}
			i, ok := index[c]
			if !ok {
				i = len(sums)
				index[c] = i
				sums, counts = append(sums, 0), append(counts, 0)
			}
			sums[i] += v
			counts[i]++
			samples++
		}
		if samples == 0 {
			continue
		}
		est := stat.ClusterBootstrap(len(sums), 1, func(w, out []float64) {
			s, n := 0.0, 0.0
			for i := range sums {
				s += float64(w[i] * sums[i])
				n += float64(w[i] * counts[i])
			}
			out[0] = s / n
		}, opt)[0]
		metric := parts[2]
		if reducer != "" && reducer != "mean" {
			metric += " (" + reducer + ")"
		}
		out = append(out, InspectMean{Config: parts[0], Task: parts[1], Metric: metric, Groups: parts[3 : 3+len(o.By)],
			Samples: samples, Values: g.n, Clusters: len(sums), Estimate: est})
	}
	return out, nil
}

// CompareInspect compares the named configurations pairwise on each task
// and scorer of their Inspect runs, paired by sample: each sample's
// epochs averaged, the difference B − A of the means over the samples
// every named configuration scored on that task, with a cluster bootstrap
// over those samples (a sample drawn counts on both sides) and the
// p-value that inverts the interval, Holm and BH across the pairs of a
// task and scorer. R holds the Pearson correlation of the two
// configurations' per-sample scores (Miller, "Adding error bars to
// evals", 2024: the higher, the more pairing gains). A sample one of them
// did not score is left out, and a warning counts those.
func CompareInspect(d *rows.InspectData, configs []string, opt BootstrapOptions) ([]Comparison, error) {
	if len(d.Evals) == 0 {
		return nil, NoDataf("no Inspect evaluation in the warehouse (ingest .eval or .json logs first)")
	}
	evals := map[string]rows.InspectEval{}
	have := map[string]bool{}
	for _, e := range d.Evals {
		evals[e.EvalID] = e
		have[e.ConfigID] = true
	}
	for _, c := range configs {
		if !have[c] {
			return nil, Optionf("compare --source inspect: no Inspect runs of configuration %q; configurations: %s", c, strings.Join(slices.Sorted(maps.Keys(have)), "; "))
		}
	}
	// Each (task, metric): each configuration's epoch sums per sample.
	type cell struct{ sum, n float64 }
	type key struct{ task, metric string }
	per := map[key]map[string]map[string]*cell{} // → config → sample
	for _, s := range d.Scores {
		e := evals[s.EvalID]
		if !s.Valid || math.IsNaN(s.Value) || !slices.Contains(configs, e.ConfigID) {
			continue
		}
		k := key{e.Task, s.Metric}
		if per[k] == nil {
			per[k] = map[string]map[string]*cell{}
		}
		if per[k][e.ConfigID] == nil {
			per[k][e.ConfigID] = map[string]*cell{}
		}
		c := per[k][e.ConfigID][s.SampleID]
		if c == nil {
			c = &cell{}
			per[k][e.ConfigID][s.SampleID] = c
		}
		c.sum += s.Value
		c.n++
	}
	keys := slices.SortedFunc(maps.Keys(per), func(a, b key) int {
		return cmp.Or(strings.Compare(a.task, b.task), strings.Compare(a.metric, b.metric))
	})
	var out []Comparison
	for _, k := range keys {
		byConfig := per[k]
		if len(byConfig) < len(configs) {
			continue // a configuration did not run this task or scorer
		}
		// The samples every configuration scored, in order; those left out.
		var samples []string
		left := 0
		for id := range byConfig[configs[0]] {
			both := true
			for _, c := range configs[1:] {
				if byConfig[c][id] == nil {
					both = false
				}
			}
			if both {
				samples = append(samples, id)
			}
		}
		for _, c := range configs {
			left += len(byConfig[c]) - len(samples)
		}
		if len(samples) < 2 {
			continue
		}
		slices.Sort(samples)
		var values [][]float64
		var cluster []string
		at := map[string][]int{}
		for _, c := range configs {
			for _, id := range samples {
				m := byConfig[c][id]
				at[c] = append(at[c], len(values))
				values, cluster = append(values, []float64{m.sum / m.n}), append(cluster, id)
			}
		}
		var pairs []Pair
		for i := range configs {
			for j := i + 1; j < len(configs); j++ {
				pairs = append(pairs, Pair{A: configs[i], B: configs[j], RunsA: at[configs[i]], RunsB: at[configs[j]]})
			}
		}
		res := CompareNamed(pairs, values, cluster, []string{k.metric + " (" + k.task + ")"}, opt)
		for i := range res {
			a, b := make([]float64, len(samples)), make([]float64, len(samples))
			for s := range samples {
				a[s], b[s] = values[at[res[i].A][s]][0], values[at[res[i].B][s]][0]
			}
			r := stat.Pearson(a, b)
			res[i].R = &r
			if left > 0 {
				res[i].Warn(0, fmt.Sprintf("%d samples scored by some of the configurations compared only: left out", left))
			}
		}
		out = append(out, res...)
	}
	if len(out) == 0 {
		return nil, NoDataf("compare --source inspect: no task and scorer with two or more samples scored by every configuration named")
	}
	return out, nil
}
