package ingest

import (
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/gymlens/gymlens/ingest/runlog"
)

// sqlString quotes s as an SQL string literal.
func sqlString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// sqlList quotes each string and joins them as an SQL list literal.
func sqlList(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = sqlString(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// readStage is the read_csv call over one staging file: fixed columns, no
// detection, quoted strings ("" is the empty string, an empty field NULL).
func readStage(sf *stageFile, typ string) string {
	line := max(2<<20, sf.longest+1024)
	var cols []string
	for _, c := range runlog.CSVColumns[typ] {
		cols = append(cols, fmt.Sprintf("%s: '%s'", c.Name, c.Type))
	}
	return fmt.Sprintf(`read_csv(%s, columns = {%s}, header = false, auto_detect = false, delim = ',', quote = '"', escape = '"',
		allow_quoted_nulls = false, max_line_size = %d, buffer_size = %d, new_line = '\n')`,
		sqlString(sf.path), strings.Join(cols, ", "), line, max(16<<20, 2*line))
}

// stagedInserts move staged rows into their tables; stagedFilters leave
// out the runs stored unchanged (_skip_runs) or rejected (_drop_runs).
var stagedInserts = map[string]string{
	runlog.TypeEvent: `INSERT INTO events SELECT run_id, seq, t, actor, kind, task, text, tool, args, result, ok, depth,
		CAST(actions AS VARCHAR[]), decision, ref, visible, phase, input_tokens, output_tokens, reasoning_tokens, latency_ms,
		cost_usd, extra, file_id, src_line FROM %s s`,
	runlog.TypeTask:     `INSERT INTO task_outcomes SELECT * FROM %s s`,
	runlog.TypeJudgment: `INSERT INTO judgments SELECT * FROM %s s`,
	runlog.TypeRating:   `INSERT INTO ratings SELECT * FROM %s s`,
}

var stagedFilters = map[string]string{
	runlog.TypeEvent:    ` WHERE NOT EXISTS (SELECT 1 FROM _skip_runs k WHERE k.run_id = s.run_id)`,
	runlog.TypeTask:     ` WHERE NOT EXISTS (SELECT 1 FROM _skip_runs k WHERE k.run_id = s.run_id)`,
	runlog.TypeJudgment: ` WHERE NOT EXISTS (SELECT 1 FROM _drop_runs k WHERE k.run_id = s.run_id)`,
	runlog.TypeRating:   ` WHERE s.run_id IS NULL OR NOT EXISTS (SELECT 1 FROM _drop_runs k WHERE k.run_id = s.run_id)`,
}

const judgmentKey = `run_id, task, metric, judge, prompt`

const judgmentValues = `correctness, grounding, completeness, artifact_quality, ta_now, ta_later, ta_cq, understandability, competence, reliability, attachment, faith, reasons, evidence`

// prefixed writes a column list with a table alias before each name.
func prefixed(alias, cols string) string {
	parts := strings.Split(cols, ", ")
	for i := range parts {
		parts[i] = alias + "." + parts[i]
	}
	return strings.Join(parts, ", ")
}

func (p *pass) exec(q string, args ...any) error {
	t0 := time.Now()
	if _, err := p.conn.ExecContext(p.ctx, q, args...); err != nil {
		return fmt.Errorf("loading the warehouse: %w", err)
	}
	if trace {
		traced(strings.Join(strings.Fields(q), " "), t0)
	}
	return nil
}

// traced prints, when tracing (GYMLENS_TRACE=1), the time since t0 of
// the step named what.
func traced(what string, t0 time.Time) {
	if trace {
		fmt.Fprintf(os.Stderr, "trace: %6.3fs %.70s\n", time.Since(t0).Seconds(), what)
	}
}

// trace prints the time of each loading statement (GYMLENS_TRACE=1).
var trace = os.Getenv("GYMLENS_TRACE") != ""

// load writes what the pass validated. It runs inside the transaction.
func (p *pass) load(decisions map[string]runDecision) error {
	if err := p.flushStages(); err != nil {
		return err
	}
	first := 1 << 30
	for _, f := range p.files {
		first = min(first, f.id)
	}
	for _, q := range []string{
		`CREATE OR REPLACE TEMP TABLE _skip_runs (run_id VARCHAR)`,
		`CREATE OR REPLACE TEMP TABLE _drop_runs (run_id VARCHAR)`,
	} {
		if err := p.exec(q); err != nil {
			return err
		}
	}
	skip := sortedIDs(decisions, runSame, runDrop)
	drop := sortedIDs(decisions, runDrop)
	for t, ids := range map[string][]string{"_skip_runs": skip, "_drop_runs": drop} {
		if err := p.appendRows(t, func(a *duckdb.Appender) error {
			for _, id := range ids {
				if err := a.AppendRow(id); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			return err
		}
	}
	for _, id := range skip {
		if decisions[id] == runSame {
			p.sum.Identical[runlog.TypeRun]++
		}
	}
	// The run inputs come from scenarios, runs, task outcomes and
	// judgments: an ingest of those makes them stale (of ratings or
	// PARE files alone, not). Those of the runs it writes (dropped at the
	// end of the load), unless it replaces a scenario, whose task weights
	// and order every run of it holds, or the warehouse is older than
	// the event packs.
	if p.touchesInputs() {
		p.staleInputs = true
		p.someInputs = p.packs && !p.replacesScenario()
		q := invalidateInputs
		if p.someInputs {
			q = staleUnlessFresh
		}
		if err := p.exec(q); err != nil {
			return err
		}
	}
	if err := p.loadScenarios(); err != nil {
		return err
	}
	if err := p.loadRuns(decisions, first); err != nil {
		return err
	}
	// A superseded file read again brings its ratings again.
	for _, f := range p.files {
		for _, id := range p.superseded[f.sha] {
			if err := p.exec(`DELETE FROM ratings WHERE file_id = ?`, id); err != nil {
				return err
			}
		}
	}
	for _, typ := range []string{runlog.TypeEvent, runlog.TypeTask, runlog.TypeJudgment, runlog.TypeRating} {
		if sf := p.stages[typ]; sf != nil {
			source := readStage(sf, typ)
			if sf.typed {
				source = fmt.Sprintf("%s(%s, %d)", typedEventsFunction, sqlString(sf.path), sf.rows)
			}
			q := fmt.Sprintf(stagedInserts[typ], source)
			if len(skip) > 0 {
				// Only then: the anti-join is not free.
				q += stagedFilters[typ]
			}
			if err := p.exec(q); err != nil {
				return err
			}
		}
	}
	if p.stages[runlog.TypeEvent] != nil {
		// Where the new events lie (RunPages reads a run from its spans).
		if err := p.exec(`INSERT INTO run_spans SELECT run_id, file_id,
			CASE WHEN count(src_line) = count(*) THEN min(src_line) END, CASE WHEN count(src_line) = count(*) THEN max(src_line) END, count(*)
			FROM events WHERE file_id >= ? GROUP BY ALL`, first); err != nil {
			return err
		}
		// Their runs' packs are stale (RefreshEventPacks packs them again
		// once this commits).
		if p.packs {
			if err := p.exec(invalidatePacks, first); err != nil {
				return err
			}
		}
	}
	if p.stages[runlog.TypeJudgment] != nil {
		if err := p.settleJudgments(first); err != nil {
			return err
		}
	}
	if err := p.checkFinalSeq(first); err != nil {
		return err
	}
	// Where the new task outcomes and judgments lie (row_spans), once the
	// judgments stored before are settled.
	for _, tt := range [][2]string{{runlog.TypeTask, "task_outcomes"}, {runlog.TypeJudgment, "judgments"}} {
		typ, t := tt[0], tt[1]
		if p.stages[typ] == nil {
			continue
		}
		if err := p.exec(`INSERT INTO row_spans SELECT '`+t+`', run_id, file_id,
			CASE WHEN count(src_line) = count(*) THEN min(src_line) END, CASE WHEN count(src_line) = count(*) THEN max(src_line) END, count(*)
			FROM `+t+` WHERE file_id >= ? GROUP BY ALL`, first); err != nil {
			return err
		}
	}
	// The runs this ingest wrote rows of: any row it deleted from an
	// earlier file (a replaced run, a judgment replaced with --replace)
	// is of a run it also wrote.
	if p.someInputs {
		if err := p.exec(dropInputsOf(`SELECT run_id FROM runs WHERE file_id >= ?1 UNION SELECT run_id FROM task_outcomes WHERE file_id >= ?1
			UNION SELECT run_id FROM judgments WHERE file_id >= ?1`), first); err != nil {
			return err
		}
	}
	if err := p.loadPARE(); err != nil {
		return err
	}
	if err := p.loadPAREResults(); err != nil {
		return err
	}
	if err := p.loadPAREAnnotations(); err != nil {
		return err
	}
	return p.record(first)
}

// replacesScenario says whether the pass loads a scenario the warehouse
// holds another version of.
func (p *pass) replacesScenario() bool {
	for _, si := range p.chk.scenarios {
		if si.fromIn && !si.skip && si.inWH {
			return true
		}
	}
	return false
}

// touchesInputs says whether the pass read records the run inputs come
// from.
func (p *pass) touchesInputs() bool {
	for i, t := range runlog.RecordTypes {
		if t != runlog.TypeRating && p.chk.counts[i] > 0 {
			return true
		}
	}
	return false
}

func (p *pass) appendRows(table string, fill func(*duckdb.Appender) error) error {
	return p.conn.Raw(func(dc any) error {
		catalog := ""
		if strings.HasPrefix(table, "_") {
			catalog = "temp"
		}
		a, err := duckdb.NewAppender(dc.(driver.Conn), catalog, "main", table)
		if err != nil {
			return fmt.Errorf("opening an appender on %s: %w", table, err)
		}
		if err := fill(a); err != nil {
			a.Close()
			return fmt.Errorf("loading %s: %w", table, err)
		}
		return a.Close()
	})
}

func (p *pass) loadScenarios() error {
	var load []*scenarioInfo
	for _, id := range sortedScenarioIDs(p.chk.scenarios) {
		si := p.chk.scenarios[id]
		if !si.fromIn || si.skip {
			if si.skip {
				p.sum.Identical[runlog.TypeScenario]++
			}
			continue
		}
		if si.inWH {
			for _, t := range []string{"scenarios", "personas", "task_specs", "task_expected_depths", "scenario_tools"} {
				if err := p.exec(`DELETE FROM `+t+` WHERE scenario = ?`, id); err != nil {
					return err
				}
			}
			p.sum.Replaced++
		}
		load = append(load, si)
	}
	fileIDs := map[string]int{}
	for _, f := range p.files {
		fileIDs[f.Path] = f.id
	}
	fill := map[string]func(a *duckdb.Appender, si *scenarioInfo) error{
		"scenarios": func(a *duckdb.Appender, si *scenarioInfo) error {
			s := si.spec
			var ws, we, urg, def any
			if s.TA != nil {
				ws, we, urg, def = s.TA.Start, s.TA.End, s.TA.Urgent, s.TA.Deferrable
			}
			var days, line any
			if s.Days > 0 {
				days = int32(s.Days)
			}
			if si.at.line > 0 {
				line = si.at.line
			}
			return a.AppendRow(s.ID, strOrNil(s.Domain), strOrNil(s.Title), days, ws, we, urg, def, jsonOrNil(si.raw),
				int64(si.hash), jsonOrNil(s.Extra), int32(fileIDs[p.chk.files[si.at.file]]), line)
		},
		"personas": func(a *duckdb.Appender, si *scenarioInfo) error {
			for _, pe := range si.spec.Personas {
				if err := a.AppendRow(si.spec.ID, pe.Name, pe.Group, strOrNil(pe.Label)); err != nil {
					return err
				}
			}
			return nil
		},
		"task_specs": func(a *duckdb.Appender, si *scenarioInfo) error {
			for i, t := range si.spec.Tasks {
				after := t.AfterApproval
				if after == "" {
					after = "execute"
				}
				if err := a.AppendRow(si.spec.ID, t.ID, int32(i), t.Weight, strOrNil(t.Trigger), after, strOrNil(t.AfterDenial),
					jsonOrNil(t.Rubric), jsonOrNil(t.Extra)); err != nil {
					return err
				}
			}
			return nil
		},
		"task_expected_depths": func(a *duckdb.Appender, si *scenarioInfo) error {
			for _, t := range si.spec.Tasks {
				for _, pe := range si.spec.Personas {
					if err := a.AppendRow(si.spec.ID, t.ID, pe.Name, t.ExpectedDepth[pe.Name]); err != nil {
						return err
					}
				}
			}
			return nil
		},
		"scenario_tools": func(a *duckdb.Appender, si *scenarioInfo) error {
			for _, tool := range sortedMapKeys(si.spec.Tools) {
				if err := a.AppendRow(si.spec.ID, tool, si.spec.Tools[tool]); err != nil {
					return err
				}
			}
			return nil
		},
	}
	for _, t := range []string{"scenarios", "personas", "task_specs", "task_expected_depths", "scenario_tools"} {
		if err := p.appendRows(t, func(a *duckdb.Appender) error {
			for _, si := range load {
				if err := fill[t](a, si); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			return err
		}
	}
	return nil
}

// loadRuns loads the staged run records of the runs to load, each with
// its content hash, and removes the stored runs they replace.
func (p *pass) loadRuns(decisions map[string]runDecision, first int) error {
	ids := sortedIDs(decisions, runNew, runReplace)
	if err := p.exec(`CREATE OR REPLACE TEMP TABLE _run_hashes (run_id VARCHAR, content_hash BIGINT)`); err != nil {
		return err
	}
	if err := p.appendRows("_run_hashes", func(a *duckdb.Appender) error {
		for _, id := range ids {
			if err := a.AppendRow(id, int64(p.chk.runs[id].hash)); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return err
	}
	if sf := p.stages[runlog.TypeRun]; sf != nil && len(ids) > 0 {
		if err := p.exec(`INSERT INTO runs SELECT s.run_id, s.scenario, s.persona, s.rep, s.config_id, s.config_key, s.model,
			s.harness, s.effort, s.family, s.size_b, s.start_t, s.end_t, s.status, s.meta, s.config_extra, s.extra,
			h.content_hash, s.file_id, s.src_line
			FROM ` + readStage(sf, runlog.TypeRun) + ` s JOIN _run_hashes h USING (run_id)`); err != nil {
			return err
		}
	}
	p.sum.Runs = len(ids)
	replaced := sortedIDs(decisions, runReplace)
	if len(replaced) > 0 {
		if err := p.exec(`CREATE OR REPLACE TEMP TABLE _replace_runs AS SELECT unnest(?::VARCHAR[]) AS run_id`, replaced); err != nil {
			return err
		}
		for _, t := range []string{"runs", "events", "run_spans", "row_spans", "task_outcomes", "judgments"} {
			if err := p.exec(`DELETE FROM `+t+` WHERE file_id < ? AND run_id IN (SELECT run_id FROM _replace_runs)`, first); err != nil {
				return err
			}
		}
		if p.packs {
			if err := p.exec(`DELETE FROM event_packs WHERE run_id IN (SELECT run_id FROM _replace_runs)`); err != nil {
				return err
			}
		}
		p.sum.Replaced += len(replaced)
	}
	return nil
}

// settleJudgments settles the keys of the judgments just loaded: the same
// key twice in this input is an error; a key stored before with the same
// content is not loaded again; with other content it is an error, or with
// --replace the stored one goes.
func (p *pass) settleJudgments(first int) error {
	fileNames := p.fileNames()
	keyOf := func(k [5]string) string {
		return fmt.Sprintf("run %q, task %q, metric %s, judge %q, prompt %q", k[0], k[1], k[2], k[3], k[4])
	}
	var dups int
	// The keys seen twice are found among the rows whose keys hash alike:
	// grouping every row by its five strings spilled DuckDB's memory at
	// --scale 100 (12.9–14.6 s for 12.3 million judgments, against
	// 1.2–1.7 s by the hash); a collision only adds rows the second
	// grouping, by the key itself, sets aside.
	hashedTwice := `hash(` + judgmentKey + `) IN
		(SELECT hash(` + judgmentKey + `) FROM judgments WHERE file_id >= ? GROUP BY ALL HAVING count(*) > 1)`
	err := p.queryRows(`SELECT `+judgmentKey+`, count(*), arg_max(file_id, struct_pack(f := file_id, l := src_line)), max(struct_pack(f := file_id, l := src_line)).l
		FROM judgments WHERE file_id >= ? AND `+hashedTwice+`
		GROUP BY ALL HAVING count(*) > 1 ORDER BY ALL LIMIT ?`, []any{first, first, p.opt.MaxErrors}, func(scan func(...any) error) error {
		var k [5]string
		var n, fid, line int
		if err := scan(&k[0], &k[1], &k[2], &k[3], &k[4], &n, &fid, &line); err != nil {
			return err
		}
		dups++
		e := &runlog.Error{File: fileNames[fid], Line: line, Field: "judge", Msg: fmt.Sprintf("duplicate judgment in this input: %s occurs %d times", keyOf(k), n)}
		p.errs.Add(e)
		p.reject(e, nil, int64(n))
		return nil
	})
	if err != nil {
		return err
	}
	if dups > 0 && p.opt.SkipInvalid {
		if err := p.exec(`DELETE FROM judgments WHERE file_id >= ? AND (`+judgmentKey+`) IN
			(SELECT (`+judgmentKey+`) FROM judgments WHERE file_id >= ? AND `+hashedTwice+` GROUP BY ALL HAVING count(*) > 1)`, first, first, first); err != nil {
			return err
		}
	}
	var older int64
	if err := p.conn.QueryRowContext(p.ctx, `SELECT count(*) FROM judgments WHERE file_id < ?`, first).Scan(&older); err != nil {
		return err
	}
	if older == 0 {
		return nil
	}
	if err := p.settleJudgedNames(first, fileNames); err != nil {
		return err
	}
	// Stored before with the same content: drop the new copy.
	res, err := p.conn.ExecContext(p.ctx, `DELETE FROM judgments n WHERE n.file_id >= ? AND EXISTS (
		SELECT 1 FROM judgments o WHERE o.file_id < ? AND (`+prefixed("o", judgmentKey)+`) = (`+prefixed("n", judgmentKey)+`)
		AND (`+prefixed("o", judgmentValues)+`) IS NOT DISTINCT FROM (`+prefixed("n", judgmentValues)+`))`, first, first)
	if err != nil {
		return fmt.Errorf("loading the warehouse: %w", err)
	}
	same, _ := res.RowsAffected()
	p.sum.Identical[runlog.TypeJudgment] += same
	conflicts := 0
	err = p.queryRows(`SELECT `+prefixed("n", judgmentKey)+`, n.file_id, n.src_line FROM judgments n JOIN judgments o USING (`+judgmentKey+`)
		WHERE n.file_id >= ? AND o.file_id < ? ORDER BY ALL LIMIT ?`, []any{first, first, p.opt.MaxErrors}, func(scan func(...any) error) error {
		var k [5]string
		var fid, line int
		if err := scan(&k[0], &k[1], &k[2], &k[3], &k[4], &fid, &line); err != nil {
			return err
		}
		conflicts++
		if !p.opt.Replace {
			e := &runlog.Error{File: fileNames[fid], Line: line, Field: "scores", Msg: fmt.Sprintf("judgment for %s is already in the warehouse with different content: use --replace to replace it", keyOf(k))}
			p.errs.Add(e)
			p.reject(e, nil, 1)
		}
		return nil
	})
	if err != nil || conflicts == 0 {
		return err
	}
	if p.opt.Replace {
		return p.exec(`DELETE FROM judgments o WHERE o.file_id < ? AND (`+judgmentKey+`) IN
			(SELECT (`+judgmentKey+`) FROM judgments WHERE file_id >= ?)`, first, first)
	}
	if p.opt.SkipInvalid {
		return p.exec(`DELETE FROM judgments n WHERE n.file_id >= ? AND (`+judgmentKey+`) IN
			(SELECT (`+judgmentKey+`) FROM judgments WHERE file_id < ?)`, first, first)
	}
	return nil
}

// settleJudgedNames handles logged judgments of a judge under whose name
// gymlens judge (with --replace) wrote its own answers (file_id 0, another
// prompt): with --replace the logged ones stand again and the written
// ones go; without, each is an error, so that nothing is mixed silently.
func (p *pass) settleJudgedNames(first int, fileNames map[int]string) error {
	const same = `(o.run_id, o.task, o.metric, o.judge) IS NOT DISTINCT FROM (n.run_id, n.task, n.metric, n.judge)`
	if p.opt.Replace {
		return p.exec(`DELETE FROM judgments o WHERE o.file_id = 0 AND EXISTS (
			SELECT 1 FROM judgments n WHERE n.file_id >= ? AND `+same+`)`, first)
	}
	return p.queryRows(`SELECT n.run_id, coalesce(n.task, ''), n.metric, n.judge, n.file_id, n.src_line FROM judgments n
		WHERE n.file_id >= ? AND EXISTS (SELECT 1 FROM judgments o WHERE o.file_id = 0 AND `+same+`)
		ORDER BY n.file_id, n.src_line LIMIT ?`, []any{first, p.opt.MaxErrors}, func(scan func(...any) error) error {
		var run, task, metric, judge string
		var fid, line int
		if err := scan(&run, &task, &metric, &judge, &fid, &line); err != nil {
			return err
		}
		e := &runlog.Error{File: fileNames[fid], Line: line, Field: "judge", Msg: fmt.Sprintf(
			"gymlens judge wrote its own %s judgment of run %q%s under the name %q: use --replace to restore this logged one in its place",
			metric, run, taskPart(task), judge)}
		p.errs.Add(e)
		p.reject(e, nil, 1)
		return nil
	})
}

func taskPart(task string) string {
	if task == "" {
		return ""
	}
	return fmt.Sprintf(", task %q", task)
}

// queryRows runs q on the ingest's connection and calls fn for each row.
func (p *pass) queryRows(q string, args []any, fn func(scan func(...any) error) error) error {
	t0 := time.Now()
	rows, err := p.conn.QueryContext(p.ctx, q, args...)
	if err != nil {
		return fmt.Errorf("loading the warehouse: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows.Scan); err != nil {
			return err
		}
	}
	if trace {
		traced(strings.Join(strings.Fields(q), " "), t0)
	}
	return rows.Err()
}

// checkFinalSeq checks that every task's final_seq names an event of its run.
func (p *pass) checkFinalSeq(first int) error {
	names := p.fileNames()
	rows, err := p.conn.QueryContext(p.ctx, `SELECT o.run_id, o.task, o.final_seq, o.file_id, o.src_line FROM task_outcomes o
		WHERE o.file_id >= ? AND o.final_seq IS NOT NULL
		AND NOT EXISTS (SELECT 1 FROM events e WHERE e.run_id = o.run_id AND e.seq = o.final_seq)
		ORDER BY o.file_id, o.src_line LIMIT ?`, first, p.opt.MaxErrors)
	if err != nil {
		return err
	}
	defer rows.Close()
	var bad [][2]string
	for rows.Next() {
		var run, task string
		var seq int64
		var fid, line int
		if err := rows.Scan(&run, &task, &seq, &fid, &line); err != nil {
			return err
		}
		e := &runlog.Error{File: names[fid], Line: line, Field: "final_seq", Msg: fmt.Sprintf("expected the seq of an event of run %q, found %d, which no event has", run, seq)}
		p.errs.Add(e)
		p.reject(e, nil, 1)
		bad = append(bad, [2]string{run, task})
	}
	rows.Close()
	if p.opt.SkipInvalid {
		for _, b := range bad {
			if err := p.exec(`DELETE FROM task_outcomes WHERE file_id >= ? AND run_id = ? AND task = ?`, first, b[0], b[1]); err != nil {
				return err
			}
		}
	}
	return nil
}

// record writes the bookkeeping rows and the summary's counts.
func (p *pass) record(first int) error {
	counts := map[string]string{
		runlog.TypeEvent:    `SELECT file_id, count(*) FROM events WHERE file_id >= ? GROUP BY ALL`,
		runlog.TypeTask:     `SELECT file_id, count(*) FROM task_outcomes WHERE file_id >= ? GROUP BY ALL`,
		runlog.TypeJudgment: `SELECT file_id, count(*) FROM judgments WHERE file_id >= ? GROUP BY ALL`,
		runlog.TypeRating:   `SELECT file_id, count(*) FROM ratings WHERE file_id >= ? GROUP BY ALL`,
		runlog.TypeRun:      `SELECT file_id, count(*) FROM runs WHERE file_id >= ? GROUP BY ALL`,
		runlog.TypeScenario: `SELECT file_id, count(*) FROM scenarios WHERE file_id >= ? GROUP BY ALL`,
		"pare_run":          `SELECT file_id, count(*) FROM pare_runs WHERE file_id >= ? GROUP BY ALL`,
		"pare_event":        `SELECT file_id, count(*) FROM pare_events WHERE file_id >= ? GROUP BY ALL`,
		"decision_point":    `SELECT file_id, count(*) FROM decision_points WHERE file_id >= ? GROUP BY ALL`,
		"pare_sample":       `SELECT file_id, count(*) FROM pare_samples WHERE file_id >= ? GROUP BY ALL`,
		"pare_result":       `SELECT file_id, count(*) FROM pare_results WHERE file_id >= ? GROUP BY ALL`,
		"pare_report":       `SELECT file_id, count(*) FROM pare_reports WHERE file_id >= ? GROUP BY ALL`,
		"pare_annotation":   `SELECT file_id, count(*) FROM pare_annotations WHERE file_id >= ? GROUP BY ALL`,
	}
	if p.inspect != nil {
		// Only then: a warehouse migrated to an older version for a test
		// has no Inspect tables.
		for typ, t := range map[string]string{"inspect_eval": "inspect_evals", "inspect_sample": "inspect_samples", "inspect_score": "inspect_scores", "inspect_item": "inspect_items"} {
			counts[typ] = `SELECT file_id, count(*) FROM ` + t + ` WHERE file_id >= ? GROUP BY ALL`
		}
	}
	byFile := map[int]map[string]int64{}
	for typ, q := range counts {
		rows, err := p.conn.QueryContext(p.ctx, q, first)
		if err != nil {
			return err
		}
		for rows.Next() {
			var id int
			var n int64
			if err := rows.Scan(&id, &n); err != nil {
				rows.Close()
				return err
			}
			if byFile[id] == nil {
				byFile[id] = map[string]int64{}
			}
			byFile[id][typ] = n
			p.sum.Records[typ] += n
		}
		rows.Close()
	}
	var ingestID int
	if err := p.conn.QueryRowContext(p.ctx, `SELECT nextval('ingest_id_seq')`).Scan(&ingestID); err != nil {
		return err
	}
	now := time.Now().UTC()
	// One append for all the files: a statement per file costs DuckDB a
	// block per column of transaction-local storage (a thousand traces
	// would need gigabytes).
	if err := p.appendRows("ingested_files", func(a *duckdb.Appender) error {
		for _, f := range p.files {
			rec, _ := json.Marshal(byFile[f.id])
			if byFile[f.id] == nil {
				rec = []byte("{}")
			}
			if err := a.AppendRow(int32(f.id), int32(ingestID), f.abs, f.sha, f.Size, f.mtime, f.Kind.String(), now,
				json.RawMessage(rec), f.rejected, false); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return err
	}
	o := map[string]any{"skip_invalid": p.opt.SkipInvalid, "replace": p.opt.Replace, "max_errors": p.opt.MaxErrors}
	if p.opt.SkipInvalid {
		o["max_rejects"] = p.opt.MaxRejects
	}
	opts, _ := json.Marshal(o)
	args := []any{ingestID, p.start.UTC(), now, "gymlens " + Version, string(opts), len(p.files), p.sum.TotalRecords(), p.sum.Rejected}
	if !p.rejectsColumn {
		// A warehouse kept at an older schema (OpenOptions.SchemaVersion).
		return p.exec(`INSERT INTO ingests VALUES (?, ?, ?, ?, ?::JSON, ?, ?, ?)`, args...)
	}
	return p.exec(`INSERT INTO ingests (ingest_id, started_at, finished_at, tool, options, files, records, rejected, rejects_unwritten)
		VALUES (?, ?, ?, ?, ?::JSON, ?, ?, ?, ?)`, append(args, p.sum.RejectsUnwritten)...)
}

func (p *pass) fileNames() map[int]string {
	m := map[int]string{}
	for _, f := range p.files {
		m[f.id] = f.Path
	}
	return m
}

func sortedScenarioIDs(m map[string]*scenarioInfo) []string {
	ids := make([]string, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	sortStrings(ids)
	return ids
}

func sortedMapKeys(m map[string]string) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sortStrings(ks)
	return ks
}
