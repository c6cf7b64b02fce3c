package main

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/gymlens/gymlens/analysis"
	"github.com/gymlens/gymlens/ingest"
	"github.com/gymlens/gymlens/ingest/pare"
	"github.com/gymlens/gymlens/reports"
)

// pareDimensions are what PARE and Meta-ARE runs can be broken down by.
// "run" makes a group of each run (its values, without an interval).
var pareDimensions = []string{"config", "scenario", "source", "apps", "noise", "capability", "run"}

// pareRunMetrics are the per-run metrics: those recomputed from the
// traces, success (from the result rows) and tokens (from the traces,
// when the export recorded them).
var pareRunMetrics = append(append([]string(nil), analysis.PAREMetrics...), "success", "tokens")

// pooledMetrics are ratios of sums over a group's runs, as PARE's report
// aggregates them (its aggregate acceptance and proposal rates), with a
// cluster-bootstrap interval: acceptances / proposals in percent, and
// proposals per turn.
var pooledMetrics = []string{"pooled_acceptance_rate", "pooled_proposal_rate"}

// passMetric matches the scenario-level metrics: pass@K and pass^K (the
// unbiased estimators; K a number, or k for the smallest number of
// validated runs of a scenario in the group) and PARE's own pare_pass@k
// and pare_pass^k (share of scenarios with at least one success / all
// runs successful).
var passMetric = regexp.MustCompile(`^(pare_)?pass([@^])(k|[1-9][0-9]*)$`)

// pareUnit is one run: a result row, the trace it links to, or both.
type pareUnit struct {
	run    *ingest.PARERun       // nil: no trace ingested
	result *ingest.PAREResultRow // nil: no result row
}

// success is 1 or 0 from the result row, else from the trace's own
// verdict; NaN when neither gives one (or the run was not validated).
func (u *pareUnit) success() float64 {
	if u.result != nil {
		return u.result.Success
	}
	return u.run.Success
}

