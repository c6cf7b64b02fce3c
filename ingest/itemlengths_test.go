package ingest

import (
	"testing"
	"unicode/utf8"
)

// Every item's length is the characters of text, arguments and result of
// the records the judge reads (judge.Items): TC, the task's records up to
// its final turn; TR-J, the records the user saw up to then; TA, the
// records of the decision window. Counted here again from the events the
// judge reads, run by run.
func TestItemLengthsCountTheRecordsAJudgeReads(t *testing.T) {
	w := sampleWarehouse(t)
	l, err := w.LoadItemLengths(ctx)
	if err != nil {
		t.Fatal(err)
	}
	heads, err := w.JudgeHeads(ctx, "", 40)
	if err != nil || len(heads) == 0 {
		t.Fatal(err, len(heads))
	}
	chars := func(e JudgeEvent) float64 {
		return float64(utf8.RuneCountInString(e.Text) + utf8.RuneCountInString(e.Args) + utf8.RuneCountInString(e.Result))
	}
	checked := 0
	err = w.ScanJudgeEvents(ctx, heads, func(r *JudgeRun) error {
		for _, task := range r.Tasks {
			var tc, trj float64
			for _, e := range r.Events {
				if task.FinalSeq != nil && e.Seq > *task.FinalSeq {
					continue
				}
				if e.Task == task.Task {
					tc += chars(e)
				}
				if e.Visible || e.Actor == "user" || (e.Actor == "env" && e.Kind == "notification") {
					trj += chars(e)
				}
			}
			for kind, want := range map[string]float64{"tc": tc, "trj": trj} {
				got, ok := l.Length(r.RunID, kind, task.Task)
				if !ok || got != want {
					t.Errorf("%s %s %s: %v (%v), want %v", r.RunID, task.Task, kind, got, ok, want)
				}
				checked++
			}
		}
		if r.TAStart != nil && r.TAEnd != nil {
			var ta float64
			for _, e := range r.Events {
				if !e.T.Before(*r.TAStart) && !e.T.After(*r.TAEnd) {
					ta += chars(e)
				}
			}
			if got, ok := l.Length(r.RunID, "ta", ""); !ok || got != ta {
				t.Errorf("%s ta: %v (%v), want %v", r.RunID, got, ok, ta)
			}
			checked++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Errorf("only %d items checked", checked)
	}
	if _, ok := l.Length("no such run", "tc", "x"); ok {
		t.Error("a run that is not there has a length")
	}
}
