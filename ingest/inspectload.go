package ingest

import (
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/gymlens/gymlens/ingest/inspect"
	"github.com/gymlens/gymlens/ingest/rows"
	"github.com/gymlens/gymlens/ingest/runlog"
)

// inspectTables are the tables an Inspect log's rows go to.
var inspectTables = []string{"inspect_evals", "inspect_samples", "inspect_usage", "inspect_scores", "inspect_items", "inspect_results", "inspect_reductions"}

// inspectTally counts what the Inspect logs of a pass hold that a
// reader of the summary should know of.
type inspectTally struct {
	evals, cancelled, errored, incomplete, noResults              int
	samples, sampleErrors, retried, limited, unscored, notNumbers int
	evalIDs                                                       map[string]string // eval id → file, within the pass
}

func (t *inspectTally) notes() []string {
	if t == nil || t.evals == 0 {
		return nil
	}
	return []string{
		fmt.Sprintf("Inspect: %d evals (%d cancelled, %d errored, %d incomplete, %d without results)", t.evals, t.cancelled, t.errored, t.incomplete, t.noResults),
		fmt.Sprintf("Inspect: %d samples × epochs (%d errored, %d retried after an error, %d stopped by a limit, %d unscored; %d score values value_to_float gives no number for, kept as NULL, not 0)",
			t.samples, t.sampleErrors, t.retried, t.limited, t.unscored, t.notNumbers),
	}
}

// inspectError turns a reader's error into the ingest's: the file, and
// as the field the zip entry and the field inside it.
func inspectError(err error) error {
	var ie *inspect.Error
	if !errors.As(err, &ie) {
		return err
	}
	field := ie.Field
	if ie.Entry != "" {
		field = strings.TrimSuffix(ie.Entry+": "+ie.Field, ": ")
	}
	msg := ie.Msg
	if ie.Offset > 0 {
		msg = fmt.Sprintf("byte %d: %s", ie.Offset, msg)
	}
	return &runlog.Error{File: ie.File, Field: field, Msg: msg}
}

// readInspect reads an Inspect log; when writing, its rows are appended
// as they are read, one sample at a time (a failed file's rows are
// deleted again, and a failed ingest rolls them back).
func (p *pass) readInspect(fs *fileState) error {
	defer p.bytes.Add(fs.Size)
	if p.inspect == nil {
		p.inspect = &inspectTally{evalIDs: map[string]string{}}
	}
	hdr, err := inspect.ReadHeader(fs.Path)
	if err != nil {
		fs.rejected++
		return p.collect(inspectError(err))
	}
	if first, dup := p.inspect.evalIDs[hdr.EvalID]; dup {
		fs.rejected++
		return p.collect(&runlog.Error{File: fs.Path, Field: "eval.eval_id", Msg: fmt.Sprintf("eval %s is also in %s", hdr.EvalID, first)})
	}
	p.inspect.evalIDs[hdr.EvalID] = fs.Path
	sink := &inspectSink{tally: p.inspect, file: fs.id}
	if p.conn == nil {
		if err := inspect.ReadFile(fs.Path, sink); err != nil {
			fs.rejected++
			return p.collect(inspectError(err))
		}
		p.records.Add(sink.records)
		// What an ingest would write (it counts its rows once written).
		p.sum.Records["inspect_eval"]++
		p.sum.Records["inspect_sample"] += int64(sink.n)
		p.sum.Records["inspect_score"] += sink.scoreRows
		p.sum.Records["inspect_item"] += sink.itemRows
		return nil
	}
	// The same eval stored before, from another file: an unfinished log
	// is replaced by the newer read of it; a finished one only with
	// --replace.
	var oldPath, oldIncomplete string
	err = p.conn.QueryRowContext(p.ctx, `SELECT f.path, coalesce(e.incomplete, '') FROM inspect_evals e JOIN ingested_files f USING (file_id) WHERE e.eval_id = ?`, hdr.EvalID).Scan(&oldPath, &oldIncomplete)
	switch {
	case err == nil:
		if oldIncomplete == "" && !p.opt.Replace {
			fs.rejected++
			return p.collect(&runlog.Error{File: fs.Path, Field: "eval.eval_id", Msg: fmt.Sprintf("eval %s is already in the warehouse, from %s (--replace replaces it)", hdr.EvalID, oldPath)})
		}
		for _, t := range inspectTables {
			if err := p.exec(`DELETE FROM `+t+` WHERE eval_id = ?`, hdr.EvalID); err != nil {
				return err
			}
		}
		p.sum.Notes = append(p.sum.Notes, fmt.Sprintf("%s: eval %s replaces the one read before from %s", fs.Path, hdr.EvalID, oldPath))
	case !strings.Contains(err.Error(), "no rows"):
		return err
	}
	readErr := p.conn.Raw(func(dc any) error {
		open := func(table string) (*duckdb.Appender, error) {
			a, err := duckdb.NewAppender(dc.(driver.Conn), "", "main", table)
			if err != nil {
				return nil, fmt.Errorf("opening an appender on %s: %w", table, err)
			}
			return a, nil
		}
		var err error
		for _, t := range []struct {
			a    **duckdb.Appender
			name string
		}{{&sink.samples, "inspect_samples"}, {&sink.usage, "inspect_usage"}, {&sink.scores, "inspect_scores"}, {&sink.items, "inspect_items"}} {
			if *t.a, err = open(t.name); err != nil {
				sink.close()
				return err
			}
		}
		err = inspect.ReadFile(fs.Path, sink)
		if cerr := sink.close(); err == nil && cerr != nil {
			err = cerr
		}
		return err
	})
	if readErr != nil {
		var ie *inspect.Error
		if !errors.As(readErr, &ie) {
			return readErr
		}
		// The rows of the samples read before the error go again.
		for _, t := range inspectTables {
			if err := p.exec(`DELETE FROM `+t+` WHERE file_id = ?`, fs.id); err != nil {
				return err
			}
		}
		fs.rejected++
		return p.collect(inspectError(readErr))
	}
	p.records.Add(sink.records)
	e := sink.eval
	return p.appendInspectEval(fs, e, sink.n)
}

