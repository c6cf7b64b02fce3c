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
	strata := map[string][]SampleItem{}
	for i := range runs {
		r := &runs[i]
		key := ""
		if by != "" {
			key = DimValue(r, by)
		}
		if unit == "run" {
			strata[key] = append(strata[key], SampleItem{Run: r, Stratum: key})
			continue
		}
		for _, t := range r.Tasks {
			strata[key] = append(strata[key], SampleItem{Run: r, Task: t.Task, Stratum: key})
		}
	}
	keys := sortedKeys(strata)
	total := 0
	for _, k := range keys {
		total += len(strata[k])
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
		exact := float64(n) * float64(len(strata[k])) / float64(total)
		alloc[i] = int(exact)
		given += alloc[i]
		rems = append(rems, rem{i, exact - float64(alloc[i])})
	}
	sort.SliceStable(rems, func(a, b int) bool { return rems[a].r > rems[b].r })
	for k := 0; given < n; k++ {
		alloc[rems[k].i]++
		given++
	}
	var chosen []SampleItem
	for i, k := range keys {
		items := strata[k]
		rng := rand.New(rand.NewPCG(seed, uint64(i)))
		perm := rng.Perm(len(items))
		pick := perm[:alloc[i]]
		sort.Ints(pick)
		for _, p := range pick {
			chosen = append(chosen, items[p])
		}
	}
	return chosen, len(keys), nil
}
