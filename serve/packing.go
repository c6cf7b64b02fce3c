package serve

import (
	"context"
	"fmt"
	"sync"
)

// packing is the packing of the run pages going on behind the viewer
// (RunPacker): the pages are answered meanwhile, a run page not seen
// before reading the tables, and the overview says how far it is.
type packing struct {
	mu          sync.Mutex
	running     bool
	stage       string
	done, total int
	err         error
	cancel      context.CancelFunc
	finished    chan struct{} // closed when the packing has ended
}

// startPacking reads the runs' values (what the first page needs, before
// the packing takes the cores), then packs the runs, in a goroutine that
// StopPacking ends.
func (s *Server) startPacking(ctx context.Context, p RunPacker) {
	ctx, cancel := context.WithCancel(ctx)
	s.packs.running, s.packs.cancel = true, cancel
	go func() {
		defer close(s.packs.finished)
		defer cancel()
		s.index() // its error is the first page's to show
		err := p.PackRuns(ctx, func(stage string, done, total int) {
			s.packs.mu.Lock()
			s.packs.stage, s.packs.done, s.packs.total = stage, done, total
			s.packs.mu.Unlock()
		})
		s.packs.mu.Lock()
		s.packs.running, s.packs.err = false, err
		s.packs.mu.Unlock()
	}()
}

// WaitPacking waits for the packing of the runs to end (at once when
// there is none).
func (s *Server) WaitPacking() { <-s.packs.finished }

// StopPacking stops the packing of the runs and waits for it to end:
// the runs it did not pack read the tables. Listen calls it once it stops
// serving, so that the store can be closed after.
func (s *Server) StopPacking() {
	s.packs.mu.Lock()
	if s.packs.cancel != nil {
		s.packs.cancel()
	}
	s.packs.mu.Unlock()
	s.WaitPacking()
}

// packingNote is what the overview says of the packing: how far it is,
// or why it stopped ("" when it ended well, or never began).
func (s *Server) packingNote() string {
	s.packs.mu.Lock()
	defer s.packs.mu.Unlock()
	switch {
	case s.packs.running && s.packs.total > 0:
		return fmt.Sprintf("Packing the run pages behind the viewer (%s: %d of %d runs): until it ends, a run page not seen before reads the tables, slower.",
			s.packs.stage, s.packs.done, s.packs.total)
	case s.packs.running:
		return "Packing the run pages behind the viewer: until it ends, a run page not seen before reads the tables, slower."
	case s.packs.err != nil:
		return "Packing the run pages stopped: " + s.packs.err.Error() + "; run pages read the tables (slower when not seen before)."
	}
	return ""
}
