// Package pare reads the run logs of PARE (Proactive Agent Research
// Environment) and Meta-ARE: the "hf" trace export (JSON with version
// are_simulation_v1), and finds PARE's decision points in them.
package pare

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/valyala/fastjson"

	"github.com/gymlens/gymlens/ingest/runlog"
)

// Version is the trace format version this package reads.
const Version = "are_simulation_v1"

// Trace is one PARE or Meta-ARE trace.
type Trace struct {
	Path       string
	ScenarioID string
	RunNumber  *int              // nil: not given
	ModelIDs   map[string]string // role (user, observe, execute, …) → model id
	AgentID    string
	Apps       map[string]string // app instance name → class name
	Events     []Event           // completed events, in time order
	Logs       []Log             // world logs, in time order (stable)
	// Skip says why PARE itself leaves this trace out ("" when it does
	// not): a trace that hit the provider's rate limit.
	Skip string
	// Metadata is the trace's own metadata object, as written.
	Metadata json.RawMessage
	// Capability is metadata.definition.config: the Gaia2 capability
	// (execution, search, adaptability, time, ambiguity, mini) of a
	// Meta-ARE run; "" when not given.
	Capability string
	// ToolNoise and EnvNoise are the definition's has_tool_augmentation
	// and has_env_events_augmentation flags.
	ToolNoise, EnvNoise bool
	Tokens              Tokens
	// Validation is the trace's own verdict on the run
	// (metadata.annotation.validation_decision: Valid or Invalid; "" when
	// not given); HasException is metadata.definition.has_exception.
	Validation   string
	HasException bool
}

// Tokens are the token counts of a run's llm_output logs. Exports that
// do not record usage write zeros in every field: such counts are
// unknown, not zero (Known false).
type Tokens struct {
	Calls                         int // llm_output entries
	Prompt, Completion, Reasoning int64
	Known                         bool // some entry has a non-zero count
}

// Event is a completed event: who did what with which app.
type Event struct {
	Time          float64
	Type          string // ENV, USER, AGENT, …
	ID            string
	App, AppClass string
	Function      string
	Operation     string          // READ or WRITE, when given
	Args          json.RawMessage // the arguments as a JSON object, name → value
	ProactiveMode string
	Turn          *int
	Return        string
	Exception     string
}

// Log is what gymlens keeps of a world-log entry (decoded from its JSON
// string): enough to find decision points.
type Log struct {
	Time     float64
	Type     string // log_type: tool_call, llm_input, system_prompt, …
	AgentID  string
	ToolName string
	Text     string // a system prompt's content, or a tool call's "content" argument
	Messages int    // an llm_input's number of messages (-1: not one, or unreadable)
	Index    int    // position in the file
}

// TraceError is a trace that cannot be read, with where.
type TraceError struct {
	Path, Field, Msg string
	Line, Column     int // 0: not known
}

func (e *TraceError) Error() string {
	at := e.Path
	if e.Line > 0 {
		at += fmt.Sprintf(":%d:%d", e.Line, e.Column)
	}
	if e.Field != "" {
		return fmt.Sprintf("%s: field %s: %s", at, e.Field, e.Msg)
	}
	return fmt.Sprintf("%s: %s", at, e.Msg)
}

// ReadTraceFile reads and checks a trace.
func ReadTraceFile(path string) (*Trace, error) {
	b, err := runlog.ReadWhole(path)
	if err != nil {
		return nil, &TraceError{Path: path, Msg: strings.TrimPrefix(err.Error(), path+": ")}
	}
	return ReadTrace(path, b)
}

