package ingest

import (
	"context"
	"fmt"
	"sort"

	"github.com/gymlens/gymlens/ingest/runlog"
)

// loc is where a record was read: an index into checker.files and a line.
// It is small because the checker keeps one or more per run and task.
type loc struct {
	file int32
	line int32
}

// typeIndex is the position of rec's type in runlog.RecordTypes.
func typeIndex(rec runlog.Record) int {
	switch rec.(type) {
	case *runlog.Scenario:
		return 0
	case *runlog.Run:
		return 1
	case *runlog.Event:
		return 2
	case *runlog.Task:
		return 3
	case *runlog.Judgment:
		return 4
	}
	return 5
}

// at makes a loc, numbering file paths as they come.
func (c *checker) at(file string, line int) loc {
	i, ok := c.fileIdx[file]
	if !ok {
		i = int32(len(c.files))
		c.files = append(c.files, file)
		c.fileIdx[file] = i
	}
	return loc{i, int32(line)}
}

// errAt makes an error at a loc.
func (c *checker) errAt(at loc, field, msg string) *runlog.Error {
	return &runlog.Error{File: c.files[at.file], Line: int(at.line), Field: field, Msg: msg}
}

// where names a loc in a message.
func (c *checker) where(at loc) string { return fmt.Sprintf("%s:%d", c.files[at.file], at.line) }

type scenarioInfo struct {
	spec     *runlog.Scenario
	personas map[string]bool
	tasks    map[string]int // task id → position in the spec
	hash     uint64
	at       loc
	inWH     bool // stored in the warehouse before this ingest
	fromIn   bool // given in this input
	skip     bool // identical to the stored one
	raw      []byte
	name     string // the id, for a scenario known from the warehouse only
}

func (si *scenarioInfo) id() string {
	if si.spec != nil {
		return si.spec.ID
	}
	return si.name
}

type whRun struct {
	scenario, persona string
	hash              uint64
}

// inRun is what this input says about one run id. It is kept small: the
// checker holds one per run until the end of the input.
type inRun struct {
	hasRec            bool   // the run record was read
	scenario, persona string // interned, from the run record
	at                loc    // of the run record
	firstRef          loc    // first record of this run other than the run record
	hash              uint64
	lastSeq           int64
	hasSeq            bool
	// trajectory says whether events or task records of the run were read.
	trajectory bool
	approvals  []int64
	// seen marks the task records read, by position in the scenario.
	seen []uint64
	// tasks and taskRefs are task records, and tasks named by judgments and
	// ratings, read before the run's scenario was known: checked at the end.
	tasks    []taskLoc
	taskRefs []taskLoc
	records  int64 // records of the run other than its run record
}

// addTrajectory counts an event or task record of the run into its content.
func (ir *inRun) addTrajectory(hash uint64, at loc) {
	ir.hash += hash
	ir.trajectory = true
	if ir.firstRef.file == 0 {
		ir.firstRef = at
	}
	ir.records++
}

// taskLoc is where a task id (an index into checker.names) was named.
type taskLoc struct {
	task uint32
	at   loc
}

func findTask(ts []taskLoc, task uint32) (loc, bool) {
	for _, t := range ts {
		if t.task == task {
			return t.at, true
		}
	}
	return loc{}, false
}

// checker holds what cross-record validation needs. Its memory grows with
// the number of scenarios, runs and tasks, not with the number of events.
type checker struct {
	errs      *runlog.ErrorList
	scenarios map[string]*scenarioInfo
	whRuns    map[string]whRun
	runs      map[string]*inRun
	counts    [8]int64 // records by position in runlog.RecordTypes
	replace   bool
	strs      map[string]string // interned strings: models, scenarios, personas
	names     []string          // task ids, numbered
	nameIdx   map[string]uint32
	files     []string // file paths, numbered for locs
	fileIdx   map[string]int32
}

// name numbers a task id.
func (c *checker) name(s string) uint32 {
	i, ok := c.nameIdx[s]
	if !ok {
		i = uint32(len(c.names))
		c.names = append(c.names, s)
		c.nameIdx[s] = i
	}
	return i
}

// intern returns one shared copy of s, so that per-run state stays small.
func (c *checker) intern(s string) string {
	if x, ok := c.strs[s]; ok {
		return x
	}
	c.strs[s] = s
	return s
}

