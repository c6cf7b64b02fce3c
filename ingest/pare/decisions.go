package pare

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"
)

// Decision classes, as PARE names them.
const (
	Accept        = "accept"
	Reject        = "reject"
	GatherContext = "gather_context"
)

// DecisionPoint is a proposal the observe-mode agent sent the user before
// the execute agent's first tool call, paired with the user's next accept
// or reject.
type DecisionPoint struct {
	SampleID     string // <scenario>_run_<n>_p<k>, k counting the proposals
	ScenarioID   string
	RunNumber    int
	Proposal     string
	ProposalTime float64
	DecisionTime float64
	// Class is accept or reject when the user answered straight away,
	// gather_context when it made other tool calls first.
	Class string
	// Final is whether the proposal was accepted in the end.
	Final bool
	// InputMessages is the number of messages of the user model's input
	// when it first saw the proposal (PARE's sample llm_input).
	// ContextCalls counts the user's tool calls between the proposal and
	// the decision; ContextMessages the messages its input gained in
	// between (PARE's gather_context_delta; -1 for a direct decision or
	// when the input at the decision is not found); DecisionMessages the
	// messages of that input (-1 when not found).
	InputMessages    int
	ContextCalls     int
	ContextMessages  int
	DecisionMessages int
	MetaTask         string
}

// IsPARE says whether the trace is PARE's (a user model and an observing
// agent) rather than Meta-ARE's (one agent).
func (t *Trace) IsPARE() bool {
	return t.ModelIDs["observe"] != "" || t.ModelIDs["user"] != "" ||
		strings.Contains(t.AgentID, "PAS") || strings.Contains(t.AgentID, "PARE") || strings.Contains(t.AgentID, "proactive")
}

// How far PARE looks for the user model's input around a proposal and a
// decision (in log entries).
const (
	forwardWindow  = 50
	backwardWindow = 30
)

// DecisionPoints finds the trace's decision points as PARE defines them.
// A trace PARE skips (Skip is set) has none. Agents are told apart by
// their system prompts (the user simulator, the observing assistant, the
// executing assistant).
func (t *Trace) DecisionPoints() ([]DecisionPoint, error) {
	if t.Skip != "" {
		return nil, nil
	}
	logs := t.Logs
	agents := map[string]string{}
	meta := ""
	for _, l := range logs {
		if l.Type != "system_prompt" {
			continue
		}
		content := l.Text
		switch {
		case strings.Contains(content, "simulating a real human user"):
			agents["user"] = l.AgentID
			if i := strings.Index(content, "<meta_task_description>"); i >= 0 {
				rest := content[i+len("<meta_task_description>"):]
				if j := strings.Index(rest, "</meta_task_description>"); j >= 0 {
					meta = strings.TrimSpace(rest[:j])
				}
			}
		case strings.Contains(content, "proactive assistant that monitors"):
			agents["observe"] = l.AgentID
		case strings.Contains(content, "proactive assistant executing"):
			agents["execute"] = l.AgentID
		}
	}
	user, observe := agents["user"], agents["observe"]
	if user == "" || observe == "" {
		return nil, errors.New("cannot tell the user and the observing agent apart (no system prompts naming them)")
	}
	cutoff := math.Inf(1)
	if ex := agents["execute"]; ex != "" {
		for _, l := range logs {
			if l.Type == "tool_call" && l.AgentID == ex {
				cutoff = l.Time
				break
			}
		}
	}
	scenario := t.ScenarioID
	if scenario == "" {
		stem := strings.TrimSuffix(filepath.Base(t.Path), filepath.Ext(t.Path))
		if i := strings.LastIndex(stem, "_run_"); i > 0 {
			stem = stem[:i]
		}
		scenario = stem
	}
	run := 1
	if t.RunNumber != nil {
		run = *t.RunNumber
	}
	isUserCall := func(l Log) bool { return l.Type == "tool_call" && l.AgentID == user }
	var out []DecisionPoint
	k := -1 // proposal number
	for i, l := range logs {
		if l.Time >= cutoff {
			break
		}
		if !(l.Type == "tool_call" && l.AgentID == observe && strings.Contains(l.ToolName, "send_message_to_user")) {
			continue
		}
		k++
		// The user's next accept or reject, before the cutoff.
		d := -1
		for j := i + 1; j < len(logs) && logs[j].Time < cutoff; j++ {
			if isUserCall(logs[j]) && (strings.Contains(logs[j].ToolName, "accept_proposal") || strings.Contains(logs[j].ToolName, "reject_proposal")) {
				d = j
				break
			}
		}
		if d < 0 {
			continue // a proposal nobody answered: not a decision point
		}
		dp := DecisionPoint{SampleID: fmt.Sprintf("%s_run_%d_p%d", scenario, run, k), ScenarioID: scenario, RunNumber: run,
			ProposalTime: l.Time, DecisionTime: logs[d].Time, Final: strings.Contains(logs[d].ToolName, "accept_proposal"),
			ContextMessages: -1, DecisionMessages: -1, MetaTask: meta}
		dp.Proposal = l.Text
		for j := i + 1; j < d; j++ {
			if isUserCall(logs[j]) {
				dp.ContextCalls++
			}
		}
		switch {
		case dp.ContextCalls > 0:
			dp.Class = GatherContext
		case dp.Final:
			dp.Class = Accept
		default:
			dp.Class = Reject
		}
		// The user model's input after the proposal; PARE drops a decision
		// point without one.
		proposalInput := -1
		for j := i + 1; j < len(logs) && j < i+forwardWindow; j++ {
			if logs[j].Type == "llm_input" && logs[j].AgentID == user && logs[j].Messages >= 0 {
				proposalInput = logs[j].Messages
				break
			}
		}
		if proposalInput < 0 {
			continue
		}
		dp.InputMessages = proposalInput
		for j := d - 1; j > d-backwardWindow && j > 0; j-- {
			if logs[j].Type == "llm_input" && logs[j].AgentID == user && logs[j].Messages >= 0 {
				dp.DecisionMessages = logs[j].Messages
				if dp.Class == GatherContext {
					dp.ContextMessages = max(0, logs[j].Messages-proposalInput)
				}
				break
			}
		}
		out = append(out, dp)
	}
	return out, nil
}
