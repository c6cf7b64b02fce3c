package ingest

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strings"

	"github.com/duckdb/duckdb-go/v2"
)

// The run inputs (table run_inputs, schema 16) are what LoadRuns gives of
// each run beyond its dimensions — its active tasks with their depths,
// rule scores and judgments, its TA judgments and run-level rubric
// judgments — encoded in one value per run, in LoadRuns' order. Reading
// them is a scan of one row per run instead of three joins, a window and
// two sorts over every task outcome and judgment, and row-by-row
// conversions of a hundred thousand judgments (a scale-1 warehouse:
// ≈ 0.7 s against ≈ 0.05 s; docs/warehouse.md).
//
// They are derived data, and kept honest by one rule: every write to a
// table they come from (runs, scenarios, task outcomes, task scores,
// judgments) either deletes the meta row run_inputs in its own
// transaction (invalidateInputs: every run's inputs are stale), or
// deletes the rows of the runs it writes (dropInputsOf) and the meta row
// only when it does not name inputsFormat (staleUnlessFresh: a rebuild
// under way is not to be trusted). LoadRuns uses the stored inputs only
// while that row names inputsFormat, and then a batch of runs only when
// every run in it has its row (else the batch is read from the tables).
// The ingest and the judge drop the rows of the runs they write, unless
// an ingest replaces a scenario (whose task weights and order each of its
// runs' inputs hold); score, which rewrites every task's scores, makes
// them all stale. The writers rebuild them after committing
// (RefreshRunInputs: only the runs without a row, while the meta row
// names the format; else every run), the judge when it ends (judge.Run),
// unless interrupted. Inputs that are missing or stale are read from the
// tables as before, so a failed or killed rebuild costs time, never a
// wrong number.

// inputsFormat is the encoding of run_inputs; a gymlens that encodes
// otherwise changes it, and an older warehouse's are rebuilt.
const inputsFormat = "2"

// refreshBatch is how many runs' tasks and judgments a rebuild of the
// run inputs reads a query.
var refreshBatch = 2000

// inputsSchema is the schema version that added run_inputs.
const inputsSchema = 16

// invalidateInputs is the statement each writer of the tables the run
// inputs come from runs in its transaction. The page packs come from the
// same tables (pagepacks.go): it makes them stale too.
const invalidateInputs = `DELETE FROM meta WHERE key IN ('run_inputs', 'page_packs')`

// staleUnlessFresh is invalidateInputs for a writer that drops the rows
// of the runs it writes (dropInputsOf): the page packs are stale, the run
// inputs only if a rebuild is under way (its rows may predate the write).
const staleUnlessFresh = `DELETE FROM meta WHERE key = 'page_packs' OR (key = 'run_inputs' AND value <> '` + inputsFormat + `')`

// dropInputsOf deletes the stored inputs of the runs a query gives.
func dropInputsOf(runs string) string {
	return `DELETE FROM run_inputs WHERE run_id IN (` + runs + `)`
}

// inputsFresh says whether every row of run_inputs holds its run's
// inputs as the tables now give them (a run without a row is read from
// the tables: loadInputs).
func (w *Warehouse) inputsFresh(ctx context.Context) bool {
	if w.Lake {
		return w.lakeInputs
	}
	return w.metaIs(ctx, "run_inputs", inputsFormat)
}

// Derived data kept fresh by a meta row (run_inputs, page_packs) is
// rebuilt between startRebuild, which empties its table and sets the row
// to "building", and endRebuild, which names the format in the row only
// if it still says "building": a writer that ran meanwhile deleted it
// (invalidateInputs), and the data stays stale. Readers take the data as
// fresh only while the row names its format (metaIs).

