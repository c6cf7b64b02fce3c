package ingest

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/gymlens/gymlens/ingest/rows"
)

// limitsQueue stores queue name with k, at most most annotators and
// over-assignment as told: a practice item "tut" and items "a" and "b".
func limitsQueue(t *testing.T, w *Warehouse, name string, k, most int, over bool) {
	t.Helper()
	q := rows.Queue{Name: name, Kind: rows.QueueRatings, K: k, Questions: []string{"tc"}, Source: "test", MaxAnnotators: most, OverAssign: over}
	items := []rows.QueueItem{{Item: "tut", Pos: 0, Tutorial: true}, {Item: "a", Pos: 1}, {Item: "b", Pos: 2}}
	if err := w.CreateQueue(ctx, q, items); err != nil {
		t.Fatal(err)
	}
}

func answer(w *Warehouse, queue, item, who string) error {
	return w.SaveAnswers(ctx, queue, item, who, []rows.Answer{{Question: "tc", Value: 0.5}})
}

// An item with k = 2 takes a third annotator's answer only when the queue
// allows over-assignment; revising one's own answer is not a new
// annotator; practice items take everyone; a queue takes at most its
// MaxAnnotators names; the limits are stored with the queue.
func TestQueueLimits(t *testing.T) {
	w := openTemp(t)
	limitsQueue(t, w, "k2", 2, 1000, false)
	limitsQueue(t, w, "over", 2, 1000, true)
	limitsQueue(t, w, "two", 1, 2, false)
	q, _, err := w.Queue(ctx, "two")
	if err != nil || q.MaxAnnotators != 2 || q.OverAssign {
		t.Fatalf("limits read back: %+v %v", q, err)
	}
	if q, _, _ = w.Queue(ctx, "over"); !q.OverAssign || q.MaxAnnotators != 1000 {
		t.Fatalf("over-assignment read back: %+v", q)
	}
	for _, who := range []string{"alice", "bob"} {
		if err := answer(w, "k2", "a", who); err != nil {
			t.Fatal(err)
		}
	}
	err = answer(w, "k2", "a", "carol")
	if !errors.Is(err, rows.ErrFull) || !strings.Contains(err.Error(), "k = 2") || !strings.Contains(err.Error(), "--over-assign") {
		t.Errorf("a third annotator on an item with k = 2: %v", err)
	}
	if err := answer(w, "k2", "a", "alice"); err != nil {
		t.Errorf("alice revising her answer: %v", err)
	}
	if err := answer(w, "k2", "tut", "carol"); err != nil {
		t.Errorf("a practice item: %v", err)
	}
	if err := answer(w, "k2", "b", "carol"); err != nil {
		t.Errorf("carol on an item with room: %v", err)
	}
	for _, who := range []string{"alice", "bob", "carol"} {
		if err := answer(w, "over", "a", who); err != nil {
			t.Errorf("over-assignment, %s: %v", who, err)
		}
	}
	answer(w, "two", "a", "alice")
	answer(w, "two", "b", "bob")
	err = answer(w, "two", "tut", "carol")
	if !errors.Is(err, rows.ErrFull) || !strings.Contains(err.Error(), "at most 2 annotators") {
		t.Errorf("a third name in a queue of at most 2: %v", err)
	}
	if err := answer(w, "two", "tut", "bob"); err != nil {
		t.Errorf("bob, already in the queue: %v", err)
	}
	if err := w.CreateQueue(ctx, rows.Queue{Name: "none", Kind: rows.QueueRatings, K: 1, Questions: []string{"tc"}, MaxAnnotators: -1}, []rows.QueueItem{{Item: "a"}}); err == nil {
		t.Error("a queue taking no annotator is stored")
	}
	if err := w.CreateQueue(ctx, rows.Queue{Name: "default", Kind: rows.QueueRatings, K: 1, Questions: []string{"tc"}}, []rows.QueueItem{{Item: "a"}}); err != nil {
		t.Fatal(err)
	}
	if q, _, _ := w.Queue(ctx, "default"); q.MaxAnnotators != rows.DefaultMaxAnnotators {
		t.Errorf("a queue made without a limit takes %d annotators, want %d", q.MaxAnnotators, rows.DefaultMaxAnnotators)
	}
	as, _ := w.Answers(ctx, "k2")
	if len(as) != 4 {
		t.Errorf("k2 holds %d answers, want 4: %+v", len(as), as)
	}
}

