package serve

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gymlens/gymlens/analysis"
)

// packer is the fake warehouse with run packs: PackRuns tells a stage's
// progress, then waits for release (when set) and ends with err.
type packer struct {
	*fake
	mu      sync.Mutex
	packed  int
	err     error
	release chan struct{}
}

func (p *packer) PackRuns(ctx context.Context, progress func(stage string, done, total int)) error {
	p.mu.Lock()
	p.packed++
	p.mu.Unlock()
	progress("the runs' events", 4, 8)
	if p.release != nil {
		select {
		case <-p.release:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return p.err
}

// The viewer answers while it packs the runs (not on a read-only
// warehouse): New returns at once, the overview says what is being packed
// and how far it is, and nothing once it is done; a failure to pack is
// said there too, and the pages go on reading the tables.
func TestNewPacksBehindThePages(t *testing.T) {
	opt := analysis.DefaultBootstrap
	opt.Resamples = 100
	ctx := context.Background()
	p := &packer{fake: &fake{}, release: make(chan struct{})}
	s, err := New(ctx, p, Options{Name: "test.duckdb", Bootstrap: opt, AllowedHosts: []string{"example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.StopPacking()
	// Bounded: the packing is told its first progress at once.
	deadline := time.Now().Add(10 * time.Second)
	var page string
	for time.Now().Before(deadline) {
		if page = get(t, s, "/").Body.String(); strings.Contains(page, "4 of 8") {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !strings.Contains(page, "Packing the run pages behind the viewer (the runs&#39; events: 4 of 8 runs)") {
		t.Fatalf("the overview while packing does not say so:\n%s", page)
	}
	close(p.release)
	s.WaitPacking()
	if page := get(t, s, "/").Body.String(); strings.Contains(page, "Packing") {
		t.Errorf("the overview after the packing still speaks of it:\n%s", page)
	}
	if p.packed != 1 {
		t.Errorf("packed %d times", p.packed)
	}

	ro, err := New(ctx, p, Options{Name: "test.duckdb", Bootstrap: opt, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	ro.WaitPacking()
	if p.packed != 1 {
		t.Errorf("read-only: packed %d times", p.packed)
	}

	failing := &packer{fake: &fake{}, err: errors.New("disk full")}
	f, err := New(ctx, failing, Options{Name: "test.duckdb", Bootstrap: opt, AllowedHosts: []string{"example.com"}})
	if err != nil {
		t.Fatalf("a failed pack stops the viewer: %v", err)
	}
	f.WaitPacking()
	if page := get(t, f, "/"); page.Code != 200 || !strings.Contains(page.Body.String(), "Packing the run pages stopped: disk full") {
		t.Errorf("a failed pack: %d\n%s", page.Code, page.Body.String())
	}
}

// Stopping the viewer stops its packing and waits for it: the warehouse
// can then be closed.
func TestStopPackingEndsThePacking(t *testing.T) {
	opt := analysis.DefaultBootstrap
	opt.Resamples = 100
	p := &packer{fake: &fake{}, release: make(chan struct{})} // never released
	s, err := New(context.Background(), p, Options{Name: "test.duckdb", Bootstrap: opt, AllowedHosts: []string{"example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	stopped := make(chan struct{})
	go func() { s.StopPacking(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(10 * time.Second):
		t.Fatal("StopPacking did not end the packing")
	}
}
