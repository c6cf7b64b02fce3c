package reports

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/gymlens/gymlens/analysis"
)

// StudySections lay out the human study (gymlens human): the means by
// condition and day, the changes by transition, acceptance by condition
// and its paired differences; "value [lo, hi]" cells as text, one column
// per part otherwise.
func StudySections(stats []analysis.StudyStat, format string) []Section {
	var secs []Section
	for _, kind := range []struct{ name, title string }{
		{"over_days", "Mean rating by condition and checkpoint day"},
		{"transition", "Mean change from one checkpoint to the next, by transition"},
		{"acceptance", "Acceptance rate by condition (percent)"},
		{"acceptance_difference", "Paired difference in acceptance rate between conditions (percentage points)"},
	} {
		t := &Result{Columns: []string{"question", "condition", "day", "n", "value", "ci_low", "ci_high", "ci_method", "level", "resamples", "seed", "warnings"}}
		if Wide(format) {
			t.Columns = []string{"question", "condition", "day", "n", "estimate"}
		}
		for _, s := range stats {
			if s.Kind != kind.name {
				continue
			}
			var day any = s.Day
			if s.Day == 0 {
				day = nil
			}
			if Wide(format) {
				t.Rows = append(t.Rows, []any{s.Question, s.Condition, day, s.N, EstimateCell(s.Estimate)})
			} else {
				t.Rows = append(t.Rows, []any{s.Question, s.Condition, day, s.N, s.Value, s.Lo, s.Hi, "bootstrap-" + s.Method,
					s.Level, s.Resamples, s.Seed, WarningsCell(format, s.Warnings)})
			}
		}
		secs = append(secs, Section{Name: kind.name, Title: kind.title, Table: t})
	}
	return secs
}

// MismatchResult lists reconcile's mismatches; relative writes each file
// relative to the working folder when it is near it.
func MismatchResult(rc *analysis.Reconciliation, relative bool) *Result {
	r := &Result{Columns: []string{"where", "item", "field", "stored", "recomputed", "kind", "note"}}
	for _, m := range rc.Mismatches {
		where := m.Where
		if relative { // shorter to read: relative to here
			where = relativePath(where)
		}
		r.Rows = append(r.Rows, []any{where, m.Item, m.Field, jsonNum(m.Stored), jsonNum(m.Recomputed), m.Kind, m.Note})
	}
	return r
}

// relativePath writes FILE:LINE with FILE relative to the working folder
// when it is below it or near it (at most two folders up).
func relativePath(where string) string {
	wd, err := os.Getwd()
	if err != nil || !filepath.IsAbs(where) {
		return where
	}
	if rel, err := filepath.Rel(wd, where); err == nil && !strings.HasPrefix(rel, filepath.Join("..", "..", "..")) {
		return rel
	}
	return where
}

func jsonNum(x float64) any {
	if math.IsNaN(x) {
		return nil
	}
	return x
}

// ReconcileLine says in a line what reconcile checked and found.
func ReconcileLine(rc *analysis.Reconciliation) string {
	return fmt.Sprintf("reconcile: %d numbers checked in %d result rows (linked to traces; %d not linked) and %d report sections: %d mismatches",
		rc.Values, rc.RowsChecked, rc.RowsUnlinked, rc.SectionsChecked, len(rc.Mismatches))
}
