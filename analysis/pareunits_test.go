package analysis

import (
	"errors"
	"math"
	"testing"

	"github.com/gymlens/gymlens/ingest/rows"
)

// Two scenarios of one configuration, three validated runs each: s1 won
// twice, s2 never. By hand (pass@k as the unbiased estimator of Chen et
// al. 2021, 1 − C(n−c, k)/C(n, k), averaged over scenarios):
// pass@1 = (2/3 + 0)/2, pass@3 = (1 + 0)/2, pass^3 = (0 + 0)/2,
// pare_pass@k = share of scenarios with a success = 1/2, success = 2/6.
func TestPAREEstimatesByHand(t *testing.T) {
	var results []rows.PAREResultRow
	for i, s := range []float64{1, 1, 0, 0, 0, 0} {
		scen := "s1"
		if i >= 3 {
			scen = "s2"
		}
		results = append(results, rows.PAREResultRow{ResultID: string(rune('a' + i)), Source: "pare", Scenario: scen, ConfigID: "A",
			Success: s, Counts: [5]float64{math.NaN(), math.NaN(), math.NaN(), math.NaN(), math.NaN()}})
	}
	units := JoinPARE(nil, results)
	opt := PAREOptions{Metrics: []string{"success", "pass@1", "pass@3", "pass^3", "pare_pass@k"}, Bootstrap: BootstrapOptions{Resamples: 200, Seed: 1, Level: 0.95}}
	res, err := PAREEstimates(units, opt)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"success": 100 * 2.0 / 6, "pass@1": 100 * (2.0 / 3) / 2, "pass@3": 50, "pass^3": 0, "pare_pass@k": 50}
	for _, r := range res {
		if w, ok := want[r.Metric]; !ok || math.Abs(r.Value-w) > 1e-9 {
			t.Errorf("%s = %v, want %v", r.Metric, r.Value, w)
		}
		delete(want, r.Metric)
	}
	if len(want) > 0 {
		t.Errorf("missing: %v", want)
	}
	// What the caller asked wrongly is an OptionError; no run is ErrNoPARERuns.
	var oe *OptionError
	if _, err := PAREEstimates(units, PAREOptions{Metrics: []string{"pass@x"}}); !errors.As(err, &oe) {
		t.Errorf("unknown metric: %v", err)
	}
	if _, err := PAREEstimates(units, PAREOptions{By: []string{"model"}}); !errors.As(err, &oe) {
		t.Errorf("unknown dimension: %v", err)
	}
	if _, err := PAREEstimates(units, PAREOptions{Where: map[string][]string{"config": {"B"}}}); !errors.Is(err, ErrNoPARERuns) {
		t.Errorf("nothing selected: %v", err)
	}
}

// The named places agree with the names of the metrics and counts.
func TestPAREPlacesAreTheNames(t *testing.T) {
	for place, name := range map[int]string{PProposals: "proposals", PAcceptances: "acceptances", PAcceptanceRate: "acceptance_rate",
		PReadActions: "read_actions", PWriteActions: "write_actions", PTurns: "turns", PSecondsToFirstProposal: "seconds_to_first_proposal",
		PSecondsToDecide: "seconds_to_decide", PTurnsToFirstProposal: "turns_to_first_proposal", PProposalsBeforeAccept: "proposals_before_accept",
		PAgentReadActions: "agent_read_actions", PAgentWriteActions: "agent_write_actions", PProposalRate: "proposal_rate"} {
		if PAREMetrics[place] != name {
			t.Errorf("place %d is %s, named %s", place, PAREMetrics[place], name)
		}
	}
	if len(PAREMetrics) != PProposalRate+1 {
		t.Errorf("%d PARE metrics, %d places", len(PAREMetrics), PProposalRate+1)
	}
}
