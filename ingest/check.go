package ingest

import (
	"context"
	"fmt"
	"sort"

	"github.com/gymlens/gymlens/ingest/runlog"
)

// loc is where a record was read.
type loc struct {
	file string
	line int
}

type scenarioInfo struct {
	spec     *runlog.Scenario
	personas map[string]bool
	tasks    map[string]bool
	hash     uint64
	at       loc
	inWH     bool // stored in the warehouse before this ingest
	fromIn   bool // given in this input
	skip     bool // identical to the stored one
	raw      []byte
}

type whRun struct {
	scenario, persona string
	hash              uint64
}

// inRun is what this input says about one run id.
type inRun struct {
	rec       *runlog.Run
	at        loc // of the run record
	firstRef  loc // first record of this run other than the run record
	hash      uint64
	lastSeq   int64
	hasSeq    bool
	approvals []int64
	// trajectory says whether events or task records of the run were read.
	trajectory bool
	tasks      map[string]loc // task records
	taskRefs   map[string]loc // tasks named by judgments and ratings
	records    int64          // records of the run other than its run record
}

// checker holds what cross-record validation needs. Its memory grows with
// the number of scenarios, runs and tasks, not with the number of events.
type checker struct {
	errs      *runlog.ErrorList
	scenarios map[string]*scenarioInfo
	whRuns    map[string]whRun
	runs      map[string]*inRun
	counts    map[string]int64
	replace   bool
}

func newChecker(errs *runlog.ErrorList, replace bool) *checker {
	return &checker{errs: errs, scenarios: map[string]*scenarioInfo{}, whRuns: map[string]whRun{},
		runs: map[string]*inRun{}, counts: map[string]int64{}, replace: replace}
}

// preload reads what the warehouse already holds: scenarios with their
// personas and tasks, and runs with their content hashes.
func (c *checker) preload(ctx context.Context, w *Warehouse) error {
	rows, err := w.db.QueryContext(ctx, `SELECT scenario, content_hash FROM scenarios`)
	if err != nil {
		return err
	}
	for rows.Next() {
		var id string
		var h int64
		if err := rows.Scan(&id, &h); err != nil {
			rows.Close()
			return err
		}
		c.scenarios[id] = &scenarioInfo{personas: map[string]bool{}, tasks: map[string]bool{}, hash: uint64(h), inWH: true}
	}
	rows.Close()
	for _, q := range []struct {
		sql string
		set func(*scenarioInfo) map[string]bool
	}{
		{`SELECT scenario, persona FROM personas`, func(si *scenarioInfo) map[string]bool { return si.personas }},
		{`SELECT scenario, task FROM task_specs`, func(si *scenarioInfo) map[string]bool { return si.tasks }},
	} {
		rows, err := w.db.QueryContext(ctx, q.sql)
		if err != nil {
			return err
		}
		for rows.Next() {
			var s, x string
			if err := rows.Scan(&s, &x); err != nil {
				rows.Close()
				return err
			}
			if si := c.scenarios[s]; si != nil {
				q.set(si)[x] = true
			}
		}
		rows.Close()
	}
	rows, err = w.db.QueryContext(ctx, `SELECT run_id, scenario, persona, content_hash FROM runs`)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var r whRun
		var h int64
		if err := rows.Scan(&id, &r.scenario, &r.persona, &h); err != nil {
			return err
		}
		r.hash = uint64(h)
		c.whRuns[id] = r
	}
	return rows.Err()
}

func (c *checker) add(e *runlog.Error) { c.errs.Add(e) }

func (c *checker) run(id string) *inRun {
	r := c.runs[id]
	if r == nil {
		r = &inRun{}
		c.runs[id] = r
	}
	return r
}

// scenario checks one scenario spec read from the input.
func (c *checker) scenario(s *runlog.Scenario, hash uint64, at loc, raw []byte) {
	old := c.scenarios[s.ID]
	if old != nil && old.fromIn {
		c.add(&runlog.Error{File: at.file, Line: at.line, Field: "scenario",
			Msg: fmt.Sprintf("duplicate scenario %q: already given at %s:%d", s.ID, old.at.file, old.at.line)})
		return
	}
	si := &scenarioInfo{spec: s, personas: map[string]bool{}, tasks: map[string]bool{}, hash: hash, at: at, fromIn: true, raw: raw}
	for _, p := range s.Personas {
		si.personas[p.Name] = true
	}
	for _, t := range s.Tasks {
		si.tasks[t.ID] = true
	}
	if old != nil && old.inWH {
		si.inWH = true
		if old.hash == hash {
			si.skip = true
		} else if !c.replace {
			c.add(&runlog.Error{File: at.file, Line: at.line, Field: "scenario",
				Msg: fmt.Sprintf("scenario %q is already in the warehouse with different content: use --replace to replace it", s.ID)})
		}
	}
	c.scenarios[s.ID] = si
	c.counts[runlog.TypeScenario]++
}

