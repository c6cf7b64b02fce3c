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

// readJSONOptions are the options of every read_ndjson call: fixed columns,
// no detection, the file name for provenance, and the same line limit as
// gymlens's own reader.
func readJSON(files []string, columns string) string {
	return fmt.Sprintf("read_ndjson(%s, columns = {%s}, filename = true, maximum_object_size = %d, convert_strings_to_integers = false)",
		sqlList(files), columns, runlog.DefaultMaxLine+1024)
}

const eventColumns = `type: 'VARCHAR', run_id: 'VARCHAR', seq: 'JSON', t: 'VARCHAR', actor: 'VARCHAR', kind: 'VARCHAR',
 task: 'VARCHAR', text: 'VARCHAR', tool: 'VARCHAR', args: 'JSON', result: 'JSON', ok: 'JSON', depth: 'VARCHAR',
 actions: 'JSON', decision: 'VARCHAR', ref: 'JSON', visible: 'JSON', phase: 'VARCHAR', usage: 'JSON'`

const judgmentColumns = `type: 'VARCHAR', run_id: 'VARCHAR', task: 'VARCHAR', metric: 'VARCHAR', judge: 'VARCHAR',
 prompt: 'VARCHAR', scores: 'JSON', reasons: 'VARCHAR', evidence: 'JSON'`

// The event and judgment columns are read as JSON or text and cast only on
// rows of their own type, so an unknown field of the same name on another
// record type cannot break the load.
const insertEvents = `INSERT INTO events
SELECT j.run_id, CAST(j.seq AS BIGINT), CAST(j.t AS TIMESTAMPTZ), j.actor, j.kind, j.task, j.text, j.tool,
       j.args, j.result, CAST(j.ok AS BOOLEAN), j.depth, CAST(j.actions AS VARCHAR[]), j.decision, CAST(j.ref AS BIGINT),
       coalesce(CAST(j.visible AS BOOLEAN), j.actor = 'agent' AND j.kind IN ('message', 'approval_request')),
       j.phase,
       CAST(j.usage->>'input_tokens' AS BIGINT), CAST(j.usage->>'output_tokens' AS BIGINT),
       CAST(j.usage->>'reasoning_tokens' AS BIGINT), CAST(j.usage->>'latency_ms' AS DOUBLE),
       CAST(j.usage->>'cost_usd' AS DOUBLE), NULL, f.file_id
FROM %s j
JOIN _load_files f ON f.path = j.filename
WHERE j.type = 'event' AND NOT EXISTS (SELECT 1 FROM _skip_runs s WHERE s.run_id = j.run_id)`

const insertJudgments = `INSERT INTO judgments
SELECT j.run_id, coalesce(j.task, '') AS task, j.metric, j.judge, coalesce(j.prompt, '') AS prompt,
       CAST(j.scores->>'correctness' AS DOUBLE) AS correctness, CAST(j.scores->>'grounding' AS DOUBLE) AS grounding,
       CAST(j.scores->>'completeness' AS DOUBLE) AS completeness, CAST(j.scores->>'artifact_quality' AS DOUBLE) AS artifact_quality,
       CAST(j.scores->>'now' AS DOUBLE) AS ta_now, CAST(j.scores->>'later' AS DOUBLE) AS ta_later, CAST(j.scores->>'cq' AS DOUBLE) AS ta_cq,
       CAST(j.scores->>'understandability' AS DOUBLE) AS understandability, CAST(j.scores->>'competence' AS DOUBLE) AS competence,
       CAST(j.scores->>'reliability' AS DOUBLE) AS reliability, CAST(j.scores->>'attachment' AS DOUBLE) AS attachment,
       CAST(j.scores->>'faith' AS DOUBLE) AS faith, j.reasons, j.evidence, NULL::JSON AS extra, f.file_id
FROM %s j
JOIN _load_files f ON f.path = j.filename
WHERE j.type = 'judgment' AND NOT EXISTS (SELECT 1 FROM _drop_runs s WHERE s.run_id = j.run_id)`

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
		return fmt.Errorf("loading the warehouse: %v", err)
	}
	if trace {
		fmt.Fprintf(os.Stderr, "trace: %6.3fs %.70s\n", time.Since(t0).Seconds(), strings.Join(strings.Fields(q), " "))
	}
	return nil
}

