package analysis

import "testing"

// Every metric a command can be asked for is declared once, in the
// registry, with its scale and decimals; the 3T metrics in AllMetrics'
// order.
func TestRegistryDeclaresEveryMetricOnce(t *testing.T) {
	seen := map[string]bool{}
	for i, m := range Registry {
		if seen[m.Name] {
			t.Errorf("%s declared twice", m.Name)
		}
		seen[m.Name] = true
		if m.Scale == "" || m.Source == "" {
			t.Errorf("%s: no scale or source: %+v", m.Name, m)
		}
		if i < len(AllMetrics) && AllMetrics[i] != m.Name {
			t.Errorf("registry place %d is %s, AllMetrics has %s", i, m.Name, AllMetrics[i])
		}
	}
	for _, n := range append(append(append([]string(nil), AllMetrics...), PARERunMetrics...), PooledMetrics...) {
		if !seen[n] {
			t.Errorf("%s is not in the registry", n)
		}
	}
	for name, want := range map[string]Metric{
		"TR-J":                 {Scale: "1–5", Decimals: 2, Kind: MeanOfRuns},
		"TA.now":               {Scale: "percent", Decimals: 1, Kind: MeanOfRuns},
		"pooled_proposal_rate": {Scale: "per turn", Decimals: 3, Kind: RatioOfSums},
		"pass@3":               {Scale: "percent", Decimals: 1, Kind: MeanOfScenarios},
		"pare_pass^k":          {Scale: "percent", Decimals: 1, Kind: MeanOfScenarios},
	} {
		m, ok := MetricNamed(name)
		if !ok || m.Scale != want.Scale || m.Decimals != want.Decimals || m.Kind != want.Kind {
			t.Errorf("%s: %+v, %v", name, m, ok)
		}
	}
	if _, ok := MetricNamed("pass@0"); ok {
		t.Error("pass@0 is a metric")
	}
}
