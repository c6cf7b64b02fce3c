// Package pare reads the run logs of PARE (Proactive Agent Research
// Environment) and Meta-ARE: the "hf" trace export (JSON with version
// are_simulation_v1), and finds PARE's decision points in them.
package pare

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
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
	Raw  map[string]json.RawMessage // the source's own top-level fields
}

// Event is a completed event: who did what with which app.
type Event struct {
	Time          float64
	Type          string // ENV, USER, AGENT, …
	ID            string
	App, AppClass string
	Function      string
	Operation     string // READ or WRITE, when given
	Args          map[string]any
	ProactiveMode string // observe, execute, or ""
	Turn          *int
	Return        string
	Exception     string
}

// Log is a world-log entry (decoded from its JSON string).
type Log struct {
	Time     float64
	Type     string // log_type: tool_call, llm_input, system_prompt, …
	AgentID  string
	ToolName string
	ToolArgs map[string]any
	Content  json.RawMessage
	Index    int // position in the file
}

// TraceError is a trace that cannot be read, with where.
type TraceError struct {
	Path, Field, Msg string
	Offset           int64 // byte offset of a syntax error, 0 when none
}

func (e *TraceError) Error() string {
	loc := e.Path
	if e.Offset > 0 {
		loc = fmt.Sprintf("%s: byte %d", e.Path, e.Offset)
	}
	if e.Field != "" {
		return fmt.Sprintf("%s: field %s: %s", loc, e.Field, e.Msg)
	}
	return fmt.Sprintf("%s: %s", loc, e.Msg)
}

// ReadTraceFile reads and checks a trace.
func ReadTraceFile(path string) (*Trace, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, &TraceError{Path: path, Msg: "cannot read: " + err.Error()}
	}
	return ReadTrace(path, b)
}

// ReadTrace decodes a trace's bytes; path names it in errors.
func ReadTrace(path string, b []byte) (*Trace, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, &TraceError{Path: path, Offset: se.Offset, Msg: "not JSON (truncated?): " + se.Error()}
		}
		return nil, &TraceError{Path: path, Msg: "not a JSON object: " + err.Error()}
	}
	t := &Trace{Path: path, Raw: top, Apps: map[string]string{}, ModelIDs: map[string]string{}}
	var version string
	if err := json.Unmarshal(top["version"], &version); err != nil || version != Version {
		return nil, &TraceError{Path: path, Field: "version", Msg: fmt.Sprintf("expected %q, found %s", Version, orNone(top["version"]))}
	}
	if strings.Contains(string(b), "RateLimitError") {
		t.Skip = "the run hit a RateLimitError (PARE leaves such traces out)"
	}
	// Metadata: the scenario, the run number, the models.
	var meta struct {
		Definition struct {
			ScenarioID string `json:"scenario_id"`
			RunNumber  *int   `json:"run_number"`
		} `json:"definition"`
		Simulation struct {
			AgentID string `json:"agent_id"`
			ModelID string `json:"model_id"`
		} `json:"simulation"`
	}
	if raw, ok := top["metadata"]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &meta); err != nil {
			return nil, &TraceError{Path: path, Field: "metadata", Msg: err.Error()}
		}
	}
	t.ScenarioID, t.RunNumber, t.AgentID = meta.Definition.ScenarioID, meta.Definition.RunNumber, meta.Simulation.AgentID
	for _, part := range strings.Split(meta.Simulation.ModelID, "|") {
		if role, model, ok := strings.Cut(part, ":"); ok {
			t.ModelIDs[role] = model
		} else if part != "" {
			t.ModelIDs["agent"] = part
		}
	}
	var apps []struct {
		Name      string `json:"name"`
		ClassName string `json:"class_name"`
	}
	if raw, ok := top["apps"]; ok {
		if err := json.Unmarshal(raw, &apps); err != nil {
			return nil, &TraceError{Path: path, Field: "apps", Msg: err.Error()}
		}
	}
	for _, a := range apps {
		t.Apps[a.Name] = a.ClassName
	}
	if err := t.readEvents(top["completed_events"]); err != nil {
		return nil, err
	}
	if err := t.readLogs(top["world_logs"]); err != nil {
		return nil, err
	}
	return t, nil
}

