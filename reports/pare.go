package reports

import (
	"slices"
	"strings"

	"github.com/gymlens/gymlens/analysis"
	"github.com/gymlens/gymlens/ingest/rows"
)

// PAREReport recomputes, from the ingested result rows, the statistics
// PARE's combined_result.json (per configuration) and Meta-ARE's
// benchmark_stats.json (per model and capability, and global) give.
func PAREReport(results []rows.PAREResultRow) *Result {
	type section struct{ source, config, part string }
	var order []section
	sel := map[section][]rows.PAREResultRow{}
	add := func(s section, r rows.PAREResultRow) {
		if _, ok := sel[s]; !ok {
			order = append(order, s)
		}
		sel[s] = append(sel[s], r)
	}
	for _, r := range results {
		if r.Source == "are" {
			add(section{"are", r.ConfigID, analysis.CapabilityKey(&r)}, r)
			add(section{"are", r.ConfigID, "global"}, r)
			continue
		}
		add(section{"pare", r.ConfigID, ""}, r)
	}
	slices.SortStableFunc(order, func(a, b section) int {
		return strings.Compare(a.source+"\x00"+a.config+"\x00"+a.part, b.source+"\x00"+b.config+"\x00"+b.part)
	})
	keys := map[string]bool{}
	stats := make([]map[string]float64, len(order))
	for i, s := range order {
		stats[i] = analysis.SectionStats(sel[s], s.source, s.part)
		for k := range stats[i] {
			keys[k] = true
		}
	}
	cols := []string{"source", "config", "section"}
	var names []string
	for k := range keys {
		names = append(names, k)
	}
	slices.Sort(names)
	res := &Result{Columns: append(cols, names...)}
	for i, s := range order {
		row := []any{s.source, s.config, s.part}
		for _, k := range names {
			if v, ok := stats[i][k]; ok {
				row = append(row, v)
			} else {
				row = append(row, nil)
			}
		}
		res.Rows = append(res.Rows, row)
	}
	return res
}
