package ingest

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gymlens/gymlens/ingest/rows"
)

// The page packs (table page_packs, schema 18) hold the rest of a run
// page as one value per run: the run's rows of task_outcomes, task_scores
// and judgments, as RunPages reads them, encoded here and compressed with
// zstd. A burst of cold pages at --scale 10 spent 80–125 ms of its ≈ 200
// in the judgments alone: DuckDB does not push an IN list of run ids into
// a scan, so every column of 1.2 million judgments was decompressed for
// each batch of pages (docs/benchmarks.md).
//
// They are derived data with the run inputs' rule: every write to a table
// they come from deletes the meta row page_packs in its own transaction
// (invalidateInputs deletes both rows), and RunPages reads them only while
// that row names pageFormat (a rebuild that a writer overlapped leaves it
// stale: startRebuild); a pack that does not decode sends its run to the
// tables. The viewer rebuilds them all when it starts on a warehouse it
// may write and finds them stale (RefreshPagePacks).

// pagePacksSchema is the schema version that added page_packs.
const pagePacksSchema = 18

// pageFormat is the encoding of page_packs (the meta row's value and a
// pack's first byte).
const pageFormat = 1

// pageBatch is how many runs' rows a rebuild reads a query (a range of
// run ids: ≈ 13,000 judgments with their reasons at the sample's sizes).
// At --scale 10 the process peaked at 264–295 MB with 125–250 runs a
// query, 401 MB with 500 and 435–463 MB with 1,000, in about the same
// time (5.5–8 s, the machine's noise).
var pageBatch = 250

// MaxPackJudgments bounds the judgments RefreshPagePacks reads: past it
// the viewer reads the tables (a --scale 30 warehouse holds 5.5 million,
// packed within bounds; --scale 100's 12 million are not measured yet:
// MaxPackEvents).
var MaxPackJudgments int64 = 8_000_000

// pageRows is what RunPages reads of a run beyond its events and its
// scenario: its task scores and task outcomes ordered by task, and its
// judgments by task, metric, judge, then prompt descending (the newest
// first).
type pageRows struct {
	scores    []pageScore
	tasks     []pageTask
	judgments []pageJudgment
}

type pageScore struct {
	task                     string
	expected, chosen, prefer string
	effExpected, effChosen   string
	derived, effective       [3]sql.NullFloat64
}

type pageTask struct {
	task             string
	active           bool
	at               sql.NullTime
	finalSeq         int64
	expected, chosen string
	logged           [3]sql.NullFloat64
}

type pageJudgment struct {
	task, metric, judge, prompt string
	v                           [11]float64 // NaN: none
	cq, both                    sql.NullFloat64
	reasons, evidence           string
	custom                      sql.NullString
}

