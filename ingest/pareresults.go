package ingest

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/gymlens/gymlens/ingest/pare"
	"github.com/gymlens/gymlens/ingest/runlog"
)

// pareResult is a result row read, with the file it came from.
type pareResult struct {
	file  *fileState
	res   pare.Result
	runID string // the trace it links to, or ""
}

// pareReport is a summary report read.
type pareReport struct {
	file *fileState
	rep  *pare.Report
}

// fileError turns a reader's error into the ingest's.
func fileError(err error) error {
	var fe *pare.FileError
	if errors.As(err, &fe) {
		return &runlog.Error{File: fe.Path, Line: fe.Line, Field: fe.Field, Msg: fe.Msg}
	}
	return err
}

// readPAREResultFile reads a PARE result file, a combined report, a
// Meta-ARE output.jsonl or benchmark_stats.json.
func (p *pass) readPAREResultFile(fs *fileState) error {
	p.bytes.Add(fs.Size)
	b, err := runlog.ReadWhole(fs.Path)
	if err != nil {
		return p.collect(err)
	}
	switch fs.Kind {
	case pare.KindResults, pare.KindAREOutput:
		read := pare.ReadPAREResults
		if fs.Kind == pare.KindAREOutput {
			read = pare.ReadAREOutput
		}
		rows, err := read(fs.Path, b)
		if err != nil {
			fs.rejected++
			return p.collect(fileError(err))
		}
		for _, r := range rows {
			p.pareResults = append(p.pareResults, pareResult{file: fs, res: r})
		}
		p.records.Add(int64(len(rows)))
	default:
		read := pare.ReadPARECombined
		if fs.Kind == pare.KindAREStats {
			read = pare.ReadAREStats
		}
		rep, err := read(fs.Path, b)
		if err != nil {
			fs.rejected++
			return p.collect(fileError(err))
		}
		p.pareReports = append(p.pareReports, pareReport{file: fs, rep: rep})
		p.records.Add(int64(len(rep.Sections)))
	}
	return nil
}

// pathParts splits a path written on any system into its names.
func pathParts(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == '/' || r == '\\' })
}

// commonTail counts the trailing names two paths share.
func commonTail(a, b []string) int {
	n := 0
	for n < len(a) && n < len(b) && a[len(a)-1-n] == b[len(b)-1-n] {
		n++
	}
	return n
}

// traceRef is an ingested trace a result row may link to.
type traceRef struct {
	runID, scenario    string
	config, capability string // the trace's configuration (ARE: the agent's model) and capability
	parts              []string
}

