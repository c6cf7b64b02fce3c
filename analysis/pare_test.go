package analysis

import (
	"math"
	"testing"

	"github.com/gymlens/gymlens/ingest/rows"
)

// A hand-made run: an environment trigger, a rejected proposal, a second
// proposal accepted after a look around, an accept after an execute-mode
// message (not counted: PARE counts accepts of observe-mode proposals),
// reads and writes of both agents.
func TestPARERunValues(t *testing.T) {
	r := &rows.PARERun{Events: []rows.PAREEvent{
		{T: 10, Actor: "env", Function: "create_and_add_message", Operation: "WRITE", Turn: -1},
		{T: 14, Actor: "agent", Function: "list_apartments", Operation: "READ", Mode: "observe", Turn: 0},
		{T: 15, Actor: "agent", Function: "send_message_to_user", Operation: "WRITE", Mode: "observe", Turn: 1},
		{T: 20, Actor: "user", Function: "reject_proposal", Operation: "WRITE", Turn: 1},
		{T: 30, Actor: "agent", Function: "send_message_to_user", Operation: "WRITE", Mode: "observe", Turn: 2},
		{T: 31, Actor: "user", Function: "open_app", Operation: "READ", Turn: 2},
		{T: 40, Actor: "user", Function: "accept_proposal", Operation: "WRITE", Turn: 3},
		{T: 41, Actor: "agent", Function: "send_message", Operation: "WRITE", Mode: "execute", Turn: 3},
		{T: 42, Actor: "agent", Function: "send_message_to_user", Operation: "WRITE", Mode: "execute", Turn: 3},
		{T: 50, Actor: "user", Function: "accept_proposal", Operation: "WRITE", Turn: 4},
	}, Decisions: []rows.PAREDecision{{Final: false, ProposalT: 15, DecisionT: 20}, {Final: true, ProposalT: 30, DecisionT: 40}}}
	v := PARERunValues(r)
	want := map[string]float64{"proposals": 2, "acceptances": 1, "acceptance_rate": 50, "read_actions": 2, "write_actions": 7,
		"turns": 5, "seconds_to_first_proposal": 5, "seconds_to_decide": 7.5, "turns_to_first_proposal": 1, "proposals_before_accept": 1,
		"agent_read_actions": 1, "agent_write_actions": 2, "proposal_rate": 0.4}
	// PARE's acceptance rule: a reject does not consume the proposal, so
	// an accept after it still counts.
	r2 := &rows.PARERun{Events: []rows.PAREEvent{
		{T: 1, Actor: "agent", Function: "send_message_to_user", Mode: "observe", Turn: 0},
		{T: 2, Actor: "user", Function: "reject_proposal", Turn: 0},
		{T: 3, Actor: "user", Function: "accept_proposal", Turn: 1},
		{T: 4, Actor: "user", Function: "accept_proposal", Turn: 2},
	}}
	if v2 := PARERunValues(r2); v2[1] != 1 {
		t.Errorf("acceptances after a reject: %v, want 1", v2[1])
	}
	for i, name := range PAREMetrics {
		if v[i] != want[name] {
			t.Errorf("%s = %v, want %v", name, v[i], want[name])
		}
	}
	// No proposal at all: the rates and timings are undefined, not zero.
	v = PARERunValues(&rows.PARERun{Events: []rows.PAREEvent{{T: 1, Actor: "env", Turn: -1}}})
	for _, name := range []string{"acceptance_rate", "seconds_to_first_proposal", "seconds_to_decide", "turns_to_first_proposal", "proposals_before_accept", "turns", "proposal_rate"} {
		for i, n := range PAREMetrics {
			if n == name && !math.IsNaN(v[i]) {
				t.Errorf("%s = %v without proposals, want NaN", name, v[i])
			}
		}
	}
}
