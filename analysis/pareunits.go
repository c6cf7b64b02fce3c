package analysis

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/gymlens/gymlens/ingest/rows"
)

// ErrNoPARERuns is returned when no PARE or Meta-ARE run is left to
// measure (none ingested, or --where kept none).
var ErrNoPARERuns = NoDataf("no PARE or Meta-ARE run to measure (ingest traces or result files first)")

// PAREDimensions are what PARE and Meta-ARE runs can be broken down by.
// "run" makes a group of each run (its values, without an interval).
var PAREDimensions = []string{"config", "scenario", "source", "apps", "noise", "capability", "run"}

// PARERunMetrics are the per-run metrics: those recomputed from the
// traces, success (from the result rows) and tokens (from the traces,
// when the export recorded them).
var PARERunMetrics = append(append([]string(nil), PAREMetrics...), "success", "tokens")

// PooledMetrics are ratios of sums over a group's runs, as PARE's report
// aggregates them (its aggregate acceptance and proposal rates), with a
// cluster-bootstrap interval: acceptances / proposals in percent, and
// proposals per turn.
var PooledMetrics = []string{"pooled_acceptance_rate", "pooled_proposal_rate"}

// passMetricName matches the scenario-level metrics: pass@K and pass^K (the
// unbiased estimators; K a number, or k for the smallest number of
// validated runs of a scenario in the group) and PARE's own pare_pass@k
// and pare_pass^k (share of scenarios with at least one success / all
// runs successful).
var passMetricName = regexp.MustCompile(`^(pare_)?pass([@^])(k|[1-9][0-9]*)$`)

// PAREUnit is one run: a result row, the trace it links to, or both.
type PAREUnit struct {
	Run    *rows.PARERun       // nil: no trace ingested
	Result *rows.PAREResultRow // nil: no result row
}

// success is 1 or 0 from the result row, else from the trace's own
// verdict; NaN when neither gives one (or the run was not validated).
func (u *PAREUnit) Success() float64 {
	if u.Result != nil {
		return u.Result.Success
	}
	return u.Run.Success
}

func (u *PAREUnit) Dim(d string) string {
	r, t := u.Result, u.Run
	switch d {
	case "config":
		if r != nil {
			return r.ConfigID
		}
		return t.ConfigID
	case "scenario":
		if r != nil {
			return r.Scenario
		}
		return t.Scenario
	case "source":
		if r != nil {
			return r.Source
		}
		return t.Source
	case "apps":
		if t != nil && t.AppSet != "" {
			return t.AppSet
		}
		return "unknown"
	case "noise":
		// One vocabulary, from the row or else the trace (rows.NoiseLabel).
		if r != nil {
			return r.Noise
		}
		return rows.NoiseLabel(t.ToolNoise, t.EnvNoise)
	case "run":
		if r != nil {
			return r.ResultID
		}
		return t.RunID
	case "capability":
		if r != nil && r.Capability != "" {
			return r.Capability
		}
		if t != nil && t.Capability != "" {
			return t.Capability
		}
		return "n/a"
	}
	return ""
}

// JoinPARE joins result rows with the traces they link to (by run id,
// each trace to its first row); traces no row links to are runs of their
// own, after the rows.
func JoinPARE(runs []rows.PARERun, results []rows.PAREResultRow) []PAREUnit {
	byID := map[string]int{}
	for i, r := range runs {
		byID[r.RunID] = i
	}
	linked := map[string]bool{}
	var units []PAREUnit
	for i := range results {
		u := PAREUnit{Result: &results[i]}
		if j, ok := byID[results[i].RunID]; ok && !linked[results[i].RunID] {
			u.Run = &runs[j]
			linked[results[i].RunID] = true
		}
		units = append(units, u)
	}
	for i := range runs {
		if !linked[runs[i].RunID] {
			units = append(units, PAREUnit{Run: &runs[i]})
		}
	}
	return units
}

// PAREOptions say what PAREEstimates and ComparePARE compute.
type PAREOptions struct {
	// Metrics are the metrics asked for: run metrics (PARERunMetrics),
	// pooled ones (PooledMetrics), pass@K, pass^K, pare_pass@k and
	// pare_pass^k. Empty: the trace metrics and the pooled rates, and,
	// when some run has a verdict, success and the four pass metrics
	// (unless By holds "run"), and tokens when some trace records them.
	Metrics []string
	// By are the dimensions to group by (PAREDimensions).
	By []string
	// Where keeps the runs whose value of each dimension is one of those
	// listed.
	Where     map[string][]string
	Bootstrap BootstrapOptions
}

