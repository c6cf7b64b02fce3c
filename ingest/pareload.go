package ingest

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"

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

// readPARE reads a trace: an unreadable one is an error naming the file
// (and field); one PARE itself leaves out is loaded with a note.
func (p *pass) readPARE(fs *fileState) error {
	tr, err := pare.ReadTraceFile(fs.Path)
	if err != nil {
		var te *pare.TraceError
		if errors.As(err, &te) {
			e := &runlog.Error{File: fs.Path, Field: te.Field, Msg: strings.TrimPrefix(strings.TrimPrefix(err.Error(), fs.Path), ": ")}
			if te.Field != "" {
				e.Msg = te.Msg
			}
			p.errs.Add(e)
			fs.rejected++
			return nil
		}
		return err
	}
	r := &pareRun{file: fs, trace: tr, source: "pare"}
	m := tr.ModelIDs
	switch {
	case m["observe"] != "" || m["user"] != "":
		r.config = m["observe"] + " | " + m["user"]
	default:
		r.source = "are"
		r.config = m["agent"]
	}
	if strings.Contains(tr.AgentID, "PAS") || strings.Contains(tr.AgentID, "PARE") || strings.Contains(tr.AgentID, "proactive") {
		r.source = "pare"
	}
	run := "?"
	if tr.RunNumber != nil {
		run = fmt.Sprint(*tr.RunNumber)
	}
	scenario := tr.ScenarioID
	if scenario == "" {
		return p.collect(&runlog.Error{File: fs.Path, Field: "metadata.definition.scenario_id", Msg: "missing: a trace must name its scenario"})
	}
	r.runID = fmt.Sprintf("%s_run_%s | %s", scenario, run, r.config)
	if tr.Skip != "" {
		p.sum.Notes = append(p.sum.Notes, fmt.Sprintf("%s: %s; its run is stored, without decision points", fs.Path, tr.Skip))
	} else if r.source == "pare" {
		dps, err := tr.DecisionPoints()
		if err != nil {
			return p.collect(&runlog.Error{File: fs.Path, Field: "world_logs", Msg: err.Error()})
		}
		r.decisions = dps
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
			if raw, ok := t.Raw["metadata"]; ok && string(raw) != "null" {
				meta = json.RawMessage(raw)
			}
			if err := a.AppendRow(r.runID, r.source, t.ScenarioID, runNo, r.config, nullStr(t.ModelIDs["user"]), nullStr(t.ModelIDs["observe"]),
				nullStr(t.ModelIDs["execute"]), nullStr(t.AgentID), nullFloat(start), nullFloat(end), int32(len(t.Events)),
				nullStr(t.Skip), meta, int32(r.file.id)); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return err
	}
	if err := p.appendRows("pare_events", func(a *duckdb.Appender) error {
		for _, r := range p.pare {
			for i, e := range r.trace.Events {
				args, _ := json.Marshal(e.Args)
				var turn any
				if e.Turn != nil {
					turn = int32(*e.Turn)
				}
				if err := a.AppendRow(r.runID, int32(i), e.Time, e.Type, actor(e), nullStr(e.App), nullStr(e.AppClass), nullStr(e.Function),
					nullStr(e.Operation), json.RawMessage(args), nullStr(e.ProactiveMode), turn, nullStr(e.Return), nullStr(e.Exception),
					int32(r.file.id)); err != nil {
					return err
				}
			}
		}
		return nil
	}); err != nil {
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
