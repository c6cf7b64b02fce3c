package ingest

import (
	"cmp"
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/gymlens/gymlens/ingest/rows"
)

// The event packs (table event_packs, schema 17) hold each run's
// trajectory as one value: its events as RunPages reads them from the
// events table, encoded here and compressed with zstd. A cold run page
// spent most of its time in DuckDB decompressing a 2,048-row vector of
// each of fifteen event columns for a run's hundred events (≈ 10 ms at
// --scale 10 on a slow machine); one value costs one lookup
// (docs/benchmarks.md).
//
// They are derived data, kept honest by two rules: an ingest deletes the
// packs of every run it writes events for (or replaces) in its own
// transaction, and a reader uses a pack only when it holds as many events
// as run_spans counts for the run (else, or when it does not decode, the
// run is read from the columns). The viewer packs the runs that have none
// when it starts on a warehouse it may write (RefreshEventPacks: the
// events table a slice at a time; at --scale 1, 2,340 runs, ≈ 0.9 s),
// so that an ingest, whose speed the scale issue holds against DuckDB's
// own reader, pays only the deletion. A run with more than MaxRunEvents
// events is not packed.

// packsSchema is the schema version that added event_packs.
const packsSchema = 17

// packFormat is a pack's first byte: the encoding of what follows. A
// gymlens that encodes otherwise changes it and reads older packs' runs
// from the columns.
const packFormat = 1

// packBatchEvents bounds the events a rebuild reads a query: a batch of
// runs whose events lie together in one file, read as one range of its
// lines (a run of more is a batch of its own, at most MaxRunEvents). The
// driver holds a query's whole result, so this bounds the rebuild's
// memory whatever the warehouse holds.
var packBatchEvents int64 = 16384

var (
	packEncoder = sync.OnceValue(func() *zstd.Encoder {
		e, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
		if err != nil {
			panic(err) // only for invalid options
		}
		return e
	})
	packDecoder = sync.OnceValue(func() *zstd.Decoder {
		d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(0))
		if err != nil {
			panic(err) // only for invalid options
		}
		return d
	})
)

// encodePack is events (a run's, in order) as a pack.
func encodePack(events []rows.EventRow) []byte {
	b := binary.AppendUvarint(nil, uint64(len(events)))
	for i := range events {
		e := &events[i]
		b = binary.AppendVarint(b, e.Seq)
		b = binary.AppendVarint(b, e.T.UnixMicro())
		for _, s := range [...]string{e.Actor, e.Kind, e.Task, e.Text, e.Tool, e.Depth, e.Args, e.Result, e.Decision, e.Phase} {
			b = binary.AppendUvarint(b, uint64(len(s)))
			b = append(b, s...)
		}
		var ok byte // 0: none, 1: false, 2: true
		if e.OK != nil {
			ok = 1
			if *e.OK {
				ok = 2
			}
		}
		vis := byte(0)
		if e.Visible {
			vis = 1
		}
		b = append(b, ok, vis)
		b = binary.AppendVarint(b, e.Ref)
	}
	return packEncoder().EncodeAll(b, []byte{packFormat})
}

var errPack = errors.New("not a valid event pack")

// decodePack is a pack's events. Their strings share one allocation.
func decodePack(pack []byte) ([]rows.EventRow, error) {
	if len(pack) == 0 || pack[0] != packFormat {
		return nil, errPack
	}
	raw, err := packDecoder().DecodeAll(pack[1:], nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errPack, err)
	}
	d := newPackReader(raw)
	uvarint, varint, str := d.uvarint, d.varint, d.str
	n := uvarint()
	if d.bad || n > uint64(len(raw)) {
		return nil, errPack
	}
	out := make([]rows.EventRow, n)
	bools := make([]bool, n) // the events' ok values, one allocation
	for i := range out {
		e := &out[i]
		e.Seq = varint()
		e.T = time.UnixMicro(varint()).UTC()
		e.Actor, e.Kind, e.Task, e.Text, e.Tool = str(), str(), str(), str(), str()
		e.Depth, e.Args, e.Result, e.Decision, e.Phase = str(), str(), str(), str(), str()
		switch d.byte() {
		case 1:
			e.OK = &bools[i]
		case 2:
			bools[i] = true
			e.OK = &bools[i]
		}
		e.Visible = d.byte() == 1
		e.Ref = varint()
		if d.bad {
			return nil, errPack
		}
	}
	if d.pos != len(raw) {
		return nil, errPack
	}
	return out, nil
}

