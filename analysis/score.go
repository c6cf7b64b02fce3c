package analysis

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/gymlens/gymlens/ingest/rows"
)

// Derived is what a task's trajectory implies, by the rules of the
// run-log format.
type Derived struct {
	Expected, Chosen string
	Rules            [3]*float64 // evidence, outputs, constraints; nil: no checks
}

var depthRank = map[string]int{"noop": 0, "prepare": 1, "suggest": 2, "execute": 3}

// rubric is a task's rule-based TC checklist, compiled.
type rubric struct {
	Evidence, Outputs []toolCheck
	Constraints       []textCheck
}

type toolCheck struct {
	Tool string
	Args map[string]argMatch
}

type argMatch struct {
	re    *regexp.Regexp // for a value written /…/
	value string         // canonical JSON of the expected value otherwise
}

type textCheck struct {
	contains, notContains string
	re                    *regexp.Regexp
}

// Scorer derives tasks' depths and rule scores from their trajectories.
type Scorer struct {
	specs   map[string]*rows.ScenarioSpec
	rubrics map[[2]string]*rubric
}

// NewScorer compiles the scenarios' rubrics.
func NewScorer(specs map[string]*rows.ScenarioSpec) (*Scorer, error) {
	s := &Scorer{specs: specs, rubrics: map[[2]string]*rubric{}}
	for sid, spec := range specs {
		for tid, t := range spec.Tasks {
			if t.Rubric == nil {
				continue
			}
			r, err := compileRubric(t.Rubric)
			if err != nil {
				return nil, fmt.Errorf("scenario %q, task %q: rubric: %w", sid, tid, err)
			}
			s.rubrics[[2]string{sid, tid}] = r
		}
	}
	return s, nil
}

func compileRubric(b []byte) (*rubric, error) {
	var raw struct {
		Evidence, Outputs []struct {
			Tool string                     `json:"tool"`
			Args map[string]json.RawMessage `json:"args"`
		}
		Constraints []struct {
			Contains    *string `json:"contains"`
			NotContains *string `json:"not_contains"`
			Regex       *string `json:"regex"`
		}
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, err
	}
	r := &rubric{}
	for i, list := range [][]struct {
		Tool string                     `json:"tool"`
		Args map[string]json.RawMessage `json:"args"`
	}{raw.Evidence, raw.Outputs} {
		for _, c := range list {
			tc := toolCheck{Tool: c.Tool, Args: map[string]argMatch{}}
			for k, v := range c.Args {
				var str string
				if json.Unmarshal(v, &str) == nil && len(str) >= 2 && str[0] == '/' && str[len(str)-1] == '/' {
					re, err := regexp.Compile(str[1 : len(str)-1])
					if err != nil {
						return nil, err
					}
					tc.Args[k] = argMatch{re: re}
				} else {
					tc.Args[k] = argMatch{value: canonical(v)}
				}
			}
			if i == 0 {
				r.Evidence = append(r.Evidence, tc)
			} else {
				r.Outputs = append(r.Outputs, tc)
			}
		}
	}
	for _, c := range raw.Constraints {
		var tc textCheck
		switch {
		case c.Contains != nil:
			tc.contains = *c.Contains
		case c.NotContains != nil:
			tc.notContains = *c.NotContains
		case c.Regex != nil:
			re, err := regexp.Compile(*c.Regex)
			if err != nil {
				return nil, err
			}
			tc.re = re
		}
		r.Constraints = append(r.Constraints, tc)
	}
	return r, nil
}

// canonical re-encodes a JSON value so that equal values compare equal.
func canonical(b []byte) string {
	var v any
	if json.Unmarshal(b, &v) != nil {
		return string(b)
	}
	out, _ := json.Marshal(v)
	return string(out)
}

