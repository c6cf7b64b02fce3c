package analysis

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/gymlens/gymlens/ingest/rows"
)

// Proportional allocation by largest remainders, worked by hand: strata
// of 5, 3 and 2 runs, n = 5: exact shares 2.5, 1.5 and 1.0, floors 2, 1,
// 1 (4 items), the one left to the largest remainder, a tie between the
// first two broken by stratum order: 3, 1, 1.
func TestStratifiedSampleAllocatesByLargestRemainders(t *testing.T) {
	var runs []rows.RunRow
	for i, h := range []string{"A", "A", "A", "A", "A", "B", "B", "B", "C", "C"} {
		runs = append(runs, rows.RunRow{RunID: fmt.Sprintf("r%d", i), Harness: h})
	}
	items, strata, err := StratifiedSample(runs, "run", "harness", 5, 1)
	if err != nil || strata != 3 {
		t.Fatal(items, strata, err)
	}
	per := map[string]int{}
	var ids []string
	for _, it := range items {
		per[it.Stratum]++
		ids = append(ids, it.Run.RunID)
	}
	if per["A"] != 3 || per["B"] != 1 || per["C"] != 1 {
		t.Errorf("allocation %v, want A 3, B 1, C 1", per)
	}
	// Without replacement, in stratum then run order, the same draw for the
	// same seed.
	if !slices.IsSorted(ids[:3]) || len(slices.Compact(slices.Clone(ids))) != 5 {
		t.Errorf("items %v", ids)
	}
	again, _, _ := StratifiedSample(runs, "run", "harness", 5, 1)
	for i := range again {
		if again[i].Run.RunID != ids[i] {
			t.Errorf("seed 1 drew %v, then %v", ids, again)
			break
		}
	}
	var oe *OptionError
	for _, bad := range []struct {
		unit, by string
		n        int
	}{{"task", "colour", 1}, {"turn", "", 1}, {"run", "", 0}} {
		if _, _, err := StratifiedSample(runs, bad.unit, bad.by, bad.n, 1); !errors.As(err, &oe) {
			t.Errorf("%+v: %v", bad, err)
		}
	}
	if _, _, err := StratifiedSample(runs, "run", "", 11, 1); err == nil || errors.As(err, &oe) {
		t.Errorf("more items than runs: %v", err)
	}
}

// Two judges are named, or the only two there are; anything else is an
// OptionError naming the judges there are.
func TestCompareJudgesNamesTheJudges(t *testing.T) {
	runs := []rows.RunRow{{RunID: "r", Scenario: "s", Tasks: []rows.TaskRow{{Task: "a",
		TC: []rows.TCJudgment{{Judge: "x", Correctness: 0.5}, {Judge: "y", Correctness: 0.7}, {Judge: "z", Correctness: 0.6}}}}}}
	var oe *OptionError
	if _, err := CompareJudges(runs, nil, BootstrapOptions{Resamples: 100}); !errors.As(err, &oe) {
		t.Errorf("three judges, none named: %v", err)
	}
	if _, err := CompareJudges(runs, []string{"x", "x"}, BootstrapOptions{Resamples: 100}); !errors.As(err, &oe) {
		t.Errorf("the same judge twice: %v", err)
	}
	if _, err := CompareJudges(runs, []string{"x", "w"}, BootstrapOptions{Resamples: 100}); err == nil {
		t.Error("a judge with no judgment was compared")
	}
}
