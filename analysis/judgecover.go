package analysis

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/gymlens/gymlens/ingest/rows"
)

// How judges are combined (docs/judge.md, "Judges that cover different
// items"): an item's judged value is the mean over the judges that judged
// it, whichever they are; a judge that judged some items only therefore
// moves those items' values and no other's. JudgeCoverage finds such
// judges so that every output that averages them can say so.

// JudgeCoverage counts, per judged metric family (TC, TA, TR-J and each
// user rubric's custom.NAME), the items that some judge judged and those
// each judge judged, per cell of runs: configuration × scenario ×
// persona, of which every dimension a group or a selection is made of
// is a function. It holds a count per cell, family and judge, and a cell
// index per run: any selection's coverage is summed from its cells.
type JudgeCoverage struct {
	cellOf  map[string]int32
	cellCfg []string // each cell's configuration
	runCell []int32  // per run, in the order added
	n       map[coverKey]int64
}

// coverKey counts a cell's items of a family, judged by judge ("": by
// any).
type coverKey struct {
	cell          int32
	family, judge string
}

// NewJudgeCoverage makes an empty count.
func NewJudgeCoverage() *JudgeCoverage {
	return &JudgeCoverage{cellOf: map[string]int32{}, n: map[coverKey]int64{}}
}

// Add counts a run's judged items: its tasks' TC, TR-J and rubric
// judgments, its TA and run-level rubric judgments. Runs are numbered in
// the order they are added. A judge asked several times about an item
// judged it once.
func (c *JudgeCoverage) Add(r *rows.RunRow) {
	key := r.ConfigID + "\x00" + r.Scenario + "\x00" + r.Persona
	cell, ok := c.cellOf[key]
	if !ok {
		cell = int32(len(c.cellCfg))
		c.cellOf[key] = cell
		c.cellCfg = append(c.cellCfg, r.ConfigID)
	}
	c.runCell = append(c.runCell, cell)
	// The run's counts first, then into the map once each.
	var local []coverCount
	item := func(family string, judges []string) {
		if len(judges) == 0 {
			return
		}
		local = bump(local, family, "")
		for i, j := range judges {
			if !slices.Contains(judges[:i], j) {
				local = bump(local, family, j)
			}
		}
	}
	var judges []string
	for k := range r.Tasks {
		t := &r.Tasks[k]
		judges = judges[:0]
		for _, j := range t.TC {
			judges = append(judges, j.Judge)
		}
		item("TC", judges)
		judges = judges[:0]
		for _, j := range t.TRJ {
			judges = append(judges, j.Judge)
		}
		item("TR-J", judges)
		customItems(t.Custom, item)
	}
	judges = judges[:0]
	for _, j := range r.TA {
		judges = append(judges, j.Judge)
	}
	item("TA", judges)
	customItems(r.Custom, item)
	for _, x := range local {
		c.n[coverKey{cell, x.family, x.judge}] += x.n
	}
}

type coverCount struct {
	family, judge string
	n             int64
}

func bump(l []coverCount, family, judge string) []coverCount {
	for i := range l {
		if l[i].family == family && l[i].judge == judge {
			l[i].n++
			return l
		}
	}
	return append(l, coverCount{family, judge, 1})
}

// customItems calls item once per rubric metric of an item's judgments.
func customItems(cs []rows.CustomJudgment, item func(string, []string)) {
	for i, x := range cs {
		if slices.ContainsFunc(cs[:i], func(y rows.CustomJudgment) bool { return y.Metric == x.Metric }) {
			continue
		}
		var judges []string
		for _, y := range cs[i:] {
			if y.Metric == x.Metric {
				judges = append(judges, y.Judge)
			}
		}
		item(x.Metric, judges)
	}
}

// Notes says, for the runs given (their numbers in the order added), of
// each family, which judge judged some but not all of the items some
// judge judged: its share and the configurations it touched (named when
// at most three). None when every judge judged every item or none.
func (c *JudgeCoverage) Notes(runs []int) []string {
	if c == nil {
		return nil
	}
	in := make([]bool, len(c.cellCfg))
	for _, i := range runs {
		in[c.runCell[i]] = true
	}
	type fj struct{ family, judge string }
	total := map[fj]int64{}
	byCfg := map[fj]map[string]int64{}
	for k, n := range c.n {
		if !in[k.cell] {
			continue
		}
		x := fj{k.family, k.judge}
		total[x] += n
		if byCfg[x] == nil {
			byCfg[x] = map[string]int64{}
		}
		byCfg[x][c.cellCfg[k.cell]] += n
	}
	var out []string
	for _, x := range slices.SortedFunc(maps.Keys(total), func(a, b fj) int {
		return cmpFamily(a.family, b.family)*4 + strings.Compare(a.judge, b.judge)
	}) {
		all := total[fj{x.family, ""}]
		if x.judge == "" || total[x] >= all {
			continue
		}
		cfgs := slices.Sorted(maps.Keys(byCfg[x]))
		where := fmt.Sprintf("in %d of %d configurations", len(cfgs), len(byCfg[fj{x.family, ""}]))
		if len(cfgs) <= 3 {
			var parts []string
			for _, cf := range cfgs {
				parts = append(parts, fmt.Sprintf("%s: %s of %s", cf, rows.Thousands(byCfg[x][cf]), rows.Thousands(byCfg[fj{x.family, ""}][cf])))
			}
			where += " (" + strings.Join(parts, "; ") + ")"
		}
		out = append(out, fmt.Sprintf("judge %s judged %s of the %s %s items judged (%s), %s: each item's value averages the judges that judged it, "+
			"so %s moves those items' values and no others (docs/judge.md)",
			x.judge, rows.Thousands(total[x]), rows.Thousands(all), x.family, percentOf(total[x], all), where, x.judge))
	}
	return out
}

// percentOf is n of all in percent, to two significant digits at least.
func percentOf(n, all int64) string {
	p := 100 * float64(n) / float64(all)
	if p >= 10 {
		return fmt.Sprintf("%.0f%%", p)
	}
	return fmt.Sprintf("%.2g%%", p)
}

// cmpFamily orders the families TC, TA, TR-J, then the rubrics by name.
func cmpFamily(a, b string) int {
	rank := func(f string) int {
		if i := slices.Index([]string{"TC", "TA", "TR-J"}, f); i >= 0 {
			return i
		}
		return 3
	}
	if d := rank(a) - rank(b); d != 0 {
		return max(-1, min(1, d))
	}
	return strings.Compare(a, b)
}
