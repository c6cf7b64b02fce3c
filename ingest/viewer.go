package ingest

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gymlens/gymlens/ingest/rows"
)

// MaxRunEvents bounds the events RunEvents returns for one run: a
// viewer's page, not an export.
const MaxRunEvents = 20000

// runEvents are the events of a batch of runs, by run, or why not.
type runEvents struct {
	byRun map[string][]rows.EventRow
	err   error
}

// eventsOf reads the events of runs from their spans, at most
// MaxRunEvents a run, in order. A large batch is read in two parts at once,
// each on a connection of its own: its events are most of a batch's cost.
func (w *Warehouse) eventsOf(ctx context.Context, ids []string) runEvents {
	out := runEvents{byRun: map[string][]rows.EventRow{}}
	parts := [][]string{ids}
	if len(ids) >= 16 {
		parts = [][]string{ids[:len(ids)/2], ids[len(ids)/2:]}
	}
	got := make([]runEvents, len(parts))
	var wg sync.WaitGroup
	for i, part := range parts {
		wg.Go(func() { got[i] = w.eventsOfPart(ctx, part) })
	}
	wg.Wait()
	for _, g := range got {
		if g.err != nil {
			return g
		}
		maps.Copy(out.byRun, g.byRun)
	}
	return out
}

// eventsOfPart reads the events of runs: in one scan of their spans, put
// in order here, or for a run with more than MaxRunEvents events (its
// spans count them) by a query of its own that stops there.
func (w *Warehouse) eventsOfPart(ctx context.Context, ids []string) runEvents {
	out := runEvents{byRun: map[string][]rows.EventRow{}}
	packs, err := w.packsOf(ctx, ids)
	if err != nil {
		out.err = err
		return out
	}
	// A run whose pack holds the events its spans count, and decodes, is
	// read from it; the others from the columns.
	unpacked := map[string]bool{} // runs whose pack was refused
	fromPack := func(id string, n int64) bool {
		if _, done := out.byRun[id]; done {
			return true // a run of more than one file: asked once a file
		}
		if unpacked[id] {
			return false
		}
		unpacked[id] = true
		p, ok := packs[id]
		if !ok || p.events != n {
			return false
		}
		es, err := decodePack(p.pack)
		if err != nil || int64(len(es)) != n {
			return false
		}
		out.byRun[id] = es
		delete(unpacked, id)
		return true
	}
	from, fargs, counts, err := w.spansOf(ctx, "events", ids, "run_id, "+eventColumns, func(id string, n int64) bool {
		return n <= MaxRunEvents && !fromPack(id, n)
	})
	if err != nil {
		out.err = err
		return out
	}
	if from != "" {
		out.err = w.scan(ctx, from, func(rs *sql.Rows) error {
			var id string
			e, err := scanEvent(rs, &id)
			if err != nil {
				return err
			}
			out.byRun[id] = append(out.byRun[id], e)
			return nil
		}, fargs...)
		if out.err != nil {
			return out
		}
		// In the order of the run (sorting here, not in the query: DuckDB
		// would sort every column of every event). A pack's are in order.
		for id, es := range out.byRun {
			if !unpacked[id] {
				continue
			}
			slices.SortStableFunc(es, func(a, b rows.EventRow) int { return cmp.Compare(a.Seq, b.Seq) })
		}
	}
	for _, id := range slices.Sorted(maps.Keys(counts)) {
		if counts[id] <= MaxRunEvents {
			continue
		}
		es, err := w.RunEvents(ctx, id)
		if err != nil {
			out.err = err
			return out
		}
		out.byRun[id] = es
	}
	return out
}

// eventColumns are the columns of a trajectory's records, as EventRow
// scans them.
const eventColumns = `seq, t, actor, kind, coalesce(task, '') AS task, coalesce(text, '') AS text, coalesce(tool, '') AS tool,
	coalesce(depth, '') AS depth, coalesce(CAST(args AS VARCHAR), '') AS args, coalesce(CAST(result AS VARCHAR), '') AS result, ok,
	coalesce(decision, '') AS decision, coalesce(phase, '') AS phase, coalesce(ref, 0) AS ref, visible`

// scanEvent scans a row of eventColumns, after the run id when id is not
// nil.
func scanEvent(rs *sql.Rows, id *string) (rows.EventRow, error) {
	var e rows.EventRow
	var t time.Time
	var ok sql.NullBool
	dest := []any{&e.Seq, &t, &e.Actor, &e.Kind, &e.Task, &e.Text, &e.Tool, &e.Depth, &e.Args, &e.Result, &ok, &e.Decision, &e.Phase, &e.Ref, &e.Visible}
	if id != nil {
		dest = append([]any{id}, dest...)
	}
	if err := rs.Scan(dest...); err != nil {
		return e, err
	}
	e.T = t.UTC()
	if ok.Valid {
		b := ok.Bool
		e.OK = &b
	}
	return e, nil
}