// pareValues are PARE units' metric values for the units --where keeps.
// Traces PARE itself leaves out (a RateLimitError) give no trace metrics;
// such a trace without a result row is left out.
type pareValues struct {
	units  []*PAREUnit
	values [][]float64 // per unit, the run metrics named
	scen   []string
	names  []string    // run metrics
	pass   []string    // scenario-level metrics
	pooled []string    // ratio-of-sums metrics
	counts [][]float64 // per unit: proposals, acceptances, turns (NaN when unknown)
	opt    BootstrapOptions
	note   []string
}

func newPAREValues(units []PAREUnit, opt PAREOptions) (*pareValues, error) {
	for d := range opt.Where {
		if !slices.Contains(PAREDimensions, d) {
			return nil, Optionf("--where: PARE runs are selected by %s, found %q", strings.Join(PAREDimensions, ", "), d)
		}
	}
	pv := &pareValues{opt: opt.Bootstrap}
	if len(opt.Metrics) > 0 {
		for _, n := range opt.Metrics {
			switch {
			case slices.Contains(PARERunMetrics, n):
				pv.names = append(pv.names, n)
			case passMetricName.MatchString(n):
				pv.pass = append(pv.pass, n)
			case slices.Contains(PooledMetrics, n):
				pv.pooled = append(pv.pooled, n)
			default:
				return nil, Optionf("--metrics: unknown PARE metric %q: expected some of %s, %s, pass@K, pass^K, pare_pass@k, pare_pass^k",
					n, strings.Join(PARERunMetrics, ", "), strings.Join(PooledMetrics, ", "))
			}
		}
	} else {
		pv.names = append(pv.names, PAREMetrics...)
		pv.pooled = PooledMetrics
		hasVerdict := false
		for _, u := range units {
			hasVerdict = hasVerdict || u.Run != nil && !math.IsNaN(u.Run.Success)
		}
		hasResults := false
		for _, u := range units {
			hasResults = hasResults || u.Result != nil
		}
		if hasResults || hasVerdict {
			pv.names = append(pv.names, "success")
			if !slices.Contains(opt.By, "run") { // a run has no pass@k
				pv.pass = []string{"pare_pass@k", "pare_pass^k", "pass@k", "pass^k"}
			}
		}
		for _, u := range units {
			if u.Run != nil && !math.IsNaN(u.Run.Tokens) {
				pv.names = append(pv.names, "tokens")
				break
			}
		}
	}
	for i := range units {
		u := &units[i]
		if u.Result == nil && u.Run.Skip != "" {
			continue
		}
		keep := true
		for d, vals := range opt.Where {
			keep = keep && slices.Contains(vals, u.Dim(d))
		}
		if !keep {
			continue
		}
		var trace []float64
		if u.Run != nil && u.Run.Skip == "" {
			trace = PARERunValues(u.Run)
		} else if u.Result != nil {
			trace = storedValues(u.Result)
		}
		row := make([]float64, len(pv.names))
		for j, n := range pv.names {
			row[j] = math.NaN()
			switch k := slices.Index(PAREMetrics, n); {
			case k >= 0:
				if trace != nil {
					row[j] = trace[k]
				}
			case n == "success":
				row[j] = 100 * u.Success()
			case n == "tokens":
				if u.Run != nil {
					row[j] = u.Run.Tokens
				}
			}
		}
		c := []float64{math.NaN(), math.NaN(), math.NaN()}
		if trace != nil {
			c = []float64{trace[PProposals], trace[PAcceptances], trace[PTurns]}
		}
		pv.counts = append(pv.counts, c)
		pv.units, pv.values, pv.scen = append(pv.units, u), append(pv.values, row), append(pv.scen, u.Dim("scenario"))
	}
	if len(pv.values) == 0 {
		return nil, ErrNoPARERuns
	}
	return pv, nil
}