// appendInspectEval writes an eval's own rows: itself, its stored
// results and reductions.
func (p *pass) appendInspectEval(fs *fileState, e *inspect.Eval, samples int) error {
	nul := func(s string) any {
		if s == "" {
			return nil
		}
		return s
	}
	js := func(b []byte) any {
		if len(b) == 0 {
			return nil
		}
		return json.RawMessage(b) // the appender marshals a JSON column's value: a string would be stored as a JSON string
	}
	i32p := func(n *int) any {
		if n == nil {
			return nil
		}
		return int32(*n)
	}
	effort := e.Effort
	if effort == "" {
		effort = "none"
	}
	if err := p.appendRows("inspect_evals", func(a *duckdb.Appender) error {
		return a.AppendRow(e.EvalID, nul(e.RunID), e.Task, nul(e.TaskID), nul(e.TaskVersion), nul(e.Created), e.Model, js(e.ModelArgs),
			e.Harness, js(e.HarnessArgs), effort, rows.ConfigID(e.Model, e.Harness, effort), e.Status, nul(e.Error), nul(e.Incomplete),
			int32(e.Version), e.Format, int32(e.Epochs), nul(strings.Join(e.Reducers, ",")), i32p(e.TotalSamples), i32p(e.CompletedSamples),
			e.HasResults, nul(e.StartedAt), nul(e.CompletedAt), int32(samples), int32(e.Duplicates), js(e.Spec), js(e.Plan), js(e.Stats), int32(fs.id))
	}); err != nil {
		return err
	}
	if len(e.Results) > 0 {
		if err := p.appendRows("inspect_results", func(a *duckdb.Appender) error {
			for _, m := range e.Results {
				if err := a.AppendRow(e.EvalID, m.Score, nul(m.Scorer), nul(m.Reducer), m.Metric, m.Value, js(m.Params), i32p(m.Scored), i32p(m.Unscored), int32(fs.id)); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			return err
		}
	}
	if len(e.Reductions) > 0 {
		return p.appendRows("inspect_reductions", func(a *duckdb.Appender) error {
			for _, r := range e.Reductions {
				var v any
				if r.Valid {
					v = r.Value
				}
				if err := a.AppendRow(e.EvalID, r.Scorer, nul(r.Reducer), r.SampleID, nul(r.Key), v, js(r.Raw), int32(fs.id)); err != nil {
					return err
				}
			}
			return nil
		})
	}
	return nil
}

// inspectSink appends a log's samples and items as the reader gives
// them, and counts them.
type inspectSink struct {
	tally                         *inspectTally
	file                          int
	eval                          *inspect.Eval
	samples, usage, scores, items *duckdb.Appender
	n                             int
	records                       int64
	// pending is the bytes appended since the appenders last flushed.
	pending int
	// scoreRows and itemRows count the rows of scores and items.
	scoreRows, itemRows int64
}

// inspectFlushBytes is how much an Inspect sink appends before it
// flushes its appenders into DuckDB, which spills what it cannot hold,
// so that a log of any size is not held by the appenders' chunks.
const inspectFlushBytes = 16 << 20

func (s *inspectSink) flush() error {
	s.pending = 0
	for _, a := range []*duckdb.Appender{s.samples, s.usage, s.scores, s.items} {
		if err := a.Flush(); err != nil {
			return err
		}
	}
	return nil
}

func (s *inspectSink) close() error {
	var first error
	for _, a := range []*duckdb.Appender{s.samples, s.usage, s.scores, s.items} {
		if a != nil {
			if err := a.Close(); err != nil && first == nil {
				first = err
			}
		}
	}
	s.samples, s.usage, s.scores, s.items = nil, nil, nil, nil
	return first
}

func (s *inspectSink) Begin(e *inspect.Eval) error {
	s.eval = e
	return nil
}

func (s *inspectSink) Item(sm *inspect.Sample, it *inspect.Item) error {
	s.records++
	s.itemRows++
	if s.items == nil {
		return nil
	}
	var key, typ any
	if it.Key != "" {
		key = it.Key
	}
	if it.Type != "" {
		typ = it.Type
	}
	if err := s.items.AppendRow(s.eval.EvalID, sm.ID, int32(sm.Epoch), it.Kind, int32(it.Index), key, typ, json.RawMessage(it.Raw), int32(s.file)); err != nil {
		return err
	}
	if s.pending += len(it.Raw) + 64; s.pending >= inspectFlushBytes {
		return s.flush()
	}
	return nil
}

func (s *inspectSink) Sample(sm *inspect.Sample) error {
	s.n++
	s.records++
	t := s.tally
	t.samples++
	if sm.Error != "" {
		t.sampleErrors++
	}
	if sm.Retries > 0 {
		t.retried++
	}
	if sm.LimitType != "" {
		t.limited++
	}
	if len(sm.Scores) == 0 {
		t.unscored++
	}
	for _, sc := range sm.Scores {
		if !sc.Valid {
			t.notNumbers++
		}
	}
	s.scoreRows += int64(len(sm.Scores))
	if s.samples == nil {
		return nil
	}
	nul := func(x string) any {
		if x == "" {
			return nil
		}
		return x
	}
	f64 := func(f *float64) any {
		if f == nil {
			return nil
		}
		return *f
	}
	js := func(b []byte) any {
		if len(b) == 0 {
			return nil
		}
		return json.RawMessage(b) // the appender marshals a JSON column's value: a string would be stored as a JSON string
	}
	var in, out, tot any
	if len(sm.Usage) > 0 {
		var a, b, c int64
		for _, u := range sm.Usage {
			a, b, c = a+u.Input, b+u.Output, c+u.Total
		}
		in, out, tot = a, b, c
	}
	var turns any
	if sm.TurnCount != nil {
		turns = int32(*sm.TurnCount)
	}
	id, ep := s.eval.EvalID, int32(sm.Epoch)
	if err := s.samples.AppendRow(id, sm.ID, ep, nul(sm.UUID), sm.Layout, sm.Entry, in, out, tot, f64(sm.TotalTime), f64(sm.WorkingTime),
		nul(sm.StartedAt), nul(sm.CompletedAt), int32(sm.MessageCount), turns, int32(sm.Events), int32(sm.ModelEvents), int32(sm.ToolEvents),
		int32(sm.ToolErrors), int32(sm.Attachments), int32(sm.PoolMessages), int32(sm.PoolCalls), int32(sm.Retries), nul(sm.LimitType),
		f64(sm.Limit), nul(sm.Error), js(sm.Metadata), js(sm.Input), js(sm.Target), int32(s.file)); err != nil {
		return err
	}
	i64 := func(p *int64) any {
		if p == nil {
			return nil
		}
		return *p
	}
	for _, u := range sm.Usage {
		if err := s.usage.AppendRow(id, sm.ID, ep, u.Model, u.Input, u.Output, u.Total, i64(u.CacheRead), i64(u.CacheWrite), i64(u.Reasoning), int32(s.file)); err != nil {
			return err
		}
	}
	for _, sc := range sm.Scores {
		var v any
		if sc.Valid {
			v = sc.Value
		}
		if err := s.scores.AppendRow(id, sm.ID, ep, sc.Scorer, nul(sc.Key), sc.Metric(), v, js(sc.Raw), nul(sc.Answer), nul(sc.Explanation), int32(s.file)); err != nil {
			return err
		}
	}
	return nil
}

func (s *inspectSink) End(e *inspect.Eval) error {
	s.eval = e
	t := s.tally
	t.evals++
	switch e.Status {
	case "cancelled":
		t.cancelled++
	case "error":
		t.errored++
	}
	if e.Incomplete != "" {
		t.incomplete++
	}
	if !e.HasResults {
		t.noResults++
	}
	return nil
}