// trace prints the time of each loading statement (GYMLENS_TRACE=1).
var trace = os.Getenv("GYMLENS_TRACE") != ""

// load writes what the pass validated. It runs inside the transaction.
func (p *pass) load(decisions map[string]runDecision) error {
	if err := p.closeAppenders(); err != nil {
		return err
	}
	first := 1 << 30
	for _, f := range p.files {
		first = min(first, f.id)
	}
	for _, q := range []string{
		`CREATE OR REPLACE TEMP TABLE _load_files (path VARCHAR, orig VARCHAR, file_id INTEGER)`,
		`CREATE OR REPLACE TEMP TABLE _skip_runs (run_id VARCHAR)`,
		`CREATE OR REPLACE TEMP TABLE _drop_runs (run_id VARCHAR)`,
	} {
		if err := p.exec(q); err != nil {
			return err
		}
	}
	if err := p.appendRows("_load_files", func(a *duckdb.Appender) error {
		for _, f := range p.files {
			if err := a.AppendRow(f.loadPath, f.Path, int32(f.id)); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return err
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

	if err := p.loadScenarios(); err != nil {
		return err
	}
	if err := p.loadRuns(decisions, first); err != nil {
		return err
	}
	// Task records of runs already stored unchanged, and anything of a
	// dropped run, came in through the appenders: take them out again.
	if err := p.exec(`DELETE FROM task_outcomes WHERE file_id >= ? AND run_id IN (SELECT run_id FROM _skip_runs)`, first); err != nil {
		return err
	}
	if err := p.exec(`DELETE FROM ratings WHERE file_id >= ? AND run_id IN (SELECT run_id FROM _drop_runs)`, first); err != nil {
		return err
	}
	for _, id := range skip {
		if decisions[id] == runSame {
			p.sum.Identical[runlog.TypeRun]++
		}
	}

	var evFiles, jFiles []string
	for _, f := range p.files {
		if f.records[runlog.TypeEvent] > 0 {
			evFiles = append(evFiles, f.loadPath)
		}
		if f.records[runlog.TypeJudgment] > 0 {
			jFiles = append(jFiles, f.loadPath)
		}
	}
	if len(evFiles) > 0 {
		if err := p.exec(fmt.Sprintf(insertEvents, readJSON(evFiles, eventColumns))); err != nil {
			return err
		}
		if err := p.exec(`UPDATE events SET extra = x.extra::JSON FROM _event_extra x
			WHERE events.file_id >= ? AND events.run_id = x.run_id AND events.seq = x.seq`, first); err != nil {
			return err
		}
	}
	if len(jFiles) > 0 {
		if err := p.loadJudgments(jFiles, first); err != nil {
			return err
		}
	}
	if err := p.checkFinalSeq(first); err != nil {
		return err
	}
	return p.record(first)
}

func (p *pass) appendRows(table string, fill func(*duckdb.Appender) error) error {
	return p.conn.Raw(func(dc any) error {
		catalog := ""
		if strings.HasPrefix(table, "_") {
			catalog = "temp"
		}
		a, err := duckdb.NewAppender(dc.(driver.Conn), catalog, "main", table)
		if err != nil {
			return fmt.Errorf("opening an appender on %s: %v", table, err)
		}
		if err := fill(a); err != nil {
			a.Close()
			return fmt.Errorf("loading %s: %v", table, err)
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
				line = int32(si.at.line)
			}
			return a.AppendRow(s.ID, strOrNil(s.Domain), strOrNil(s.Title), days, ws, we, urg, def, jsonOrNil(si.raw),
				int64(si.hash), jsonOrNil(s.Extra), int32(fileIDs[si.at.file]), line)
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

func (p *pass) loadRuns(decisions map[string]runDecision, first int) error {
	fileIDs := map[string]int{}
	for _, f := range p.files {
		fileIDs[f.Path] = f.id
	}
	ids := sortedIDs(decisions, runNew, runReplace)
	if err := p.appendRows("runs", func(a *duckdb.Appender) error {
		for _, id := range ids {
			ir := p.chk.runs[id]
			r := ir.rec
			var size any
			if r.SizeB != nil {
				size = *r.SizeB
			}
			if err := a.AppendRow(r.ID, r.Scenario, r.Persona, int32(r.Rep),
				runlog.ConfigID(r.Model, r.Harness, r.Effort), ConfigKey(r.Model, r.Harness, r.Effort),
				r.Model, r.Harness, r.Effort, strOrNil(r.Family), size, timeOrNil(r.Start), timeOrNil(r.End), r.Status,
				jsonOrNil(r.Meta), jsonOrNil(r.ConfigExtra), jsonOrNil(r.Extra), int64(ir.hash),
				int32(fileIDs[ir.at.file]), int32(ir.at.line)); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return err
	}
	p.sum.Runs = len(ids)
	replaced := sortedIDs(decisions, runReplace)
	if len(replaced) > 0 {
		if err := p.exec(`CREATE OR REPLACE TEMP TABLE _replace_runs AS SELECT unnest(?::VARCHAR[]) AS run_id`, replaced); err != nil {
			return err
		}
		for _, t := range []string{"runs", "events", "task_outcomes", "judgments"} {
			if err := p.exec(`DELETE FROM `+t+` WHERE file_id < ? AND run_id IN (SELECT run_id FROM _replace_runs)`, first); err != nil {
				return err
			}
		}
		p.sum.Replaced += len(replaced)
	}
	return nil
}

// loadJudgments loads the judgments straight into their table, then
// settles keys: the same key twice in this input is an error; a key stored
// before with the same content is not loaded again; with other content it
// is an error, or with --replace the stored one goes.
func (p *pass) loadJudgments(files []string, first int) error {
	if err := p.exec(fmt.Sprintf(insertJudgments, readJSON(files, judgmentColumns))); err != nil {
		return err
	}
	if err := p.exec(`UPDATE judgments SET extra = x.extra::JSON FROM _judgment_extra x
		WHERE judgments.file_id >= ? AND judgments.run_id = x.run_id AND judgments.task = coalesce(x.task, '')
		AND judgments.metric = x.metric AND judgments.judge = x.judge AND judgments.prompt = coalesce(x.prompt, '')`, first); err != nil {
		return err
	}
	fileNames := map[int]string{}
	for _, f := range p.files {
		fileNames[f.id] = f.Path
	}
	keyOf := func(k [5]string) string {
		return fmt.Sprintf("run %q, task %q, metric %s, judge %q, prompt %q", k[0], k[1], k[2], k[3], k[4])
	}
	var dups int
	err := p.queryRows(`SELECT `+judgmentKey+`, count(*), min(file_id) FROM judgments WHERE file_id >= ?
		GROUP BY ALL HAVING count(*) > 1 ORDER BY ALL LIMIT ?`, []any{first, p.opt.MaxErrors}, func(scan func(...any) error) error {
		var k [5]string
		var n, fid int
		if err := scan(&k[0], &k[1], &k[2], &k[3], &k[4], &n, &fid); err != nil {
			return err
		}
		dups++
		e := &runlog.Error{File: fileNames[fid], Field: "judge", Msg: fmt.Sprintf("duplicate judgment in this input: %s occurs %d times", keyOf(k), n)}
		p.errs.Add(e)
		p.reject(e, nil, int64(n))
		return nil
	})
	if err != nil {
		return err
	}
	if dups > 0 && p.opt.SkipInvalid {
		if err := p.exec(`DELETE FROM judgments WHERE file_id >= ? AND (`+judgmentKey+`) IN
			(SELECT (`+judgmentKey+`) FROM judgments WHERE file_id >= ? GROUP BY ALL HAVING count(*) > 1)`, first, first); err != nil {
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
	// Stored before with the same content: drop the new copy.
	res, err := p.conn.ExecContext(p.ctx, `DELETE FROM judgments n WHERE n.file_id >= ? AND EXISTS (
		SELECT 1 FROM judgments o WHERE o.file_id < ? AND (`+prefixed("o", judgmentKey)+`) = (`+prefixed("n", judgmentKey)+`)
		AND (`+prefixed("o", judgmentValues)+`) IS NOT DISTINCT FROM (`+prefixed("n", judgmentValues)+`))`, first, first)
	if err != nil {
		return fmt.Errorf("loading the warehouse: %v", err)
	}
	same, _ := res.RowsAffected()
	p.sum.Identical[runlog.TypeJudgment] += same
	conflicts := 0
	err = p.queryRows(`SELECT `+prefixed("n", judgmentKey)+`, n.file_id FROM judgments n JOIN judgments o USING (`+judgmentKey+`)
		WHERE n.file_id >= ? AND o.file_id < ? ORDER BY ALL LIMIT ?`, []any{first, first, p.opt.MaxErrors}, func(scan func(...any) error) error {
		var k [5]string
		var fid int
		if err := scan(&k[0], &k[1], &k[2], &k[3], &k[4], &fid); err != nil {
			return err
		}
		conflicts++
		if !p.opt.Replace {
			e := &runlog.Error{File: fileNames[fid], Field: "scores", Msg: fmt.Sprintf("judgment for %s is already in the warehouse with different content: use --replace to replace it", keyOf(k))}
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

// queryRows runs q on the ingest's connection and calls fn for each row.
func (p *pass) queryRows(q string, args []any, fn func(scan func(...any) error) error) error {
	t0 := time.Now()
	rows, err := p.conn.QueryContext(p.ctx, q, args...)
	if err != nil {
		return fmt.Errorf("loading the warehouse: %v", err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows.Scan); err != nil {
			return err
		}
	}
	if trace {
		fmt.Fprintf(os.Stderr, "trace: %6.3fs %.70s\n", time.Since(t0).Seconds(), strings.Join(strings.Fields(q), " "))
	}
	return rows.Err()
}

// checkFinalSeq checks that every task's final_seq names an event of its run.
func (p *pass) checkFinalSeq(first int) error {
	rows, err := p.conn.QueryContext(p.ctx, `SELECT o.run_id, o.task, o.final_seq, f.orig, o.src_line FROM task_outcomes o
		JOIN _load_files f ON f.file_id = o.file_id
		WHERE o.file_id >= ? AND o.final_seq IS NOT NULL
		AND NOT EXISTS (SELECT 1 FROM events e WHERE e.run_id = o.run_id AND e.seq = o.final_seq)
		ORDER BY o.file_id, o.src_line LIMIT ?`, first, p.opt.MaxErrors)
	if err != nil {
		return err
	}
	defer rows.Close()
	var bad [][2]string
	for rows.Next() {
		var run, task, path string
		var seq int64
		var line int
		if err := rows.Scan(&run, &task, &seq, &path, &line); err != nil {
			return err
		}
		e := &runlog.Error{File: path, Line: line, Field: "final_seq", Msg: fmt.Sprintf("expected the seq of an event of run %q, found %d, which no event has", run, seq)}
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
	for _, f := range p.files {
		rec, _ := json.Marshal(byFile[f.id])
		if byFile[f.id] == nil {
			rec = []byte("{}")
		}
		if err := p.exec(`INSERT INTO ingested_files VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?::JSON, ?)`, f.id, ingestID, f.abs, f.sha, f.Size,
			f.mtime, f.Kind.String(), now, string(rec), f.rejected); err != nil {
			return err
		}
	}
	opts, _ := json.Marshal(map[string]any{"skip_invalid": p.opt.SkipInvalid, "replace": p.opt.Replace, "max_errors": p.opt.MaxErrors})
	return p.exec(`INSERT INTO ingests VALUES (?, ?, ?, ?, ?::JSON, ?, ?, ?)`, ingestID, p.start.UTC(), now,
		"gymlens "+Version, string(opts), len(p.files), p.sum.TotalRecords(), p.sum.Rejected)
}

func nullableString(b []byte) any {
	if b == nil {
		return nil
	}
	return string(b)
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
