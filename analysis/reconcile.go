package analysis

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/gymlens/gymlens/ingest/rows"
)

// Mismatch is a stored number that differs from gymlens's recomputation.
type Mismatch struct {
	Where      string // file:line of the row or report section
	Item       string // the run (result id) or the report section
	Field      string
	Stored     float64
	Recomputed float64
	// Kind is "value", or "unit" when the stored number is the
	// recomputed one in the other unit (a percent for a fraction, or the
	// reverse).
	Kind string
	Note string
}

// Reconciliation is the outcome of checking stored numbers.
type Reconciliation struct {
	RowsChecked     int // result rows compared with their traces
	RowsUnlinked    int // result rows with no ingested trace
	SectionsChecked int // report sections compared with the result rows
	Values          int // numbers compared
	Mismatches      []Mismatch
	Notes           []string
}

// same says whether two numbers agree to rounding (JSON writers print
// floats in full, so only the last bits may differ).
func same(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return math.Abs(a-b) <= float64(1e-9*max(1, math.Abs(a), math.Abs(b)))
}

// unit of the rates each format writes: fractions or percents.
var percentFields = []string{"success_rate", "success_rate_std", "success_rate_sem", "pass_at_k_percent", "pass_k_percent",
	"macro_success_rate", "micro_success_rate"}
var fractionFields = []string{"acceptance_rate", "aggregate_acceptance_rate", "aggregate_acceptance_rate_std", "aggregate_acceptance_rate_sem"}

func (rc *Reconciliation) check(where, item, field string, stored, recomputed float64) {
	rc.Values++
	if same(stored, recomputed) {
		return
	}
	m := Mismatch{Where: where, Item: item, Field: field, Stored: stored, Recomputed: recomputed, Kind: "value"}
	switch {
	case slices.Contains(percentFields, field) && recomputed != 0 && same(float64(stored*100), recomputed):
		m.Kind, m.Note = "unit", "stored as a fraction; this field is a percent"
	case slices.Contains(fractionFields, field) && recomputed != 0 && same(stored, float64(recomputed*100)):
		m.Kind, m.Note = "unit", "stored as a percent; this field is a fraction"
	}
	rc.Mismatches = append(rc.Mismatches, m)
}

