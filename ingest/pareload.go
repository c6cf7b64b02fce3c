package ingest

import (
	"bufio"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/gymlens/gymlens/ingest/pare"
	"github.com/gymlens/gymlens/ingest/runlog"
)

// pareRun is a PARE or Meta-ARE trace read for loading.
type pareRun struct {
	file      *fileState
	trace     *pare.Trace
	decisions []pare.DecisionPoint
	runID     string
	source    string
	config    string
}

// readPAREFiles reads the traces on every core, then takes them in file
// order: an unreadable one is an error naming the file (and field); one
// PARE itself leaves out is loaded with a note.
func (p *pass) readPAREFiles() error {
	type result struct {
		tr  *pare.Trace
		dps []pare.DecisionPoint
		err error
	}
	res := make([]result, len(p.pareFiles))
	next := make(chan int)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				tr, err := pare.ReadTraceFile(p.pareFiles[i].Path)
				if err == nil && tr.Skip == "" && tr.IsPARE() {
					res[i].dps, res[i].err = tr.DecisionPoints()
				} else {
					res[i].err = err
				}
				res[i].tr = tr
				p.bytes.Add(p.pareFiles[i].Size)
			}
		}()
	}
	for i := range p.pareFiles {
		if p.ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	if err := p.ctx.Err(); err != nil {
		return err
	}
	for i, fs := range p.pareFiles {
		if err := p.addPARE(fs, res[i].tr, res[i].dps, res[i].err); err != nil {
			return err
		}
	}
	return nil
}

// addPARE takes one trace read (or its error) into the pass.
func (p *pass) addPARE(fs *fileState, tr *pare.Trace, dps []pare.DecisionPoint, err error) error {
	if err != nil {
		var te *pare.TraceError
		if errors.As(err, &te) {
			p.errs.Add(&runlog.Error{File: fs.Path, Field: te.Field, Msg: te.Msg})
			fs.rejected++
			return nil
		}
		if tr != nil { // the decision points could not be found
			return p.collect(&runlog.Error{File: fs.Path, Field: "world_logs", Msg: err.Error()})
		}
		return err
	}
	r := &pareRun{file: fs, trace: tr, source: "pare", decisions: dps}
	if tr.IsPARE() {
		// The observe model names the proactive agent; an execute model
		// that differs from it is named too.
		obs := tr.ModelIDs["observe"]
		if ex := tr.ModelIDs["execute"]; ex != "" && ex != obs {
			obs += " / " + ex
		}
		r.config = runlog.JoinID(obs, tr.ModelIDs["user"])
	} else {
		r.source, r.config = "are", tr.ModelIDs["agent"]
	}
	run := "?"
	if tr.RunNumber != nil {
		run = fmt.Sprint(*tr.RunNumber)
	}
	if tr.ScenarioID == "" {
		return p.collect(&runlog.Error{File: fs.Path, Field: "metadata.definition.scenario_id", Msg: "missing: a trace must name its scenario"})
	}
	r.runID = fmt.Sprintf("%s_run_%s | %s", tr.ScenarioID, run, r.config)
	if tr.Skip != "" {
		p.sum.Notes = append(p.sum.Notes, fmt.Sprintf("%s: %s; its run is stored, without decision points", fs.Path, tr.Skip))
	}
	for _, q := range p.pare {
		if q.runID == r.runID {
			return p.collect(&runlog.Error{File: fs.Path, Msg: fmt.Sprintf("run %q is also in %s", r.runID, q.file.Path)})
		}
	}
	p.pare = append(p.pare, r)
	p.records.Add(int64(1 + len(tr.Events) + len(r.decisions)))
	return nil
}

