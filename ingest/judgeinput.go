package ingest

import (
	"context"
	"database/sql"
	"math"
	"sort"
	"strings"
)

// JudgeHeads returns the runs after run id after ("": from the first),
// at most n of them (n ≤ 0: every one), in run order, each with its
// active tasks and what identifies its content, without its events: the
// judge reads a slice of runs at a time.
func (w *Warehouse) JudgeHeads(ctx context.Context, after string, n int) ([]*JudgeRun, error) {
	limit := int64(n)
	if n <= 0 {
		limit = math.MaxInt64
	}
	var runs []*JudgeRun
	byID := map[string]*JudgeRun{}
	// The same texts (scenarios, personas, rubrics, task names) recur in
	// every run: each is held once.
	texts := map[string]string{}
	one := func(p *string) {
		if t, ok := texts[*p]; ok {
			*p = t
		} else {
			texts[*p] = *p
		}
	}
	err := w.scan(ctx, `SELECT r.run_id, r.config_id, r.scenario, coalesce(r.domain, ''), coalesce(r.scenario_title, ''), r.persona,
		coalesce(r.persona_group, ''), coalesce(r.persona_label, ''), s.ta_window_start, s.ta_window_end,
		coalesce(s.ta_urgent, ''), coalesce(s.ta_deferrable, ''), rr.content_hash, coalesce(s.content_hash, 0)
		FROM run_view r JOIN runs rr USING (run_id) LEFT JOIN scenarios s ON s.scenario = r.scenario
		WHERE r.run_id > ? ORDER BY r.run_id LIMIT ?`, func(rows *sql.Rows) error {
		r := &JudgeRun{}
		var ws, we sql.NullTime
		if err := rows.Scan(&r.RunID, &r.ConfigID, &r.Scenario, &r.Domain, &r.ScenarioTitle, &r.Persona, &r.PersonaGroup, &r.PersonaLabel,
			&ws, &we, &r.TAUrgent, &r.TADeferable, &r.RunHash, &r.ScenarioHash); err != nil {
			return err
		}
		if ws.Valid && we.Valid {
			r.TAStart, r.TAEnd = &ws.Time, &we.Time
		}
		for _, p := range []*string{&r.ConfigID, &r.Scenario, &r.Domain, &r.ScenarioTitle, &r.Persona, &r.PersonaGroup, &r.PersonaLabel, &r.TAUrgent, &r.TADeferable} {
			one(p)
		}
		runs = append(runs, r)
		byID[r.RunID] = r
		return nil
	}, after, limit)
	if err != nil || len(runs) == 0 {
		return runs, err
	}
	err = w.scan(ctx, `SELECT o.run_id, o.task, coalesce(sc.effective_chosen, o.chosen_depth, ''), o.final_seq, coalesce(ts.rubric::VARCHAR, '')
		FROM task_outcomes o JOIN runs r USING (run_id)
		LEFT JOIN task_specs ts ON ts.scenario = r.scenario AND ts.task = o.task
		LEFT JOIN task_scores sc ON sc.run_id = o.run_id AND sc.task = o.task
		WHERE o.active AND o.run_id BETWEEN ? AND ? ORDER BY o.run_id, coalesce(ts.ordinal, 0), o.task`, func(rows *sql.Rows) error {
		var id string
		var t JudgeTask
		var fs sql.NullInt64
		if err := rows.Scan(&id, &t.Task, &t.Chosen, &fs, &t.Rubric); err != nil {
			return err
		}
		if fs.Valid {
			t.FinalSeq = &fs.Int64
		}
		one(&t.Task)
		one(&t.Chosen)
		one(&t.Rubric)
		if r := byID[id]; r != nil {
			r.Tasks = append(r.Tasks, t)
		}
		return nil
	}, runs[0].RunID, runs[len(runs)-1].RunID)
	if err != nil {
		return nil, err
	}
	return runs, nil
}

// ScanJudgeEvents fills in the events of each of runs (which must be in run
// order, as JudgeHeads gives them) and calls fn with it, one run at a time,
// in that order; a run without events is given too. The events are
// dropped again after fn returns.
func (w *Warehouse) ScanJudgeEvents(ctx context.Context, runs []*JudgeRun, fn func(*JudgeRun) error) error {
	if len(runs) == 0 {
		return nil
	}
	// Where the runs' events lie (run_spans): a batch's are read from its
	// files' lines, whose row groups DuckDB finds by their integer bounds.
	// A range of run ids bounded nothing: the ids share their first 8
	// bytes, all a string column's bounds keep, so each batch compared
	// every event's run id, a cost that grew with the warehouse. A lake's
	// events are sorted by run id: it reads by the range.
	var lines map[string][]fileLines
	if !w.Lake {
		var err error
		if lines, err = w.eventLines(ctx, runs[0].RunID, runs[len(runs)-1].RunID); err != nil {
			return err
		}
	}
	// A batch of runs at a time: the driver holds a query's whole result
	// in memory, and every event of a large warehouse is gigabytes.
	for lo := 0; lo < len(runs); lo += eventBatch {
		if err := w.scanJudgeEvents(ctx, runs[lo:min(lo+eventBatch, len(runs))], lines, fn); err != nil {
			return err
		}
	}
	return nil
}

