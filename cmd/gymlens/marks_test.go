package main

import (
	"encoding/json"
	"math"
	"sort"
	"strings"
	"testing"
)

// table --mark significance bolds the best configuration of each column
// and exactly those the paired cluster bootstrap cannot tell from it:
// checked against compare's raw p-values of each configuration against
// the best (the same replicates, one pair at a time), Holm-adjusted here.
func TestMarkSignificance(t *testing.T) {
	t.Parallel()
	_, db := sampleWarehouse(t, 5, 8, true)
	base := []string{"--db", db, "-q"}
	// At 90%: the sample then has a configuration whose raw p is below α
	// and whose Holm-adjusted one is not.
	const alpha = 0.1
	r := []string{"--resamples", "2000", "--level", "0.9"}
	code, md, stderr := gymlens(t, append(append(base, "table", "main", "--mark", "significance", "--intervals=false"), r...)...)
	if code != 0 {
		t.Fatal(stderr)
	}
	if !strings.Contains(md, "not distinguishable from it") || strings.Contains(md, "second underlined") || strings.Contains(md, "<u>") {
		t.Errorf("the notes do not say how the marks were made:\n%s", md)
	}
	// The configurations and which are bold, per metric column.
	metrics := []string{"TC", "TA", "TR-D", "TR-J"}
	bold := map[string]map[string]bool{}
	var configs []string
	model := ""
	for _, line := range strings.Split(md, "\n") {
		parts := strings.Split(line, "|")
		if len(parts) < 3 {
			continue
		}
		cells := parts[1 : len(parts)-1]
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		if len(cells) != 8 || cells[0] == "Model" || strings.HasPrefix(cells[0], ":--") {
			continue
		}
		if cells[0] != "" {
			model = cells[0]
		}
		id := model + " | " + cells[1] + " | " + cells[2]
		configs = append(configs, id)
		for j, m := range metrics {
			if bold[m] == nil {
				bold[m] = map[string]bool{}
			}
			bold[m][id] = strings.HasPrefix(cells[3+j], "**")
		}
	}
	if len(configs) != 8 {
		t.Fatalf("%d configurations in\n%s", len(configs), md)
	}
	_, js, _ := gymlens(t, append(append(base, "-f", "json", "metrics"), r...)...)
	var est []struct {
		Group  map[string]string
		Metric string
		Value  float64 `json:"mean"`
	}
	json.Unmarshal([]byte(js), &est)
	someTied, someNot, holmMatters := false, false, false
	for _, m := range metrics {
		best, bv := "", math.Inf(-1)
		for _, e := range est {
			if e.Metric == m && e.Value > bv {
				best, bv = e.Group["config"], e.Value
			}
		}
		if !bold[m][best] {
			t.Errorf("%s: the best, %s, is not bold", m, best)
		}
		type pv struct {
			config string
			p      float64
		}
		var ps []pv
		for _, c := range configs {
			if c == best {
				continue
			}
			_, js, stderr := gymlens(t, append(append(base, "-f", "json", "compare", best, c, "--metrics", m), r...)...)
			var cmp []struct{ P float64 }
			if err := json.Unmarshal([]byte(js), &cmp); err != nil || len(cmp) != 1 {
				t.Fatalf("compare %s %s: %v %s", best, c, err, stderr)
			}
			ps = append(ps, pv{c, cmp[0].P})
		}
		// Holm: the i-th smallest p times (k − i), kept monotone.
		sort.SliceStable(ps, func(a, b int) bool { return ps[a].p < ps[b].p })
		run := 0.0
		for i, x := range ps {
			adj := math.Min(1, math.Max(run, float64(len(ps)-i)*x.p))
			run = adj
			tied := adj >= alpha
			if bold[m][x.config] != tied {
				t.Errorf("%s: %s is bold=%v, but its Holm-adjusted p against the best is %.4f", m, x.config, bold[m][x.config], adj)
			}
			someTied, someNot = someTied || tied, someNot || !tied
			holmMatters = holmMatters || (x.p < alpha && tied)
		}
	}
	if !someTied || !someNot || !holmMatters {
		t.Errorf("the sample should have configurations tied with the best, others not, and one tied only after Holm (%v, %v, %v)", someTied, someNot, holmMatters)
	}
	if code, _, stderr := gymlens(t, append(base, "table", "main", "--mark", "stars")...); code != 2 || !strings.Contains(stderr, "--mark") {
		t.Errorf("--mark stars: exit %d %s", code, stderr)
	}
}
