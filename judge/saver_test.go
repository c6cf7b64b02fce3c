package judge

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/gymlens/gymlens/ingest/rows"
)

func TestSavePaced(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct {
		n, size     int
		due         bool
		took, since time.Duration
		want        bool
	}{
		{0, 512, true, 0, time.Hour, false},                     // nothing to save
		{511, 512, false, 0, time.Hour, false},                  // neither full nor due
		{512, 512, false, 0, 0, true},                           // full, no save yet
		{1, 512, true, 0, 0, true},                              // due, no save yet
		{512, 512, false, 10 * ms, 39 * ms, false},              // resting: 4 × 10 ms
		{512, 512, false, 10 * ms, 40 * ms, true},               // rested
		{3, 512, true, 100 * ms, 399 * ms, false},               // due but resting
		{3, 512, true, 100 * ms, 400 * ms, true},                // due and rested
		{5000, 512, false, time.Second, 3 * time.Second, false}, // grows while resting
	} {
		if got := savePaced(c.n, c.size, c.due, c.took, c.since); got != c.want {
			t.Errorf("savePaced(%d, %d, %v, %v, %v) = %v, want %v", c.n, c.size, c.due, c.took, c.since, got, c.want)
		}
	}
}

// slowStore is a Store whose saves take a while, recording each batch.
type slowStore struct {
	Store
	name    string
	delay   time.Duration
	failing int // the first so many saves fail
	mu      sync.Mutex
	batches [][]string
}

func (s *slowStore) Name() string { return s.name }

func (s *slowStore) SaveJudgeCalls(_ context.Context, calls []rows.JudgeCall) error {
	time.Sleep(s.delay)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failing > 0 {
		s.failing--
		return errors.New("the disk is full")
	}
	var ids []string
	for _, c := range calls {
		ids = append(ids, c.RunID)
	}
	s.batches = append(s.batches, ids)
	return nil
}

// TestSaverRestsAfterASlowSave: answers that come while the saver rests
// after a slow save join the next batch, past the batch size; every answer
// is saved once, in the order it came, and the journal goes when all are
// in.
func TestSaverRestsAfterASlowSave(t *testing.T) {
	w := &slowStore{name: filepath.Join(t.TempDir(), "w.duckdb"), delay: 100 * time.Millisecond}
	s, err := newSaverOf(w, 100)
	if err != nil {
		t.Fatal(err)
	}
	const n = 1000
	for i := range n {
		s.save(rows.JudgeCall{RunID: strconv.Itoa(i), Valid: true})
	}
	if err := s.close(); err != nil {
		t.Fatal(err)
	}
	var got []string
	biggest := 0
	for _, b := range w.batches {
		got = append(got, b...)
		biggest = max(biggest, len(b))
	}
	if len(got) != n {
		t.Fatalf("saved %d answers in %d batches, want %d", len(got), len(w.batches), n)
	}
	inOrder(t, got, n)
	// The first save (100 answers) takes 100 ms; the other 900 answers
	// come within the 400 ms rest that follows it.
	if biggest <= 100 || len(w.batches) > 3 {
		t.Errorf("batches of %v answers: the saver did not rest after a slow save", lens(w.batches))
	}
	if _, err := os.Stat(JournalPath(w.name)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the journal is still there (%v)", err)
	}
}

// TestSaverKeepsAFailedBatch: a batch whose save fails is saved with the
// next one, and the run reports the failure.
func TestSaverKeepsAFailedBatch(t *testing.T) {
	w := &slowStore{name: filepath.Join(t.TempDir(), "w.duckdb"), failing: 1}
	s, err := newSaverOf(w, 10)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 35 {
		s.save(rows.JudgeCall{RunID: strconv.Itoa(i)})
	}
	if err := s.close(); err == nil || err.Error() != "the disk is full" {
		t.Errorf("close: %v, want the failed save's error", err)
	}
	var got []string
	for _, b := range w.batches {
		got = append(got, b...)
	}
	inOrder(t, got, 35)
}

// inOrder checks that got are the answers 0 to n-1, once each, in order.
func inOrder(t *testing.T, got []string, n int) {
	t.Helper()
	if len(got) != n {
		t.Fatalf("%d answers saved, want %d", len(got), n)
	}
	for i, id := range got {
		if id != strconv.Itoa(i) {
			t.Fatalf("the answer saved %dth is %s, want %d", i, id, i)
		}
	}
}

func lens(bs [][]string) []int {
	var out []int
	for _, b := range bs {
		out = append(out, len(b))
	}
	return out
}
