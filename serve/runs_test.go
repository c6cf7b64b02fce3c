package serve

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net/url"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gymlens/gymlens/analysis"
	"github.com/gymlens/gymlens/ingest/rows"
	"github.com/gymlens/gymlens/reports"
)

// selectByDefinition is a runs query as its comment defines it: the runs
// selected, sorted stably (NaN last either way), then paged — the way
// /runs answered before the index.
func selectByDefinition(v *reports.Values, rq RunQuery, matches map[string]bool) RunList {
	where, err := analysis.ParseWhere(rq.Where, nil, "")
	if err != nil {
		panic(err)
	}
	var idx []int
	for i := range v.Runs {
		r := &v.Runs[i]
		keep := matches == nil || matches[r.RunID]
		for d, vals := range where {
			keep = keep && slices.Contains(vals, analysis.DimValue(r, d))
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
	return out
}

// The index's sorted orders, shared between queries, give what selecting
// and then sorting gives: the same runs in the same order, ties and NaN
// included, for every metric, direction, selection, search and page.
func TestSelectRunsIsTheSortedSelection(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	v := &reports.Values{}
	for i := range 700 {
		r := rows.RunRow{RunID: fmt.Sprintf("r%03d", i), ConfigID: fmt.Sprintf("c%d", rng.IntN(5)), Harness: []string{"CC", "OC", "CD"}[rng.IntN(3)],
			Scenario: fmt.Sprintf("s%d", rng.IntN(4)), Persona: fmt.Sprintf("p%d", rng.IntN(3)), PersonaGroup: []string{"E", "S"}[rng.IntN(2)], Rep: 1 + rng.IntN(3)}
		vals := make([]float64, len(analysis.AllMetrics))
		for m := range vals {
			switch k := rng.IntN(10); {
			case k == 0:
				vals[m] = math.NaN()
			case k == 1:
				vals[m] = math.Copysign(0, -1) // −0 ties with 0
			case k < 5:
				vals[m] = float64(rng.IntN(4)) // ties
			default:
				vals[m] = rng.Float64() * 100
			}
		}
		v.Runs = append(v.Runs, r)
		v.Values = append(v.Values, vals)
	}
	ix := newRunIndex(v)
	matches := map[string]bool{}
	for i := range v.Runs {
		if rng.IntN(3) == 0 {
			matches[v.Runs[i].RunID] = true
		}
	}
	wheres := [][]string{nil, {"harness=CC"}, {"persona_group=S", "scenario=s1"}, {"harness=CC", "harness=OC"}, {"config=nobody"}}
	queries := 0
	for _, metric := range append([]string{""}, analysis.MainMetrics...) {
		for _, desc := range []bool{false, true} {
			for _, where := range wheres {
				for _, m := range []map[string]bool{nil, matches} {
					q := ""
					if m != nil {
						q = "a search"
					}
					searches := 0
					search := func() (map[string]bool, error) { searches++; return m, nil }
					for _, page := range [][2]int{{0, 50}, {37, 50}, {0, 500}, {690, 50}, {5000, 50}} {
						rq := RunQuery{Where: where, Q: q, Sort: metric, Desc: desc, Offset: page[0], Limit: page[1]}
						got, err := selectRuns(ix, rq, search)
						if err != nil {
							t.Fatal(err)
						}
						if want := selectByDefinition(v, rq, m); !reflect.DeepEqual(got, want) {
							t.Fatalf("%+v: got %d runs of %d, want %d of %d", rq, len(got.Runs), got.Total, len(want.Runs), want.Total)
						}
						queries++
					}
					// The pages of one query share its selection: one search.
					if want := min(1, len(q)); searches != want {
						t.Fatalf("where %v, sort %q: %d searches for five pages, want %d", where, metric, searches, want)
					}
				}
			}
		}
	}
	// Every order was computed once and kept.
	if len(ix.orders) != 2*len(analysis.MainMetrics) {
		t.Errorf("%d orders kept after %d queries, want %d", len(ix.orders), queries, 2*len(analysis.MainMetrics))
	}
	if len(ix.selections) != maxSelections {
		t.Errorf("%d selections kept, want the last %d", len(ix.selections), maxSelections)
	}
	// The oldest selection is gone: its query searches again; the newest
	// is kept.
	searches := 0
	search := func() (map[string]bool, error) { searches++; return matches, nil }
	first := RunQuery{Where: wheres[0], Q: "a search", Limit: 50}
	last := RunQuery{Where: wheres[len(wheres)-1], Q: "a search", Sort: analysis.MainMetrics[len(analysis.MainMetrics)-1], Desc: true, Limit: 50}
	for _, rq := range []RunQuery{last, first, first} {
		if _, err := selectRuns(ix, rq, search); err != nil {
			t.Fatal(err)
		}
	}
	if searches != 1 {
		t.Errorf("%d searches, want 1 (the evicted selection's, once)", searches)
	}
	if _, err := selectRuns(ix, RunQuery{Where: []string{"nodim"}}, search); err == nil {
		t.Error("a where without = is accepted")
	}
	if _, err := selectRuns(ix, RunQuery{Q: "fails"}, func() (map[string]bool, error) { return nil, errors.New("the search failed") }); err == nil {
		t.Error("a failed search gives a list")
	}
}

// Queries of one new selection that arrive together (a burst of pages of
// one list) make it once, the others waiting for it; when the one making
// it fails (its request's search cancelled), a waiting query makes it
// again with its own search.
func TestOneSelectionMadeOnceAtATime(t *testing.T) {
	v := &reports.Values{}
	for i := range 300 {
		v.Runs = append(v.Runs, rows.RunRow{RunID: fmt.Sprintf("r%03d", i), Harness: []string{"CC", "OC"}[i%2]})
		v.Values = append(v.Values, make([]float64, len(analysis.AllMetrics)))
	}
	ix := newRunIndex(v)
	matches := map[string]bool{"r001": true, "r002": true, "r003": true}
	for _, failFirst := range []bool{false, true} {
		var mu sync.Mutex
		searches := 0
		release := make(chan struct{})
		search := func() (map[string]bool, error) {
			mu.Lock()
			searches++
			n := searches
			mu.Unlock()
			if n == 1 {
				<-release // every other query arrives meanwhile
				if failFirst {
					return nil, errors.New("cancelled")
				}
			}
			return matches, nil
		}
		q := fmt.Sprint("seminar ", failFirst)
		const queries = 20
		errs := make(chan error, queries)
		var wg sync.WaitGroup
		for i := range queries {
			wg.Go(func() {
				got, err := selectRuns(ix, RunQuery{Q: q, Where: []string{"harness=OC"}, Offset: i % 2, Limit: 50}, search)
				if err == nil && got.Total != 2 {
					err = fmt.Errorf("%d runs, want r001 and r003", got.Total)
				}
				errs <- err
			})
		}
		for {
			ix.mu.Lock()
			waiting := ix.making[selectionKey(RunQuery{Q: q, Where: []string{"harness=OC"}})] != nil
			ix.mu.Unlock()
			if waiting {
				break
			}
			time.Sleep(time.Millisecond)
		}
		time.Sleep(20 * time.Millisecond) // the others reach the wait
		close(release)
		wg.Wait()
		close(errs)
		failed := 0
		for err := range errs {
			if err != nil {
				failed++
			}
		}
		want, wantFailed := 1, 0
		if failFirst {
			want, wantFailed = 2, 1
		}
		if searches != want || failed != wantFailed {
			t.Errorf("first fails %v: %d searches, %d queries failed; want %d and %d", failFirst, searches, failed, want, wantFailed)
		}
	}
}

// A run's counterparts are the runs of its scenario, persona and
// repetition in the other configurations: on the page (linked, with a
// comparison) and in the JSON.
func TestCounterparts(t *testing.T) {
	s, _ := newServer(t, "")
	id, other := "Model A/s1/p/1", "Model "+payload+"/s1/p/1"
	var d RunDetail
	if err := json.Unmarshal(get(t, s, "/api/runs/"+url.PathEscape(id)).Body.Bytes(), &d); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range d.Counterparts {
		got = append(got, c.RunID)
	}
	if !slices.Equal(got, []string{other}) {
		t.Errorf("counterparts of %s: %q, want the other configuration's run of s1 alone", id, got)
	}
	if n := strings.Count(get(t, s, runPath(id)).Body.String(), "compare side by side"); n != 1 {
		t.Errorf("run page: %d comparison links, want 1", n)
	}
}

// A queue's runs are its items' runs, each once, in the warehouse's
// order, with their tasks read; items without a run or with a run not
// there add none.
func TestQueueRuns(t *testing.T) {
	s, _ := newServer(t, "")
	a, b := "Model A/s2 "+payload+"/p/1", "Model A/s1/p/1"
	st := analysis.NewQueueState(rows.Queue{}, []rows.QueueItem{{RunID: a, Task: "t1"}, {RunID: b}, {RunID: a}, {RunID: ""}, {RunID: "gone"}}, nil)
	runs, err := s.queueRuns(t.Context(), st)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range runs {
		got = append(got, r.RunID)
		if len(r.Tasks) != 1 || len(r.TA) != 1 {
			t.Errorf("%s: %d tasks and %d TA judgments read, want 1 and 1", r.RunID, len(r.Tasks), len(r.TA))
		}
	}
	if want := []string{b, a}; !slices.Equal(got, want) {
		t.Errorf("queue runs %q, want %q", got, want)
	}
}

// The same list asked for at once by many is kept once, and every one of
// them gets it.
func TestSelectionsAskedAtOnce(t *testing.T) {
	v := &reports.Values{}
	for i := range 2000 {
		v.Runs = append(v.Runs, rows.RunRow{RunID: fmt.Sprintf("r%04d", i), Harness: []string{"CC", "OC"}[i%2]})
		vals := make([]float64, len(analysis.AllMetrics))
		vals[analysis.MetricIndex("TC")] = float64(i % 7)
		v.Values = append(v.Values, vals)
	}
	ix := newRunIndex(v)
	rq := RunQuery{Where: []string{"harness=OC"}, Sort: "TC", Desc: true, Limit: 50}
	want := selectByDefinition(v, rq, nil)
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			got, err := selectRuns(ix, rq, nil)
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Errorf("a list asked for at once: %v, %d runs of %d", err, len(got.Runs), got.Total)
			}
		})
	}
	wg.Wait()
	if len(ix.selections) != 1 || len(ix.orders) != 1 {
		t.Errorf("%d selections and %d orders kept, want 1 and 1", len(ix.selections), len(ix.orders))
	}
}