func (u *pareUnit) dim(d string) string {
	r, t := u.result, u.run
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
		// One vocabulary, from the row or else the trace (pare.NoiseLabel).
		if r != nil {
			return r.Noise
		}
		return pare.NoiseLabel(t.ToolNoise, t.EnvNoise)
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

// loadPAREUnits joins result rows with the traces they link to; traces no
// row links to are runs of their own.
func loadPAREUnits(ctx context.Context, w *ingest.Warehouse) ([]pareUnit, []ingest.PARERun, []ingest.PAREResultRow, error) {
	runs, err := w.LoadPARERuns(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	rows, err := w.LoadPAREResults(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	byID := map[string]int{}
	for i, r := range runs {
		byID[r.RunID] = i
	}
	linked := map[string]bool{}
	var units []pareUnit
	for i := range rows {
		u := pareUnit{result: &rows[i]}
		if j, ok := byID[rows[i].RunID]; ok && !linked[rows[i].RunID] {
			u.run = &runs[j]
			linked[rows[i].RunID] = true
		}
		units = append(units, u)
	}
	for i := range runs {
		if !linked[runs[i].RunID] {
			units = append(units, pareUnit{run: &runs[i]})
		}
	}
	return units, runs, rows, nil
}

// pareValues are PARE units' metric values for the units --where keeps.
// Traces PARE itself leaves out (a RateLimitError) give no trace metrics;
// such a trace without a result row is left out.
type pareValues struct {
	units  []*pareUnit
	values [][]float64 // per unit, the run metrics named
	scen   []string
	names  []string    // run metrics
	pass   []string    // scenario-level metrics
	pooled []string    // ratio-of-sums metrics
	counts [][]float64 // per unit: proposals, acceptances, turns (NaN when unknown)
	opt    analysis.BootstrapOptions
	note   []string
}

func loadPAREValues(ctx context.Context, cmd *cli.Command, w *ingest.Warehouse) (*pareValues, error) {
	opt, err := bootstrapOptions(cmd)
	if err != nil {
		return nil, err
	}
	where, err := parseWhereIn(cmd, pareDimensions)
	if err != nil {
		return nil, err
	}
	units, _, rows, err := loadPAREUnits(ctx, w)
	if err != nil {
		return nil, err
	}
	pv := &pareValues{opt: opt}
	if cmd.IsSet("metrics") {
		for _, n := range splitList(cmd.String("metrics")) {
			switch {
			case slices.Contains(pareRunMetrics, n):
				pv.names = append(pv.names, n)
			case passMetric.MatchString(n):
				pv.pass = append(pv.pass, n)
			case slices.Contains(pooledMetrics, n):
				pv.pooled = append(pv.pooled, n)
			default:
				return nil, usagef("--metrics: unknown PARE metric %q: expected some of %s, %s, pass@K, pass^K, pare_pass@k, pare_pass^k",
					n, strings.Join(pareRunMetrics, ", "), strings.Join(pooledMetrics, ", "))
			}
		}
	} else {
		pv.names = append(pv.names, analysis.PAREMetrics...)
		pv.pooled = pooledMetrics
		hasVerdict := false
		for _, u := range units {
			hasVerdict = hasVerdict || u.run != nil && !math.IsNaN(u.run.Success)
		}
		if len(rows) > 0 || hasVerdict {
			pv.names = append(pv.names, "success")
			if !slices.Contains(splitList(cmd.String("by")), "run") { // a run has no pass@k
				pv.pass = []string{"pare_pass@k", "pare_pass^k", "pass@k", "pass^k"}
			}
		}
		for _, u := range units {
			if u.run != nil && !math.IsNaN(u.run.Tokens) {
				pv.names = append(pv.names, "tokens")
				break
			}
		}
	}
	for i := range units {
		u := &units[i]
		if u.result == nil && u.run.Skip != "" {
			continue
		}
		keep := true
		for d, vals := range where {
			keep = keep && slices.Contains(vals, u.dim(d))
		}
		if !keep {
			continue
		}
		var trace []float64
		if u.run != nil && u.run.Skip == "" {
			trace = analysis.PARERunValues(u.run)
		} else if u.result != nil {
			trace = storedValues(u.result)
		}
		row := make([]float64, len(pv.names))
		for j, n := range pv.names {
			row[j] = math.NaN()
			switch k := slices.Index(analysis.PAREMetrics, n); {
			case k >= 0:
				if trace != nil {
					row[j] = trace[k]
				}
			case n == "success":
				row[j] = 100 * u.success()
			case n == "tokens":
				if u.run != nil {
					row[j] = u.run.Tokens
				}
			}
		}
		c := []float64{math.NaN(), math.NaN(), math.NaN()}
		if trace != nil {
			c = []float64{trace[0], trace[1], trace[5]}
		}
		pv.counts = append(pv.counts, c)
		pv.units, pv.values, pv.scen = append(pv.units, u), append(pv.values, row), append(pv.scen, u.dim("scenario"))
	}
	if len(pv.values) == 0 {
		return nil, fmt.Errorf("no PARE or Meta-ARE run to measure in %s (ingest traces or result files first)", w.Path)
	}
	return pv, nil
}

// storedValues are the trace metrics a result row stores itself (PARE's
// counts), for a run without a trace; the rest NaN.
func storedValues(r *ingest.PAREResultRow) []float64 {
	v := make([]float64, len(analysis.PAREMetrics))
	for i := range v {
		v[i] = math.NaN()
	}
	prop, acc, read, write, turns := r.Counts[0], r.Counts[1], r.Counts[2], r.Counts[3], r.Counts[4]
	v[0], v[1], v[3], v[4], v[5] = prop, acc, read, write, turns
	if prop > 0 {
		v[2] = 100 * acc / prop
	}
	if turns > 0 {
		v[12] = prop / turns
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

// groups gathers the units by the values of dims, in text order.
func (pv *pareValues) groups(dims []string) []analysis.Group {
	byID := map[string]*analysis.Group{}
	var order []string
	for i, u := range pv.units {
		key := map[string]string{}
		var parts []string
		for _, d := range dims {
			key[d] = u.dim(d)
			parts = append(parts, key[d])
		}
		id := strings.Join(parts, "\x00")
		g := byID[id]
		if g == nil {
			g = &analysis.Group{Key: key}
			byID[id] = g
			order = append(order, id)
		}
		g.Runs = append(g.Runs, i)
	}
	slices.Sort(order)
	var out []analysis.Group
	for _, id := range order {
		out = append(out, *byID[id])
	}
	return out
}

// scenarioTally is a scenario's runs within a group: all, those with a
// success value (validated), and the successful ones.
type scenarioTally struct {
	name                 string
	rows, validated, won int
}

func (pv *pareValues) tally(g analysis.Group) []scenarioTally {
	idx := map[string]int{}
	var out []scenarioTally
	for _, i := range g.Runs {
		u := pv.units[i]
		scen := u.dim("scenario")
		j, ok := idx[scen]
		if !ok {
			j = len(out)
			idx[scen] = j
			out = append(out, scenarioTally{name: scen})
		}
		out[j].rows++
		if s := u.success(); !math.IsNaN(s) {
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
func passValues(tal []scenarioTally, names []string, k int) ([][]float64, []string, []string) {
	minRuns := k
	rows := make([][]float64, len(tal))
	scen := make([]string, len(tal))
	var notes []string
	for i, s := range tal {
		scen[i] = s.name
		rows[i] = make([]float64, len(names))
		for j, n := range names {
			m := passMetric.FindStringSubmatch(n)
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
				v := analysis.PassAt(s.validated, s.won, k)
				if all {
					v = analysis.PassHat(s.validated, s.won, k)
				}
				rows[i][j] = 100 * v
			}
		}
	}
	for _, n := range names {
		if m := passMetric.FindStringSubmatch(n); m[1] == "" {
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
				notes = append(notes, fmt.Sprintf("%s: k = %d, the fewest validated runs of a scenario here", n, k))
			}
			if len(empty) > 0 {
				notes = append(notes, fmt.Sprintf("%s: %d scenarios with no validated run left out: %s", n, len(empty), strings.Join(empty, ", ")))
			}
			if short > 0 {
				notes = append(notes, fmt.Sprintf("%s: %d scenarios with fewer than %d validated runs left out", n, short, k))
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

// computePAREMetrics estimates the metrics per group: run metrics as the
// mean over runs with a cluster bootstrap over scenarios (success with a
// Wilson interval when no scenario has more than one validated run), and
// the pass metrics as the mean over scenarios, scenarios resampled.
func computePAREMetrics(ctx context.Context, cmd *cli.Command, w *ingest.Warehouse) ([]analysis.Result, error) {
	by := splitList(cmd.String("by"))
	for _, d := range by {
		if !slices.Contains(pareDimensions, d) {
			return nil, usagef("--by: PARE runs break down by %s, found %q", strings.Join(pareDimensions, ", "), d)
		}
	}
	pv, err := loadPAREValues(ctx, cmd, w)
	if err != nil {
		return nil, err
	}
	groups := pv.groups(by)
	num, den, scale := pv.ratioParts()
	var out []analysis.Result
	for _, g := range groups {
		res := analysis.SummarizeNamed([]analysis.Group{g}, pv.values, pv.scen, pv.names, pv.opt)
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
				res[t].Warnings = append(res[t].Warnings, fmt.Sprintf("%d runs with unknown token counts (the export wrote zeros) left out, not counted as 0", unknown))
			}
		}
		out = append(out, res...)
		if len(pv.pooled) > 0 {
			pooled := analysis.SummarizeRatios([]analysis.Group{g}, num, den, pv.scen, pv.pooled, scale, pv.opt)
			for j := range pooled {
				pooled[j].Warnings = append(pooled[j].Warnings, pooledNote)
			}
			out = append(out, pooled...)
		}
		if len(pv.pass) == 0 {
			continue
		}
		rows, scen, notes := passValues(tal, pv.pass, fewestRuns(tal))
		one := analysis.Group{Key: g.Key}
		for i := range rows {
			one.Runs = append(one.Runs, i)
		}
		pres := analysis.SummarizeNamed([]analysis.Group{one}, rows, scen, pv.pass, pv.opt)
		for j := range pres {
			pres[j].Warnings = append(pres[j].Warnings, "n counts scenarios")
			for _, n := range notes {
				if strings.HasPrefix(n, pv.pass[j]+":") {
					pres[j].Warnings = append(pres[j].Warnings, strings.TrimPrefix(n, pv.pass[j]+": "))
				}
			}
		}
		out = append(out, pres...)
	}
	return out, nil
}

// wilsonIfSingle gives the success rate a Wilson interval when no
// scenario of the group has more than one validated run (the scenario
// bootstrap is then a bootstrap of independent trials).
func wilsonIfSingle(r *analysis.Result, tal []scenarioTally, level float64) {
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
	lo, hi := analysis.Wilson(k, n, level)
	r.Lo, r.Hi, r.Method, r.Resamples = 100*lo, 100*hi, "wilson", 0
	var keep []string
	for _, w := range r.Warnings {
		if !strings.Contains(w, "interval") && !strings.Contains(w, "one scenario") {
			keep = append(keep, w)
		}
	}
	r.Warnings = append(keep, "one validated run per scenario: Wilson score interval")
}

// comparePARE compares configurations pairwise on the same resampled
// scenarios: run metrics as differences of run means, pass metrics as
// differences of scenario means.
func comparePARE(ctx context.Context, cmd *cli.Command, w *ingest.Warehouse, configs []string) ([]analysis.Comparison, error) {
	pv, err := loadPAREValues(ctx, cmd, w)
	if err != nil {
		return nil, err
	}
	byConfig := map[string]analysis.Group{}
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
	var pairs []analysis.Pair
	for i := 0; i < len(configs); i++ {
		for j := i + 1; j < len(configs); j++ {
			pairs = append(pairs, analysis.Pair{A: configs[i], B: configs[j], RunsA: byConfig[configs[i]].Runs, RunsB: byConfig[configs[j]].Runs})
		}
	}
	out := analysis.CompareNamed(pairs, pv.values, pv.scen, pv.names, pv.opt)
	if len(pv.pooled) > 0 {
		num, den, scale := pv.ratioParts()
		pc := analysis.CompareRatios(pairs, num, den, pv.scen, pv.pooled, scale, pv.opt)
		for i := range pc {
			pc[i].Warnings = append(pc[i].Warnings, pooledNote)
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
	pc := analysis.CompareNamed(pairs, rows, scen, pv.pass, pv.opt)
	for i := range pc {
		if strings.HasSuffix(pc[i].Metric, "k") && !strings.HasPrefix(pc[i].Metric, "pare_") {
			pc[i].Warnings = append(pc[i].Warnings, fmt.Sprintf("k = %d, the fewest validated runs of a scenario in the configurations compared", k))
		}
	}
	return append(out, pc...), nil
}

// pareReport recomputes, from the ingested result rows, the statistics
// PARE's combined_result.json (per configuration) and Meta-ARE's
// benchmark_stats.json (per model and capability, and global) give.
func pareReport(ctx context.Context, w *ingest.Warehouse) (*reports.Result, error) {
	rows, err := w.LoadPAREResults(ctx)
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("no PARE or Meta-ARE result rows in %s: PARE's report is computed from its result files (ingest *_result.json or output.jsonl)", w.Path)
	}
	type section struct{ source, config, part string }
	var order []section
	sel := map[section][]ingest.PAREResultRow{}
	add := func(s section, r ingest.PAREResultRow) {
		if _, ok := sel[s]; !ok {
			order = append(order, s)
		}
		sel[s] = append(sel[s], r)
	}
	for _, r := range rows {
		if r.Source == "are" {
			add(section{"are", r.ConfigID, analysis.CapabilityKey(&r)}, r)
			add(section{"are", r.ConfigID, "global"}, r)
			continue
		}
		add(section{"pare", r.ConfigID, ""}, r)
	}
	slices.SortStableFunc(order, func(a, b section) int {
		return strings.Compare(a.source+"\x00"+a.config+"\x00"+a.part, b.source+"\x00"+b.config+"\x00"+b.part)
	})
	keys := map[string]bool{}
	stats := make([]map[string]float64, len(order))
	for i, s := range order {
		stats[i] = analysis.SectionStats(sel[s], s.source, s.part)
		for k := range stats[i] {
			keys[k] = true
		}
	}
	cols := []string{"source", "config", "section"}
	var names []string
	for k := range keys {
		names = append(names, k)
	}
	slices.Sort(names)
	res := &reports.Result{Columns: append(cols, names...)}
	for i, s := range order {
		row := []any{s.source, s.config, s.part}
		for _, k := range names {
			if v, ok := stats[i][k]; ok {
				row = append(row, v)
			} else {
				row = append(row, nil)
			}
		}
		res.Rows = append(res.Rows, row)
	}
	return res, nil
}