// packReader reads a decompressed pack: its strings are slices of one
// string, and a read past the end or a malformed number sets bad (and
// gives zero).
type packReader struct {
	raw []byte
	s   string
	pos int
	bad bool
}

func newPackReader(raw []byte) *packReader { return &packReader{raw: raw, s: string(raw)} }

func (d *packReader) uvarint() uint64 {
	v, n := binary.Uvarint(d.raw[d.pos:])
	if n <= 0 {
		d.bad = true
		return 0
	}
	d.pos += n
	return v
}

func (d *packReader) varint() int64 {
	v, n := binary.Varint(d.raw[d.pos:])
	if n <= 0 {
		d.bad = true
		return 0
	}
	d.pos += n
	return v
}

func (d *packReader) str() string {
	n := d.uvarint()
	if d.bad || n > uint64(len(d.raw)-d.pos) {
		d.bad = true
		return ""
	}
	v := d.s[d.pos : d.pos+int(n)]
	d.pos += int(n)
	return v
}

func (d *packReader) byte() byte {
	if d.pos >= len(d.raw) {
		d.bad = true
		return 0
	}
	d.pos++
	return d.raw[d.pos-1]
}

func (d *packReader) f64() float64 {
	if len(d.raw)-d.pos < 8 {
		d.bad = true
		return 0
	}
	d.pos += 8
	return math.Float64frombits(binary.LittleEndian.Uint64(d.raw[d.pos-8:]))
}

// hasPacks says whether the warehouse has an event_packs table (a lake
// and a warehouse at an older schema, opened read-only, have none).
func (w *Warehouse) hasPacks(ctx context.Context) bool {
	w.packsOnce.Do(func() {
		if w.Lake {
			return
		}
		v, err := w.Version(ctx)
		w.packs = err == nil && v >= packsSchema
		w.pagePacks = err == nil && v >= pagePacksSchema
	})
	return w.packs
}

// packed is a run's pack as stored, with the events it holds.
type packed struct {
	events int64
	pack   []byte
}