// linkResults links each result row to the trace it names (its
// export_path / trace_id): the ingested trace whose path shares the most
// trailing names with it (at least the file name), of the same scenario.
// A tie or a different scenario leaves the row unlinked, with a note.
func (p *pass) linkResults() error {
	byName := map[string][]traceRef{}
	add := func(t traceRef, path string) {
		t.parts = pathParts(path)
		if len(t.parts) == 0 {
			return
		}
		name := t.parts[len(t.parts)-1]
		byName[name] = append(byName[name], t)
	}
	for _, r := range p.pare {
		add(traceRef{runID: r.runID, scenario: r.trace.ScenarioID, config: r.config, capability: r.trace.Capability}, r.file.Path)
	}
	if p.conn != nil {
		rows, err := p.conn.QueryContext(p.ctx, `SELECT r.run_id, r.scenario, r.config_id, coalesce(r.capability, ''), f.path
			FROM pare_runs r JOIN ingested_files f USING (file_id)`)
		if err != nil {
			return err
		}
		for rows.Next() {
			var t traceRef
			var path string
			if err := rows.Scan(&t.runID, &t.scenario, &t.config, &t.capability, &path); err != nil {
				rows.Close()
				return err
			}
			add(t, path)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
	}
	unlinked, ambiguous := 0, 0
	for i := range p.pareResults {
		r := &p.pareResults[i]
		parts := pathParts(r.res.ExportPath)
		if len(parts) == 0 {
			unlinked++
			continue
		}
		best, n, tie := traceRef{}, 0, false
		for _, t := range byName[parts[len(parts)-1]] {
			switch k := commonTail(parts, t.parts); {
			case k > n:
				best, n, tie = t, k, false
			case k == n && t.runID != best.runID:
				tie = true
			}
		}
		switch {
		case n == 0:
			unlinked++
		case tie:
			ambiguous++
			p.sum.Notes = append(p.sum.Notes, fmt.Sprintf("%s:%d: the trace %s matches more than one ingested trace; the row is not linked to any",
				r.file.Path, r.res.Line, r.res.ExportPath))
		case best.scenario != r.res.Scenario:
			unlinked++
			p.sum.Notes = append(p.sum.Notes, fmt.Sprintf("%s:%d: the trace named (%s) is of scenario %q, the row of %q; not linked",
				r.file.Path, r.res.Line, r.res.ExportPath, best.scenario, r.res.Scenario))
		default:
			r.runID = best.runID
			// A Meta-ARE line names neither model nor capability: the
			// trace does, when no stats file or folder did.
			if r.res.Source == "are" && r.res.Model == "" {
				r.res.Model = best.config
			}
			if r.res.Capability == "" {
				r.res.Capability = best.capability
			}
		}
	}
	if len(p.pareResults) > 0 {
		linked := len(p.pareResults) - unlinked - ambiguous
		p.sum.Notes = append(p.sum.Notes, fmt.Sprintf("%d result rows, %d linked to an ingested trace (by the trace path they name)", len(p.pareResults), linked))
	}
	return nil
}

// loadPAREResults writes the result rows and reports read. A run listed
// twice (same scenario, run number and configuration) is an error.
func (p *pass) loadPAREResults() error {
	if len(p.pareResults) == 0 && len(p.pareReports) == 0 {
		return nil
	}
	if err := p.linkResults(); err != nil {
		return err
	}
	seen := map[string]*pareResult{}
	var ids []string
	for i := range p.pareResults {
		r := &p.pareResults[i]
		k := r.res.Key()
		if q, dup := seen[k]; dup {
			return &runlog.Error{File: r.file.Path, Line: r.res.Line, Msg: fmt.Sprintf("run %q is also listed in %s:%d", k, q.file.Path, q.res.Line)}
		}
		seen[k] = r
		ids = append(ids, k)
	}
	if len(ids) > 0 && p.conn != nil {
		var clash string
		err := p.conn.QueryRowContext(p.ctx, `SELECT min(result_id) FROM pare_results WHERE result_id IN (SELECT unnest(?::VARCHAR[]))`, ids).Scan(&clash)
		if err == nil && clash != "" {
			r := seen[clash]
			return &runlog.Error{File: r.file.Path, Line: r.res.Line, Msg: fmt.Sprintf("run %q is already in the warehouse from another result file", clash)}
		}
	}
	sort.SliceStable(p.pareResults, func(a, b int) bool { return p.pareResults[a].res.Key() < p.pareResults[b].res.Key() })
	nul := func(s string) any {
		if s == "" {
			return nil
		}
		return s
	}
	f64 := func(f *float64) any {
		if f == nil {
			return nil
		}
		return *f
	}
	i32 := func(n *int) any {
		if n == nil {
			return nil
		}
		return int32(*n)
	}
	if err := p.appendRows("pare_results", func(a *duckdb.Appender) error {
		for _, pr := range p.pareResults {
			r := pr.res
			c := r.Counts
			if err := a.AppendRow(r.Key(), r.Source, r.Scenario, i32(r.RunNumber), r.ConfigID(), r.Status, f64(r.Success), r.HasException,
				nul(r.ExceptionType), nul(r.ExceptionMessage), nul(r.Rationale), nul(r.ExportPath), nul(pr.runID),
				f64(r.RunDuration), f64(r.JobDuration), nul(r.UserModel), nul(r.ProactiveModel), nul(r.ObserveModel), nul(r.ExecuteModel),
				f64(r.ToolFailure), i32(r.EnvEvents), nul(r.Capability), nul(r.Phase),
				i32(c[0]), i32(c[1]), i32(c[2]), i32(c[3]), i32(c[4]), f64(r.ProposalRate), f64(r.AcceptanceRate),
				r.Fields, int32(pr.file.id), int32(r.Line)); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return err
	}
	return p.appendRows("pare_reports", func(a *duckdb.Appender) error {
		for _, pr := range p.pareReports {
			for _, s := range pr.rep.Sections {
				cfg := s.Name
				if pr.rep.Source == "are" {
					cfg = pr.rep.Model
					if cfg == "" {
						cfg = "unknown model"
					}
				}
				if err := a.AppendRow(pr.rep.Source, pr.rep.Kind, s.Name, cfg, s.Raw, int32(pr.file.id), int32(s.Line)); err != nil {
					return err
				}
			}
		}
		return nil
	})
}
