package serve

import (
	"context"
	"sync"

	"github.com/gymlens/gymlens/ingest/rows"
)

// maxBatch is how many runs' pages one read of the store gathers (the
// store's bound, ingest.MaxRunPages, is higher).
const maxBatch = 128

// pageReads gathers the run pages asked for at the same time into one
// read of the store, as a database gathers commits: a reader takes every
// run asked for so far, reads them together, and goes on while more are
// waiting. A cold burst of page loads then costs a few reads, not one per
// page (each read scans the tables once, whatever the runs).
type pageReads struct {
	read    func(ctx context.Context, ids []string) (map[string]*rows.RunPage, error)
	readers int // at most this many reads at once

	mu      sync.Mutex
	running int
	queue   []*pageCall
}

type pageCall struct {
	id   string
	done chan struct{}
	page *rows.RunPage
	err  error
}

// get reads a run's page, with whatever else is asked for meanwhile.
func (b *pageReads) get(ctx context.Context, id string) (*rows.RunPage, error) {
	c := &pageCall{id: id, done: make(chan struct{})}
	b.mu.Lock()
	b.queue = append(b.queue, c)
	if b.running < b.readers {
		b.running++
		go b.loop()
	}
	b.mu.Unlock()
	select {
	case <-c.done:
		return c.page, c.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// loop reads what is waiting, batch after batch, and stops when nothing
// is.
func (b *pageReads) loop() {
	for {
		b.mu.Lock()
		if len(b.queue) == 0 {
			b.running--
			b.mu.Unlock()
			return
		}
		n := min(len(b.queue), maxBatch)
		batch := append([]*pageCall(nil), b.queue[:n]...)
		b.queue = append(b.queue[:0], b.queue[n:]...)
		b.mu.Unlock()
		var ids []string
		seen := map[string]bool{}
		for _, c := range batch {
			if !seen[c.id] {
				seen[c.id] = true
				ids = append(ids, c.id)
			}
		}
		// The read serves several requests: none of their cancellations
		// stops it.
		pages, err := b.read(context.Background(), ids)
		for _, c := range batch {
			if err == nil {
				c.page = pages[c.id]
				if c.page == nil {
					c.page = &rows.RunPage{}
				}
			}
			c.err = err
			close(c.done)
		}
	}
}
