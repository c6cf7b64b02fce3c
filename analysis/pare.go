package analysis

import (
	"math"
	"strings"

	"github.com/gymlens/gymlens/ingest/rows"
)

// PAREMetrics are the per-run metrics of PARE and Meta-ARE runs that
// gymlens computes from the traces: PARE's counts and rates, and timing
// metrics PARE does not compute.
var PAREMetrics = []string{
	"proposals",                 // observe-mode proposals sent to the user
	"acceptances",               // accepts that answer a pending observe-mode proposal
	"acceptance_rate",           // acceptances / proposals, in percent (NaN without proposals)
	"read_actions",              // READ tool calls of the agent and the user, as PARE counts them
	"write_actions",             // WRITE tool calls of the agent and the user (proposals and answers included)
	"turns",                     // the last turn number + 1
	"seconds_to_first_proposal", // from the last environment event before it to the first proposal
	"seconds_to_decide",         // mean, over decision points, from proposal to decision
	"turns_to_first_proposal",   // the first proposal's turn number
	"proposals_before_accept",   // proposals before the first accepted one (NaN when none accepted)
	"agent_read_actions",        // the proactive agent's READ tool calls
	"agent_write_actions",       // the proactive agent's WRITE tool calls, proposals aside
	"proposal_rate",             // proposals per turn (NaN without turns)
}

// The places of the metrics in PAREMetrics and in PARERunValues' values:
// code names a value by its place's name, never by a number.
const (
	PProposals = iota
	PAcceptances
	PAcceptanceRate
	PReadActions
	PWriteActions
	PTurns
	PSecondsToFirstProposal
	PSecondsToDecide
	PTurnsToFirstProposal
	PProposalsBeforeAccept
	PAgentReadActions
	PAgentWriteActions
	PProposalRate
)

// PARERunValues computes PAREMetrics for one run, in that order; a value
// that cannot be had is NaN.
func PARERunValues(r *rows.PARERun) []float64 {
	v := make([]float64, len(PAREMetrics))
	for i := range v {
		v[i] = math.NaN()
	}
	var proposals, accepts, reads, writes, agentReads, agentWrites float64
	// PARE's rule: an accept counts when the last send_message_to_user
	// was an observe-mode proposal, and consumes it; a reject does not.
	lastMode := ""
	maxTurn := -1
	firstProposal := -1
	lastEnv := math.NaN()
	proposalsBefore := math.NaN()
	for i, e := range r.Events {
		if e.Turn > maxTurn {
			maxTurn = e.Turn
		}
		if e.Actor == "agent" || e.Actor == "user" {
			switch e.Operation {
			case "READ":
				reads++
			case "WRITE":
				writes++
			}
		}
		switch e.Actor {
		case "env":
			if firstProposal < 0 {
				lastEnv = e.T
			}
		case "agent":
			if strings.HasSuffix(e.Function, "send_message_to_user") {
				lastMode = e.Mode
				if e.Mode == "observe" {
					proposals++
					if firstProposal < 0 {
						firstProposal = i
					}
					continue
				}
			}
			switch e.Operation {
			case "READ":
				agentReads++
			case "WRITE":
				agentWrites++
			}
		case "user":
			if strings.HasSuffix(e.Function, "accept_proposal") && lastMode == "observe" {
				accepts++
				lastMode = ""
				if math.IsNaN(proposalsBefore) {
					proposalsBefore = proposals - 1
				}
			}
		}
	}
	v[PProposals], v[PAcceptances], v[PReadActions], v[PWriteActions] = proposals, accepts, reads, writes
	if proposals > 0 {
		v[PAcceptanceRate] = 100 * accepts / proposals
	}
	if maxTurn >= 0 {
		v[PTurns] = float64(maxTurn + 1)
	}
	if firstProposal >= 0 {
		p := r.Events[firstProposal]
		if !math.IsNaN(lastEnv) {
			v[PSecondsToFirstProposal] = p.T - lastEnv
		}
		if p.Turn >= 0 {
			v[PTurnsToFirstProposal] = float64(p.Turn)
		}
	}
	var sum, n float64
	for _, d := range r.Decisions {
		if !math.IsNaN(d.DecisionT - d.ProposalT) {
			sum += d.DecisionT - d.ProposalT
			n++
		}
	}
	if n > 0 {
		v[PSecondsToDecide] = sum / n
	}
	v[PProposalsBeforeAccept] = proposalsBefore
	v[PAgentReadActions], v[PAgentWriteActions] = agentReads, agentWrites
	if v[PTurns] > 0 {
		v[PProposalRate] = proposals / v[PTurns]
	}
	return v
}

// The places of PARE's stored counts (rows.PAREResultRow.Counts), for
// functions whose rows hide the package's name.
const (
	countProposals, countAcceptances, countReads = rows.CountProposals, rows.CountAcceptances, rows.CountReads
	countWrites, countTurns                      = rows.CountWrites, rows.CountTurns
)
