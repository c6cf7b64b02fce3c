package analysis

import (
	"context"
	"errors"

	"github.com/gymlens/gymlens/ingest/rows"
)

// ScoreReport is what rescoring found.
type ScoreReport struct {
	Tasks    int            // active tasks scored
	Counts   map[string]int // disagreements per field (DisagreementFields)
	Examples []Disagreement // the first few of each field
	Prefer   string         // "logged" or "derived": what the metrics use
}

// DisagreementFields are the fields rescoring compares.
var DisagreementFields = []string{"expected_depth", "chosen_depth", "rules.evidence", "rules.outputs", "rules.constraints"}

// Disagreements is the number of disagreements, every field together.
func (r *ScoreReport) Disagreements() int {
	n := 0
	for _, c := range r.Counts {
		n += c
	}
	return n
}

// PreferDerived reads which values the metrics use where a task has both
// a logged and a derived one (score's --prefer): "logged" (false) or
// "derived" (true).
func PreferDerived(prefer string) (bool, error) {
	switch prefer {
	case "logged":
		return false, nil
	case "derived":
		return true, nil
	}
	return false, Optionf("--prefer: expected logged or derived, found %q", prefer)
}

// ScoreStore is what Rescore reads and writes: the warehouse.
type ScoreStore interface {
	LoadScenarioSpecs(ctx context.Context) (map[string]*rows.ScenarioSpec, error)
	ScanScoreTasks(ctx context.Context, fn func(*rows.ScoreTask) error) error
	// ReplaceScores replaces the stored scores, in one transaction, by
	// those produce emits (none replaced when it fails).
	ReplaceScores(ctx context.Context, produce func(emit func(rows.TaskScore) error) error) error
}

// ErrNoActiveTasks: the store has no active task to score.
var ErrNoActiveTasks = errors.New("no active tasks to score")

// Rescore derives every active task's depths and rule-based TC components
// from its trajectory (Scorer), counts where they disagree with the logged
// values (keeping examples of each field), and writes the effective
// scores (the logged values unless preferDerived) back.
func Rescore(ctx context.Context, w ScoreStore, preferDerived bool, examples int) (*ScoreReport, error) {
	var rep *ScoreReport
	// Each task's scores go to the store as they are derived: nothing
	// holds them all.
	err := w.ReplaceScores(ctx, func(emit func(rows.TaskScore) error) error {
		var err error
		rep, err = rescore(ctx, w, preferDerived, examples, emit)
		return err
	})
	if err != nil {
		return nil, err
	}
	return rep, nil
}

func rescore(ctx context.Context, w ScoreStore, preferDerived bool, examples int, emit func(rows.TaskScore) error) (*ScoreReport, error) {
	specs, err := w.LoadScenarioSpecs(ctx)
	if err != nil {
		return nil, err
	}
	sc, err := NewScorer(specs)
	if err != nil {
		return nil, err
	}
	rep := &ScoreReport{Counts: map[string]int{}, Prefer: "logged"}
	if preferDerived {
		rep.Prefer = "derived"
	}
	shown := map[string]int{}
	err = w.ScanScoreTasks(ctx, func(t *rows.ScoreTask) error {
		d, err := sc.Derive(t)
		if err != nil {
			return err
		}
		rep.Tasks++
		for _, x := range Disagreements(t, d) {
			rep.Counts[x.Field]++
			if shown[x.Field] < examples {
				shown[x.Field]++
				rep.Examples = append(rep.Examples, x)
			}
		}
		return emit(Effective(t, d, preferDerived))
	})
	if err != nil {
		return nil, err
	}
	if rep.Tasks == 0 {
		return nil, ErrNoActiveTasks
	}
	return rep, nil
}
