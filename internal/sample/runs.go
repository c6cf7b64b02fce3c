package sample

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"time"

	"github.com/zeebo/xxh3"
)

type cfgJSON struct {
	Model   string   `json:"model"`
	Harness string   `json:"harness"`
	Effort  string   `json:"effort"`
	Family  string   `json:"family"`
	SizeB   *float64 `json:"size_b,omitempty"`
}

type runRec struct {
	Type     string         `json:"type"`
	RunID    string         `json:"run_id"`
	Scenario string         `json:"scenario"`
	Persona  string         `json:"persona"`
	Rep      int            `json:"rep"`
	Config   cfgJSON        `json:"config"`
	Start    string         `json:"start"`
	End      string         `json:"end"`
	Status   string         `json:"status"`
	Meta     map[string]any `json:"meta,omitempty"`
}

type usage struct {
	Input     int      `json:"input_tokens"`
	Output    int      `json:"output_tokens"`
	Reasoning *int     `json:"reasoning_tokens,omitempty"`
	LatencyMS float64  `json:"latency_ms"`
	CostUSD   *float64 `json:"cost_usd,omitempty"`
}

type eventRec struct {
	Type     string            `json:"type"`
	RunID    string            `json:"run_id"`
	Seq      int               `json:"seq"`
	T        string            `json:"t"`
	Actor    string            `json:"actor"`
	Kind     string            `json:"kind"`
	Task     string            `json:"task,omitempty"`
	Text     string            `json:"text,omitempty"`
	Tool     string            `json:"tool,omitempty"`
	Args     map[string]string `json:"args,omitempty"`
	Result   any               `json:"result,omitempty"`
	OK       *bool             `json:"ok,omitempty"`
	Depth    string            `json:"depth,omitempty"`
	Actions  []string          `json:"actions,omitempty"`
	Decision string            `json:"decision,omitempty"`
	Ref      int               `json:"ref,omitempty"`
	Phase    string            `json:"phase,omitempty"`
	Usage    *usage            `json:"usage,omitempty"`
}

type rules struct {
	Evidence    *float64 `json:"evidence"`
	Outputs     *float64 `json:"outputs"`
	Constraints *float64 `json:"constraints"`
}

type taskRec struct {
	Type          string `json:"type"`
	RunID         string `json:"run_id"`
	Task          string `json:"task"`
	Active        bool   `json:"active"`
	ActivatedAt   string `json:"activated_at,omitempty"`
	FinalSeq      int    `json:"final_seq,omitempty"`
	ExpectedDepth string `json:"expected_depth,omitempty"`
	ChosenDepth   string `json:"chosen_depth,omitempty"`
	Rules         *rules `json:"rules,omitempty"`
}

type evidence struct {
	Seq   int    `json:"seq"`
	Quote string `json:"quote"`
}

type judgmentRec struct {
	Type     string             `json:"type"`
	RunID    string             `json:"run_id"`
	Task     string             `json:"task,omitempty"`
	Metric   string             `json:"metric"`
	Judge    string             `json:"judge"`
	Prompt   string             `json:"prompt"`
	Scores   map[string]float64 `json:"scores"`
	Reasons  string             `json:"reasons"`
	Evidence []evidence         `json:"evidence,omitempty"`
}

type ratingRow struct {
	rater, question string
	value           float64
	runID, task     string
}

type configResult struct {
	runs                            int
	events, tasks, judgments, bytes int64
	planted                         []Planted
	ratings                         []ratingRow
}

func (c Config) key() string {
	k := strings.ToLower(c.Model.Name + "_" + c.Harness + "_" + c.Effort)
	return strings.NewReplacer(" ", "-").Replace(k)
}

// runState builds one run's trajectory.
type runState struct {
	id     string
	seq    int
	out    *sink
	events int64
}

func (rs *runState) emit(e eventRec) int {
	rs.seq += 1 + int(rs.seq%3/2) // gaps in seq are allowed; order is what counts
	e.Type, e.RunID, e.Seq = "event", rs.id, rs.seq
	rs.out.put(e)
	rs.events++
	return rs.seq
}

func ts(t time.Time) string { return t.Format(time.RFC3339) }

func ptr[T any](v T) *T { return &v }

