package analysis

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/gymlens/gymlens/ingest/rows"
)

// InspectLabel names one scorer of one task, as compare --source inspect
// does: "inspect.match (popularity)".
func InspectLabel(task, metric string) string { return metric + " (" + task + ")" }

// InspectRuns is one task and scorer of Inspect evaluations laid out as
// the runs of a study design, so that the design's analyses (variance
// components, power, ranks) read Inspect samples as they read scenarios:
// a run is one sample at one epoch of one configuration, its scenario the
// sample id (ids are unique within a task), one persona ("-"), its
// repetition the epoch's place among that configuration's epochs of the
// sample.
type InspectRuns struct {
	Task, Metric string
	Runs         []rows.RunRow
	Values       [][]float64 // one column: the scorer's value
}

// Label is InspectLabel of the runs' task and scorer.
func (r *InspectRuns) Label() string { return InspectLabel(r.Task, r.Metric) }

// InspectDesigns lays out every task and scorer of d (InspectRuns), in
// task then scorer order. Values value_to_float gives no number for, and
// NaN, are left out (never read as 0).
func InspectDesigns(d *rows.InspectData) ([]*InspectRuns, error) {
	if len(d.Evals) == 0 {
		return nil, NoDataf("no Inspect evaluation in the warehouse (ingest .eval or .json logs first)")
	}
	evals := map[string]rows.InspectEval{}
	for _, e := range d.Evals {
		evals[e.EvalID] = e
	}
	type key struct{ task, metric string }
	by := map[key]*InspectRuns{}
	rep := map[[4]string]int{}
	for _, s := range d.Scores {
		if !s.Valid || math.IsNaN(s.Value) {
			continue
		}
		e := evals[s.EvalID]
		k := key{e.Task, s.Metric}
		r := by[k]
		if r == nil {
			r = &InspectRuns{Task: e.Task, Metric: s.Metric}
			by[k] = r
		}
		rk := [4]string{e.Task, s.Metric, e.ConfigID, s.SampleID}
		rep[rk]++
		r.Runs = append(r.Runs, rows.RunRow{RunID: fmt.Sprintf("%s/%s/%d", s.EvalID, s.SampleID, s.Epoch), ConfigID: e.ConfigID,
			Model: e.Model, Harness: e.Harness, Effort: e.Effort, Scenario: s.SampleID, Persona: "-", Rep: rep[rk]})
		r.Values = append(r.Values, []float64{s.Value})
	}
	if len(by) == 0 {
		return nil, NoDataf("no Inspect score with a number (value_to_float) in the warehouse")
	}
	keys := slices.SortedFunc(maps.Keys(by), func(a, b key) int {
		return cmp.Or(strings.Compare(a.task, b.task), strings.Compare(a.metric, b.metric))
	})
	out := make([]*InspectRuns, len(keys))
	for i, k := range keys {
		out[i] = by[k]
	}
	return out, nil
}

// InspectVariance gives the variance components (VarianceOf) of every
// task and scorer run by two or more configurations on two or more
// samples: configurations (fixed) × samples × epochs, the terms sample,
// configuration × sample and epoch (the residual; the persona terms are
// 0). Metric is InspectLabel. A task and scorer the design cannot give
// components for is named in skipped, with why. With opt.Resamples < 0
// the estimates alone (for power).
func InspectVariance(d *rows.InspectData, opt BootstrapOptions) (vcs []*VarianceComponents, skipped []string, err error) {
	designs, err := InspectDesigns(d)
	if err != nil {
		return nil, nil, err
	}
	for _, r := range designs {
		configs, samples := map[string]bool{}, map[string]bool{}
		for _, run := range r.Runs {
			configs[run.ConfigID], samples[run.Scenario] = true, true
		}
		if len(configs) < 2 || len(samples) < 2 {
			skipped = append(skipped, fmt.Sprintf("%s: %d configurations on %d samples (the components need two or more of each)", r.Label(), len(configs), len(samples)))
			continue
		}
		vc, err := VarianceOf(r.Runs, r.Values, 0, opt)
		if err != nil {
			skipped = append(skipped, fmt.Sprintf("%s: %v", r.Label(), err))
			continue
		}
		vc.Metric = r.Label()
		vcs = append(vcs, vc)
	}
	if len(vcs) == 0 {
		return nil, skipped, NoDataf("no Inspect task and scorer with two or more configurations on two or more samples: %s", strings.Join(skipped, "; "))
	}
	return vcs, skipped, nil
}