// Reconcile compares what PARE and Meta-ARE stored with what gymlens
// recomputes: each result row's counts and rates with those of the trace
// it links to, and each summary report section with the statistics of
// the result rows it summarizes.
func Reconcile(runs []rows.PARERun, results []rows.PAREResultRow, reports []rows.PAREReportRow) *Reconciliation {
	rc := &Reconciliation{}
	byID := map[string]*rows.PARERun{}
	for i := range runs {
		byID[runs[i].RunID] = &runs[i]
	}
	stored := []string{"proposal_count", "acceptance_count", "read_only_actions", "write_actions", "number_of_turns"}
	from := []int{PProposals, PAcceptances, PReadActions, PWriteActions, PTurns} // their places in PAREMetrics
	for _, r := range results {
		run := byID[r.RunID]
		if run == nil {
			rc.RowsUnlinked++
			continue
		}
		rc.RowsChecked++
		where := fmt.Sprintf("%s:%d", r.File, r.Line)
		v := PARERunValues(run)
		if math.IsNaN(v[PTurns]) {
			v[PTurns] = 0 // no turn numbers: PARE counts no turns
		}
		for j, f := range stored {
			if !math.IsNaN(r.Counts[j]) {
				rc.check(where, r.ResultID, f, r.Counts[j], v[from[j]])
			}
		}
		ratio := func(a, b float64) float64 {
			if b > 0 {
				return a / b
			}
			return 0
		}
		if !math.IsNaN(r.ProposalRate) {
			rc.check(where, r.ResultID, "proposal_rate", r.ProposalRate, ratio(v[PProposals], v[PTurns]))
		}
		if !math.IsNaN(r.AcceptanceRate) {
			rc.check(where, r.ResultID, "acceptance_rate", r.AcceptanceRate, ratio(v[PAcceptances], v[PProposals]))
		}
		// The row's success against the trace's own verdict (Valid or
		// Invalid), when both are given.
		if !math.IsNaN(r.Success) && !math.IsNaN(run.Success) {
			rc.check(where, r.ResultID, "success", r.Success, run.Success)
		}
	}
	for _, rep := range reports {
		where := fmt.Sprintf("%s:%d", rep.File, rep.Line)
		var sel []rows.PAREResultRow
		for _, r := range results {
			if r.Source != rep.Source || r.ConfigID != rep.ConfigID {
				continue
			}
			if rep.Source == "are" && rep.Section != "global" && CapabilityKey(&r) != rep.Section {
				continue
			}
			sel = append(sel, r)
		}
		if len(sel) == 0 {
			rc.Notes = append(rc.Notes, fmt.Sprintf("%s: %s %q: no result results of it are ingested; not checked", where, rep.Kind, rep.Section))
			continue
		}
		rc.SectionsChecked++
		got := SectionStats(sel, rep.Source, rep.Section)
		keys := make([]string, 0, len(rep.Stats))
		for k := range rep.Stats {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		var skipped []string
		for _, k := range keys {
			want, ok := got[k]
			if !ok {
				if !slices.Contains([]string{"tool_failure_probability", "num_env_events_per_minute", "a2a_app_prop"}, k) {
					skipped = append(skipped, k)
				}
				continue
			}
			rc.check(where, rep.Section, k, rep.Stats[k], want)
		}
		if len(skipped) > 0 {
			rc.Notes = append(rc.Notes, fmt.Sprintf("%s: %s %q: not recomputed: %s", where, rep.Kind, rep.Section, strings.Join(skipped, ", ")))
		}
	}
	slices.SortStableFunc(rc.Mismatches, func(a, b Mismatch) int { return strings.Compare(a.Where, b.Where) })
	return rc
}

// SectionStats are the statistics of one report section, recomputed from
// its result rows: a PARE configuration (section ""), or a Meta-ARE
// capability or "global" (with the macro and micro success rates).
func SectionStats(results []rows.PAREResultRow, source, section string) map[string]float64 {
	if source != "are" {
		return ReportStats(results, func(r *rows.PAREResultRow) string { return r.Scenario })
	}
	s := ReportStats(results, func(r *rows.PAREResultRow) string { return r.Scenario + "\x00" + r.Phase })
	if section == "global" {
		addGlobal(s, results)
	}
	return s
}

// CapabilityKey names a Meta-ARE run's report section as Meta-ARE does:
// the capability, with the phase for the mixed "mini" set.
func CapabilityKey(r *rows.PAREResultRow) string {
	if r.Capability == "mini" {
		return "mini_" + r.Phase
	}
	return r.Capability
}

// addGlobal adds Meta-ARE's global success rates: macro, the mean of the
// capabilities' rates; micro, weighted by their validated runs.
func addGlobal(s map[string]float64, rows []rows.PAREResultRow) {
	type acc struct{ sum, n float64 }
	per := map[string]*acc{}
	for _, r := range rows {
		k := CapabilityKey(&r)
		if per[k] == nil {
			per[k] = &acc{}
		}
		if !math.IsNaN(r.Success) {
			per[k].sum += r.Success
			per[k].n++
		}
	}
	var macro, sum, n, caps float64
	for _, a := range per {
		rate := 0.0
		if a.n > 0 {
			rate = 100 * a.sum / a.n
		}
		macro += rate
		caps++
		sum += a.sum
		n += a.n
	}
	s["macro_success_rate"] = macro / caps
	s["micro_success_rate"] = 0
	if n > 0 {
		s["micro_success_rate"] = 100 * sum / n
	}
	delete(s, "success_rate")
	delete(s, "success_rate_std")
	delete(s, "success_rate_sem")
}