func writeConfig(dir, ext string, opt Options, ci int, c Config, scs []*scenario) (*configResult, error) {
	res := &configResult{}
	out, err := newSink(filepath.Join(dir, "runs", c.key()+ext))
	if err != nil {
		return nil, err
	}
	jouts := make([]*sink, len(Judges))
	for j, name := range Judges {
		if jouts[j], err = newSink(filepath.Join(dir, "judgments", name, c.key()+ext)); err != nil {
			return nil, err
		}
	}
	skill := c.Skill()
	var size *float64
	if c.Model.SizeB > 0 {
		size = ptr(c.Model.SizeB)
	}
	reps := 3 * opt.Scale
	for si, s := range scs {
		for pi, p := range Personas {
			for rep := 1; rep <= reps; rep++ {
				r := rng(opt.Seed, 2, uint64(ci), uint64(si), uint64(pi), uint64(rep))
				id := fmt.Sprintf("%s/%s/%s/%d", c.key(), s.id, p.Name, rep)
				runNoise := r.NormFloat64() * 0.3
				rs := &runState{id: id, out: out}
				end := s.start.AddDate(0, 0, s.days)
				status := "ok"
				if r.Float64() < 0.01 {
					status = "timeout"
				}
				out.put(runRec{Type: "run", RunID: id, Scenario: s.id, Persona: p.Name, Rep: rep,
					Config: cfgJSON{c.Model.Name, c.Harness, c.Effort, c.Model.Family, size},
					Start:  ts(s.start), End: ts(end), Status: status,
					Meta: map[string]any{"gym": "proactivity-gym-sample", "seed": opt.Seed}})
				res.runs++
				genRun(r, rs, res, jouts, c, skill+runNoise-s.difficulty, s, p.Name, p.Group, opt)
				res.events += rs.events
			}
		}
	}
	for _, s := range append([]*sink{out}, jouts...) {
		res.bytes += s.bytes
		if err := s.close(); err != nil {
			return nil, err
		}
	}
	return res, nil
}

type taskOutcome struct {
	spec      *taskSpec
	active    bool
	activated time.Time
	finalSeq  int
	expected  string
	chosen    string
	rules     [3]*float64
	quality   float64 // latent task quality in (0,1)
	matched   bool
	quotes    []evidence
}