// eventBatch is how many runs' events ScanJudgeEvents reads at once.
const eventBatch = 400

// fileLines are the first and last lines of a file that some runs' rows
// lie between (bounded false: some row has no line; the file is read
// whole).
type fileLines struct {
	file    int64
	lo, hi  int64
	bounded bool
}

// eventLines are the files and lines of the events of the runs from run
// id from to to, by run (run_spans).
func (w *Warehouse) eventLines(ctx context.Context, from, to string) (map[string][]fileLines, error) {
	out := map[string][]fileLines{}
	err := w.scan(ctx, `SELECT run_id, file_id, lo, hi FROM run_spans WHERE run_id BETWEEN ? AND ?`, func(rows *sql.Rows) error {
		var id string
		var f fileLines
		var lo, hi sql.NullInt64
		if err := rows.Scan(&id, &f.file, &lo, &hi); err != nil {
			return err
		}
		f.lo, f.hi, f.bounded = lo.Int64, hi.Int64, lo.Valid && hi.Valid
		out[id] = append(out[id], f)
		return nil
	}, from, to)
	return out, err
}

// linesOf merges the files and lines of ids into one range a file, in
// file order.
func linesOf(lines map[string][]fileLines, ids []string) []fileLines {
	byFile := map[int64]int{}
	var out []fileLines
	for _, id := range ids {
		for _, f := range lines[id] {
			i, ok := byFile[f.file]
			if !ok {
				byFile[f.file] = len(out)
				out = append(out, f)
				continue
			}
			m := &out[i]
			m.lo, m.hi, m.bounded = min(m.lo, f.lo), max(m.hi, f.hi), m.bounded && f.bounded
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].file < out[b].file })
	return out
}

// eventsIn is a subquery (and its arguments) of the events in files'
// lines: one scan a file, bounded by its lines, which DuckDB finds by
// their row groups' bounds; none when files is empty.
func eventsIn(files []fileLines) (string, []any) {
	var parts []string
	var args []any
	for _, f := range files {
		if f.bounded {
			parts = append(parts, `SELECT * FROM events WHERE file_id = ? AND src_line BETWEEN ? AND ?`)
			args = append(args, f.file, f.lo, f.hi)
		} else {
			parts = append(parts, `SELECT * FROM events WHERE file_id = ?`)
			args = append(args, f.file)
		}
	}
	if len(parts) == 0 {
		parts = append(parts, `SELECT * FROM events WHERE false`)
	}
	return `(` + strings.Join(parts, " UNION ALL ") + `)`, args
}

func (w *Warehouse) scanJudgeEvents(ctx context.Context, runs []*JudgeRun, lines map[string][]fileLines, fn func(*JudgeRun) error) error {
	if len(runs) == 0 {
		return nil
	}
	ids := make([]string, len(runs))
	for i, r := range runs {
		ids[i] = r.RunID
	}
	from, args := `(SELECT * FROM events WHERE run_id BETWEEN ? AND ?)`, []any{runs[0].RunID, runs[len(runs)-1].RunID}
	if lines != nil {
		from, args = eventsIn(linesOf(lines, ids))
	}
	q := `SELECT run_id, seq, t, actor, kind, coalesce(task, ''), coalesce(text, ''), coalesce(tool, ''),
		coalesce(args::VARCHAR, ''), coalesce(CASE WHEN json_type(result) = 'VARCHAR' THEN result->>'$' ELSE result::VARCHAR END, ''), visible
		FROM ` + from + ` WHERE run_id IN (SELECT unnest(?::VARCHAR[])) ORDER BY run_id, seq`
	args = append(args, ids)
	next := 0 // the next run to give to fn
	var cur *JudgeRun
	give := func(r *JudgeRun) error {
		err := fn(r)
		r.Events = nil
		return err
	}
	// upTo gives fn every run before id that has no events.
	upTo := func(id string) error {
		for next < len(runs) && runs[next].RunID < id {
			if err := give(runs[next]); err != nil {
				return err
			}
			next++
		}
		return nil
	}
	skip := ""
	err := w.scan(ctx, q, func(rows *sql.Rows) error {
		var id string
		var e JudgeEvent
		if err := rows.Scan(&id, &e.Seq, &e.T, &e.Actor, &e.Kind, &e.Task, &e.Text, &e.Tool, &e.Args, &e.Result, &e.Visible); err != nil {
			return err
		}
		if cur != nil && cur.RunID == id {
			cur.Events = append(cur.Events, e)
			return nil
		}
		if id == skip {
			return nil
		}
		if cur != nil {
			if err := give(cur); err != nil {
				return err
			}
			cur = nil
		}
		if err := upTo(id); err != nil {
			return err
		}
		if next < len(runs) && runs[next].RunID == id {
			cur = runs[next]
			next++
			cur.Events = append(cur.Events, e)
		} else {
			skip = id // not asked for
		}
		return nil
	}, args...)
	if err != nil {
		return err
	}
	if cur != nil {
		if err := give(cur); err != nil {
			return err
		}
	}
	for ; next < len(runs); next++ {
		if err := give(runs[next]); err != nil {
			return err
		}
	}
	return nil
}