// Eight annotators answering one item with k = 2 at once: two are
// stored, six refused with ErrFull.
func TestQueueKUnderConcurrentAnswers(t *testing.T) {
	w := openTemp(t)
	limitsQueue(t, w, "q", 2, 1000, false)
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = answer(w, "q", "a", fmt.Sprintf("annotator %d", i))
		}()
	}
	wg.Wait()
	ok, full := 0, 0
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case errors.Is(err, rows.ErrFull):
			full++
		default:
			t.Error(err)
		}
	}
	p, err := w.QueuePage(ctx, "q", 0, 100)
	if ok != 2 || full != 6 || err != nil || p.Annotators != 2 {
		t.Errorf("%d stored, %d refused, %d annotators in the queue (%v); want 2, 6, 2", ok, full, p.Annotators, err)
	}
}

// A page of annotators: names in order, their answers only, and the
// counts over every annotator.
func TestQueuePage(t *testing.T) {
	w := openTemp(t)
	limitsQueue(t, w, "q", 2, 1000, true)
	for i := range 5 {
		who := fmt.Sprintf("ann%d", i)
		answer(w, "q", "a", who)
		answer(w, "q", "tut", who)
	}
	answer(w, "q", "b", "ann0")
	p, err := w.QueuePage(ctx, "q", 1, 2)
	if err != nil || p.Annotators != 5 || p.Complete != 1 || strings.Join(p.Names, ",") != "ann1,ann2" || len(p.Answers) != 4 {
		t.Fatalf("page: %+v %v", p, err)
	}
	for _, a := range p.Answers {
		if a.Annotator != "ann1" && a.Annotator != "ann2" {
			t.Errorf("an answer of %s on the page of ann1, ann2", a.Annotator)
		}
	}
	if p, err = w.QueuePage(ctx, "q", 10, 2); err != nil || len(p.Names) != 0 || p.Annotators != 5 {
		t.Errorf("past the last page: %+v %v", p, err)
	}
	rated, err := w.RatedAnswers(ctx, "q")
	if err != nil || len(rated) != 6 {
		t.Errorf("answers to items other than practice: %d %v, want 6", len(rated), err)
	}
	for _, a := range rated {
		if a.Item == "tut" {
			t.Errorf("a practice answer among the rated: %+v", a)
		}
	}
}

// A queue made before the limits were stored (schema 18) takes the
// default cap and no over-assignment once the warehouse is upgraded.
func TestQueueLimitsAfterAnUpgrade(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w.duckdb")
	w, err := Open(ctx, path, OpenOptions{SchemaVersion: 18})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.db.Exec(`INSERT INTO annotation_queues VALUES ('old', 'ratings', 1, ['tc'], 'test', now())`); err != nil {
		t.Fatal(err)
	}
	if _, err := w.db.Exec(`INSERT INTO annotation_items VALUES ('old', 'a', 0, NULL, NULL, NULL, false, NULL, NULL)`); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if w, err = Open(ctx, path, OpenOptions{}); err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	q, _, err := w.Queue(ctx, "old")
	if err != nil || q.MaxAnnotators != rows.DefaultMaxAnnotators || q.OverAssign {
		t.Fatalf("after the upgrade: %+v %v", q, err)
	}
	if err := answer(w, "old", "a", "alice"); err != nil {
		t.Fatal(err)
	}
	if err := answer(w, "old", "a", "bob"); !errors.Is(err, rows.ErrFull) {
		t.Errorf("a second annotator on k = 1 after the upgrade: %v", err)
	}
}
