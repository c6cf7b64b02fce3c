package serve

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"

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

// runIndex finds the viewer's runs without a pass over all of them: by
// id, by (scenario, persona, repetition) for a run's counterparts, and
// every metric's order (each computed once, when a list is first sorted
// by it). The values it indexes never change once read.
type runIndex struct {
	v     *reports.Values
	byID  map[string]int
	cells map[runCell][]int32 // in the warehouse's order

	mu         sync.Mutex           // guards orders, selections and making
	orders     map[runOrder][]int32 // places as int32: half the memory at 234,000 runs
	selections []selection          // the newest first
	making     map[string]*making   // selections being made, by key
}

// making is a selection being made: the queries that ask for it
// meanwhile wait for it (a burst of pages of one new list makes it once).
type making struct {
	done chan struct{}
	runs []int32
	err  error
}

type runCell struct {
	scenario, persona string
	rep               int
}

type runOrder struct {
	metric int
	desc   bool
}

func newRunIndex(v *reports.Values) *runIndex {
	ix := &runIndex{v: v, byID: make(map[string]int, len(v.Runs)), cells: map[runCell][]int32{}, orders: map[runOrder][]int32{}}
	for i := range v.Runs {
		r := &v.Runs[i]
		if _, ok := ix.byID[r.RunID]; !ok {
			ix.byID[r.RunID] = i
		}
		c := runCell{r.Scenario, r.Persona, r.Rep}
		ix.cells[c] = append(ix.cells[c], int32(i))
	}
	return ix
}

// order is every run's place in the warehouse, sorted by metric m (NaN
// last either way; ties in the warehouse's order). Shared: not to be
// changed.
func (ix *runIndex) order(m int, desc bool) []int32 {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	key := runOrder{m, desc}
	if o, ok := ix.orders[key]; ok {
		return o
	}
	o := make([]int32, len(ix.v.Runs))
	for i := range o {
		o[i] = int32(i)
	}
	vals := ix.v.Values
	slices.SortStableFunc(o, func(a, b int32) int {
		x, y := vals[a][m], vals[b][m]
		switch nx, ny := math.IsNaN(x), math.IsNaN(y); {
		case nx || ny:
			return cmp.Compare(b2i(nx), b2i(ny))
		case desc:
			return cmp.Compare(y, x)
		}
		return cmp.Compare(x, y)
	})
	ix.orders[key] = o
	return o
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// maxSelections is how many runs queries' selections the index keeps
// (a list is paged through: the next page costs no selection).
const maxSelections = 8

type selection struct {
	key  string
	runs []int32 // places in the values, in the query's order
}

// selectionKey is what a query's selection depends on: not its page.
func selectionKey(rq RunQuery) string {
	return fmt.Sprintf("%q %q %q %t", rq.Where, rq.Q, rq.Sort, rq.Desc)
}

// selectRuns applies a RunQuery to the runs: the selection, the search
// (search gives the runs whose trajectory matches rq.Q; asked only when
// the selection is not kept), the order (NaN last either way; ties in
// the warehouse's order) and the page.
func selectRuns(ix *runIndex, rq RunQuery, search func() (map[string]bool, error)) (RunList, error) {
	sel, err := ix.selection(rq, search)
	if err != nil {
		return RunList{}, err
	}
	out := RunList{Total: len(sel), Offset: rq.Offset, Limit: rq.Limit, Runs: []RunSummary{}}
	for _, i := range sel[min(rq.Offset, len(sel)):min(rq.Offset+rq.Limit, len(sel))] {
		out.Runs = append(out.Runs, summary(&ix.v.Runs[i], ix.v.Values[i]))
	}
	return out, nil
}

// selection is the runs a query selects, in its order: the runs taken
// in the metric's order and then selected, which is the selection
// sorted stably. The last maxSelections are kept. Shared: not to be
// changed.
func (ix *runIndex) selection(rq RunQuery, search func() (map[string]bool, error)) ([]int32, error) {
	key := selectionKey(rq)
	for {
		ix.mu.Lock()
		for k, s := range ix.selections {
			if s.key == key {
				// The newest first.
				copy(ix.selections[1:k+1], ix.selections[:k])
				ix.selections[0] = s
				ix.mu.Unlock()
				return s.runs, nil
			}
		}
		m := ix.making[key]
		if m == nil {
			break // made below, with the lock held
		}
		ix.mu.Unlock()
		<-m.done
		if m.err == nil {
			return m.runs, nil
		}
		// Failed (its request's search cancelled, say): this query
		// makes it again, its own search asked.
	}
	m := &making{done: make(chan struct{})}
	if ix.making == nil {
		ix.making = map[string]*making{}
	}
	ix.making[key] = m
	ix.mu.Unlock()
	m.err = errors.New("the selection was not made") // unless makeSelection returns
	defer func() {
		ix.mu.Lock()
		delete(ix.making, key)
		if m.err == nil {
			ix.selections = append([]selection{{key, m.runs}}, ix.selections[:min(len(ix.selections), maxSelections-1)]...)
		}
		ix.mu.Unlock()
		close(m.done)
	}()
	m.runs, m.err = ix.makeSelection(rq, search)
	return m.runs, m.err
}

// makeSelection is the runs a query selects, in its order.
func (ix *runIndex) makeSelection(rq RunQuery, search func() (map[string]bool, error)) ([]int32, error) {
	v := ix.v
	where, err := analysis.ParseWhere(rq.Where, nil, "")
	if err != nil {
		return nil, err
	}
	var matches map[string]bool
	if rq.Q != "" {
		if matches, err = search(); err != nil {
			return nil, err
		}
	}
	// The conditions as a slice: a map's iteration, once per run, cost
	// more than the rest of the selection.
	type cond struct {
		dim  string
		vals []string
	}
	var conds []cond
	for d, vals := range where {
		conds = append(conds, cond{d, vals})
	}
	sel := []int32{}
	take := func(i int) {
		r := &v.Runs[i]
		if matches != nil && !matches[r.RunID] {
			return
		}
		for _, c := range conds {
			if !slices.Contains(c.vals, analysis.DimValue(r, c.dim)) {
				return
			}
		}
		sel = append(sel, int32(i))
	}
	if rq.Sort != "" {
		for _, i := range ix.order(analysis.MetricIndex(rq.Sort), rq.Desc) {
			take(int(i))
		}
	} else {
		for i := range v.Runs {
			take(i)
		}
	}
	return sel, nil
}

// findRun is the run with the id, and its metric values.
func (ix *runIndex) findRun(id string) (*rows.RunRow, []float64, bool) {
	i, ok := ix.byID[id]
	if !ok {
		return nil, nil, false
	}
	return &ix.v.Runs[i], ix.v.Values[i], true
}

// runPath is the viewer's address of a run.
func runPath(id string) string { return "/runs/" + url.PathEscape(id) }