// ReadTrace decodes a trace's bytes; path names it in errors. It parses
// with fastjson (a trace is mostly world-log strings that hold JSON
// again), keeping only what gymlens stores.
func ReadTrace(path string, b []byte) (*Trace, error) {
	var p fastjson.Parser
	top, err := p.ParseBytes(b)
	if err != nil {
		msg := "not JSON: " + err.Error()
		if t := bytes.TrimSpace(b); len(t) > 0 && t[0] == '{' {
			msg = "not JSON (truncated?): " + err.Error()
		}
		return nil, &TraceError{Path: path, Msg: msg}
	}
	if err := runlog.CheckJSON(b); err != nil {
		e := runlog.At(path, b, err)
		return nil, &TraceError{Path: path, Msg: e.Msg, Line: e.Line, Column: e.Column}
	}
	if k := runlog.DuplicateKey(top); k != "" {
		return nil, &TraceError{Path: path, Msg: fmt.Sprintf("field %q: the key occurs twice in one object (JSON readers differ on which one counts)", k)}
	}
	if top.Type() != fastjson.TypeObject {
		return nil, &TraceError{Path: path, Msg: "not a JSON object"}
	}
	t := &Trace{Path: path, Apps: map[string]string{}, ModelIDs: map[string]string{}}
	if v := top.Get("version"); v == nil || string(v.GetStringBytes()) != Version {
		found := "none"
		if v != nil {
			found = v.String()
		}
		return nil, &TraceError{Path: path, Field: "version", Msg: fmt.Sprintf("expected %q, found %s", Version, found)}
	}
	if bytes.Contains(b, []byte("RateLimitError")) {
		t.Skip = "the run hit a RateLimitError (PARE leaves such traces out)"
	}
	if m := top.Get("metadata"); m != nil && m.Type() == fastjson.TypeObject {
		t.Metadata = m.MarshalTo(nil)
		t.ScenarioID = string(m.GetStringBytes("definition", "scenario_id"))
		if rn := m.Get("definition", "run_number"); rn != nil && rn.Type() == fastjson.TypeNumber {
			n := rn.GetInt()
			t.RunNumber = &n
		}
		t.AgentID = string(m.GetStringBytes("simulation", "agent_id"))
		t.Capability = string(m.GetStringBytes("definition", "config"))
		t.ToolNoise = m.GetBool("definition", "has_tool_augmentation")
		t.EnvNoise = m.GetBool("definition", "has_env_events_augmentation")
		t.HasException = m.GetBool("definition", "has_exception")
		t.Validation = string(m.GetStringBytes("annotation", "validation_decision"))
		for _, part := range strings.Split(string(m.GetStringBytes("simulation", "model_id")), "|") {
			if role, model, ok := strings.Cut(part, ":"); ok && !strings.Contains(role, "/") && role != "arn" {
				t.ModelIDs[role] = model
			} else if part != "" {
				t.ModelIDs["agent"] = part
			}
		}
	}
	for _, a := range top.GetArray("apps") {
		t.Apps[string(a.GetStringBytes("name"))] = string(a.GetStringBytes("class_name"))
	}
	if err := t.readEvents(top.Get("completed_events")); err != nil {
		return nil, err
	}
	if err := t.readLogs(top.Get("world_logs")); err != nil {
		return nil, err
	}
	return t, nil
}