// pageRowsOf reads runs' pageRows from the tables: of the runs ids (at
// most MaxRunPages), or when ids is nil of every run from lo to hi.
func (w *Warehouse) pageRowsOf(ctx context.Context, ids []string, lo, hi string) (map[string]*pageRows, error) {
	out := map[string]*pageRows{}
	get := func(id string) *pageRows {
		r := out[id]
		if r == nil {
			r = &pageRows{}
			out[id] = r
		}
		return r
	}
	where, args := ` WHERE run_id BETWEEN ? AND ?`, []any{lo, hi}
	if ids != nil {
		if len(ids) == 0 {
			return out, nil
		}
		args = make([]any, len(ids))
		for i, id := range ids {
			args[i] = id
		}
		where = ` WHERE run_id IN ` + placeholders(len(ids))
	}
	err := w.scan(ctx, `SELECT run_id, task, derived_expected, derived_chosen, prefer, derived_evidence, derived_outputs, derived_constraints,
		effective_evidence, effective_outputs, effective_constraints, effective_expected, effective_chosen FROM task_scores`+where+` ORDER BY run_id, task`, func(rs *sql.Rows) error {
		var id string
		var x pageScore
		if err := rs.Scan(&id, &x.task, &x.expected, &x.chosen, &x.prefer, &x.derived[0], &x.derived[1], &x.derived[2],
			&x.effective[0], &x.effective[1], &x.effective[2], &x.effExpected, &x.effChosen); err != nil {
			return err
		}
		r := get(id)
		r.scores = append(r.scores, x)
		return nil
	}, args...)
	if err != nil {
		return nil, err
	}
	from := func(table, cols string) (string, []any, error) {
		if ids == nil {
			return w.rangeRowsOf(ctx, table, lo, hi, cols)
		}
		return w.rowsOf(ctx, table, ids, cols)
	}
	q, qargs, err := from("task_outcomes", `run_id, task, active, activated_at, coalesce(final_seq, 0), coalesce(expected_depth, ''),
		coalesce(chosen_depth, ''), rule_evidence, rule_outputs, rule_constraints`)
	if err != nil {
		return nil, err
	}
	err = w.scan(ctx, `SELECT * FROM (`+q+`) ORDER BY run_id, task`, func(rs *sql.Rows) error {
		var id string
		var x pageTask
		if err := rs.Scan(&id, &x.task, &x.active, &x.at, &x.finalSeq, &x.expected, &x.chosen, &x.logged[0], &x.logged[1], &x.logged[2]); err != nil {
			return err
		}
		r := get(id)
		r.tasks = append(r.tasks, x)
		return nil
	}, qargs...)
	if err != nil {
		return nil, err
	}
	q, qargs, err = from("judgments", `run_id, task, metric, judge, prompt, correctness, grounding, completeness,
		artifact_quality, ta_now, ta_later, ta_cq, understandability, competence, reliability, attachment, faith, reasons, evidence, extra, file_id`)
	if err != nil {
		return nil, err
	}
	err = w.scan(ctx, `SELECT run_id, coalesce(task, ''), metric, judge, prompt,
		coalesce(correctness, 'NaN'), coalesce(grounding, 'NaN'), coalesce(completeness, 'NaN'), coalesce(artifact_quality, 'NaN'),
		coalesce(ta_now, 'NaN'), coalesce(ta_later, 'NaN'), ta_cq,
		coalesce(understandability, 'NaN'), coalesce(competence, 'NaN'), coalesce(reliability, 'NaN'), coalesce(attachment, 'NaN'), coalesce(faith, 'NaN'),
		coalesce(reasons, ''), coalesce(evidence::VARCHAR, ''),
		CASE WHEN starts_with(metric, 'custom.') THEN json_extract(extra, '$.scores')::VARCHAR END,
		CASE WHEN metric = 'ta' AND file_id = 0 THEN TRY_CAST(json_extract(extra, '$.both') AS DOUBLE) END
		FROM (`+q+`) ORDER BY run_id, task, metric, judge, prompt DESC`, func(rs *sql.Rows) error {
		var id string
		var j pageJudgment
		v := &j.v
		if err := rs.Scan(&id, &j.task, &j.metric, &j.judge, &j.prompt, &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &j.cq,
			&v[6], &v[7], &v[8], &v[9], &v[10], &j.reasons, &j.evidence, &j.custom, &j.both); err != nil {
			return err
		}
		r := get(id)
		r.judgments = append(r.judgments, j)
		return nil
	}, qargs...)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// rangeRowsOf is a query (and its arguments) that reads cols of a
// table's rows (task_outcomes or judgments) of the runs from lo to hi:
// for each file that holds some, the range of its lines that holds them
// (row_spans), so that DuckDB reads those row groups alone (a run id's
// zone map prunes nothing: every batch of a rebuild read the whole
// table), and the judgments gymlens judge wrote (file 0) by file.
func (w *Warehouse) rangeRowsOf(ctx context.Context, table, lo, hi, cols string) (string, []any, error) {
	var parts []string
	var args []any
	err := w.scan(ctx, `SELECT file_id, min(lo), max(hi), bool_and(lo IS NOT NULL AND hi IS NOT NULL) FROM row_spans
		WHERE tbl = ? AND run_id BETWEEN ? AND ? AND file_id <> 0 GROUP BY file_id ORDER BY file_id`, func(rs *sql.Rows) error {
		var file int64
		var a, b sql.NullInt64
		var bounded bool
		if err := rs.Scan(&file, &a, &b, &bounded); err != nil {
			return err
		}
		if bounded {
			parts = append(parts, `SELECT `+cols+` FROM `+table+` WHERE file_id = ? AND src_line BETWEEN ? AND ? AND run_id BETWEEN ? AND ?`)
			args = append(args, file, a.Int64, b.Int64, lo, hi)
		} else {
			parts = append(parts, `SELECT `+cols+` FROM `+table+` WHERE file_id = ? AND run_id BETWEEN ? AND ?`)
			args = append(args, file, lo, hi)
		}
		return nil
	}, table, lo, hi)
	if err != nil {
		return "", nil, err
	}
	if table == "judgments" || len(parts) == 0 {
		parts = append(parts, `SELECT `+cols+` FROM `+table+` WHERE file_id = 0 AND run_id BETWEEN ? AND ?`)
		args = append(args, lo, hi)
	}
	return strings.Join(parts, " UNION ALL "), args, nil
}

// encodePage is a run's pageRows as a pack.
func encodePage(r *pageRows) []byte {
	b := make([]byte, 0, 64*len(r.tasks)+256*len(r.judgments)+16)
	str := func(s string) {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	f64 := func(x float64) { b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x)) }
	null := func(x sql.NullFloat64) {
		if !x.Valid {
			b = append(b, 0)
			return
		}
		b = append(b, 1)
		f64(x.Float64)
	}
	flag := func(ok bool) {
		if ok {
			b = append(b, 1)
		} else {
			b = append(b, 0)
		}
	}
	b = binary.AppendUvarint(b, uint64(len(r.scores)))
	for _, x := range r.scores {
		for _, s := range [...]string{x.task, x.expected, x.chosen, x.prefer, x.effExpected, x.effChosen} {
			str(s)
		}
		for i := range 3 {
			null(x.derived[i])
			null(x.effective[i])
		}
	}
	b = binary.AppendUvarint(b, uint64(len(r.tasks)))
	for _, x := range r.tasks {
		str(x.task)
		flag(x.active)
		flag(x.at.Valid)
		if x.at.Valid {
			b = binary.AppendVarint(b, x.at.Time.UnixMicro())
		}
		b = binary.AppendVarint(b, x.finalSeq)
		str(x.expected)
		str(x.chosen)
		for i := range 3 {
			null(x.logged[i])
		}
	}
	b = binary.AppendUvarint(b, uint64(len(r.judgments)))
	for _, j := range r.judgments {
		for _, s := range [...]string{j.task, j.metric, j.judge, j.prompt, j.reasons, j.evidence} {
			str(s)
		}
		for _, x := range j.v {
			f64(x)
		}
		null(j.cq)
		null(j.both)
		flag(j.custom.Valid)
		if j.custom.Valid {
			str(j.custom.String)
		}
	}
	return packEncoder().EncodeAll(b, append(make([]byte, 0, len(b)/4+64), pageFormat))
}