func newChecker(errs *runlog.ErrorList, replace bool) *checker {
	return &checker{errs: errs, scenarios: map[string]*scenarioInfo{}, whRuns: map[string]whRun{},
		runs: map[string]*inRun{}, replace: replace, strs: map[string]string{},
		nameIdx: map[string]uint32{}, fileIdx: map[string]int32{}, files: []string{""}}
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
		c.scenarios[id] = &scenarioInfo{personas: map[string]bool{}, tasks: map[string]int{}, hash: uint64(h), inWH: true, name: id}
	}
	rows.Close()
	for _, q := range []struct {
		sql string
		set func(si *scenarioInfo, name string, ordinal int)
	}{
		{`SELECT scenario, persona, 0 FROM personas`, func(si *scenarioInfo, x string, _ int) { si.personas[x] = true }},
		{`SELECT scenario, task, ordinal FROM task_specs`, func(si *scenarioInfo, x string, i int) { si.tasks[x] = i }},
	} {
		rows, err := w.db.QueryContext(ctx, q.sql)
		if err != nil {
			return err
		}
		for rows.Next() {
			var s, x string
			var i int
			if err := rows.Scan(&s, &x, &i); err != nil {
				rows.Close()
				return err
			}
			if si := c.scenarios[s]; si != nil {
				q.set(si, x, i)
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
		c.add(c.errAt(at, "scenario", fmt.Sprintf("duplicate scenario %q: already given at %s", s.ID, c.where(old.at))))
		return
	}
	si := &scenarioInfo{spec: s, personas: map[string]bool{}, tasks: map[string]int{}, hash: hash, at: at, fromIn: true, raw: raw}
	for _, p := range s.Personas {
		si.personas[p.Name] = true
	}
	for i, t := range s.Tasks {
		si.tasks[t.ID] = i
	}
	if old != nil && old.inWH {
		si.inWH = true
		if old.hash == hash {
			si.skip = true
		} else if !c.replace {
			c.add(c.errAt(at, "scenario", fmt.Sprintf("scenario %q is already in the warehouse with different content: use --replace to replace it", s.ID)))
		}
	}
	c.scenarios[s.ID] = si
	c.counts[0]++
}

// record checks one JSONL record in stream order. It returns an error
// (already added to the list) when the record is rejected.
func (c *checker) record(rec runlog.Record, hash uint64, at loc) *runlog.Error {
	fail := func(field, msg string) *runlog.Error {
		e := c.errAt(at, field, msg)
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
		if r.Task != "" {
			// Credited to a task: one of the scenario's (now, or at the end).
			if msg := c.taskRef(r.RunID, ir, r.Task, at); msg != "" {
				return fail("task", msg)
			}
		}
		ir.hasSeq, ir.lastSeq = true, r.Seq
		ir.addTrajectory(hash, at)
	case *runlog.Task:
		ir := c.run(r.RunID)
		if si := c.scenarioFor(r.RunID, ir); si != nil {
			if msg := c.markTask(r.RunID, ir, si, r.Task); msg != "" {
				return fail("task", msg)
			}
		} else {
			task := c.name(r.Task)
			if prev, dup := findTask(ir.tasks, task); dup {
				return fail("task", fmt.Sprintf("duplicate task record for run %q, task %q: already given at %s", r.RunID, r.Task, c.where(prev)))
			}
			ir.tasks = append(ir.tasks, taskLoc{task, at})
		}
		ir.addTrajectory(hash, at)
	case *runlog.Run:
		ir := c.run(r.ID)
		if ir.hasRec {
			return fail("run_id", fmt.Sprintf("duplicate run_id %q: already given at %s", r.ID, c.where(ir.at)))
		}
		ir.hasRec, ir.at = true, at
		ir.scenario, ir.persona = c.intern(r.Scenario), c.intern(r.Persona)
		ir.hash += hash
	case *runlog.Judgment:
		if msg := c.refers(r.RunID, r.Task, at); msg != "" {
			return fail("task", msg)
		}
	case *runlog.Rating:
		if msg := c.refers(r.RunID, r.Task, at); msg != "" {
			return fail("task", msg)
		}
	case *runlog.Scenario:
		c.scenario(r, hash, at, nil)
		return nil
	}
	c.counts[typeIndex(rec)]++
	return nil
}

// refers notes that a judgment or a rating names run id (and task, when not
// empty), and returns what is wrong with the task when that is known now.
func (c *checker) refers(id, task string, at loc) string {
	if id == "" {
		return ""
	}
	ir := c.run(id)
	ir.records++
	if ir.firstRef.file == 0 {
		ir.firstRef = at
	}
	if task == "" {
		return ""
	}
	return c.taskRef(id, ir, task, at)
}

// taskRef checks a task named by a judgment or a rating now when the run's
// scenario is known, and remembers it for the end otherwise.
func (c *checker) taskRef(id string, ir *inRun, name string, at loc) string {
	if si := c.scenarioFor(id, ir); si != nil {
		if _, ok := si.tasks[name]; !ok {
			return fmt.Sprintf("task %q is not a task of scenario %q (run %q)", name, si.id(), id)
		}
		return ""
	}
	task := c.name(name)
	if _, ok := findTask(ir.taskRefs, task); !ok {
		ir.taskRefs = append(ir.taskRefs, taskLoc{task, at})
	}
	return ""
}

// scenarioFor returns the scenario of run id when it is known by now.
func (c *checker) scenarioFor(id string, ir *inRun) *scenarioInfo {
	if ir.hasRec {
		return c.scenarios[ir.scenario]
	}
	if wr, ok := c.whRuns[id]; ok {
		return c.scenarios[wr.scenario]
	}
	return nil
}

// markTask records a task record of a run whose scenario is known: the task
// must be the scenario's, once.
func (c *checker) markTask(id string, ir *inRun, si *scenarioInfo, task string) string {
	i, ok := si.tasks[task]
	if !ok {
		return fmt.Sprintf("task %q is not a task of scenario %q (run %q)", task, si.id(), id)
	}
	for len(ir.seen) <= i/64 {
		ir.seen = append(ir.seen, 0)
	}
	if ir.seen[i/64]&(1<<(i%64)) != 0 {
		return fmt.Sprintf("duplicate task record for run %q, task %q", id, task)
	}
	ir.seen[i/64] |= 1 << (i % 64)
	return ""
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
			e := c.errAt(at, field, msg)
			c.add(e)
			dropped[id] = e
			decisions[id] = runDrop
		}
		var scenario, persona string
		if !ir.hasRec {
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
			scenario, persona = ir.scenario, ir.persona
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
		for _, t := range ir.tasks {
			if msg := c.markTask(id, ir, si, c.names[t.task]); msg != "" {
				fail(t.at, "task", msg)
				break
			}
		}
		if decisions[id] == runDrop {
			continue
		}
		for _, t := range ir.taskRefs {
			if _, ok := si.tasks[c.names[t.task]]; !ok {
				fail(t.at, "task", fmt.Sprintf("task %q is not a task of scenario %q (run %q)", c.names[t.task], scenario, id))
				break
			}
		}
	}
	return decisions, dropped
}