// spanRows is how many rows of a table for each run asked for make
// reading the runs from their spans cheaper than one scan of the table's
// run ids with an IN list (measured at --scale 10: each bounded scan costs
// about what reading 30,000–40,000 run ids does; docs/benchmarks.md).
const spanRows = 32000

// rowsOf is a query (and its arguments) that reads cols of a table's rows
// of runs (task_outcomes or judgments): from their spans (spansOf) when
// the table holds more than spanRows rows a run asked for, else by one
// scan of the table's run ids (always for one run: an equality).
func (w *Warehouse) rowsOf(ctx context.Context, table string, ids []string, cols string) (string, []any, error) {
	var n int64
	if len(ids) > 1 { // one run's id is an equality, which DuckDB pushes into the scan
		if err := w.db.QueryRowContext(ctx, `SELECT count(*) FROM `+table).Scan(&n); err != nil {
			return "", nil, err
		}
	}
	if n > spanRows*int64(len(ids)) {
		from, args, _, err := w.spansOf(ctx, table, ids, cols, nil)
		if from == "" && err == nil {
			from = `SELECT ` + cols + ` FROM ` + table + ` WHERE false`
		}
		return from, args, err
	}
	in := placeholders(len(ids))
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	return `SELECT ` + cols + ` FROM ` + table + ` WHERE run_id IN ` + in, args, nil
}

// spansOf is a query (and its arguments) that reads cols of a table's rows
// of runs from where they lie (events: run_spans; task_outcomes and
// judgments: row_spans): a UNION ALL of one scan per run and file, each
// bounded by the file and the lines it holds, so that DuckDB reads the
// row groups of those lines alone (a run id's zone map prunes nothing,
// and an IN list of ids is not pushed into the scan at all: it read every
// row). The judgments gymlens judge wrote (file 0, no lines) are read by
// file, which prunes every file's row groups. Runs that keep(run, rows
// it has) refuses are left out of the query (keep nil: none is); counts
// has every run's rows, as the spans count them. "" when no run has a row
// (or none is kept).
func (w *Warehouse) spansOf(ctx context.Context, table string, ids []string, cols string, keep func(string, int64) bool) (string, []any, map[string]int64, error) {
	if len(ids) == 0 {
		return "", nil, nil, nil
	}
	in := placeholders(len(ids))
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	spans := `SELECT run_id, file_id, min(lo), max(hi), bool_and(lo IS NOT NULL AND hi IS NOT NULL), sum(events) FROM run_spans WHERE run_id IN ` + in + `
		GROUP BY ALL ORDER BY run_id, file_id`
	if table != "events" {
		spans = `SELECT run_id, file_id, min(lo), max(hi), bool_and(lo IS NOT NULL AND hi IS NOT NULL), sum(n) FROM row_spans WHERE tbl = '` + table + `' AND run_id IN ` + in + `
		GROUP BY ALL ORDER BY run_id, file_id`
	}
	type span struct {
		id      string
		file    int64
		lo, hi  sql.NullInt64
		bounded bool
	}
	var all []span
	counts := map[string]int64{}
	err := w.scan(ctx, spans, func(rs *sql.Rows) error {
		var s span
		var n int64
		if err := rs.Scan(&s.id, &s.file, &s.lo, &s.hi, &s.bounded, &n); err != nil {
			return err
		}
		all = append(all, s)
		counts[s.id] += n
		return nil
	}, args...)
	if err != nil {
		return "", nil, nil, err
	}
	var parts []string
	var out []any
	for _, s := range all {
		if keep != nil && !keep(s.id, counts[s.id]) {
			continue
		}
		if s.bounded {
			parts = append(parts, `SELECT `+cols+` FROM `+table+` WHERE file_id = ? AND src_line BETWEEN ? AND ? AND run_id = ?`)
			out = append(out, s.file, s.lo.Int64, s.hi.Int64, s.id)
		} else {
			parts = append(parts, `SELECT `+cols+` FROM `+table+` WHERE file_id = ? AND run_id = ?`)
			out = append(out, s.file, s.id)
		}
	}
	if table == "judgments" {
		parts = append(parts, `SELECT `+cols+` FROM judgments WHERE file_id = 0 AND run_id IN `+in)
		out = append(out, args...)
	}
	return strings.Join(parts, " UNION ALL "), out, counts, nil
}