// decodePage is a pack's pageRows; their strings share one allocation.
func decodePage(pack []byte) (*pageRows, error) {
	if len(pack) == 0 || pack[0] != pageFormat {
		return nil, errPack
	}
	raw, err := packDecoder().DecodeAll(pack[1:], nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errPack, err)
	}
	d := newPackReader(raw)
	null := func() sql.NullFloat64 {
		if d.byte() == 0 {
			return sql.NullFloat64{}
		}
		return sql.NullFloat64{Float64: d.f64(), Valid: true}
	}
	// count is a list's length, refused when it could not fit in what is
	// left (each item takes a byte at least).
	count := func() int {
		n := d.uvarint()
		if n > uint64(len(raw)-d.pos) {
			d.bad = true
			return 0
		}
		return int(n)
	}
	r := &pageRows{}
	r.scores = make([]pageScore, count())
	for i := range r.scores {
		x := &r.scores[i]
		x.task, x.expected, x.chosen, x.prefer, x.effExpected, x.effChosen = d.str(), d.str(), d.str(), d.str(), d.str(), d.str()
		for k := range 3 {
			x.derived[k] = null()
			x.effective[k] = null()
		}
	}
	r.tasks = make([]pageTask, count())
	for i := range r.tasks {
		x := &r.tasks[i]
		x.task = d.str()
		x.active = d.byte() == 1
		if d.byte() == 1 {
			x.at = sql.NullTime{Time: time.UnixMicro(d.varint()).UTC(), Valid: true}
		}
		x.finalSeq = d.varint()
		x.expected, x.chosen = d.str(), d.str()
		for k := range 3 {
			x.logged[k] = null()
		}
	}
	r.judgments = make([]pageJudgment, count())
	for i := range r.judgments {
		j := &r.judgments[i]
		j.task, j.metric, j.judge, j.prompt, j.reasons, j.evidence = d.str(), d.str(), d.str(), d.str(), d.str(), d.str()
		for k := range j.v {
			j.v[k] = d.f64()
		}
		j.cq, j.both = null(), null()
		if d.byte() == 1 {
			j.custom = sql.NullString{String: d.str(), Valid: true}
		}
	}
	if d.bad || d.pos != len(raw) {
		return nil, errPack
	}
	return r, nil
}

