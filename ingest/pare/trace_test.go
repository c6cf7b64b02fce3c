package pare

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const fixtures = "testdata"

func fixture(t *testing.T, name string) *Trace {
	t.Helper()
	tr, err := ReadTraceFile(filepath.Join(fixtures, name))
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// The facts PARE's own tests establish about its fixture traces
// (testdata/README.md).
func TestFixtureDecisionPoints(t *testing.T) {
	tr := fixture(t, "add_missing_group_contacts_run_1.json")
	dps, err := tr.DecisionPoints()
	if err != nil {
		t.Fatal(err)
	}
	if len(dps) != 1 || dps[0].SampleID != "add_missing_group_contacts_run_1_p0" || dps[0].Class != Reject || dps[0].Final ||
		dps[0].ContextCalls != 0 || dps[0].ContextMessages != -1 {
		t.Errorf("add_missing_group_contacts: %+v", dps)
	}
	tr = fixture(t, "apartment_feature_comparison_query_run_4.json")
	dps, err = tr.DecisionPoints()
	if err != nil {
		t.Fatal(err)
	}
	if len(dps) != 1 || dps[0].Class != GatherContext || !dps[0].Final || dps[0].ContextCalls != 1 || dps[0].ContextMessages != 3 ||
		dps[0].InputMessages != 8 || dps[0].DecisionMessages != 11 {
		t.Errorf("apartment_feature_comparison: %+v", dps)
	}
	if !strings.Contains(dps[0].Proposal, "Riverside Lofts") || dps[0].DecisionTime <= dps[0].ProposalTime {
		t.Errorf("apartment_feature_comparison: proposal %q, times %v %v", dps[0].Proposal, dps[0].ProposalTime, dps[0].DecisionTime)
	}
	// The rate-limited trace is skipped with a note, not an error.
	tr = fixture(t, "urgent_meeting_bumps_personal_errand_run_3.json")
	dps, err = tr.DecisionPoints()
	if err != nil || len(dps) != 0 || !strings.Contains(tr.Skip, "RateLimitError") {
		t.Errorf("urgent_meeting: %v, %d decision points, skip %q", err, len(dps), tr.Skip)
	}
}

// Metadata, apps and events as the trace holds them.
func TestFixtureTrace(t *testing.T) {
	tr := fixture(t, "apartment_feature_comparison_query_run_4.json")
	if tr.ScenarioID != "apartment_feature_comparison_query" || tr.RunNumber == nil || *tr.RunNumber != 4 {
		t.Errorf("scenario %q run %v", tr.ScenarioID, tr.RunNumber)
	}
	if tr.ModelIDs["user"] != "gpt-5-mini" || !strings.Contains(tr.ModelIDs["observe"], "claude-sonnet-4-5") || tr.ModelIDs["execute"] == "" {
		t.Errorf("models %v", tr.ModelIDs)
	}
	if len(tr.Events) != 25 || tr.Apps["Messages"] != "StatefulMessagingApp" {
		t.Errorf("%d events, apps %v", len(tr.Events), tr.Apps)
	}
	var proposals, accepts int
	for i, e := range tr.Events {
		if i > 0 && e.Time < tr.Events[i-1].Time {
			t.Fatal("events out of time order")
		}
		if e.Type == "AGENT" && e.Function == "send_message_to_user" && e.ProactiveMode == "observe" {
			proposals++
		}
		if e.Type == "USER" && e.Function == "accept_proposal" {
			accepts++
		}
	}
	if proposals != 1 || accepts != 1 || tr.Events[0].AppClass != "StatefulMessagingApp" {
		t.Errorf("%d proposals, %d accepts, first event app class %q", proposals, accepts, tr.Events[0].AppClass)
	}
	// The world logs are not in time order in the file; they are read
	// into it, each keeping its position.
	unordered := false
	for i, l := range tr.Logs {
		if i > 0 && l.Time < tr.Logs[i-1].Time {
			t.Fatal("logs out of time order")
		}
		if i > 0 && l.Index < tr.Logs[i-1].Index {
			unordered = true
		}
	}
	if !unordered {
		t.Error("expected the fixture's world logs to be out of order in the file")
	}
}

// Small hand-made traces: PAS and PARE class names, a null run number,
// bad files.
func TestHandMadeTraces(t *testing.T) {
	logs := func(names ...string) string {
		prompts := `"{\"timestamp\": 1.0, \"log_type\": \"system_prompt\", \"agent_id\": \"u\", \"content\": \"You are simulating a real human user\"}",` +
			`"{\"timestamp\": 1.1, \"log_type\": \"system_prompt\", \"agent_id\": \"o\", \"content\": \"You are a proactive assistant that monitors\"}",` +
			`"{\"timestamp\": 5.0, \"log_type\": \"tool_call\", \"agent_id\": \"u\", \"tool_name\": \"` + names[1] + `__accept_proposal\", \"tool_arguments\": {}}",` +
			`"{\"timestamp\": 2.0, \"log_type\": \"tool_call\", \"agent_id\": \"o\", \"tool_name\": \"` + names[0] + `__send_message_to_user\", \"tool_arguments\": {\"content\": \"Shall I?\"}}",` +
			`"{\"timestamp\": 3.0, \"log_type\": \"llm_input\", \"agent_id\": \"u\", \"content\": [{\"role\": \"user\"}]}"`
		return prompts
	}
	for _, prefix := range []string{"PASAgentUserInterface", "PAREAgentUserInterface"} {
		src := `{"version": "are_simulation_v1", "apps": [{"name": "UI", "class_name": "` + prefix + `"}],
			"completed_events": [], "metadata": {"definition": {"scenario_id": "s", "run_number": null}},
			"world_logs": [` + logs(prefix, prefix) + `]}`
		tr, err := ReadTrace("hand.json", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		dps, err := tr.DecisionPoints()
		if err != nil || len(dps) != 1 || dps[0].SampleID != "s_run_1_p0" || dps[0].Class != Accept || dps[0].Proposal != "Shall I?" {
			t.Errorf("%s: %v %+v", prefix, err, dps)
		}
	}
	for name, c := range map[string]struct{ src, want string }{
		"truncated": {`{"version": "are_simulation_v1", "world_logs": [`, "not JSON (truncated?)"},
		"not json":  {`version: are_simulation_v1`, "not JSON"},
		"version":   {`{"version": "other", "completed_events": []}`, `field version: expected "are_simulation_v1"`},
		"events":    {`{"version": "are_simulation_v1", "completed_events": {}}`, "field completed_events"},
		"log":       {`{"version": "are_simulation_v1", "completed_events": [], "world_logs": ["{not"]}`, "field world_logs[0]"},
	} {
		_, err := ReadTrace(name+".json", []byte(c.src))
		var te *TraceError
		if !errors.As(err, &te) || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), name+".json") {
			t.Errorf("%s: %v; want %q", name, err, c.want)
		}
	}
	if _, err := ReadTraceFile(filepath.Join(t.TempDir(), "none.json")); err == nil {
		t.Error("a missing file read")
	}
	_ = os.ErrNotExist
}