// loadPARE writes the traces read: runs, events and decision points. A run
// already stored from another file is an error (traces are not replaced).
func (p *pass) loadPARE() error {
	if len(p.pare) == 0 {
		return nil
	}
	ids := make([]string, len(p.pare))
	for i, r := range p.pare {
		ids[i] = r.runID
	}
	var clash string
	err := p.conn.QueryRowContext(p.ctx, `SELECT min(run_id) FROM pare_runs WHERE run_id IN (SELECT unnest(?::VARCHAR[]))`, ids).Scan(&clash)
	if err == nil && clash != "" {
		for _, r := range p.pare {
			if r.runID == clash {
				return &runlog.Error{File: r.file.Path, Msg: fmt.Sprintf("run %q is already in the warehouse from another file", clash)}
			}
		}
	}
	sort.Slice(p.pare, func(a, b int) bool { return p.pare[a].runID < p.pare[b].runID })
	nullStr := func(s string) any {
		if s == "" {
			return nil
		}
		return s
	}
	if err := p.appendRows("pare_runs", func(a *duckdb.Appender) error {
		for _, r := range p.pare {
			t := r.trace
			var runNo any
			if t.RunNumber != nil {
				runNo = int32(*t.RunNumber)
			}
			start, end := math.NaN(), math.NaN()
			if n := len(t.Events); n > 0 {
				start, end = t.Events[0].Time, t.Events[n-1].Time
			}
			var meta any
			if len(t.Metadata) > 0 {
				meta = t.Metadata
			}
			var prompt, completion, reasoning any
			if t.Tokens.Known {
				prompt, completion, reasoning = t.Tokens.Prompt, t.Tokens.Completion, t.Tokens.Reasoning
			}
			if err := a.AppendRow(r.runID, r.source, t.ScenarioID, runNo, r.config, nullStr(t.ModelIDs["user"]), nullStr(t.ModelIDs["observe"]),
				nullStr(t.ModelIDs["execute"]), nullStr(t.AgentID), nullFloat(start), nullFloat(end), int32(len(t.Events)),
				nullStr(t.Skip), meta, int32(r.file.id), nullStr(t.Capability), appSet(t), t.ToolNoise, t.EnvNoise,
				int32(t.Tokens.Calls), prompt, completion, reasoning, nullStr(t.Validation), t.HasException); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return err
	}
	// Events go through a staging CSV and DuckDB's reader, as the run
	// logs' do.
	if err := p.stagePAREEvents(); err != nil {
		return err
	}
	return p.appendRows("decision_points", func(a *duckdb.Appender) error {
		for _, r := range p.pare {
			for _, d := range r.decisions {
				var ctxMsgs any
				if d.ContextMessages >= 0 {
					ctxMsgs = int32(d.ContextMessages)
				}
				if err := a.AppendRow(r.runID, d.SampleID, d.Class, d.Final, nullStr(d.Proposal), d.ProposalTime, d.DecisionTime,
					int32(d.InputMessages), int32(d.ContextCalls), ctxMsgs, int32(r.file.id)); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// appSet names the app classes a trace's scenario uses, sorted, joined
// by "+" (NULL when it lists none).
func appSet(t *pare.Trace) any {
	seen := map[string]bool{}
	var cls []string
	for _, c := range t.Apps {
		if c != "" && !seen[c] {
			seen[c] = true
			cls = append(cls, c)
		}
	}
	if len(cls) == 0 {
		return nil
	}
	sort.Strings(cls)
	return strings.Join(cls, "+")
}

func nullFloat(f float64) any {
	if math.IsNaN(f) {
		return nil
	}
	return f
}

// actor names who did an event: the environment, the user or the agent
// (whose mode, observe or execute, is proactive_mode).
func actor(e pare.Event) string {
	switch strings.ToUpper(e.Type) {
	case "ENV":
		return "env"
	case "USER":
		return "user"
	case "AGENT":
		return "agent"
	}
	return strings.ToLower(e.Type)
}

// pareEventColumns are pare_events' columns and types, in order.
var pareEventColumns = [][2]string{{"run_id", "VARCHAR"}, {"seq", "INTEGER"}, {"t", "DOUBLE"}, {"event_type", "VARCHAR"},
	{"actor", "VARCHAR"}, {"app", "VARCHAR"}, {"app_class", "VARCHAR"}, {"function", "VARCHAR"}, {"operation", "VARCHAR"},
	{"args", "JSON"}, {"proactive_mode", "VARCHAR"}, {"turn", "INTEGER"}, {"return_value", "VARCHAR"}, {"exception", "VARCHAR"},
	{"file_id", "INTEGER"}}

func (p *pass) stagePAREEvents() error {
	path := filepath.Join(p.tmpDir, "pare_events.csv")
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	longest := 0
	var line []byte
	str := func(s string) {
		line = append(line, '"')
		line = append(line, strings.ReplaceAll(s, `"`, `""`)...)
		line = append(line, '"', ',')
	}
	opt := func(s string) { // "" is NULL
		if s == "" {
			line = append(line, ',')
			return
		}
		str(s)
	}
	for _, r := range p.pare {
		for i, e := range r.trace.Events {
			line = line[:0]
			str(r.runID)
			line = strconv.AppendInt(line, int64(i), 10)
			line = append(line, ',')
			line = strconv.AppendFloat(line, e.Time, 'g', -1, 64)
			line = append(line, ',')
			str(e.Type)
			str(actor(e))
			opt(e.App)
			opt(e.AppClass)
			opt(e.Function)
			opt(e.Operation)
			opt(string(e.Args))
			opt(e.ProactiveMode)
			if e.Turn != nil {
				line = strconv.AppendInt(line, int64(*e.Turn), 10)
			}
			line = append(line, ',')
			opt(e.Return)
			opt(e.Exception)
			line = strconv.AppendInt(line, int64(r.file.id), 10)
			line = append(line, '\n')
			longest = max(longest, len(line))
			if _, err := w.Write(line); err != nil {
				f.Close()
				return err
			}
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	var cols []string
	for _, c := range pareEventColumns {
		cols = append(cols, fmt.Sprintf("%s: '%s'", c[0], c[1]))
	}
	size := max(2<<20, longest+1024)
	return p.exec(fmt.Sprintf(`INSERT INTO pare_events SELECT * FROM read_csv(%s, columns = {%s}, header = false, auto_detect = false,
		delim = ',', quote = '"', escape = '"', allow_quoted_nulls = false, max_line_size = %d, buffer_size = %d, new_line = '\n')`,
		sqlString(path), strings.Join(cols, ", "), size, max(16<<20, 2*size)))
}