func orNone(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "none"
	}
	s := string(raw)
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return s
}

func (t *Trace) readEvents(raw json.RawMessage) error {
	if len(raw) == 0 {
		return &TraceError{Path: t.Path, Field: "completed_events", Msg: "missing"}
	}
	var evs []struct {
		EventType string  `json:"event_type"`
		EventTime float64 `json:"event_time"`
		EventID   string  `json:"event_id"`
		Action    *struct {
			App           string `json:"app"`
			Function      string `json:"function"`
			OperationType string `json:"operation_type"`
			Args          []struct {
				Name  string `json:"name"`
				Value any    `json:"value"`
			} `json:"args"`
		} `json:"action"`
		Metadata *struct {
			ReturnValue   any     `json:"return_value"`
			Exception     *string `json:"exception"`
			ProactiveMode *string `json:"proactive_mode"`
			TurnNumber    *int    `json:"turn_number"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(raw, &evs); err != nil {
		return &TraceError{Path: t.Path, Field: "completed_events", Msg: err.Error()}
	}
	for i, e := range evs {
		ev := Event{Time: e.EventTime, Type: e.EventType, ID: e.EventID}
		if e.Action != nil {
			ev.App, ev.Function, ev.Operation = e.Action.App, e.Action.Function, e.Action.OperationType
			ev.AppClass = t.Apps[e.Action.App]
			if ev.AppClass == "" {
				ev.AppClass = e.Action.App
			}
			ev.Args = map[string]any{}
			for _, a := range e.Action.Args {
				ev.Args[a.Name] = a.Value
			}
		}
		if m := e.Metadata; m != nil {
			if m.ProactiveMode != nil {
				ev.ProactiveMode = *m.ProactiveMode
			}
			ev.Turn = m.TurnNumber
			if m.Exception != nil {
				ev.Exception = *m.Exception
			}
			if m.ReturnValue != nil {
				ev.Return = fmt.Sprint(m.ReturnValue)
			}
		}
		if ev.Type == "" {
			return &TraceError{Path: t.Path, Field: fmt.Sprintf("completed_events[%d].event_type", i), Msg: "missing"}
		}
		t.Events = append(t.Events, ev)
	}
	sort.SliceStable(t.Events, func(a, b int) bool { return t.Events[a].Time < t.Events[b].Time })
	return nil
}

// readLogs decodes the world logs: each entry is a JSON string holding a
// JSON object (older exports store the object itself).
func (t *Trace) readLogs(raw json.RawMessage) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var entries []json.RawMessage
	if err := json.Unmarshal(raw, &entries); err != nil {
		return &TraceError{Path: t.Path, Field: "world_logs", Msg: err.Error()}
	}
	for i, e := range entries {
		obj := []byte(e)
		if len(e) > 0 && e[0] == '"' {
			var s string
			if err := json.Unmarshal(e, &s); err != nil {
				return &TraceError{Path: t.Path, Field: fmt.Sprintf("world_logs[%d]", i), Msg: err.Error()}
			}
			obj = []byte(s)
		}
		var l struct {
			Timestamp     float64         `json:"timestamp"`
			LogType       string          `json:"log_type"`
			AgentID       string          `json:"agent_id"`
			ToolName      string          `json:"tool_name"`
			ToolArguments any             `json:"tool_arguments"`
			Content       json.RawMessage `json:"content"`
		}
		if err := json.Unmarshal(obj, &l); err != nil {
			return &TraceError{Path: t.Path, Field: fmt.Sprintf("world_logs[%d]", i), Msg: "not a JSON object: " + err.Error()}
		}
		args, _ := l.ToolArguments.(map[string]any)
		t.Logs = append(t.Logs, Log{Time: l.Timestamp, Type: l.LogType, AgentID: l.AgentID, ToolName: l.ToolName,
			ToolArgs: args, Content: l.Content, Index: i})
	}
	sort.SliceStable(t.Logs, func(a, b int) bool { return t.Logs[a].Time < t.Logs[b].Time })
	return nil
}