// storedValues are the trace metrics a result row stores itself (PARE's
// counts), for a run without a trace; the rest NaN.
func storedValues(r *rows.PAREResultRow) []float64 {
	v := make([]float64, len(PAREMetrics))
	for i := range v {
		v[i] = math.NaN()
	}
	c := r.Counts
	prop, acc, read, write, turns := c[rows.CountProposals], c[rows.CountAcceptances], c[rows.CountReads], c[rows.CountWrites], c[rows.CountTurns]
	v[PProposals], v[PAcceptances], v[PReadActions], v[PWriteActions], v[PTurns] = prop, acc, read, write, turns
	if prop > 0 {
		v[PAcceptanceRate] = 100 * acc / prop
	}
	if turns > 0 {
		v[PProposalRate] = prop / turns
	}
	return v
}

// pooledParts names a pooled metric's numerator and denominator (places
// in pareValues.counts) and its scale.
func pooledParts(m string) (num, den int, scale float64) {
	if m == "pooled_proposal_rate" {
		return 0, 2, 1 // proposals per turn
	}
	return 1, 0, 100 // acceptances / proposals, percent
}

// ratioParts are the pooled metrics' numerators and denominators per
// unit (NaN when unknown), and their scales.
func (pv *pareValues) ratioParts() (num, den [][]float64, scale []float64) {
	num = make([][]float64, len(pv.counts))
	den = make([][]float64, len(pv.counts))
	for _, m := range pv.pooled {
		n, d, sc := pooledParts(m)
		for i, c := range pv.counts {
			num[i], den[i] = append(num[i], c[n]), append(den[i], c[d])
		}
		scale = append(scale, sc)
	}
	return num, den, scale
}

const pooledNote = "pooled over runs (a ratio of sums, as PARE's aggregate rates)"

// groups gathers the units by the values of dims, in text order (GroupBy).
func (pv *pareValues) groups(dims []string) []Group {
	value := func(i int, d string) string { return pv.units[i].Dim(d) }
	return GroupBy(len(pv.units), value, dims, nil, func(_, x, y string) bool { return x < y })
}

// scenarioTally is a scenario's runs within a group: all, those with a
// success value (validated), and the successful ones.
type scenarioTally struct {
	name                 string
	rows, validated, won int
}

func (pv *pareValues) tally(g Group) []scenarioTally {
	idx := map[string]int{}
	var out []scenarioTally
	for _, i := range g.Runs {
		u := pv.units[i]
		scen := u.Dim("scenario")
		j, ok := idx[scen]
		if !ok {
			j = len(out)
			idx[scen] = j
			out = append(out, scenarioTally{name: scen})
		}
		out[j].rows++
		if s := u.Success(); !math.IsNaN(s) {
			out[j].validated++
			if s == 1 {
				out[j].won++
			}
		}
	}
	return out
}

// fewestRuns is the fewest validated runs a scenario has, among the
// scenarios that have one: a scenario with none (every run rate-limited,
// say) says nothing about k and is left out of the pass metrics, which
// name it (passValues).
func fewestRuns(tal []scenarioTally) int {
	n := 0
	for _, s := range tal {
		if s.validated > 0 && (n == 0 || s.validated < n) {
			n = s.validated
		}
	}
	return n
}

