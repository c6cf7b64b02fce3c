package analysis

import (
	"sort"

	"github.com/gymlens/gymlens/ingest/rows"
)

// HarnessPairs pairs, for every model and effort run on both harnesses,
// the runs on from with the runs on to.
func HarnessPairs(runs []rows.RunRow, byConfig map[string]Group, from, to string) []Pair {
	type me struct{ model, effort string }
	seen := map[me]bool{}
	var keys []me
	for _, g := range byConfig {
		r := runs[g.Runs[0]]
		k := me{r.Model, r.Effort}
		if !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(a, b int) bool {
		if keys[a].model != keys[b].model {
			return keys[a].model < keys[b].model
		}
		return keys[a].effort < keys[b].effort
	})
	var pairs []Pair
	for _, k := range keys {
		a, okA := byConfig[rows.ConfigID(k.model, from, k.effort)]
		b, okB := byConfig[rows.ConfigID(k.model, to, k.effort)]
		if okA && okB {
			pairs = append(pairs, Pair{A: rows.ConfigID(k.model, from, k.effort), B: rows.ConfigID(k.model, to, k.effort),
				RunsA: a.Runs, RunsB: b.Runs})
		}
	}
	return pairs
}
