package serve

import (
	"math"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/gymlens/gymlens/analysis"
	"github.com/gymlens/gymlens/ingest/rows"
	"github.com/gymlens/gymlens/reports"
)

// RunQuery is what /runs and /api/runs are asked: a selection (where:
// DIM=VALUE, values of one dimension alternatives), a text search, a
// metric to sort by, and a page.
type RunQuery struct {
	Where         []string
	Q             string
	Sort          string // a metric (analysis.AllMetrics); "": the warehouse's order
	Desc          bool
	Limit, Offset int
}

// MaxLimit bounds a page of runs.
const MaxLimit = 500

// parseRunQuery reads a RunQuery from a URL's query.
func parseRunQuery(q url.Values) (RunQuery, error) {
	rq := RunQuery{Q: strings.TrimSpace(q.Get("q")), Sort: q.Get("sort"), Desc: q.Get("desc") == "1", Limit: 50}
	// A where value may hold several, separated by ";" (the page's one
	// field); values hold spaces ("Claude Opus 5").
	for _, w := range q["where"] {
		for _, part := range strings.Split(w, ";") {
			if part = strings.TrimSpace(part); part != "" {
				rq.Where = append(rq.Where, part)
			}
		}
	}
	for _, f := range []struct {
		name string
		into *int
	}{{"limit", &rq.Limit}, {"offset", &rq.Offset}} {
		if v := q.Get(f.name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return rq, analysis.Optionf("%s: expected a whole number ≥ 0, found %q", f.name, v)
			}
			*f.into = n
		}
	}
	if rq.Limit == 0 || rq.Limit > MaxLimit {
		rq.Limit = min(max(rq.Limit, 50), MaxLimit)
	}
	if rq.Sort != "" && analysis.MetricIndex(rq.Sort) < 0 {
		return rq, analysis.Optionf("sort: unknown metric %q: expected one of %s", rq.Sort, strings.Join(analysis.MetricNames(), ", "))
	}
	return rq, nil
}

// encode is the query string of rq (for links), with sort and offset
// changed as given.
func (rq RunQuery) encode(sortBy string, desc bool, offset int) string {
	v := url.Values{}
	for _, w := range rq.Where {
		v.Add("where", w)
	}
	if rq.Q != "" {
		v.Set("q", rq.Q)
	}
	if sortBy != "" {
		v.Set("sort", sortBy)
		if desc {
			v.Set("desc", "1")
		}
	}
	if offset > 0 {
		v.Set("offset", strconv.Itoa(offset))
	}
	if rq.Limit != 50 {
		v.Set("limit", strconv.Itoa(rq.Limit))
	}
	return v.Encode()
}

// RunSummary is a run as the list shows it: its dimensions and the four
// main metrics (nil: none).
type RunSummary struct {
	RunID        string              `json:"run_id"`
	Config       string              `json:"config"`
	Model        string              `json:"model"`
	Harness      string              `json:"harness"`
	Effort       string              `json:"effort"`
	Scenario     string              `json:"scenario"`
	Persona      string              `json:"persona"`
	PersonaGroup string              `json:"persona_group"`
	Rep          int                 `json:"rep"`
	Metrics      map[string]*float64 `json:"metrics"`
}

// RunList is a page of runs and how many the selection holds.
type RunList struct {
	Total  int          `json:"total"`
	Offset int          `json:"offset"`
	Limit  int          `json:"limit"`
	Runs   []RunSummary `json:"runs"`
}

func value(x float64) *float64 {
	if math.IsNaN(x) {
		return nil
	}
	return &x
}

func summary(r *rows.RunRow, vals []float64) RunSummary {
	s := RunSummary{RunID: r.RunID, Config: r.ConfigID, Model: r.Model, Harness: r.Harness, Effort: r.Effort, Scenario: r.Scenario,
		Persona: r.Persona, PersonaGroup: r.PersonaGroup, Rep: r.Rep, Metrics: map[string]*float64{}}
	for _, m := range analysis.MainMetrics {
		s.Metrics[m] = value(vals[analysis.MetricIndex(m)])
	}
	return s
}

// selectRuns applies a RunQuery to the runs: the selection, the search
// (matches, from the store), the order (NaN last either way; ties in the
// warehouse's order) and the page.
func selectRuns(v *reports.Values, rq RunQuery, matches map[string]bool) (RunList, error) {
	where, err := analysis.ParseWhere(rq.Where, nil, "")
	if err != nil {
		return RunList{}, err
	}
	var idx []int
	for i := range v.Runs {
		r := &v.Runs[i]
		if matches != nil && !matches[r.RunID] {
			continue
		}
		keep := true
		for d, vals := range where {
			if !slices.Contains(vals, analysis.DimValue(r, d)) {
				keep = false
				break
			}
		}
		if keep {
			idx = append(idx, i)
		}
	}
	if rq.Sort != "" {
		m := analysis.MetricIndex(rq.Sort)
		sort.SliceStable(idx, func(a, b int) bool {
			x, y := v.Values[idx[a]][m], v.Values[idx[b]][m]
			if math.IsNaN(x) || math.IsNaN(y) {
				return !math.IsNaN(x) && math.IsNaN(y)
			}
			if rq.Desc {
				return x > y
			}
			return x < y
		})
	}
	out := RunList{Total: len(idx), Offset: rq.Offset, Limit: rq.Limit, Runs: []RunSummary{}}
	for _, i := range idx[min(rq.Offset, len(idx)):min(rq.Offset+rq.Limit, len(idx))] {
		out.Runs = append(out.Runs, summary(&v.Runs[i], v.Values[i]))
	}
	return out, nil
}

// findRun is the run with the id, and its metric values.
func findRun(v *reports.Values, id string) (*rows.RunRow, []float64, bool) {
	for i := range v.Runs {
		if v.Runs[i].RunID == id {
			return &v.Runs[i], v.Values[i], true
		}
	}
	return nil, nil, false
}

// runPath is the viewer's address of a run.
func runPath(id string) string { return "/runs/" + url.PathEscape(id) }
