package judge

import (
	"cmp"
	"container/heap"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/gymlens/gymlens/ingest/rows"
)

// The items --limit N judges are a stratified random sample, per metric:
// the strata are the cells of configuration × scenario, and N is shared
// out equally among them. Each cell's items are put in a random order
// fixed by the seed (a hash of the seed, the metric, the run and the
// task); the sample is the items of rank 1 in every cell, then those of
// rank 2, and so on, until N are taken, the cells of the last rank taken
// in the same random order. A cell with fewer items than its share gives
// all it has and the others make up the rest; cells' shares differ by at
// most one. The same warehouse, N and seed draw the same items, and a
// larger N draws every item a smaller one does.

// sampleItem is an item of a cell, with its place in the cell's random
// order.
type sampleItem struct {
	prio      uint64
	run, task string
	rank      int // its rank in its cell, from 0 (set once the cell is read)
}

// itemHeap is a max-heap by priority: the cell's items kept so far, the
// last of the random order on top.
type itemHeap []sampleItem

func (h itemHeap) Len() int           { return len(h) }
func (h itemHeap) Less(i, j int) bool { return h[i].prio > h[j].prio }
func (h itemHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *itemHeap) Push(x any)        { *h = append(*h, x.(sampleItem)) }
func (h *itemHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// samplePriority is an item's place in its cell's random order.
func samplePriority(seed int64, metric, run, task string) uint64 {
	sum := sha256.Sum256(fmt.Appendf(nil, "%d\x00%s\x00%s\x00%s", seed, metric, run, task))
	return binary.BigEndian.Uint64(sum[:8])
}

// sampleCell is an item's stratum.
func sampleCell(r *rows.JudgeRun) string { return r.ConfigID + "\x00" + r.Scenario }

// sampleItems draws the items of each metric that --limit judges (see
// above), in two passes over the runs' heads (the runs of opt.Runs,
// slice at a time): one counts each cell's items, the other keeps each
// cell's first items in its random order, as many as the sample can take
// of one cell. What it holds is the sample and one count per cell.
func sampleItems(ctx context.Context, w Store, opt RunOptions, rubs []*Rubric, slice int) (map[itemKey]bool, error) {
	each := func(fn func([]*rows.JudgeRun)) error {
		after := ""
		for {
			part, err := w.JudgeHeads(ctx, after, slice)
			if err != nil || len(part) == 0 {
				return err
			}
			after = part[len(part)-1].RunID
			if opt.Runs != nil {
				part = slices.DeleteFunc(part, func(r *rows.JudgeRun) bool { return !opt.Runs[r.RunID] })
			}
			fn(part)
		}
	}
	counts := make([]map[string]int, len(rubs))
	for i := range counts {
		counts[i] = map[string]int{}
	}
	if err := each(func(part []*rows.JudgeRun) {
		for i, rb := range rubs {
			for _, st := range stubsOf(part, rb) {
				counts[i][sampleCell(st.run)]++
			}
		}
	}); err != nil {
		return nil, err
	}
	// depth[i]: the ranks metric i needs, the fewest R with
	// Σ_cells min(items, R) ≥ N.
	depth := make([]int, len(rubs))
	for i := range rubs {
		sizes := slices.Sorted(func(yield func(int) bool) {
			for _, n := range counts[i] {
				if !yield(n) {
					return
				}
			}
		})
		left, prev := opt.Limit, 0
		for k, n := range sizes {
			// Every cell still counted gives n − prev more items at ranks
			// prev+1 … n.
			cells := len(sizes) - k
			if (n-prev)*cells >= left {
				depth[i] = prev + (left+cells-1)/cells
				left = 0
				break
			}
			left -= (n - prev) * cells
			prev = n
		}
		if left > 0 {
			depth[i] = prev // fewer items than N: all of them
		}
	}
	kept := make([]map[string]*itemHeap, len(rubs))
	for i := range kept {
		kept[i] = map[string]*itemHeap{}
	}
	if err := each(func(part []*rows.JudgeRun) {
		for i, rb := range rubs {
			for _, st := range stubsOf(part, rb) {
				c := sampleCell(st.run)
				h := kept[i][c]
				if h == nil {
					h = &itemHeap{}
					kept[i][c] = h
				}
				it := sampleItem{prio: samplePriority(opt.Client.Seed, rb.Metric, st.run.RunID, st.task), run: st.run.RunID, task: st.task}
				if h.Len() < depth[i] {
					heap.Push(h, it)
				} else if h.Len() > 0 && it.prio < (*h)[0].prio {
					(*h)[0] = it
					heap.Fix(h, 0)
				}
			}
		}
	}); err != nil {
		return nil, err
	}
	out := map[itemKey]bool{}
	for i, rb := range rubs {
		var all []sampleItem
		for _, h := range kept[i] {
			items := []sampleItem(*h)
			slices.SortFunc(items, func(a, b sampleItem) int { return cmp.Compare(a.prio, b.prio) })
			for r := range items {
				items[r].rank = r
			}
			all = append(all, items...)
		}
		slices.SortFunc(all, func(a, b sampleItem) int {
			return cmp.Or(cmp.Compare(a.rank, b.rank), cmp.Compare(a.prio, b.prio), cmp.Compare(a.run, b.run), cmp.Compare(a.task, b.task))
		})
		for _, it := range all[:min(len(all), opt.Limit)] {
			out[itemKey{rb.Metric, it.run, it.task}] = true
		}
	}
	return out, ctx.Err()
}