// packsOf reads the packs of runs (those that have one).
func (w *Warehouse) packsOf(ctx context.Context, ids []string) (map[string]packed, error) {
	out := map[string]packed{}
	if len(ids) == 0 || !w.hasPacks(ctx) {
		return out, nil
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	// An IN list: DuckDB filters the scan of run_id by it and reads the
	// matching rows' packs alone (one equality per run in a UNION ALL was
	// 5–10 × slower for 50 runs at --scale 10).
	err := w.scan(ctx, `SELECT run_id, events, pack FROM event_packs WHERE run_id IN `+placeholders(len(ids)), func(rs *sql.Rows) error {
		var id string
		var p packed
		if err := rs.Scan(&id, &p.events, &p.pack); err != nil {
			return err
		}
		out[id] = p
		return nil
	}, args...)
	return out, err
}

// placeholders is "(?, ?, …)" for n parameters.
func placeholders(n int) string {
	b := make([]byte, 0, 3*n+1)
	b = append(b, '(')
	for i := range n {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(b, '?')
	}
	return string(append(b, ')'))
}

// invalidatePacks deletes, in an ingest's transaction, the packs of the
// runs whose events it wrote (their spans from file first on) or
// replaced.
const invalidatePacks = `DELETE FROM event_packs WHERE run_id IN (SELECT run_id FROM run_spans WHERE file_id >= ?)`

// MaxPackEvents bounds the events RefreshEventPacks packs: past it, it
// packs nothing, and the viewer reads those runs from the columns. It is
// the most measured within bounds: what grew with the runs packed was
// the packs table's last row group, which every checkpoint rewrote whole
// and analysed for compression with memory past DuckDB's limit (measured
// at --scale 30; a first start packing --scale 100 peaked at 1,166 MB by
// 115,000 runs, which fits a row group of 122,880). Checkpointed every packCheckpointBytes and
// uncompressed (PackRuns), a first start packing --scale 30 (7.1 million
// events, 5.5 million judgments) held at 420–505 MB throughout, peak
// 489–527 MB; --scale 100 (23.7 million) is not measured so yet.
var MaxPackEvents int64 = 8_000_000

// PackStats says what RefreshEventPacks or RefreshPagePacks did.
type PackStats struct {
	Runs    int   // runs packed
	Events  int64 // their events (event packs)
	Bytes   int64 // their packs' size
	Skipped int   // runs left unpacked: more than MaxPackEvents events (MaxPackJudgments judgments) in all, or their events changed while read
	// MostRead is the most rows of events one query of RefreshEventPacks
	// read (packBatchEvents bounds it, but for a run of more).
	MostRead int64
	// Checkpoints is how many checkpoints it ran while it packed
	// (packCheckpointBytes).
	Checkpoints int
}

// PackRuns is RefreshEventPacks then RefreshPagePacks, for the viewer:
// progress(stage, done, total) is told what it packs and the runs packed
// (nil: not told).
//
// While it packs, the packing checkpoints every packCheckpointBytes of
// packs (DuckDB's own threshold raised to packCheckpoint), and once
// after, when the packing's memory is given back; and DuckDB writes what
// it checkpoints uncompressed (force_compression; the packs are zstd
// already). A checkpoint rewrites the packs table's last row group
// whole (up to 122,880 runs' packs): analysed for compression, it took
// memory past DuckDB's limit, more as the row group filled (at --scale
// 30, 70,200 runs, the process's peak was 609 MB with a checkpoint every
// 32 MB and 674 MB with DuckDB's own at 256 MB of log; uncompressed,
// 489–527 MB, steady while it packs; docs/serve.md).
func (w *Warehouse) PackRuns(ctx context.Context, progress func(stage string, done, total int)) error {
	told := func(stage string) func(done, total int) {
		if progress == nil {
			return nil
		}
		return func(done, total int) { progress(stage, done, total) }
	}
	if w.ReadOnly || w.Lake {
		return nil
	}
	for _, set := range [][2]string{{"checkpoint_threshold", packCheckpoint}, {"force_compression", "uncompressed"}} {
		var was string
		if err := w.db.QueryRowContext(ctx, `SELECT current_setting('`+set[0]+`')`).Scan(&was); err != nil {
			return err
		}
		if _, err := w.db.ExecContext(ctx, `SET `+set[0]+` = '`+set[1]+`'`); err != nil {
			return err
		}
		defer w.db.ExecContext(context.WithoutCancel(ctx), `SET `+set[0]+` = ?`, was)
	}
	ev, err := w.RefreshEventPacks(ctx, told("the runs' events"))
	if err != nil {
		return err
	}
	pg, err := w.RefreshPagePacks(ctx, told("the runs' tasks and judgments"))
	if err != nil || ev.Runs+pg.Runs == 0 {
		return err
	}
	debug.FreeOSMemory()
	restore, err := w.lowerMemory(ctx)
	if err != nil {
		return err
	}
	defer restore()
	if _, err := w.db.ExecContext(ctx, `CHECKPOINT`); err != nil {
		return fmt.Errorf("packing the runs: %w", err)
	}
	return nil
}

// packCheckpoint is DuckDB's checkpoint_threshold while PackRuns packs:
// DuckDB checkpoints on its own only past it, and the packing checkpoints
// every packCheckpointBytes of packs before that.
const packCheckpoint = "256MB"

// packCheckpointBytes is how many bytes of packs RefreshEventPacks and
// RefreshPagePacks append between two checkpoints (CHECKPOINT once an
// appender's batch takes them past it). DuckDB keeps the rows appended
// since the last checkpoint in memory (the IN_MEMORY_TABLE of
// duckdb_memory(), spilled to its temporary files past its limit), and a
// checkpoint turns them all into blocks at once, with memory its limit
// does not count: at --scale 30 (70,200 runs), packing behind the pages
// held steady at 450–480 MB until DuckDB's own checkpoint at 256 MB of
// log took the process to 670 MB in one step (its allocator +200 MB,
// malloc's +80 MB), where a checkpoint every 32 MB of packs keeps each
// step small (docs/serve.md). A variable for the tests.
var packCheckpointBytes int64 = 32 << 20

// packAppendRuns is how many runs' event packs one appender writes and
// commits (a variable for the tests).
var packAppendRuns = loadBatch

// RefreshEventPacks packs every run that has events and no pack, a batch
// of runs at a time: the runs whose events lie together in one file (one
// span each, run_spans) read as one range of its lines, at most
// packBatchEvents events a query, on two connections; a run of several
// spans (its events in more than one file) read from its spans with a
// few others. The packs are appended a few thousand runs a transaction.
// Past MaxPackEvents events to pack, it packs none. A read-only
// warehouse, a lake or one at an older schema is left as it is. Stopped
// halfway, it leaves some runs unpacked, which read their columns: time
// lost, never a wrong page.
func (w *Warehouse) RefreshEventPacks(ctx context.Context, progress func(done, total int)) (PackStats, error) {
	var st PackStats
	if w.ReadOnly || w.Lake {
		return st, nil
	}
	if v, err := w.Version(ctx); err != nil || v < packsSchema {
		return st, err
	}
	fail := func(err error) (PackStats, error) { return st, fmt.Errorf("packing the runs' events: %w", err) }
	// The runs to pack, with the events their spans count, in the order
	// their events lie.
	type toPack struct {
		id                 string
		file, lo, hi, want int64
	}
	var single []toPack // one bounded span
	var several []toPack
	err := w.scan(ctx, `SELECT run_id, count(*) = 1 AND bool_and(lo IS NOT NULL AND hi IS NOT NULL), min(file_id), min(lo), max(hi), sum(events) FROM run_spans s
		WHERE NOT EXISTS (SELECT 1 FROM event_packs p WHERE p.run_id = s.run_id) GROUP BY run_id HAVING sum(events) <= ?
		ORDER BY min(file_id), min(lo), run_id`, func(rs *sql.Rows) error {
		var r toPack
		var one bool
		var lo, hi sql.NullInt64
		if err := rs.Scan(&r.id, &one, &r.file, &lo, &hi, &r.want); err != nil {
			return err
		}
		r.lo, r.hi = lo.Int64, hi.Int64
		if one {
			single = append(single, r)
		} else {
			several = append(several, r)
		}
		return nil
	}, MaxRunEvents)
	if err != nil {
		return fail(err)
	}
	total := len(single) + len(several)
	if total == 0 {
		return st, nil
	}
	var events int64
	for _, r := range append(single, several...) {
		events += r.want
	}
	if events > MaxPackEvents {
		st.Skipped = total
		return st, nil
	}
	// The batches: runs of one file, in the order of their lines, up to
	// packBatchEvents events; then the runs of several spans, 64 a batch.
	type batch struct {
		runs    []toPack
		spanned bool // read from each run's spans
	}
	var batches []batch
	for i := 0; i < len(single); {
		j, n := i, int64(0)
		for j < len(single) && single[j].file == single[i].file && (j == i || n+single[j].want <= packBatchEvents) {
			n += single[j].want
			j++
		}
		batches = append(batches, batch{runs: single[i:j]})
		i = j
	}
	for i := 0; i < len(several); i += 64 {
		batches = append(batches, batch{runs: several[i:min(i+64, len(several))], spanned: true})
	}
	// DuckDB's limit lowered to the ingest's while the events are read, and
	// the Go memory given back after.
	restore, err := w.lowerMemory(ctx)
	if err != nil {
		return fail(err)
	}
	defer restore()
	defer debug.FreeOSMemory()
	conn, err := w.db.Conn(ctx)
	if err != nil {
		return fail(err)
	}
	defer conn.Close()
	// The writer's failure stops the readers.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	type done struct {
		id     string
		events int64
		pack   []byte
	}
	packs := make(chan done, 256)
	// The writer: a few thousand runs an appender, each committed alone.
	written := make(chan error, 1)
	go func() {
		var batch []done
		var since int64 // bytes appended since the last checkpoint
		flush := func() error {
			if len(batch) == 0 {
				return nil
			}
			err := appendAll(conn, "event_packs", len(batch), func(i int) []driver.Value { return []driver.Value{batch[i].id, batch[i].events, batch[i].pack} })
			for _, d := range batch {
				since += int64(len(d.pack))
			}
			batch = batch[:0]
			if err == nil && since >= packCheckpointBytes {
				since = 0
				st.Checkpoints++
				_, err = conn.ExecContext(ctx, `CHECKPOINT`)
			}
			return err
		}
		var err error
		for d := range packs {
			if err != nil {
				continue // drain
			}
			batch = append(batch, d)
			st.Runs++
			if progress != nil && st.Runs%256 == 0 {
				progress(st.Runs, total)
			}
			st.Events += d.events
			st.Bytes += int64(len(d.pack))
			if len(batch) >= packAppendRuns {
				if err = flush(); err != nil {
					cancel()
				}
			}
		}
		if err == nil {
			err = flush()
		}
		if progress != nil && err == nil {
			progress(st.Runs, total)
		}
		written <- err
	}()

	// The readers: a batch each, in turn.
	var mu sync.Mutex // guards st.MostRead and skipped
	skipped := 0
	var next atomic.Int64
	read := func() error {
		for {
			i := int(next.Add(1)) - 1
			if i >= len(batches) {
				return nil
			}
			b := batches[i]
			want := make(map[string]int64, len(b.runs))
			ids := make([]string, len(b.runs))
			for k, r := range b.runs {
				want[r.id], ids[k] = r.want, r.id
			}
			var byRun map[string][]rows.EventRow
			var read int64
			if b.spanned {
				got := w.eventsOf(ctx, ids)
				if got.err != nil {
					return got.err
				}
				byRun = got.byRun
				for _, es := range byRun {
					read += int64(len(es))
				}
			} else {
				byRun = make(map[string][]rows.EventRow, len(b.runs))
				lo, hi := b.runs[0].lo, b.runs[0].hi
				for _, r := range b.runs {
					lo, hi = min(lo, r.lo), max(hi, r.hi)
				}
				err := w.scan(ctx, `SELECT run_id, `+eventColumns+` FROM events WHERE file_id = ? AND src_line BETWEEN ? AND ?`, func(rs *sql.Rows) error {
					var id string
					e, err := scanEvent(rs, &id)
					if err != nil {
						return err
					}
					read++
					if _, ok := want[id]; ok {
						byRun[id] = append(byRun[id], e)
					}
					return nil
				}, b.runs[0].file, lo, hi)
				if err != nil {
					return err
				}
			}
			mu.Lock()
			st.MostRead = max(st.MostRead, read)
			mu.Unlock()
			for _, id := range ids {
				es := byRun[id]
				if int64(len(es)) != want[id] {
					// The spans disagree with the events (a writer ran
					// meanwhile): left to the columns.
					mu.Lock()
					skipped++
					mu.Unlock()
					continue
				}
				slices.SortStableFunc(es, func(a, b rows.EventRow) int { return cmp.Compare(a.Seq, b.Seq) })
				select {
				case packs <- done{id, int64(len(es)), encodePack(es)}:
				case <-ctx.Done():
					return ctx.Err()
				}
			}
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range errs {
		wg.Go(func() { errs[i] = read() })
	}
	wg.Wait()
	close(packs)
	if err := <-written; err != nil {
		return fail(err)
	}
	if err := errors.Join(errs...); err != nil {
		return fail(err)
	}
	st.Skipped = skipped
	return st, nil
}