// RunEvents reads a run's trajectory in order, at most MaxRunEvents
// events (none for a run not in the warehouse).
func (w *Warehouse) RunEvents(ctx context.Context, runID string) ([]rows.EventRow, error) {
	var events []rows.EventRow
	from, fargs, _, err := w.spansOf(ctx, "events", []string{runID}, eventColumns, nil)
	if err != nil || from == "" {
		return nil, err
	}
	rs, err := w.db.QueryContext(ctx, `SELECT `+eventColumns+` FROM (`+from+`) ORDER BY seq LIMIT ?`, append(fargs, MaxRunEvents)...)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	for rs.Next() {
		e, err := scanEvent(rs, nil)
		if err != nil {
			return nil, err
		}
		events = append(events, e)
	}
	return events, rs.Err()
}

// SearchRuns returns the runs whose trajectory's text, tool calls or
// results contain q (case-insensitive, as plain text: q's % and _ match
// themselves).
func (w *Warehouse) SearchRuns(ctx context.Context, q string) (map[string]bool, error) {
	if strings.TrimSpace(q) == "" {
		return nil, fmt.Errorf("search: empty query")
	}
	pattern := "%" + strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(q) + "%"
	rs, err := w.db.QueryContext(ctx, `SELECT DISTINCT run_id FROM events
		WHERE text ILIKE ?1 ESCAPE '\' OR tool ILIKE ?1 ESCAPE '\' OR CAST(args AS VARCHAR) ILIKE ?1 ESCAPE '\' OR CAST(result AS VARCHAR) ILIKE ?1 ESCAPE '\'`, pattern)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	out := map[string]bool{}
	for rs.Next() {
		var id string
		if err := rs.Scan(&id); err != nil {
			return nil, err
		}
		out[id] = true
	}
	return out, rs.Err()
}

// SnippetContext is how many characters of text a search's snippet
// keeps on each side of the match.
const SnippetContext = 60

// SearchSnippets gives, for each of the runs ids whose trajectory holds q
// (as SearchRuns matches it), its first matching event and the text
// around the match; runs without a match are not in the map.
func (w *Warehouse) SearchSnippets(ctx context.Context, q string, ids []string) (map[string]rows.Snippet, error) {
	if strings.TrimSpace(q) == "" || len(ids) == 0 {
		return map[string]rows.Snippet{}, nil
	}
	pattern := "%" + strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(q) + "%"
	args := []any{pattern}
	marks := make([]string, len(ids))
	for i, id := range ids {
		marks[i] = fmt.Sprintf("?%d", i+2)
		args = append(args, id)
	}
	rs, err := w.db.QueryContext(ctx, `SELECT run_id, seq, CASE WHEN text ILIKE ?1 ESCAPE '\' THEN text WHEN tool ILIKE ?1 ESCAPE '\' THEN tool
		WHEN CAST(args AS VARCHAR) ILIKE ?1 ESCAPE '\' THEN CAST(args AS VARCHAR) ELSE CAST(result AS VARCHAR) END FROM events
		WHERE run_id IN (`+strings.Join(marks, ", ")+`) AND (text ILIKE ?1 ESCAPE '\' OR tool ILIKE ?1 ESCAPE '\' OR CAST(args AS VARCHAR) ILIKE ?1 ESCAPE '\'
		OR CAST(result AS VARCHAR) ILIKE ?1 ESCAPE '\') QUALIFY row_number() OVER (PARTITION BY run_id ORDER BY seq) = 1`, args...)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	out := map[string]rows.Snippet{}
	re := regexp.MustCompile(`(?i)` + regexp.QuoteMeta(q))
	for rs.Next() {
		var id, text string
		var seq int64
		if err := rs.Scan(&id, &seq, &text); err != nil {
			return nil, err
		}
		out[id] = rows.Snippet{Seq: seq, Text: around(text, re, SnippetContext)}
	}
	return out, rs.Err()
}

// around is the first match of re in text with n characters on each
// side, "…" where text goes on.
func around(text string, re *regexp.Regexp, n int) string {
	loc := re.FindStringIndex(text)
	if loc == nil {
		return ""
	}
	before, match, after := []rune(text[:loc[0]]), text[loc[0]:loc[1]], []rune(text[loc[1]:])
	out := match
	if len(before) > n {
		out = "…" + string(before[len(before)-n:]) + out
	} else {
		out = string(before) + out
	}
	if len(after) > n {
		return out + string(after[:n]) + "…"
	}
	return out + string(after)
}

