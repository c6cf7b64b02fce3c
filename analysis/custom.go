package analysis

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/gymlens/gymlens/ingest/rows"
)

// CustomPrefix begins the names of the metrics of user rubrics:
// custom.NAME, and custom.NAME.FIELD for each of its scores.
const CustomPrefix = "custom."

// customMetric is a user rubric's metric as the metrics know it.
type customMetric struct {
	name   string // custom.NAME
	run    bool   // judged per run (else per task)
	fields []rows.RubricScore
	common bool // every field has the same range: the metric keeps it
}

// The user rubrics' metrics known to this process, in the order they were
// first registered: their places follow the built-in metrics', each
// metric then its fields. A place, once given, is kept.
var customs struct {
	sync.RWMutex
	byName map[string]*customMetric
	names  []string // custom.NAME, custom.NAME.FIELD, … in place order
}

// RegisterCustom makes the metrics of user rubrics known (the warehouse's
// judge_rubrics): custom.NAME and custom.NAME.FIELD take places after the
// built-in metrics', and metrics, compare, corr, agree, tables and
// reports show them as they show the built-in ones. A rubric seen before
// takes its latest definition; a field it gains gets a new place.
func RegisterCustom(defs []rows.Rubric) {
	customs.Lock()
	defer customs.Unlock()
	if customs.byName == nil {
		customs.byName = map[string]*customMetric{}
	}
	for _, d := range defs {
		if !strings.HasPrefix(d.Metric, CustomPrefix) || len(d.Scores) == 0 {
			continue
		}
		m := &customMetric{name: d.Metric, run: d.Level == "run", fields: slices.Clone(d.Scores), common: true}
		for _, f := range m.fields {
			if f.Min != m.fields[0].Min || f.Max != m.fields[0].Max {
				m.common = false
			}
		}
		customs.byName[d.Metric] = m
		for _, n := range append([]string{d.Metric}, fieldNames(m)...) {
			if !slices.Contains(customs.names, n) {
				customs.names = append(customs.names, n)
			}
		}
	}
}

func fieldNames(m *customMetric) []string {
	out := make([]string, len(m.fields))
	for i, f := range m.fields {
		out[i] = m.name + "." + f.Name
	}
	return out
}

// CustomMetrics are the names of the user rubrics' metrics known, each
// metric then its fields.
func CustomMetrics() []string {
	customs.RLock()
	defer customs.RUnlock()
	return slices.Clone(customs.names)
}

// CustomMain are the user rubrics' metrics known (custom.NAME, without
// their fields).
func CustomMain() []string {
	customs.RLock()
	defer customs.RUnlock()
	var out []string
	for _, n := range customs.names {
		if customs.byName[n] != nil {
			out = append(out, n)
		}
	}
	return out
}

// MetricNames are every metric's name in place order: AllMetrics, then
// the user rubrics'.
func MetricNames() []string { return append(slices.Clone(AllMetrics), CustomMetrics()...) }

// MetricName is the name of the metric at place i.
func MetricName(i int) string {
	if i < len(AllMetrics) {
		return AllMetrics[i]
	}
	customs.RLock()
	defer customs.RUnlock()
	if k := i - len(AllMetrics); k < len(customs.names) {
		return customs.names[k]
	}
	return fmt.Sprintf("metric#%d", i)
}

// customOf is the custom metric a name belongs to and the field it names
// (-1: the metric itself), or nil.
func customOf(name string) (*customMetric, int) {
	customs.RLock()
	defer customs.RUnlock()
	if m := customs.byName[name]; m != nil {
		return m, -1
	}
	i := strings.LastIndexByte(name, '.')
	if i < 0 {
		return nil, 0
	}
	m := customs.byName[name[:i]]
	if m == nil {
		return nil, 0
	}
	for k, f := range m.fields {
		if f.Name == name[i+1:] {
			return m, k
		}
	}
	return nil, 0
}

// customMetricNamed is the registry's entry of a custom metric.
func customMetricNamed(name string) (Metric, bool) {
	m, k := customOf(name)
	if m == nil {
		return Metric{}, false
	}
	lo, hi := m.fields[0].Min, m.fields[0].Max
	if k >= 0 {
		lo, hi = m.fields[k].Min, m.fields[k].Max
	} else if !m.common {
		lo, hi = 0, 1 // rescaled
	}
	out := Metric{Name: name, Scale: "0–100", Decimals: 1, Kind: MeanOfRuns, Source: "custom"}
	if !(lo == 0 && hi == 1) {
		out.Scale, out.Decimals = fmt.Sprintf("%g–%g", lo, hi), 2
	}
	return out, true
}

// fieldValue is a field's score on its metric's scale: ×100 for a field
// in [0, 1], else as given.
func fieldValue(f rows.RubricScore, x float64) float64 {
	if f.Min == 0 && f.Max == 1 {
		return 100 * x
	}
	return x
}

// overall is the metric's value of one judgment: the mean of its fields,
// in their common range (×100 for [0, 1]), or each rescaled to 0–100
// when the ranges differ. NaN when a field is missing.
func (m *customMetric) overall(scores map[string]float64) float64 {
	var sum float64
	for _, f := range m.fields {
		x, ok := scores[f.Name]
		if !ok {
			return math.NaN()
		}
		if m.common {
			sum += fieldValue(f, x)
		} else {
			sum += 100 * (x - f.Min) / (f.Max - f.Min)
		}
	}
	return sum / float64(len(m.fields))
}

// customScore is the judges' mean (judge "": every judge's) of a custom
// metric or field over the judgments given, on the metric's scale.
func customScore(js []rows.CustomJudgment, name, judge string) (float64, bool) {
	m, k := customOf(name)
	if m == nil {
		return math.NaN(), false
	}
	var sum float64
	var n int
	for _, j := range js {
		if j.Metric != m.name || (judge != "" && j.Judge != judge) {
			continue
		}
		var x float64
		if k < 0 {
			x = m.overall(j.Scores)
		} else {
			v, ok := j.Scores[m.fields[k].Name]
			if !ok {
				continue
			}
			x = fieldValue(m.fields[k], v)
		}
		if !math.IsNaN(x) {
			sum += x
			n++
		}
	}
	if n == 0 {
		return math.NaN(), false
	}
	return sum / float64(n), true
}

// customRunValues are a run's values of the custom metrics, in place
// order: a run-level metric is the judges' mean of the run's judgment; a
// task-level one the mean over the tasks judged of the judges' mean (as
// TR-J).
func customRunValues(r *rows.RunRow, judge string) []float64 {
	names := CustomMetrics()
	out := make([]float64, len(names))
	for i, n := range names {
		out[i] = math.NaN()
		m, _ := customOf(n)
		if m == nil {
			continue
		}
		if m.run {
			if x, ok := customScore(r.Custom, n, judge); ok {
				out[i] = x
			}
			continue
		}
		var sum float64
		var k int
		for t := range r.Tasks {
			if x, ok := customScore(r.Tasks[t].Custom, n, judge); ok {
				sum += x
				k++
			}
		}
		if k > 0 {
			out[i] = sum / float64(k)
		}
	}
	return out
}

// CustomScores are the custom metrics' scores judge agreement compares:
// task-level ones (task, true) or run-level ones (false).
func CustomScores(task bool) []string {
	var out []string
	for _, n := range CustomMetrics() {
		if m, _ := customOf(n); m != nil && m.run != task {
			out = append(out, n)
		}
	}
	return out
}
