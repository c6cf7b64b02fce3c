package analysis

import (
	"slices"
	"strings"
)

// MetricKind is how a group's estimate of a metric is made from its runs.
type MetricKind int

const (
	// MeanOfRuns: the mean over the group's runs of each run's value,
	// scenarios resampled.
	MeanOfRuns MetricKind = iota
	// RatioOfSums: Σ numerators / Σ denominators over the group's runs (PARE's
	// pooled rates), scenarios resampled.
	RatioOfSums
	// MeanOfScenarios: the mean over the group's scenarios of a value per
	// scenario (pass@k, pass^k), scenarios resampled; n counts scenarios.
	MeanOfScenarios
)

// Metric is one metric, declared once: what tables, JSON, CSV, figures
// and the CLI know of it.
type Metric struct {
	Name     string
	Scale    string // "0–100", "percent", "1–5", "count", "seconds", "turns", "per turn", "tokens"
	Decimals int    // decimals shown in text and tables
	Kind     MetricKind
	Source   string // "gym" (Proactivity-Gym) or "pare" (PARE and Meta-ARE)
}

// Registry holds every metric gymlens estimates: the 3T metrics and their
// parts (in AllMetrics' order), then PARE's and Meta-ARE's. The pass
// metrics (pass@K, pass^K, pare_pass@k, pare_pass^k) are a family named by
// pattern: MetricNamed knows them.
var Registry = func() []Metric {
	var out []Metric
	for _, n := range AllMetrics {
		m := Metric{Name: n, Scale: "0–100", Decimals: 1, Kind: MeanOfRuns, Source: "gym"}
		switch {
		case strings.HasPrefix(n, "TA") || n == "TR-D":
			m.Scale = "percent"
		case strings.HasPrefix(n, "TR-J") || strings.HasPrefix(n, "TRJ"):
			m.Scale, m.Decimals = "1–5", 2
		}
		if slices.Contains(MainMetrics, n) {
			m.Decimals = 2 // as the paper's Table 7
		}
		out = append(out, m)
	}
	pare := map[string]string{"proposals": "count", "acceptances": "count", "acceptance_rate": "percent", "read_actions": "count",
		"write_actions": "count", "turns": "turns", "seconds_to_first_proposal": "seconds", "seconds_to_decide": "seconds",
		"turns_to_first_proposal": "turns", "proposals_before_accept": "count", "agent_read_actions": "count",
		"agent_write_actions": "count", "proposal_rate": "per turn"}
	for _, n := range PAREMetrics {
		m := Metric{Name: n, Scale: pare[n], Decimals: 1, Kind: MeanOfRuns, Source: "pare"}
		if m.Scale == "per turn" {
			m.Decimals = 3
		}
		out = append(out, m)
	}
	out = append(out,
		Metric{Name: "success", Scale: "percent", Decimals: 1, Kind: MeanOfRuns, Source: "pare"},
		Metric{Name: "tokens", Scale: "tokens", Decimals: 1, Kind: MeanOfRuns, Source: "pare"},
		Metric{Name: "pooled_acceptance_rate", Scale: "percent", Decimals: 1, Kind: RatioOfSums, Source: "pare"},
		Metric{Name: "pooled_proposal_rate", Scale: "per turn", Decimals: 3, Kind: RatioOfSums, Source: "pare"})
	return out
}()

// MetricNamed is the metric of that name: one of Registry, or one of the
// pass family (percent, a mean over scenarios).
func MetricNamed(name string) (Metric, bool) {
	for _, m := range Registry {
		if m.Name == name {
			return m, true
		}
	}
	if m, ok := customMetricNamed(name); ok {
		return m, true
	}
	if passMetricName.MatchString(name) {
		return Metric{Name: name, Scale: "percent", Decimals: 1, Kind: MeanOfScenarios, Source: "pare"}, true
	}
	return Metric{}, false
}