// hasPagePacks says whether the warehouse has a page_packs table.
func (w *Warehouse) hasPagePacks(ctx context.Context) bool {
	w.hasPacks(ctx)
	return w.pagePacks
}

// pagePacksFresh says whether page_packs holds every run's pageRows as
// the tables now give them.
func (w *Warehouse) pagePacksFresh(ctx context.Context) bool {
	if !w.hasPagePacks(ctx) {
		return false
	}
	return w.metaIs(ctx, "page_packs", fmt.Sprint(pageFormat))
}

// PagePacksFresh says whether RunPages reads the page packs (for tests
// and the benchmarks).
func (w *Warehouse) PagePacksFresh(ctx context.Context) bool { return w.pagePacksFresh(ctx) }

// pagePacksOf reads the page packs of runs while they are fresh; a run
// whose pack is missing or does not decode is not in the map.
func (w *Warehouse) pagePacksOf(ctx context.Context, ids []string) (map[string]*pageRows, error) {
	out := map[string]*pageRows{}
	if len(ids) == 0 || !w.pagePacksFresh(ctx) {
		return out, nil
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	err := w.scan(ctx, `SELECT run_id, pack FROM page_packs WHERE run_id IN `+placeholders(len(ids)), func(rs *sql.Rows) error {
		var id string
		var pack []byte
		if err := rs.Scan(&id, &pack); err != nil {
			return err
		}
		if r, err := decodePage(pack); err == nil {
			out[id] = r
		}
		return nil
	}, args...)
	return out, err
}

// RefreshPagePacks rebuilds every run's page pack when they are stale,
// pageBatch runs a query (a range of run ids, read from the lines that
// hold them: rangeRowsOf) and a transaction, and marks them fresh in the
// last. A read-only warehouse, a lake, one at an older schema or one of
// more than MaxPackJudgments judgments is left as it is (its pages read
// the tables). Stopped halfway, or when a writer
// of the tables they come from ran meanwhile, the packs stay stale: time
// lost, never a wrong page. progress(done, total) is told the runs
// packed (nil: not told).
func (w *Warehouse) RefreshPagePacks(ctx context.Context, progress func(done, total int)) (PackStats, error) {
	var st PackStats
	if w.ReadOnly || w.Lake || !w.hasPagePacks(ctx) || w.pagePacksFresh(ctx) {
		return st, nil
	}
	fail := func(err error) (PackStats, error) { return st, fmt.Errorf("packing the run pages: %w", err) }
	var judgments int64
	if err := w.db.QueryRowContext(ctx, `SELECT count(*) FROM judgments`).Scan(&judgments); err != nil {
		return fail(err)
	}
	ids, err := w.scanStrings(ctx, `SELECT run_id FROM runs ORDER BY run_id`)
	if err != nil {
		return fail(err)
	}
	if judgments > MaxPackJudgments {
		st.Skipped = len(ids)
		return st, nil
	}
	conn, err := w.db.Conn(ctx)
	if err != nil {
		return fail(err)
	}
	defer conn.Close()
	// Fresh only if no writer ran meanwhile (startRebuild, endRebuild).
	if err := startRebuild(ctx, conn, "page_packs", "page_packs"); err != nil {
		return fail(err)
	}
	restore, err := w.lowerMemory(ctx)
	if err != nil {
		return fail(err)
	}
	defer restore()
	defer debug.FreeOSMemory()
	// Two readers, each a batch of runs at a time (most of a batch's cost
	// is turning its rows into Go values, on one core), and one writer.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type packedPage struct {
		id   string
		pack []byte
	}
	batches := make(chan []packedPage, 2)
	var next atomic.Int64
	read := func() error {
		for {
			lo := int(next.Add(int64(pageBatch))) - pageBatch
			if lo >= len(ids) {
				return nil
			}
			hi := min(lo+pageBatch, len(ids))
			got, err := w.pageRowsOf(ctx, nil, ids[lo], ids[hi-1])
			if err != nil {
				return err
			}
			batch := make([]packedPage, 0, hi-lo)
			for _, id := range ids[lo:hi] {
				r := got[id]
				if r == nil {
					r = &pageRows{}
				}
				batch = append(batch, packedPage{id, encodePage(r)})
			}
			select {
			case batches <- batch:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i := range errs {
		wg.Go(func() { errs[i] = read() })
	}
	go func() { wg.Wait(); close(batches) }()
	var werr error
	var since int64 // bytes appended since the last checkpoint
	for batch := range batches {
		if werr != nil {
			continue // drain
		}
		werr = appendAll(conn, "page_packs", len(batch), func(i int) []driver.Value { return []driver.Value{batch[i].id, batch[i].pack} })
		if werr != nil {
			cancel()
			continue
		}
		for _, b := range batch {
			st.Bytes += int64(len(b.pack))
			since += int64(len(b.pack))
		}
		st.Runs += len(batch)
		if since >= packCheckpointBytes {
			since = 0
			st.Checkpoints++
			if _, werr = conn.ExecContext(ctx, `CHECKPOINT`); werr != nil {
				cancel()
				continue
			}
		}
		if progress != nil {
			progress(st.Runs, len(ids))
		}
	}
	if err := errors.Join(append(errs, werr)...); err != nil {
		return fail(err)
	}
	if err := endRebuild(ctx, conn, "page_packs", fmt.Sprint(pageFormat)); err != nil {
		return fail(err)
	}
	return st, nil
}

// buildPage fills a run's page from its pageRows, as the metrics read
// them (LoadRunTasks): its task views, its active tasks in the scenario's
// order with their judgments, its judgments as views.
func buildPage(p *rows.RunPage, sp *scenarioSpec, r *pageRows) {
	nullable := func(x sql.NullFloat64) *float64 {
		if !x.Valid {
			return nil
		}
		v := x.Float64
		return &v
	}
	scores := make(map[string]*pageScore, len(r.scores))
	for i := range r.scores {
		scores[r.scores[i].task] = &r.scores[i]
	}
	for _, o := range r.tasks {
		v := rows.TaskView{Task: o.task, Active: o.active, FinalSeq: o.finalSeq, LoggedExpected: o.expected, LoggedChosen: o.chosen}
		if o.at.Valid {
			t := o.at.Time.UTC()
			v.ActivatedAt = &t
		}
		v.Weight = 1
		if wt, ok := sp.weight[v.Task]; ok {
			v.Weight = wt
		}
		eff, effExp, effChosen := o.logged, v.LoggedExpected, v.LoggedChosen
		for i := range 3 {
			v.Logged[i] = nullable(o.logged[i])
		}
		if x := scores[v.Task]; x != nil {
			v.Rescored, v.Prefer, eff = true, x.prefer, x.effective
			v.DerivedExpected, v.DerivedChosen, effExp, effChosen = x.expected, x.chosen, x.effExpected, x.effChosen
			for i := range 3 {
				v.Derived[i] = nullable(x.derived[i])
			}
		}
		p.TaskViews = append(p.TaskViews, v)
		if v.Active {
			t := rows.TaskRow{Task: v.Task, Weight: v.Weight, Expected: effExp, Chosen: effChosen}
			for i, x := range eff {
				t.Rules[i], t.RuleSet[i] = x.Float64, x.Valid
			}
			p.Tasks = append(p.Tasks, t)
		}
	}
	sortTasks(p, sp)
	active := make(map[string]int, len(p.Tasks)) // task → place in Tasks
	for i, t := range p.Tasks {
		active[t.Task] = i
	}
	seen := map[[3]string]bool{} // (task, metric, judge): the first row, the newest prompt, is the one the metrics use
	for i := range r.judgments {
		addJudgment(p, &r.judgments[i], active, seen)
	}
}