func (t *Trace) readEvents(v *fastjson.Value) error {
	if v == nil {
		return &TraceError{Path: t.Path, Field: "completed_events", Msg: "missing"}
	}
	evs, err := v.Array()
	if err != nil {
		return &TraceError{Path: t.Path, Field: "completed_events", Msg: "expected a list, found " + v.Type().String()}
	}
	var arena fastjson.Arena
	for i, e := range evs {
		ev := Event{Time: e.GetFloat64("event_time"), Type: string(e.GetStringBytes("event_type")), ID: string(e.GetStringBytes("event_id"))}
		if ev.Type == "" {
			return &TraceError{Path: t.Path, Field: fmt.Sprintf("completed_events[%d].event_type", i), Msg: "missing"}
		}
		if a := e.Get("action"); a != nil && a.Type() == fastjson.TypeObject {
			ev.App, ev.Function = string(a.GetStringBytes("app")), string(a.GetStringBytes("function"))
			ev.Operation = string(a.GetStringBytes("operation_type"))
			ev.AppClass = t.Apps[ev.App]
			if ev.AppClass == "" {
				ev.AppClass = ev.App
			}
			arena.Reset()
			obj := arena.NewObject()
			for _, arg := range a.GetArray("args") {
				val := arg.Get("value")
				if val == nil {
					val = arena.NewNull()
				}
				obj.Set(string(arg.GetStringBytes("name")), val)
			}
			ev.Args = obj.MarshalTo(nil)
		}
		if m := e.Get("metadata"); m != nil && m.Type() == fastjson.TypeObject {
			ev.ProactiveMode = string(m.GetStringBytes("proactive_mode"))
			if tn := m.Get("turn_number"); tn != nil && tn.Type() == fastjson.TypeNumber {
				n := tn.GetInt()
				ev.Turn = &n
			}
			ev.Exception = string(m.GetStringBytes("exception"))
			if rv := m.Get("return_value"); rv != nil && rv.Type() != fastjson.TypeNull {
				if rv.Type() == fastjson.TypeString {
					ev.Return = string(rv.GetStringBytes())
				} else {
					ev.Return = rv.String()
				}
			}
		}
		t.Events = append(t.Events, ev)
	}
	sort.SliceStable(t.Events, func(a, b int) bool { return t.Events[a].Time < t.Events[b].Time })
	return nil
}

// readLogs decodes the world logs: each entry is a JSON string holding a
// JSON object (older exports store the object itself).
func (t *Trace) readLogs(v *fastjson.Value) error {
	if v == nil || v.Type() == fastjson.TypeNull {
		return nil
	}
	entries, err := v.Array()
	if err != nil {
		return &TraceError{Path: t.Path, Field: "world_logs", Msg: "expected a list, found " + v.Type().String()}
	}
	var p fastjson.Parser
	for i, e := range entries {
		l := e
		if e.Type() == fastjson.TypeString {
			if l, err = p.ParseBytes(e.GetStringBytes()); err != nil {
				return &TraceError{Path: t.Path, Field: fmt.Sprintf("world_logs[%d]", i), Msg: "not a JSON object: " + err.Error()}
			}
		}
		if l.Type() != fastjson.TypeObject {
			return &TraceError{Path: t.Path, Field: fmt.Sprintf("world_logs[%d]", i), Msg: "not a JSON object"}
		}
		lg := Log{Time: l.GetFloat64("timestamp"), Type: string(l.GetStringBytes("log_type")), AgentID: string(l.GetStringBytes("agent_id")),
			ToolName: string(l.GetStringBytes("tool_name")), Messages: -1, Index: i}
		switch lg.Type {
		case "system_prompt":
			lg.Text = string(l.GetStringBytes("content"))
		case "tool_call":
			lg.Text = string(l.GetStringBytes("tool_arguments", "content"))
		case "llm_input":
			c := l.Get("content")
			if c != nil && c.Type() == fastjson.TypeString {
				var q fastjson.Parser
				c, _ = q.ParseBytes(c.GetStringBytes())
			}
			if c != nil && c.Type() == fastjson.TypeArray {
				lg.Messages = len(c.GetArray())
			}
		case "llm_output":
			t.Tokens.Calls++
			p, c, r := l.GetInt64("prompt_tokens"), l.GetInt64("completion_tokens"), l.GetInt64("reasoning_tokens")
			if p < 0 || c < 0 || r < 0 {
				return &TraceError{Path: t.Path, Field: fmt.Sprintf("world_logs[%d]", i), Msg: "negative token count"}
			}
			t.Tokens.Prompt += p
			t.Tokens.Completion += c
			t.Tokens.Reasoning += r
			if p+c+r+l.GetInt64("total_tokens") > 0 {
				t.Tokens.Known = true
			}
		}
		t.Logs = append(t.Logs, lg)
	}
	sort.SliceStable(t.Logs, func(a, b int) bool { return t.Logs[a].Time < t.Logs[b].Time })
	return nil
}