// genRun writes one run's events, task records and judgments.
func genRun(r *rand.Rand, rs *runState, res *configResult, jouts []*sink, c Config, ability float64, s *scenario, persona, group string, opt Options) {
	paid := !c.Model.Open
	agentUsage := func() *usage {
		u := &usage{Input: 1500 + r.IntN(6000), Output: 60 + r.IntN(500), LatencyMS: float64(400 + r.IntN(4000))}
		if c.Effort != "none" {
			u.Reasoning = ptr(map[string]int{"low": 200, "medium": 800, "xhigh": 3000}[c.Effort] + r.IntN(400))
		}
		if paid {
			cost := float64(u.Input)*2.5e-6 + float64(u.Output)*1e-5
			if u.Reasoning != nil {
				cost += float64(*u.Reasoning) * 1e-5
			}
			u.CostUSD = ptr(round(cost, 1e-6))
		}
		return u
	}
	groupPenalty := map[string]float64{"S": 0, "B": 0.3, "E": 1.1}[group]
	outcomes := make([]*taskOutcome, len(s.tasks))
	byDay := make([][]int, s.days)
	for i := range s.tasks {
		t := &s.tasks[i]
		o := &taskOutcome{spec: t, active: !t.conditional || r.Float64() < 0.55}
		outcomes[i] = o
		if o.active {
			byDay[t.day] = append(byDay[t.day], i)
		}
	}
	for d := 0; d < s.days; d++ {
		day := s.start.AddDate(0, 0, d)
		rs.emit(eventRec{T: ts(day.Add(7*time.Hour + 30*time.Minute)), Actor: "system", Kind: "availability", Phase: "interaction"})
		idx := byDay[d]
		// Tasks of a day in order of their hour (stable by index).
		for a := 1; a < len(idx); a++ {
			for b := a; b > 0 && s.tasks[idx[b]].hour < s.tasks[idx[b-1]].hour; b-- {
				idx[b], idx[b-1] = idx[b-1], idx[b]
			}
		}
		minute := 0
		for _, ti := range idx {
			o := outcomes[ti]
			t := o.spec
			now := day.Add(time.Duration(t.hour)*time.Hour + time.Duration(minute%45)*time.Minute)
			minute += 7
			step := func() string { now = now.Add(time.Duration(1+r.IntN(4)) * time.Minute); return ts(now) }
			genTask(r, rs, o, s, persona, ability, groupPenalty, now, step, agentUsage)
		}
		rs.emit(eventRec{T: ts(day.Add(22 * time.Hour)), Actor: "system", Kind: "availability", Phase: "sleep"})
	}
	// Task records, with a few planted disagreements between the logged
	// value and what the trajectory implies.
	for _, o := range outcomes {
		rec := taskRec{Type: "task", RunID: rs.id, Task: o.spec.id, Active: o.active}
		if o.active {
			rec.ActivatedAt = ts(o.activated)
			rec.FinalSeq = o.finalSeq
			rec.ExpectedDepth, rec.ChosenDepth = o.expected, o.chosen
			rec.Rules = &rules{o.rules[0], o.rules[1], o.rules[2]}
			if r.Float64() < 0.004 {
				wrong := depthNames[(depthIndex(o.chosen)+1)%4]
				res.planted = append(res.planted, Planted{RunID: rs.id, Task: o.spec.id, Field: "chosen_depth", Logged: wrong, Truth: o.chosen})
				rec.ChosenDepth = wrong
			} else if o.rules[1] != nil && r.Float64() < 0.003 {
				wrong := 1 - *o.rules[1]
				res.planted = append(res.planted, Planted{RunID: rs.id, Task: o.spec.id, Field: "rules.outputs", Logged: wrong, Truth: *o.rules[1]})
				rec.Rules = &rules{o.rules[0], &wrong, o.rules[2]}
			}
		}
		rs.out.put(rec)
		res.tasks++
	}
	genJudgments(r, opt.Seed, rs.id, res, jouts, c, ability, s, outcomes)
	// A few tasks get human ratings.
	for _, o := range outcomes {
		if !o.active || r.Float64() >= 0.02 {
			continue
		}
		for k := 0; k < 3; k++ {
			rater := fmt.Sprintf("annotator-%02d", 1+r.IntN(8))
			trust := clamp(1+4*sigmoid(2.2*(o.quality-0.5)*2+0.2*b2f(o.matched)+r.NormFloat64()*0.5), 1, 5)
			res.ratings = append(res.ratings,
				ratingRow{rater, "tc", round(clamp(o.quality+r.NormFloat64()*0.1, 0, 1), 0.1), rs.id, o.spec.id},
				ratingRow{rater, "trust", round(trust, 1), rs.id, o.spec.id})
			for _, q := range []string{"understandability", "competence", "reliability", "attachment", "faith"} {
				res.ratings = append(res.ratings, ratingRow{rater, "trj." + q, round(clamp(trust+r.NormFloat64()*0.6, 1, 5), 1), rs.id, o.spec.id})
			}
		}
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// genTask writes one active task's events and fills its outcome.
func genTask(r *rand.Rand, rs *runState, o *taskOutcome, s *scenario, persona string, ability, groupPenalty float64,
	start time.Time, step func() string, agentUsage func() *usage) {
	t := o.spec
	dom := domainOf(s.domain)
	obj := strings.ReplaceAll(t.object, "_", " ")
	o.activated = start
	last := 0
	switch t.trigger {
	case "notification":
		last = rs.emit(eventRec{T: ts(start), Actor: "env", Kind: "notification", Task: t.id, Text: fmt.Sprintf("Update about your %s: something needs attention.", obj)})
	case "agent_followup":
		last = rs.emit(eventRec{T: ts(start), Actor: "system", Kind: "schedule", Task: t.id, Text: "Follow-up due: " + strings.ReplaceAll(t.id, "_", " ")})
	default:
		last = rs.emit(eventRec{T: ts(start), Actor: "user", Kind: "message", Task: t.id, Text: fmt.Sprintf("Can you %s the %s for me?", strings.ReplaceAll(strings.SplitN(t.id, "_", 2)[0], "_", " "), obj)})
	}
	o.quality = sigmoid(1.0 + 1.1*ability + r.NormFloat64()*0.6)
	pCheck := sigmoid(0.6 + 1.3*ability + r.NormFloat64()*0.4)
	// Evidence: read tools; a satisfied check is a call that matches it.
	var evHit float64
	for _, ch := range t.rubric.Evidence {
		hit := r.Float64() < pCheck
		args := map[string]string{}
		for k := range ch.Args {
			if hit {
				args[k] = t.object + " " + dom.Name
			} else {
				args[k] = dom.Name + " help"
			}
		}
		if !hit && len(ch.Args) == 0 {
			continue // a read the agent never made
		}
		if hit {
			evHit++
		}
		seq := rs.emit(eventRec{T: step(), Actor: "agent", Kind: "tool_call", Task: t.id, Tool: ch.Tool, Args: args, Usage: agentUsage()})
		res := fmt.Sprintf("Found 3 results for %s (ref %d).", obj, seq)
		last = rs.emit(eventRec{T: step(), Actor: "env", Kind: "tool_result", Task: t.id, Tool: ch.Tool, Result: res, OK: ptr(true)})
		o.quotes = append(o.quotes, evidence{Seq: last, Quote: "Found 3 results"})
	}
	if len(t.rubric.Evidence) > 0 {
		o.rules[0] = ptr(evHit / float64(len(t.rubric.Evidence)))
	}
	// The depth the agent goes to: the persona's, or a step off it. Agents
	// read operators worst.
	expected := t.expected[persona]
	want := depthIndex(expected)
	o.matched = r.Float64() < sigmoid(1.0+0.9*ability-groupPenalty)
	if !o.matched {
		switch {
		case want == 3:
			want = 1 // under-acts: drafts, neither asks nor acts
		case want == 0 || r.Float64() < 0.4:
			want++
		default:
			want--
		}
	}
	chosen := 0
	outHit := 0.0
	if want >= 1 {
		for _, ch := range t.rubric.Outputs {
			hit := r.Float64() < pCheck
			args := map[string]string{"task": t.id}
			if !hit {
				args["task"] = "misc"
			} else {
				outHit++
			}
			last = rs.emit(eventRec{T: step(), Actor: "agent", Kind: "tool_call", Task: t.id, Tool: ch.Tool, Args: args, Depth: "prepare", Usage: agentUsage()})
		}
		if len(t.rubric.Outputs) == 0 {
			last = rs.emit(eventRec{T: step(), Actor: "agent", Kind: "tool_call", Task: t.id, Tool: "draft_" + t.object, Args: map[string]string{"note": "draft"}, Usage: agentUsage()})
		}
		chosen = 1
	}
	if len(t.rubric.Outputs) > 0 {
		o.rules[1] = ptr(outHit / float64(len(t.rubric.Outputs)))
	}
	// The text the agent produces for the task: constraints are checked on it.
	text := fmt.Sprintf("I looked into the %s.", obj)
	var conHit float64
	for _, con := range t.rubric.Constraints {
		hit := r.Float64() < pCheck
		switch {
		case con.Contains != "" && hit:
			text += fmt.Sprintf(" Key %s noted.", con.Contains)
		case con.NotContains != "" && !hit:
			text += " This is guaranteed to work."
		}
		if hit {
			conHit++
		}
	}
	if len(t.rubric.Constraints) > 0 {
		o.rules[2] = ptr(conHit / float64(len(t.rubric.Constraints)))
	}
	o.expected = expected
	switch {
	case want >= 3 && r.Float64() < 0.35:
		// Acts without asking.
		last = rs.emit(eventRec{T: step(), Actor: "agent", Kind: "tool_call", Task: t.id, Tool: "confirm_" + t.object, Args: map[string]string{"id": t.id}, Usage: agentUsage()})
		last = rs.emit(eventRec{T: step(), Actor: "env", Kind: "tool_result", Task: t.id, Tool: "confirm_" + t.object, Result: map[string]any{"status": "done"}, OK: ptr(true)})
		chosen = 3
	case want >= 2:
		req := rs.emit(eventRec{T: step(), Actor: "agent", Kind: "approval_request", Task: t.id, Text: text + " Shall I go ahead?", Actions: []string{"confirm_" + t.object}, Usage: agentUsage()})
		o.quotes = append(o.quotes, evidence{Seq: req, Quote: "Shall I go ahead?"})
		chosen = 2
		pApprove := map[string]float64{"reviewer": 0.35, "planner": 0.6, "operator": 0.85}[persona]
		u := r.Float64()
		switch {
		case u < pApprove:
			last = rs.emit(eventRec{T: step(), Actor: "user", Kind: "decision", Task: t.id, Decision: "approve", Ref: req})
			o.expected = "execute"
			if r.Float64() < sigmoid(1.5+ability) {
				last = rs.emit(eventRec{T: step(), Actor: "agent", Kind: "tool_call", Task: t.id, Tool: "confirm_" + t.object, Args: map[string]string{"id": t.id}, Usage: agentUsage()})
				last = rs.emit(eventRec{T: step(), Actor: "env", Kind: "tool_result", Task: t.id, Tool: "confirm_" + t.object, Result: map[string]any{"status": "done"}, OK: ptr(true)})
				chosen = 3
			}
		case u < pApprove+0.25:
			last = rs.emit(eventRec{T: step(), Actor: "user", Kind: "decision", Task: t.id, Decision: "decline", Ref: req})
			if t.afterDenial != "" {
				o.expected = t.afterDenial
			}
		default:
			last = rs.emit(eventRec{T: step(), Actor: "user", Kind: "decision", Task: t.id, Decision: "defer", Ref: req})
		}
		text = "Noted."
	}
	msg := rs.emit(eventRec{T: step(), Actor: "agent", Kind: "message", Task: t.id, Text: text, Usage: agentUsage()})
	o.quotes = append(o.quotes, evidence{Seq: msg, Quote: strings.SplitN(text, ".", 2)[0]})
	last = msg
	o.finalSeq = last
	o.chosen = depthNames[chosen]
	o.matched = o.chosen == o.expected
}

func domainOf(name string) Domain {
	for _, d := range Domains {
		if d.Name == name {
			return d
		}
	}
	return Domains[0]
}

// genJudgments writes the judges' TC and TR-J judgments for each active
// task and TA judgments for the run. The judges share the latent quality,
// so they correlate strongly; the first scores TC higher, the second TR-J
// lower, the third (Claude) favours agents of its own family: TC +0.04
// and TR-J +0.3 on them. The third draws from a generator of its own, so
// the first two judges' draws are the same with it or without.
func genJudgments(r *rand.Rand, seed uint64, runID string, res *configResult, jouts []*sink, c Config, ability float64, s *scenario, outcomes []*taskOutcome) {
	type bias struct{ tc, trj float64 }
	biases := []bias{{0.06, 0}, {0, -0.35}, {0.02, 0.1}}
	own := rng(seed, 7, xxh3.HashString(runID))
	if c.Model.Family == JudgeFamilies[2] {
		biases[2].tc += 0.04
		biases[2].trj += 0.3
	}
	// How the persona takes to this agent, beyond what it gets done: trust
	// then tracks capability, but not perfectly (the paper's run-level
	// r(TC, TR-J) is .70).
	rapport := r.NormFloat64() * 0.4
	pNow := sigmoid(-0.1 + 0.7*ability)
	pLater := sigmoid(-1.3 + 0.6*ability - 0.15*map[string]float64{"none": 0, "low": 1, "medium": 2, "xhigh": 3}[c.Effort])
	now := b2f(r.Float64() < pNow)
	later := b2f(r.Float64() < pLater)
	cq := []float64{0, 0.5, 0.5, 1}[min(3, int(sigmoid(ability)*4))]
	for j, out := range jouts {
		b := biases[j]
		r := r
		if j == 2 {
			r = own
		}
		for _, o := range outcomes {
			if !o.active {
				continue
			}
			sc := map[string]float64{}
			for _, k := range []string{"correctness", "grounding", "completeness", "artifact_quality"} {
				sc[k] = round(clamp(o.quality+b.tc+r.NormFloat64()*0.08, 0, 1), 0.05)
			}
			ev := o.quotes[len(o.quotes)-1:]
			out.put(judgmentRec{Type: "judgment", RunID: runID, Task: o.spec.id, Metric: "tc", Judge: Judges[j], Prompt: "tc/v1",
				Scores: sc, Reasons: "The answer addresses the request; see the cited turn.", Evidence: ev})
			trust := 1 + 4*sigmoid(1.6*(o.quality-0.5)*2+0.35*b2f(o.matched)+rapport+r.NormFloat64()*0.6)
			tj := map[string]float64{}
			for _, k := range []string{"understandability", "competence", "reliability", "attachment", "faith"} {
				tj[k] = clamp(round(trust+b.trj+r.NormFloat64()*0.4, 1), 1, 5)
			}
			out.put(judgmentRec{Type: "judgment", RunID: runID, Task: o.spec.id, Metric: "trj", Judge: Judges[j], Prompt: "trj/v1",
				Scores: tj, Reasons: "Trust as the persona would judge it at the final turn."})
			res.judgments += 2
		}
		n, l := now, later
		if j >= 1 {
			if r.Float64() < 0.12 {
				n = 1 - n
			}
			if r.Float64() < 0.12 {
				l = 1 - l
			}
		}
		out.put(judgmentRec{Type: "judgment", RunID: runID, Metric: "ta", Judge: Judges[j], Prompt: "ta/v1",
			Scores: map[string]float64{"now": n, "later": l, "cq": cq}, Reasons: "Judged on the decision window."})
		res.judgments++
	}
}