// scenarioSpec is what a run page needs of its scenario: its tasks'
// weights and places, and its TA window.
type scenarioSpec struct {
	weight  map[string]float64
	ordinal map[string]int
	window  [2]*time.Time
}

// scenarioSpecs reads the scenarios' task specs and TA windows; a
// warehouse opened for a viewer (OpenOptions.Viewer) reads them once.
func (w *Warehouse) scenarioSpecs(ctx context.Context) (map[string]*scenarioSpec, error) {
	if w.viewer {
		w.specMu.Lock()
		defer w.specMu.Unlock()
		if w.specs != nil {
			return w.specs, nil
		}
	}
	specs := map[string]*scenarioSpec{}
	err := w.scan(ctx, `SELECT scenario, ta_window_start, ta_window_end FROM scenarios`, func(rs *sql.Rows) error {
		var name string
		var a, b sql.NullTime
		if err := rs.Scan(&name, &a, &b); err != nil {
			return err
		}
		sp := &scenarioSpec{weight: map[string]float64{}, ordinal: map[string]int{}}
		if a.Valid && b.Valid {
			x, y := a.Time.UTC(), b.Time.UTC()
			sp.window = [2]*time.Time{&x, &y}
		}
		specs[name] = sp
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = w.scan(ctx, `SELECT scenario, task, coalesce(weight, 1), coalesce(ordinal, 0) FROM task_specs`, func(rs *sql.Rows) error {
		var name, task string
		var weight float64
		var ord int
		if err := rs.Scan(&name, &task, &weight, &ord); err != nil {
			return err
		}
		if sp := specs[name]; sp != nil {
			sp.weight[task], sp.ordinal[task] = weight, ord
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if w.viewer {
		w.specs = specs
	}
	return specs, nil
}

// RunPage reads what the viewer shows of one run: RunPages of one.
func (w *Warehouse) RunPage(ctx context.Context, runID string) (*rows.RunPage, error) {
	pages, err := w.RunPages(ctx, []string{runID})
	if err != nil {
		return nil, err
	}
	if p := pages[runID]; p != nil {
		return p, nil
	}
	return &rows.RunPage{}, nil
}

// MaxRunPages bounds the runs RunPages reads at once.
const MaxRunPages = 256

// RunPages reads what the viewer shows of each run (rows.RunPage): its
// tasks as logged and rescored, its judgments with reasons and
// citations, its scenario's TA window and its trajectory (at most
// MaxRunEvents events); Tasks and TA are exactly what LoadRunTasks reads.
// Runs not in the warehouse are not in the map. A few queries whatever
// the number of runs (at most MaxRunPages): the runs, their page packs
// (or, for runs without a fresh one, their task scores, task outcomes and
// judgments) and their events: a burst of page loads costs about what
// one does.
func (w *Warehouse) RunPages(ctx context.Context, ids []string) (map[string]*rows.RunPage, error) {
	if len(ids) > MaxRunPages {
		return nil, fmt.Errorf("RunPages: %d runs at once, at most %d", len(ids), MaxRunPages)
	}
	out := map[string]*rows.RunPage{}
	if len(ids) == 0 {
		return out, nil
	}
	// The ids as parameters, never as SQL text.
	in := placeholders(len(ids))
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	// The events, the largest read, on a connection of their own while the
	// other tables are read: a second core takes them.
	events := make(chan runEvents, 1)
	go func() { events <- w.eventsOf(ctx, ids) }()
	specs, err := w.scenarioSpecs(ctx)
	if err != nil {
		return nil, err
	}
	spec := map[string]*scenarioSpec{}
	err = w.scan(ctx, `SELECT run_id, scenario FROM runs WHERE run_id IN `+in, func(rs *sql.Rows) error {
		var id, scenario string
		if err := rs.Scan(&id, &scenario); err != nil {
			return err
		}
		sp := specs[scenario]
		if sp == nil {
			sp = &scenarioSpec{}
		}
		spec[id] = sp
		out[id] = &rows.RunPage{Window: sp.window}
		return nil
	}, args...)
	if err != nil {
		return nil, err
	}
	// The tasks and judgments from the runs' page packs while they are
	// fresh, the tables for the runs without one.
	got, err := w.pagePacksOf(ctx, ids)
	if err != nil {
		return nil, err
	}
	var rest []string
	for _, id := range ids {
		if _, ok := got[id]; !ok && out[id] != nil {
			rest = append(rest, id)
		}
	}
	if len(rest) > 0 {
		fromTables, err := w.pageRowsOf(ctx, rest, "", "")
		if err != nil {
			return nil, err
		}
		maps.Copy(got, fromTables)
	}
	for id, p := range out {
		r := got[id]
		if r == nil {
			r = &pageRows{}
		}
		buildPage(p, spec[id], r)
	}
	ev := <-events
	if ev.err != nil {
		return nil, ev.err
	}
	for id, es := range ev.byRun {
		if p := out[id]; p != nil {
			p.Events = es
		}
	}
	for _, p := range out {
		p.Capped = len(p.Events) >= MaxRunEvents
	}
	return out, nil
}

// sortTasks puts a page's tasks in the scenario's order, then by name (as
// LoadRunTasks).
func sortTasks(p *rows.RunPage, sp *scenarioSpec) {
	byPlace := func(a, b string) int {
		if c := cmp.Compare(sp.ordinal[a], sp.ordinal[b]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	}
	slices.SortFunc(p.TaskViews, func(a, b rows.TaskView) int { return byPlace(a.Task, b.Task) })
	slices.SortFunc(p.Tasks, func(a, b rows.TaskRow) int { return byPlace(a.Task, b.Task) })
}

// addJudgment adds one of a run's judgments, read in order (task, metric,
// judge, prompt descending), to its page: as a view, and where the
// metrics put it when it is the latest of its task, metric and judge
// (active: each active task's place in p.Tasks).
func addJudgment(p *rows.RunPage, r *pageJudgment, active map[string]int, seen map[[3]string]bool) {
	j := rows.JudgmentView{Task: r.task, Metric: r.metric, Judge: r.judge, Prompt: r.prompt, Reasons: r.reasons}
	v := &r.v
	if r.evidence != "" {
		// Citations as logged; one that does not read as {seq, quote}
		// is shown without its link rather than failing the page.
		var cs []rows.Citation
		if json.Unmarshal([]byte(r.evidence), &cs) == nil {
			j.Evidence = cs
		}
	}
	key := [3]string{j.Task, j.Metric, j.Judge}
	j.Latest = !seen[key]
	seen[key] = true
	named := func(names []string, vals []float64) {
		for i, n := range names {
			if !math.IsNaN(vals[i]) {
				j.Scores = append(j.Scores, rows.NamedScore{Name: n, Value: vals[i]})
			}
		}
	}
	switch j.Metric {
	case "tc":
		named([]string{"correctness", "grounding", "completeness", "artifact_quality"}, v[0:4])
	case "ta":
		named([]string{"now", "later"}, v[4:6])
		if r.cq.Valid {
			j.Scores = append(j.Scores, rows.NamedScore{Name: "cq", Value: r.cq.Float64})
		}
	case "trj":
		named([]string{"understandability", "competence", "reliability", "attachment", "faith"}, v[6:11])
	}
	var scores map[string]float64
	if r.custom.Valid && json.Unmarshal([]byte(r.custom.String), &scores) == nil {
		for _, k := range slices.Sorted(maps.Keys(scores)) {
			j.Scores = append(j.Scores, rows.NamedScore{Name: k, Value: scores[k]})
		}
	}
	p.Judgments = append(p.Judgments, j)
	if !j.Latest {
		return
	}
	if scores != nil {
		// A user rubric's judgment, where the metrics put it.
		cj := rows.CustomJudgment{Metric: j.Metric, Judge: j.Judge, Scores: scores}
		if j.Task == "" {
			p.Custom = append(p.Custom, cj)
		} else if ti, ok := active[j.Task]; ok {
			p.Tasks[ti].Custom = append(p.Tasks[ti].Custom, cj)
		}
		return
	}
	switch j.Metric {
	case "ta":
		p.TA = append(p.TA, rows.TAJudgment{Judge: j.Judge, Now: v[4], Later: v[5], CQ: r.cq.Float64, HasCQ: r.cq.Valid, Both: r.both.Float64, HasBoth: r.both.Valid})
	case "tc", "trj":
		ti, ok := active[j.Task]
		if !ok {
			return // a judgment of an inactive task: not in the metrics
		}
		t := &p.Tasks[ti]
		if j.Metric == "tc" {
			t.TC = append(t.TC, rows.TCJudgment{Judge: j.Judge, Correctness: v[0], Grounding: v[1], Completeness: v[2], ArtifactQ: v[3]})
		} else {
			t.TRJ = append(t.TRJ, rows.TRJJudgment{Judge: j.Judge, Scores: [5]float64{v[6], v[7], v[8], v[9], v[10]}})
		}
	}
}
