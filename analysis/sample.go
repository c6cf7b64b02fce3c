package analysis

import (
	"fmt"
	"math/rand/v2"
	"sort"

	"github.com/gymlens/gymlens/ingest/rows"
)

// SampleItem is a run, or one of its active tasks, drawn for humans to
// rate, with its stratum (the run's value of the dimension stratified by).
type SampleItem struct {
	Run     *rows.RunRow
	Task    string // "" when the unit is the run
	Stratum string
}

// ByRun maps each drawn item's run to its tasks (what judge.VisibleHistories
// asks for).
func ByRun(items []SampleItem) map[string][]string {
	need := map[string][]string{}
	for _, it := range items {
		need[it.Run.RunID] = append(need[it.Run.RunID], it.Task)
	}
	return need
}

// StratifiedSample draws n items (unit "task": the runs' active tasks;
// "run": the runs) without replacement. Strata are the values of
// dimension by ("": one stratum); each gets a share of n proportional to
// its size, by largest remainders (ties in stratum order), and within a
// stratum the items are drawn by a PCG generator seeded (seed, stratum
// number). Items come in stratum order, then in the order of runs. It
// returns the items and the number of strata.
func StratifiedSample(runs []rows.RunRow, unit, by string, n int, seed uint64) ([]SampleItem, int, error) {
	return StratifiedSampleOf(runs, func(i int) []string { return TaskNames(&runs[i]) }, unit, by, n, seed)
}

// TaskNames are the names of r's active tasks, in their order.
func TaskNames(r *rows.RunRow) []string {
	names := make([]string, len(r.Tasks))
	for k, t := range r.Tasks {
		names[k] = t.Task
	}
	return names
}

// StratifiedSampleOf is StratifiedSample with the runs' active tasks given
// by tasks (run i's, in their order), so that the runs need not hold
// them. It keeps no more than a count per stratum and the items drawn:
// the draw is made on the strata's sizes, then the items are picked out
// in a second pass over the runs.
func StratifiedSampleOf(runs []rows.RunRow, tasks func(i int) []string, unit, by string, n int, seed uint64) ([]SampleItem, int, error) {
	if unit != "task" && unit != "run" {
		return nil, 0, Optionf("--unit: expected task or run, found %q", unit)
	}
	if by != "" {
		if err := CheckDimension(by); err != nil {
			return nil, 0, Optionf("--by: %v", err)
		}
	}
	if n <= 0 {
		return nil, 0, Optionf("-n: expected a positive number, found %d", n)
	}
	stratumOf := func(i int) string {
		if by == "" {
			return ""
		}
		return DimValue(&runs[i], by)
	}
	size := map[string]int{}
	for i := range runs {
		if unit == "run" {
			size[stratumOf(i)]++
		} else {
			size[stratumOf(i)] += len(tasks(i))
		}
	}
	keys := sortedKeys(size)
	total := 0
	for _, k := range keys {
		total += size[k]
	}
	if n > total {
		return nil, 0, fmt.Errorf("-n %d: only %d %ss to draw from", n, total, unit)
	}
	// Proportional allocation, largest remainders (ties by stratum order).
	alloc := make([]int, len(keys))
	type rem struct {
		i int
		r float64
	}
	var rems []rem
	given := 0
	for i, k := range keys {
		exact := float64(n) * float64(size[k]) / float64(total)
		alloc[i] = int(exact)
		given += alloc[i]
		rems = append(rems, rem{i, exact - float64(alloc[i])})
	}
	sort.SliceStable(rems, func(a, b int) bool { return rems[a].r > rems[b].r })
	for k := 0; given < n; k++ {
		alloc[rems[k].i]++
		given++
	}
	// Each stratum's picks, as places among its items in run order, then
	// the items at those places.
	type picks struct {
		at     []int // sorted
		next   int   // the stratum's next item's place
		chosen []SampleItem
	}
	strata := make(map[string]*picks, len(keys))
	for i, k := range keys {
		rng := rand.New(rand.NewPCG(seed, uint64(i)))
		at := rng.Perm(size[k])[:alloc[i]]
		sort.Ints(at)
		strata[k] = &picks{at: at}
	}
	take := func(p *picks, it SampleItem) {
		if len(p.chosen) < len(p.at) && p.at[len(p.chosen)] == p.next {
			p.chosen = append(p.chosen, it)
		}
		p.next++
	}
	for i := range runs {
		key := stratumOf(i)
		p := strata[key]
		if unit == "run" {
			take(p, SampleItem{Run: &runs[i], Stratum: key})
			continue
		}
		for _, t := range tasks(i) {
			take(p, SampleItem{Run: &runs[i], Task: t, Stratum: key})
		}
	}
	var chosen []SampleItem
	for _, k := range keys {
		chosen = append(chosen, strata[k].chosen...)
	}
	return chosen, len(keys), nil
}