// passValues computes the scenario-level metrics of one group: a row per
// scenario (with result rows), its value of each metric; notes say what
// k stood for and what was left out. k is what "k" in pass@k stands for.
func passValues(tal []scenarioTally, names []string, k int) ([][]float64, []string, map[string][]string) {
	minRuns := k
	rows := make([][]float64, len(tal))
	scen := make([]string, len(tal))
	notes := map[string][]string{}
	for i, s := range tal {
		scen[i] = s.name
		rows[i] = make([]float64, len(names))
		for j, n := range names {
			m := passMetricName.FindStringSubmatch(n)
			pareOwn, all := m[1] != "", m[2] == "^"
			switch {
			case pareOwn && !all:
				rows[i][j] = 100 * b2f(s.validated > 0 && s.won > 0)
			case pareOwn:
				rows[i][j] = 100 * b2f(s.validated > 0 && s.won == s.validated)
			default:
				k := minRuns
				if m[3] != "k" {
					k, _ = strconv.Atoi(m[3])
				}
				v := PassAt(s.validated, s.won, k)
				if all {
					v = PassHat(s.validated, s.won, k)
				}
				rows[i][j] = 100 * v
			}
		}
	}
	for _, n := range names {
		if m := passMetricName.FindStringSubmatch(n); m[1] == "" {
			k := minRuns
			if m[3] != "k" {
				k, _ = strconv.Atoi(m[3])
			}
			short := 0
			var empty []string
			for _, s := range tal {
				switch {
				case s.validated == 0:
					empty = append(empty, s.name)
				case s.validated < k:
					short++
				}
			}
			if m[3] == "k" && k > 0 {
				notes[n] = append(notes[n], fmt.Sprintf("k = %d, the fewest validated runs of a scenario here", k))
			}
			if len(empty) > 0 {
				notes[n] = append(notes[n], fmt.Sprintf("%d scenarios with no validated run left out: %s", len(empty), strings.Join(empty, ", ")))
			}
			if short > 0 {
				notes[n] = append(notes[n], fmt.Sprintf("%d scenarios with fewer than %d validated runs left out", short, k))
			}
		}
	}
	return rows, scen, notes
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// PAREEstimates estimates the metrics per group: run metrics as the
// mean over runs with a cluster bootstrap over scenarios (success with a
// Wilson interval when no scenario has more than one validated run), and
// the pass metrics as the mean over scenarios, scenarios resampled.
func PAREEstimates(units []PAREUnit, opt PAREOptions) ([]GroupEstimate, error) {
	by := opt.By
	for _, d := range by {
		if !slices.Contains(PAREDimensions, d) {
			return nil, Optionf("--by: PARE runs break down by %s, found %q", strings.Join(PAREDimensions, ", "), d)
		}
	}
	pv, err := newPAREValues(units, opt)
	if err != nil {
		return nil, err
	}
	groups := pv.groups(by)
	num, den, scale := pv.ratioParts()
	var out []GroupEstimate
	for _, g := range groups {
		res := SummarizeNamed([]Group{g}, pv.values, pv.scen, pv.names, pv.opt)
		tal := pv.tally(g)
		if j := slices.Index(pv.names, "success"); j >= 0 {
			wilsonIfSingle(&res[j], tal, pv.opt.Level)
		}
		if t := slices.Index(pv.names, "tokens"); t >= 0 {
			unknown := 0
			for _, i := range g.Runs {
				if math.IsNaN(pv.values[i][t]) {
					unknown++
				}
			}
			if unknown > 0 {
				res[t].Warn(0, fmt.Sprintf("%d runs with unknown token counts (the export wrote zeros) left out, not counted as 0", unknown))
			}
		}
		out = append(out, res...)
		if len(pv.pooled) > 0 {
			pooled := SummarizeRatios([]Group{g}, num, den, pv.scen, pv.pooled, scale, pv.opt)
			for j := range pooled {
				pooled[j].Warn(0, pooledNote)
			}
			out = append(out, pooled...)
		}
		if len(pv.pass) == 0 {
			continue
		}
		vals, scen, notes := passValues(tal, pv.pass, fewestRuns(tal))
		one := Group{Key: g.Key}
		for i := range vals {
			one.Runs = append(one.Runs, i)
		}
		pres := SummarizeNamed([]Group{one}, vals, scen, pv.pass, pv.opt)
		for j := range pres {
			pres[j].Warn(CaveatScenarioLevel, "n counts scenarios")
			for _, n := range notes[pv.pass[j]] {
				pres[j].Warn(0, n)
			}
		}
		out = append(out, pres...)
	}
	return out, nil
}

// wilsonIfSingle gives the success rate a Wilson interval when no
// scenario of the group has more than one validated run (the scenario
// bootstrap is then a bootstrap of independent trials).
func wilsonIfSingle(r *GroupEstimate, tal []scenarioTally, level float64) {
	n, k := 0, 0
	for _, s := range tal {
		if s.validated > 1 {
			return
		}
		n += s.validated
		k += s.won
	}
	if n == 0 {
		return
	}
	lo, hi := Wilson(k, n, level)
	r.Lo, r.Hi, r.Method, r.Resamples = 100*lo, 100*hi, "wilson", 0
	r.Drop(CaveatInterval | CaveatOneCluster)
	r.Warn(CaveatInterval, "one validated run per scenario: Wilson score interval")
}

// ComparePARE compares configurations pairwise on the same resampled
// scenarios: run metrics as differences of run means, pass metrics as
// differences of scenario means.
func ComparePARE(units []PAREUnit, opt PAREOptions, configs []string) ([]Comparison, error) {
	pv, err := newPAREValues(units, opt)
	if err != nil {
		return nil, err
	}
	byConfig := map[string]Group{}
	for _, g := range pv.groups([]string{"config"}) {
		byConfig[g.Key["config"]] = g
	}
	for _, c := range configs {
		if _, ok := byConfig[c]; !ok {
			var have []string
			for k := range byConfig {
				have = append(have, k)
			}
			slices.Sort(have)
			return nil, fmt.Errorf("no PARE runs of configuration %q; configurations: %s", c, strings.Join(have, "; "))
		}
	}
	var pairs []Pair
	for i := 0; i < len(configs); i++ {
		for j := i + 1; j < len(configs); j++ {
			pairs = append(pairs, Pair{A: configs[i], B: configs[j], RunsA: byConfig[configs[i]].Runs, RunsB: byConfig[configs[j]].Runs})
		}
	}
	out := CompareNamed(pairs, pv.values, pv.scen, pv.names, pv.opt)
	if len(pv.pooled) > 0 {
		num, den, scale := pv.ratioParts()
		pc := CompareRatios(pairs, num, den, pv.scen, pv.pooled, scale, pv.opt)
		for i := range pc {
			pc[i].Warn(0, pooledNote)
		}
		out = append(out, pc...)
	}
	if len(pv.pass) == 0 {
		return out, nil
	}
	// Pass metrics: a row per scenario and configuration; pass@k's k is
	// the fewest validated runs of a scenario in any configuration
	// compared, the same for all.
	var rows [][]float64
	var scen []string
	at := map[string][]int{}
	k := -1
	for _, c := range configs {
		if f := fewestRuns(pv.tally(byConfig[c])); k < 0 || f < k {
			k = f
		}
	}
	for _, c := range configs {
		r, s, _ := passValues(pv.tally(byConfig[c]), pv.pass, k)
		for i := range r {
			at[c] = append(at[c], len(rows))
			rows, scen = append(rows, r[i]), append(scen, s[i])
		}
	}
	for i := range pairs {
		pairs[i].RunsA, pairs[i].RunsB = at[pairs[i].A], at[pairs[i].B]
	}
	pc := CompareNamed(pairs, rows, scen, pv.pass, pv.opt)
	for i := range pc {
		if strings.HasSuffix(pc[i].Metric, "k") && !strings.HasPrefix(pc[i].Metric, "pare_") {
			pc[i].Warn(0, fmt.Sprintf("k = %d, the fewest validated runs of a scenario in the configurations compared", k))
		}
	}
	return append(out, pc...), nil
}

// PAREDesign lays the PARE runs --where keeps out for the study-design
// analyses (VarianceOf, Power, Ranks) on one per-run metric
// (PARERunMetrics): each run a RunRow of its configuration and scenario,
// with no persona (PARE's runs have none: the persona terms are not in
// the design) and its repetition numbered within its cell, and its value
// at place 0 of values. Runs with no value of the metric are left out.
func PAREDesign(units []PAREUnit, opt PAREOptions, metric string) ([]rows.RunRow, [][]float64, error) {
	if !slices.Contains(PARERunMetrics, metric) {
		return nil, nil, Optionf("--metric: %q is not a per-run PARE metric: expected one of %s", metric, strings.Join(PARERunMetrics, ", "))
	}
	opt.Metrics = []string{metric}
	pv, err := newPAREValues(units, opt)
	if err != nil {
		return nil, nil, err
	}
	var runs []rows.RunRow
	var values [][]float64
	rep := map[[2]string]int{}
	for i, u := range pv.units {
		if math.IsNaN(pv.values[i][0]) {
			continue
		}
		k := [2]string{u.Dim("config"), u.Dim("scenario")}
		rep[k]++
		runs = append(runs, rows.RunRow{RunID: u.Dim("run"), ConfigID: k[0], Scenario: k[1], Persona: "-", Rep: rep[k]})
		values = append(values, []float64{pv.values[i][0]})
	}
	if len(runs) == 0 {
		return nil, nil, NoDataf("no PARE run has a value of %s", metric)
	}
	return runs, values, nil
}