// record checks one JSONL record in stream order. It returns an error
// (already added to the list) when the record is rejected.
func (c *checker) record(rec runlog.Record, hash uint64, at loc) *runlog.Error {
	fail := func(field, msg string) *runlog.Error {
		e := &runlog.Error{File: at.file, Line: at.line, Field: field, Msg: msg}
		c.add(e)
		return e
	}
	switch r := rec.(type) {
	case *runlog.Event:
		ir := c.run(r.RunID)
		if ir.hasSeq && r.Seq <= ir.lastSeq {
			return fail("seq", fmt.Sprintf("expected seq greater than %d (the previous event of run %q), found %d", ir.lastSeq, r.RunID, r.Seq))
		}
		if r.Kind == "decision" && r.Ref != nil {
			found := false
			for _, s := range ir.approvals {
				if s == *r.Ref {
					found = true
					break
				}
			}
			if !found {
				return fail("ref", fmt.Sprintf("expected the seq of an earlier approval_request of run %q, found %d", r.RunID, *r.Ref))
			}
		}
		if r.Kind == "approval_request" {
			ir.approvals = append(ir.approvals, r.Seq)
		}
		ir.hasSeq, ir.lastSeq = true, r.Seq
		ir.hash += hash
		ir.trajectory = true
		if ir.firstRef.file == "" {
			ir.firstRef = at
		}
		ir.records++
	case *runlog.Task:
		ir := c.run(r.RunID)
		if ir.tasks == nil {
			ir.tasks = map[string]loc{}
		}
		if prev, dup := ir.tasks[r.Task]; dup {
			return fail("task", fmt.Sprintf("duplicate task record for run %q, task %q: already given at %s:%d", r.RunID, r.Task, prev.file, prev.line))
		}
		ir.tasks[r.Task] = at
		ir.hash += hash
		ir.trajectory = true
		if ir.firstRef.file == "" {
			ir.firstRef = at
		}
		ir.records++
	case *runlog.Run:
		ir := c.run(r.ID)
		if ir.rec != nil {
			return fail("run_id", fmt.Sprintf("duplicate run_id %q: already given at %s:%d", r.ID, ir.at.file, ir.at.line))
		}
		ir.rec, ir.at = r, at
		ir.hash += hash
	case *runlog.Judgment:
		ir := c.run(r.RunID)
		ir.records++
		if ir.firstRef.file == "" {
			ir.firstRef = at
		}
		if r.Task != "" {
			c.taskRef(ir, r.Task, at)
		}
	case *runlog.Rating:
		if r.RunID != "" {
			ir := c.run(r.RunID)
			ir.records++
			if ir.firstRef.file == "" {
				ir.firstRef = at
			}
			if r.Task != "" {
				c.taskRef(ir, r.Task, at)
			}
		}
	case *runlog.Scenario:
		c.scenario(r, hash, at, nil)
		return nil
	}
	c.counts[rec.RecordType()]++
	return nil
}

func (c *checker) taskRef(ir *inRun, task string, at loc) {
	if ir.taskRefs == nil {
		ir.taskRefs = map[string]loc{}
	}
	if _, ok := ir.taskRefs[task]; !ok {
		ir.taskRefs[task] = at
	}
}

// runDecision is what happens to one run of the input.
type runDecision int

const (
	runNew     runDecision = iota // load it
	runSame                       // identical to the stored run: load nothing of its trajectory
	runReplace                    // load it and remove the stored one
	runDrop                       // rejected (with --skip-invalid)
	runRefOnly                    // only judgments or ratings refer to a stored run
)

// finish checks references once the whole input has been read and decides
// what happens to each run. It returns the runs to drop with their reason.
func (c *checker) finish() (decisions map[string]runDecision, dropped map[string]*runlog.Error) {
	decisions = map[string]runDecision{}
	dropped = map[string]*runlog.Error{}
	ids := make([]string, 0, len(c.runs))
	for id := range c.runs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		ir := c.runs[id]
		fail := func(at loc, field, msg string) {
			e := &runlog.Error{File: at.file, Line: at.line, Field: field, Msg: msg}
			c.add(e)
			dropped[id] = e
			decisions[id] = runDrop
		}
		var scenario, persona string
		if ir.rec == nil {
			wr, ok := c.whRuns[id]
			if !ok {
				fail(ir.firstRef, "run_id", fmt.Sprintf("run %q is nowhere: no run record in the input or the warehouse", id))
				continue
			}
			if ir.trajectory {
				fail(ir.firstRef, "run_id", fmt.Sprintf("run %q was ingested earlier: its events and task records can only be loaded together with its run record (re-ingest the whole run with --replace)", id))
				continue
			}
			decisions[id] = runRefOnly
			scenario, persona = wr.scenario, wr.persona
		} else {
			scenario, persona = ir.rec.Scenario, ir.rec.Persona
			decisions[id] = runNew
			if wr, ok := c.whRuns[id]; ok {
				switch {
				case wr.hash == ir.hash:
					decisions[id] = runSame
				case c.replace:
					decisions[id] = runReplace
				default:
					fail(ir.at, "run_id", fmt.Sprintf("run %q is already in the warehouse with different content: use --replace to replace it", id))
					continue
				}
			}
		}
		si := c.scenarios[scenario]
		if si == nil {
			fail(ir.at, "scenario", fmt.Sprintf("run %q names scenario %q, which is nowhere: not in the input or the warehouse", id, scenario))
			continue
		}
		if !si.personas[persona] {
			fail(ir.at, "persona", fmt.Sprintf("run %q names persona %q, which scenario %q does not define", id, persona, scenario))
			continue
		}
		for _, m := range []map[string]loc{ir.tasks, ir.taskRefs} {
			for _, t := range sortedKeys(m) {
				if !si.tasks[t] {
					at := m[t]
					fail(at, "task", fmt.Sprintf("task %q is not a task of scenario %q (run %q)", t, scenario, id))
					break
				}
			}
			if decisions[id] == runDrop {
				break
			}
		}
	}
	return decisions, dropped
}

func sortedKeys(m map[string]loc) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