// Derive applies the format's rules to one task:
//
//   - chosen depth: the highest depth among the agent's records credited
//     to the task (an explicit depth; else suggest for an approval request;
//     else the tool's class for a tool call, where read is no depth), noop
//     when there is none;
//   - expected depth: the persona's, replaced by after_approval or
//     after_denial (default: the persona's) by the last user decision on
//     the task that approved or declined;
//   - rules: the share of each component's checks met, nil without checks.
//     A tool check is met by an agent tool call credited to the task with
//     its tool and, for each listed argument, an equal value or a match of
//     the /regular expression/ (against the value's text); a text check
//     looks at the agent's text for the task (its messages and approval
//     requests) and the string values of its tool calls' arguments.
func (s *Scorer) Derive(t *rows.ScoreTask) (Derived, error) {
	spec := s.specs[t.Scenario]
	if spec == nil {
		return Derived{}, fmt.Errorf("run %q: scenario %q has no spec", t.RunID, t.Scenario)
	}
	ts, ok := spec.Tasks[t.Task]
	if !ok {
		return Derived{}, fmt.Errorf("run %q: task %q is not in scenario %q", t.RunID, t.Task, t.Scenario)
	}
	d := Derived{Expected: ts.ExpectedDepth[t.Persona], Chosen: "noop"}
	best := 0
	var text strings.Builder
	type call struct {
		tool string
		args map[string]json.RawMessage
	}
	var calls []call
	for _, e := range t.Events {
		if e.Actor == "user" && e.Kind == "decision" {
			switch e.Decision {
			case "approve":
				d.Expected = ts.AfterApproval
			case "decline":
				d.Expected = ts.ExpectedDepth[t.Persona]
				if ts.AfterDenial != "" {
					d.Expected = ts.AfterDenial
				}
			}
			continue
		}
		if e.Actor != "agent" {
			continue
		}
		depth := e.Depth
		if depth == "" && e.Kind == "approval_request" {
			depth = "suggest"
		}
		if depth == "" && e.Kind == "tool_call" {
			depth = spec.Tools[e.Tool]
		}
		if r, ok := depthRank[depth]; ok && r > best {
			best = r
		}
		if e.Text != "" {
			text.WriteString(e.Text)
			text.WriteByte('\n')
		}
		if e.Kind == "tool_call" {
			c := call{tool: e.Tool}
			if e.Args != "" {
				if err := json.Unmarshal([]byte(e.Args), &c.args); err != nil {
					return Derived{}, fmt.Errorf("run %q, seq %d: args: %w", t.RunID, e.Seq, err)
				}
				keys := make([]string, 0, len(c.args))
				for k := range c.args {
					keys = append(keys, k)
				}
				sort.Strings(keys)
				for _, k := range keys {
					var str string
					if json.Unmarshal(c.args[k], &str) == nil {
						text.WriteString(str)
						text.WriteByte('\n')
					}
				}
			}
			calls = append(calls, c)
		}
	}
	for name, r := range depthRank {
		if r == best {
			d.Chosen = name
		}
	}
	rb := s.rubrics[[2]string{t.Scenario, t.Task}]
	if rb == nil {
		return d, nil
	}
	met := func(c toolCheck) bool {
		for _, cl := range calls {
			if cl.tool != c.Tool {
				continue
			}
			ok := true
			for k, m := range c.Args {
				v, has := cl.args[k]
				if !has {
					ok = false
					break
				}
				if m.re != nil {
					var str string
					if json.Unmarshal(v, &str) != nil {
						str = string(v)
					}
					ok = m.re.MatchString(str)
				} else {
					ok = canonical(v) == m.value
				}
				if !ok {
					break
				}
			}
			if ok {
				return true
			}
		}
		return false
	}
	for i, list := range [][]toolCheck{rb.Evidence, rb.Outputs} {
		if len(list) == 0 {
			continue
		}
		n := 0
		for _, c := range list {
			if met(c) {
				n++
			}
		}
		f := float64(n) / float64(len(list))
		d.Rules[i] = &f
	}
	if len(rb.Constraints) > 0 {
		all := text.String()
		n := 0
		for _, c := range rb.Constraints {
			switch {
			case c.re != nil:
				if c.re.MatchString(all) {
					n++
				}
			case c.notContains != "":
				if !strings.Contains(all, c.notContains) {
					n++
				}
			default:
				if strings.Contains(all, c.contains) {
					n++
				}
			}
		}
		f := float64(n) / float64(len(rb.Constraints))
		d.Rules[2] = &f
	}
	return d, nil
}

// Disagreement is a logged value that the trajectory contradicts.
type Disagreement struct {
	RunID, Task, Field string
	Logged, Derived    string
}

// RuleFields name the rule components in disagreements.
var RuleFields = [3]string{"rules.evidence", "rules.outputs", "rules.constraints"}

// Disagreements lists where the logged values of t differ from d. A value
// not logged is no disagreement (the derived one is used).
func Disagreements(t *rows.ScoreTask, d Derived) []Disagreement {
	var out []Disagreement
	if t.LoggedExpected != "" && t.LoggedExpected != d.Expected {
		out = append(out, Disagreement{t.RunID, t.Task, "expected_depth", t.LoggedExpected, d.Expected})
	}
	if t.LoggedChosen != "" && t.LoggedChosen != d.Chosen {
		out = append(out, Disagreement{t.RunID, t.Task, "chosen_depth", t.LoggedChosen, d.Chosen})
	}
	if t.RulesLogged {
		for i, lr := range t.LoggedRules {
			dr := d.Rules[i]
			switch {
			case lr.Valid && dr == nil:
				out = append(out, Disagreement{t.RunID, t.Task, RuleFields[i], fmtRule(lr.Float64), "null (no checks)"})
			case !lr.Valid && dr != nil:
				out = append(out, Disagreement{t.RunID, t.Task, RuleFields[i], "null", fmtRule(*dr)})
			case lr.Valid && math.Abs(lr.Float64-*dr) > 1e-9:
				out = append(out, Disagreement{t.RunID, t.Task, RuleFields[i], fmtRule(lr.Float64), fmtRule(*dr)})
			}
		}
	}
	return out
}

func fmtRule(f float64) string { return strconv.FormatFloat(f, 'g', 6, 64) }

// Effective picks the values the metrics use: logged ones (where logged)
// unless preferDerived.
func Effective(t *rows.ScoreTask, d Derived, preferDerived bool) rows.TaskScore {
	s := rows.TaskScore{RunID: t.RunID, Task: t.Task, DerivedExpected: d.Expected, DerivedChosen: d.Chosen, DerivedRules: d.Rules,
		EffectiveExpected: d.Expected, EffectiveChosen: d.Chosen, EffectiveRules: d.Rules, Prefer: "derived"}
	if preferDerived {
		return s
	}
	s.Prefer = "logged"
	if t.LoggedExpected != "" {
		s.EffectiveExpected = t.LoggedExpected
	}
	if t.LoggedChosen != "" {
		s.EffectiveChosen = t.LoggedChosen
	}
	if t.RulesLogged {
		for i, lr := range t.LoggedRules {
			if lr.Valid {
				v := lr.Float64
				s.EffectiveRules[i] = &v
			} else {
				s.EffectiveRules[i] = nil
			}
		}
	}
	return s
}
