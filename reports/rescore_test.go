package reports

import (
	"context"
	"errors"
	"testing"

	"github.com/gymlens/gymlens/ingest/rows"
)

// emptyScores is a warehouse with no active task; refuse fails its scan.
type emptyScores struct{ refuse error }

func (emptyScores) LoadScenarioSpecs(context.Context) (map[string]*rows.ScenarioSpec, error) {
	return map[string]*rows.ScenarioSpec{}, nil
}

func (s emptyScores) ScanScoreTasks(context.Context, func(*rows.ScoreTask) error) error {
	return s.refuse
}

func (emptyScores) ReplaceScores(_ context.Context, produce func(emit func(rows.TaskScore) error) error) error {
	return produce(func(rows.TaskScore) error { return nil })
}

// Rescore names the warehouse that has no active task to score, and
// passes any other error on as it is.
func TestRescoreNamesAnEmptyWarehouse(t *testing.T) {
	ctx := context.Background()
	rep, err := Rescore(ctx, emptyScores{}, "w.duckdb", false, 5)
	if want := "warehouse w.duckdb has no active tasks to score"; rep != nil || err == nil || err.Error() != want {
		t.Errorf("%v %v, want %q", rep, err, want)
	}
	broken := errors.New("reading the warehouse: disk on fire")
	if rep, err := Rescore(ctx, emptyScores{refuse: broken}, "w.duckdb", true, 5); rep != nil || !errors.Is(err, broken) {
		t.Errorf("%v %v", rep, err)
	}
}