// InspectPairR is the correlation of two configurations' per-sample means
// (each over R epochs) that variance components v (in VarianceTerms'
// order) imply: the shared sample effect over a sample mean's variance,
//
//	r = σ²_sample / (σ²_sample + σ²_config×sample + σ²_e / R).
//
// It is what pairing by sample gains: the variance of a paired
// difference is (1 − r) times that of an unpaired one. NaN when the
// denominator is 0.
func InspectPairR(v [5]float64, epochs int) float64 {
	den := v[0] + v[2] + v[4]/float64(epochs)
	if den <= 0 {
		return math.NaN()
	}
	return v[0] / den
}

// InspectCorrelations correlates the scorers of each task that has two or
// more (CorrelationsNamed): the unit is a configuration's sample, its
// epochs averaged, and the cluster resampled the sample; at sample level
// the units of all configurations pooled, at configuration level the
// configurations' means. Level "run" reads "sample" here. Names are
// InspectLabel.
func InspectCorrelations(d *rows.InspectData, opt BootstrapOptions) ([]CorrResult, error) {
	designs, err := InspectDesigns(d)
	if err != nil {
		return nil, err
	}
	var out []CorrResult
	for i := 0; i < len(designs); {
		j := i
		for j < len(designs) && designs[j].Task == designs[i].Task {
			j++
		}
		task := designs[i:j]
		i = j
		if len(task) < 2 {
			continue
		}
		// Units: (configuration, sample), in order of first appearance.
		type unit struct{ config, sample string }
		index := map[unit]int{}
		var units []unit
		sum := make([][]float64, len(task))
		cnt := make([][]float64, len(task))
		for m, r := range task {
			for k, run := range r.Runs {
				u := unit{run.ConfigID, run.Scenario}
				at, ok := index[u]
				if !ok {
					at = len(units)
					index[u] = at
					units = append(units, u)
				}
				for len(sum[m]) <= at {
					sum[m], cnt[m] = append(sum[m], 0), append(cnt[m], 0)
				}
				sum[m][at] += r.Values[k][0]
				cnt[m][at]++
			}
		}
		values := make([][]float64, len(units))
		scenario, config := make([]string, len(units)), make([]string, len(units))
		names := make([]string, len(task))
		for m, r := range task {
			names[m] = r.Label()
		}
		for u := range units {
			values[u] = make([]float64, len(task))
			for m := range task {
				values[u][m] = math.NaN()
				if u < len(cnt[m]) && cnt[m][u] > 0 {
					values[u][m] = sum[m][u] / cnt[m][u]
				}
			}
			scenario[u], config[u] = units[u].sample, units[u].config
		}
		for _, c := range CorrelationsNamed(values, scenario, config, names, opt) {
			if c.Level == RunLevel {
				c.Level = "sample"
			}
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		return nil, NoDataf("corr --source inspect: no Inspect task has two or more scorers to correlate")
	}
	return out, nil
}

// InspectCostMetrics are the costs InspectCosts estimates, per sample and
// epoch: tokens summed over the sample's models, and seconds.
var InspectCostMetrics = []string{"total_tokens", "input_tokens", "output_tokens", "total_time", "working_time"}

// InspectCosts estimates each configuration's mean cost per sample on
// each task (InspectCostMetrics), as InspectMeansWith estimates a
// scorer's mean: each sample's epochs averaged, the samples resampled. A
// cost the log does not give (NULL) is left out, never read as 0.
func InspectCosts(d *rows.InspectData, costs []rows.InspectCost, opt BootstrapOptions) ([]InspectMean, error) {
	c := &rows.InspectData{Evals: d.Evals}
	for _, x := range costs {
		for i, v := range [][2]float64{{x.TotalTokens, b(x.HasTokens)}, {x.InputTokens, b(x.HasTokens)}, {x.OutputTokens, b(x.HasTokens)},
			{x.TotalTime, b(x.HasTotalTime)}, {x.WorkingTime, b(x.HasWorkingTime)}} {
			c.Scores = append(c.Scores, rows.InspectScore{EvalID: x.EvalID, SampleID: x.SampleID, Epoch: x.Epoch, Metric: InspectCostMetrics[i],
				Value: v[0], Valid: v[1] == 1})
		}
	}
	ms, err := InspectMeansWith(c, InspectMeansOptions{}, opt)
	if err != nil {
		return nil, err
	}
	// Configuration, task, then the costs in InspectCostMetrics' order.
	at := func(m string) int { return slices.Index(InspectCostMetrics, m) }
	slices.SortStableFunc(ms, func(a, b InspectMean) int {
		return cmp.Or(strings.Compare(a.Config, b.Config), strings.Compare(a.Task, b.Task), at(a.Metric)-at(b.Metric))
	})
	return ms, nil
}

func b(ok bool) float64 {
	if ok {
		return 1
	}
	return 0
}