// Token counts: PARE's exports write zeros in every usage field (so the
// fixtures' counts are unknown, not zero); a trace with counts sums them.
func TestTokens(t *testing.T) {
	tr := fixture(t, "add_missing_group_contacts_run_1.json")
	if tr.Tokens.Known || tr.Tokens.Calls != 22 || tr.Tokens.Prompt != 0 {
		t.Errorf("fixture: %+v", tr.Tokens)
	}
	// The traces' own verdicts.
	if tr.Validation != "Invalid" || tr.HasException || fixture(t, "apartment_feature_comparison_query_run_4.json").Validation != "Valid" {
		t.Errorf("verdicts: %q %v", tr.Validation, tr.HasException)
	}
	out := func(p, c, r int) string {
		return fmt.Sprintf(`"{\"timestamp\": 1.0, \"log_type\": \"llm_output\", \"agent_id\": \"a\", \"content\": \"x\", \"prompt_tokens\": %d, \"completion_tokens\": %d, \"reasoning_tokens\": %d, \"total_tokens\": %d}"`, p, c, r, p+c)
	}
	src := `{"version": "are_simulation_v1", "completed_events": [], "metadata": {"definition": {"scenario_id": "s", "config": "search",
		"has_tool_augmentation": true}}, "world_logs": [` + out(100, 20, 5) + `, ` + out(0, 0, 0) + `, ` + out(50, 10, 0) + `]}`
	tr2, err := ReadTrace("tokens.json", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if k := tr2.Tokens; !k.Known || k.Calls != 3 || k.Prompt != 150 || k.Completion != 30 || k.Reasoning != 5 {
		t.Errorf("%+v", k)
	}
	if tr2.Capability != "search" || !tr2.ToolNoise || tr2.EnvNoise {
		t.Errorf("%q %v %v", tr2.Capability, tr2.ToolNoise, tr2.EnvNoise)
	}
	if _, err := ReadTrace("neg.json", []byte(`{"version": "are_simulation_v1", "completed_events": [], "world_logs": [`+out(-1, 0, 0)+`]}`)); err == nil ||
		!strings.Contains(err.Error(), "neg.json: field world_logs[0]: negative token count") {
		t.Errorf("negative: %v", err)
	}
}