// metaIs says whether meta's row key holds value.
func (w *Warehouse) metaIs(ctx context.Context, key, value string) bool {
	var v string
	err := w.db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = ?`, key).Scan(&v)
	return err == nil && v == value
}

func startRebuild(ctx context.Context, conn *sql.Conn, key, table string) error {
	if _, err := conn.ExecContext(ctx, `DELETE FROM `+table); err != nil { // table: one of gymlens' own names
		return err
	}
	_, err := conn.ExecContext(ctx, `INSERT OR REPLACE INTO meta VALUES (?, 'building')`, key)
	return err
}

func endRebuild(ctx context.Context, conn *sql.Conn, key, format string) error {
	_, err := conn.ExecContext(ctx, `UPDATE meta SET value = ? WHERE key = ? AND value = 'building'`, format, key)
	return err
}

// RunInputsFresh says whether LoadRuns reads the stored run inputs (for
// tests and the benchmarks).
func (w *Warehouse) RunInputsFresh(ctx context.Context) bool { return w.inputsFresh(ctx) }

// RefreshRunInputs rebuilds the run inputs from the tables where they are
// stale: while the meta row names the format, only the runs without a
// row (those the writers since the last rebuild wrote), else every run.
// A read-only warehouse or a lake is left as it is. They are written a
// few thousand runs a transaction (one transaction would hold every run's
// in DuckDB's memory until it commits: 375 MB at --scale 100), and
// marked fresh in the last: until then LoadRuns reads the tables, so a
// rebuild stopped halfway is only time lost.
func (w *Warehouse) RefreshRunInputs(ctx context.Context) error {
	if w.ReadOnly || w.Lake {
		return nil
	}
	if v, err := w.Version(ctx); err != nil || v < inputsSchema {
		return err // kept at an older schema (OpenOptions.SchemaVersion): no table for them
	}
	fail := func(err error) error { return fmt.Errorf("rebuilding the run inputs: %w", err) }
	some := w.inputsFresh(ctx)
	if some {
		var n int64
		if err := w.db.QueryRowContext(ctx, `SELECT count(*) FROM runs r ANTI JOIN run_inputs i USING (run_id)`).Scan(&n); err != nil {
			return fail(err)
		}
		if n == 0 {
			return nil
		}
	}
	conn, err := w.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if some {
		// Fresh but for some runs: kept, and marked as being built, so
		// that a writer meanwhile (staleUnlessFresh) leaves them stale.
		res, err := conn.ExecContext(ctx, `UPDATE meta SET value = 'building' WHERE key = 'run_inputs' AND value = ?`, inputsFormat)
		if err != nil {
			return fail(err)
		}
		if n, _ := res.RowsAffected(); n != 1 {
			some = false // a writer ran since inputsFresh
		}
	}
	if !some {
		if err := startRebuild(ctx, conn, "run_inputs", "run_inputs"); err != nil {
			return fail(err)
		}
	}
	// The runs in order, and which of them have no inputs.
	type runID struct {
		id      string
		missing bool
	}
	var ids []runID
	err = w.scan(ctx, `SELECT r.run_id, i.run_id IS NULL FROM runs r LEFT JOIN run_inputs i USING (run_id)`, func(rows *sql.Rows) error {
		var r runID
		if err := rows.Scan(&r.id, &r.missing); err != nil {
			return err
		}
		ids = append(ids, r)
		return nil
	})
	if err != nil {
		return fail(err)
	}
	slices.SortFunc(ids, func(a, b runID) int { return strings.Compare(a.id, b.id) })
	// Where each run's task outcomes and judgments lie (rowids): a
	// window's queries are bounded by its runs' span as well as by their
	// ids, which alone made DuckDB compare every id of the tables once per
	// window (its string bounds keep 8 bytes, which the ids share): 8.1 s
	// of counting at --scale 100 (docs/benchmarks.md).
	at := make(map[string]int, len(ids))
	for i, r := range ids {
		at[r.id] = i
	}
	spans := make([]rowSpans, len(ids))
	for t, table := range []string{"task_outcomes", "judgments"} {
		err = w.scan(ctx, `SELECT run_id, min(rowid), max(rowid) FROM `+table+` GROUP BY run_id`, func(rows *sql.Rows) error {
			var id sql.RawBytes
			var lo, hi int64
			if err := rows.Scan(&id, &lo, &hi); err != nil {
				return err
			}
			if i, ok := at[string(id)]; ok {
				spans[i][t] = [2]int64{lo, hi + 1}
			}
			return nil
		})
		if err != nil {
			return fail(err)
		}
	}
	at = nil
	// DuckDB's default limit lowered to the ingest's while the tables are
	// read: at --scale 100 the rebuild after score peaked at 1,149 MB with
	// 512MB, 720 MB with 160MB (and 899 MB with batches of 8,000 runs,
	// 91 s against 125 s: not taken).
	restore, err := w.lowerMemory(ctx)
	if err != nil {
		return fail(err)
	}
	defer restore()
	type row struct {
		id     string
		inputs []byte
	}
	var pending []row
	flush := func() error {
		if len(pending) == 0 {
			return nil
		}
		err := appendAll(conn, "run_inputs", len(pending), func(i int) []driver.Value { return []driver.Value{pending[i].id, pending[i].inputs} })
		pending = pending[:0]
		return err
	}
	// The tables are read (on the pool's other connections) a window of
	// refreshBatch runs in id order at a time, from the first to the last
	// run of the window that needs its inputs: a query's bounds are run
	// ids, so the rows it reads, and the driver holds, stay those of a
	// window's runs however few of them are rebuilt.
	in := interner{}
	for lo := 0; lo < len(ids); lo += refreshBatch {
		var runs []RunRow
		byID := map[string]int{}
		var span rowSpans
		for k, r := range ids[lo:min(lo+refreshBatch, len(ids))] {
			if r.missing {
				byID[r.id] = len(runs)
				runs = append(runs, RunRow{RunID: r.id})
				span.add(spans[lo+k])
			}
		}
		if len(runs) == 0 {
			continue
		}
		if err := w.loadTasksAndJudgments(ctx, runs, byID, runs[0].RunID, runs[len(runs)-1].RunID, in, &span); err != nil {
			return fail(err)
		}
		for i := range runs {
			pending = append(pending, row{runs[i].RunID, encodeInputs(nil, &runs[i])})
			if len(pending) >= loadBatch {
				if err := flush(); err != nil {
					return fail(err)
				}
			}
		}
	}
	if err := flush(); err != nil {
		return fail(err)
	}
	if err := endRebuild(ctx, conn, "run_inputs", inputsFormat); err != nil {
		return fail(err)
	}
	return nil
}

// rowSpans are the rowids of some runs' task outcomes and judgments:
// for each table, the first and one past the last ([0, 0): none).
type rowSpans [2][2]int64

// add widens s to take in o.
func (s *rowSpans) add(o rowSpans) {
	for t := range s {
		switch {
		case o[t][0] == o[t][1]:
		case s[t][0] == s[t][1]:
			s[t] = o[t]
		default:
			s[t] = [2]int64{min(s[t][0], o[t][0]), max(s[t][1], o[t][1])}
		}
	}
}

// lowerMemory lowers DuckDB's limit to the ingest's (unless the user set
// one) while a rebuild of derived data reads the tables; restore puts it
// back.
func (w *Warehouse) lowerMemory(ctx context.Context) (restore func(), err error) {
	if w.MemoryLimit != DefaultMemoryLimit {
		return func() {}, nil
	}
	if _, err := w.db.ExecContext(ctx, `SET memory_limit = '`+IngestMemoryLimit+`'`); err != nil {
		return nil, err
	}
	return func() { w.db.ExecContext(context.WithoutCancel(ctx), `SET memory_limit = '`+DefaultMemoryLimit+`'`) }, nil
}

// appendAll appends n rows (row(i) is the i-th) to table through one
// appender on conn, which commits them when it closes unless conn is in a
// transaction.
func appendAll(conn *sql.Conn, table string, n int, row func(i int) []driver.Value) error {
	return conn.Raw(func(dc any) error {
		a, err := duckdb.NewAppenderFromConn(dc.(driver.Conn), "", table)
		if err != nil {
			return err
		}
		for i := range n {
			if err := a.AppendRow(row(i)...); err != nil {
				a.Close()
				return err
			}
		}
		return a.Close()
	})
}

// loadInputs fills runs[lo..hi] from run_inputs, read by the rowids in
// span (its first and last) or, when span is nil, by run id, and calls
// ready (when not nil) with each run's index once it is filled; ok is
// false when some run has none, or more than one (then nothing is left
// filled).
func (w *Warehouse) loadInputs(ctx context.Context, runs []RunRow, byID map[string]int, lo, hi int, in interner, a *inputsArena, span []int64, ready func(i int)) (ok bool, err error) {
	n := 0
	var strs []string
	q, args := `SELECT run_id, inputs FROM run_inputs WHERE run_id BETWEEN ? AND ?`, []any{runs[lo].RunID, runs[hi].RunID}
	if span != nil {
		q, args = `SELECT run_id, inputs FROM run_inputs WHERE rowid BETWEEN ? AND ?`, []any{span[0], span[1]}
	}
	err = w.scan(ctx, q, func(rows *sql.Rows) error {
		var id, b sql.RawBytes
		if err := rows.Scan(&id, &b); err != nil {
			return err
		}
		i, found := byID[string(id)]
		if !found || i < lo || i > hi {
			return nil
		}
		var derr error
		if strs, derr = decodeInputs(b, &runs[i], in, strs[:0], a); derr != nil {
			return fmt.Errorf("run %s: stored inputs: %w", runs[i].RunID, derr)
		}
		n++
		if ready != nil {
			ready(i)
		}
		return nil
	}, args...)
	if err != nil || n == hi-lo+1 {
		return err == nil, err
	}
	for i := lo; i <= hi; i++ {
		runs[i].Tasks, runs[i].TA, runs[i].Custom = nil, nil, nil
	}
	return false, nil
}

// encodeInputs appends r's tasks, TA and run-level rubric judgments to
// buf. Strings are written once per run and then referred to by number;
// floats as their bits, bytes reversed, in a varint (small integers and
// halves, most scores, take two bytes).
func encodeInputs(buf []byte, r *RunRow) []byte {
	e := inputsEncoder{buf: buf, seen: map[string]uint64{}}
	e.uint(uint64(len(r.Tasks)))
	// How many TC and TR-J judgments the tasks hold in all: the decoder
	// makes one slice of each for the run.
	var ntc, ntrj int
	for k := range r.Tasks {
		ntc, ntrj = ntc+len(r.Tasks[k].TC), ntrj+len(r.Tasks[k].TRJ)
	}
	e.uint(uint64(ntc))
	e.uint(uint64(ntrj))
	for k := range r.Tasks {
		t := &r.Tasks[k]
		e.str(t.Task)
		e.float(t.Weight)
		var set uint64
		for i := range 3 {
			e.float(t.Rules[i])
			if t.RuleSet[i] {
				set |= 1 << i
			}
		}
		e.uint(set)
		e.str(t.Expected)
		e.str(t.Chosen)
		e.uint(uint64(len(t.TC)))
		for _, j := range t.TC {
			e.str(j.Judge)
			e.float(j.Correctness)
			e.float(j.Grounding)
			e.float(j.Completeness)
			e.float(j.ArtifactQ)
		}
		e.uint(uint64(len(t.TRJ)))
		for _, j := range t.TRJ {
			e.str(j.Judge)
			for _, v := range j.Scores {
				e.float(v)
			}
		}
		e.custom(t.Custom)
	}
	e.uint(uint64(len(r.TA)))
	for _, j := range r.TA {
		e.str(j.Judge)
		e.float(j.Now)
		e.float(j.Later)
		e.float(j.CQ)
		e.float(j.Both)
		var set uint64
		if j.HasCQ {
			set |= 1
		}
		if j.HasBoth {
			set |= 2
		}
		e.uint(set)
	}
	e.custom(r.Custom)
	return e.buf
}

type inputsEncoder struct {
	buf  []byte
	seen map[string]uint64
}

func (e *inputsEncoder) uint(v uint64) { e.buf = binary.AppendUvarint(e.buf, v) }

func (e *inputsEncoder) float(v float64) {
	e.uint(bits.ReverseBytes64(math.Float64bits(v)))
}

// str writes 0 and the string the first time, then its number + 1.
func (e *inputsEncoder) str(s string) {
	if k, ok := e.seen[s]; ok {
		e.uint(k + 1)
		return
	}
	e.seen[s] = uint64(len(e.seen))
	e.uint(0)
	e.uint(uint64(len(s)))
	e.buf = append(e.buf, s...)
}

// custom writes a list of rubric judgments; a nil score map as 0, else
// its size + 1 and its scores by name.
func (e *inputsEncoder) custom(js []CustomJudgment) {
	e.uint(uint64(len(js)))
	for _, j := range js {
		e.str(j.Metric)
		e.str(j.Judge)
		if j.Scores == nil {
			e.uint(0)
			continue
		}
		e.uint(uint64(len(j.Scores)) + 1)
		names := make([]string, 0, len(j.Scores))
		for n := range j.Scores {
			names = append(names, n)
		}
		slices.Sort(names)
		for _, n := range names {
			e.str(n)
			e.float(j.Scores[n])
		}
	}
}

var errInputs = errors.New("truncated or malformed")

// inputsArena gives decodeInputs the slices of runs from a few large
// allocations, and, once the caller holds none of the runs' tasks
// (LoadRunsWith with dropTasks, after each visit that leaves none
// waiting), the same memory again for the next runs: reading 234,000
// runs for their metric values then leaves little for the collector,
// and touches little fresh memory (docs/benchmarks.md). Only for that: a
// run kept would keep its whole array.
type inputsArena struct {
	tasks []TaskRow
	tcs   []TCJudgment
	trjs  []TRJJudgment
	tas   []TAJudgment
}

// reuse hands out the arena's memory again: nothing may still refer to
// what it gave before.
func (a *inputsArena) reuse() {
	a.tasks, a.tcs, a.trjs, a.tas = a.tasks[:0], a.tcs[:0], a.trjs[:0], a.tas[:0]
}

// carve is n zeroed elements of buf, which it extends (a new array, twice
// as large, when it is full: the old one stays with the slices cut from
// it), capped so that an append to them never reaches the next.
func carve[T any](buf *[]T, n int) []T {
	b := *buf
	if n > cap(b)-len(b) {
		b = make([]T, 0, max(2*cap(b), n))
	}
	s := b[len(b) : len(b)+n : len(b)+n]
	clear(s)
	*buf = b[:len(b)+n]
	return s
}

// decodeInputs reads what encodeInputs wrote into r's Tasks, TA and
// Custom, interning its strings, their slices cut from a (nil: each its
// own allocation); strs is scratch space, returned.
func decodeInputs(b []byte, r *RunRow, in interner, strs []string, a *inputsArena) ([]string, error) {
	if a == nil {
		a = &inputsArena{} // each slice its own array
	}
	d := inputsDecoder{b: b, in: in, strs: strs}
	if n := d.count(); n > 0 {
		r.Tasks = carve(&a.tasks, n)
	} else {
		r.Tasks = nil
	}
	// One slice of each kind of judgment for the run, cut per task (full
	// slice expressions: appending to a task's never overwrites the
	// next's).
	var tcs []TCJudgment
	var trjs []TRJJudgment
	if n := d.count(); n > 0 {
		tcs = carve(&a.tcs, n)
	}
	if n := d.count(); n > 0 {
		trjs = carve(&a.trjs, n)
	}
	for k := range r.Tasks {
		t := &r.Tasks[k]
		t.Task = d.str()
		t.Weight = d.float()
		for i := range 3 {
			t.Rules[i] = d.float()
		}
		set := d.uint()
		for i := range 3 {
			t.RuleSet[i] = set&(1<<i) != 0
		}
		t.Expected, t.Chosen = d.str(), d.str()
		if n := d.count(); n > 0 {
			if n > len(tcs) {
				d.fail()
				break
			}
			t.TC, tcs = tcs[:n:n], tcs[n:]
			for i := range t.TC {
				t.TC[i] = TCJudgment{Judge: d.str(), Correctness: d.float(), Grounding: d.float(), Completeness: d.float(), ArtifactQ: d.float()}
			}
		}
		if n := d.count(); n > 0 {
			if n > len(trjs) {
				d.fail()
				break
			}
			t.TRJ, trjs = trjs[:n:n], trjs[n:]
			for i := range t.TRJ {
				t.TRJ[i].Judge = d.str()
				for s := range t.TRJ[i].Scores {
					t.TRJ[i].Scores[s] = d.float()
				}
			}
		}
		t.Custom = d.custom()
	}
	r.TA = nil
	if n := d.count(); n > 0 {
		r.TA = carve(&a.tas, n)
		for i := range r.TA {
			j := &r.TA[i]
			j.Judge = d.str()
			j.Now, j.Later, j.CQ, j.Both = d.float(), d.float(), d.float(), d.float()
			set := d.uint()
			j.HasCQ, j.HasBoth = set&1 != 0, set&2 != 0
		}
	}
	r.Custom = d.custom()
	if d.err == nil && (d.left() != 0 || len(tcs) != 0 || len(trjs) != 0) {
		d.err = errInputs
	}
	return d.strs, d.err
}

type inputsDecoder struct {
	b    []byte // the input, read from b[i]
	i    int
	in   interner
	strs []string
	err  error
}

func (d *inputsDecoder) uint() uint64 {
	b, i := d.b, d.i
	if i < len(b) && b[i] < 0x80 {
		d.i = i + 1
		return uint64(b[i])
	}
	if i+10 <= len(b) {
		// Eight bytes at once, without a branch per byte: the lengths mix
		// (one byte for small numbers, ten for a float with all its
		// mantissa), so a loop's branches were mispredicted.
		x := binary.LittleEndian.Uint64(b[i:])
		v := x&0x7f | x>>1&(0x7f<<7) | x>>2&(0x7f<<14) | x>>3&(0x7f<<21) |
			x>>4&(0x7f<<28) | x>>5&(0x7f<<35) | x>>6&(0x7f<<42) | x>>7&(0x7f<<49)
		if stops := ^x & 0x8080808080808080; stops != 0 {
			n := bits.TrailingZeros64(stops)/8 + 1
			d.i = i + n
			return v & (1<<(7*n) - 1)
		}
		v |= uint64(b[i+8]&0x7f) << 56
		if b[i+8] < 0x80 {
			d.i = i + 9
			return v
		}
		if b[i+9] <= 1 { // the tenth byte holds the 64th bit alone
			d.i = i + 10
			return v | uint64(b[i+9])<<63
		}
		d.fail()
		return 0
	}
	v, n := binary.Uvarint(b[i:])
	if n <= 0 {
		d.fail()
		return 0
	}
	d.i = i + n
	return v
}

// left is how many bytes are still to read.
func (d *inputsDecoder) left() uint64 { return uint64(len(d.b) - d.i) }

// fail marks the input malformed and stops the reading.
func (d *inputsDecoder) fail() { d.err, d.i = errInputs, len(d.b) }

// count is a list's length, bounded by the bytes left (each element
// takes at least one).
func (d *inputsDecoder) count() int {
	n := d.uint()
	if n > d.left() {
		d.fail()
		return 0
	}
	return int(n)
}

func (d *inputsDecoder) float() float64 {
	return math.Float64frombits(bits.ReverseBytes64(d.uint()))
}

func (d *inputsDecoder) str() string {
	k := d.uint()
	if k > 0 {
		if k > uint64(len(d.strs)) {
			d.fail()
			return ""
		}
		return d.strs[k-1]
	}
	n := d.uint()
	if n > d.left() {
		d.fail()
		return ""
	}
	s := d.in.of(d.b[d.i : d.i+int(n)])
	d.i += int(n)
	d.strs = append(d.strs, s)
	return s
}

func (d *inputsDecoder) custom() []CustomJudgment {
	n := d.count()
	if n == 0 {
		return nil
	}
	out := make([]CustomJudgment, n)
	for i := range out {
		out[i].Metric, out[i].Judge = d.str(), d.str()
		m := d.uint()
		if m == 0 {
			continue
		}
		if m-1 > d.left() {
			d.fail()
			return out
		}
		out[i].Scores = make(map[string]float64, m-1)
		for range m - 1 {
			name := d.str()
			out[i].Scores[name] = d.float()
		}
	}
	return out
}
