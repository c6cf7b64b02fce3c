package main

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/gymlens/gymlens/analysis"
	"github.com/gymlens/gymlens/ingest"
)

// pareDimensions are what PARE runs can be broken down by.
var pareDimensions = []string{"config", "scenario", "source"}

// pareValues are PARE runs' metric values for the runs --where keeps
// (runs PARE itself leaves out, with a RateLimitError, left out too).
type pareValues struct {
	runs   []*ingest.PARERun
	values [][]float64 // per run, the metrics named
	scen   []string
	names  []string
	opt    analysis.BootstrapOptions
}

func loadPAREValues(ctx context.Context, cmd *cli.Command, w *ingest.Warehouse) (*pareValues, error) {
	opt, err := bootstrapOptions(cmd)
	if err != nil {
		return nil, err
	}
	pv := &pareValues{opt: opt, names: analysis.PAREMetrics}
	if cmd.IsSet("metrics") {
		pv.names = splitList(cmd.String("metrics"))
	}
	var cols []int
	for _, n := range pv.names {
		i := slices.Index(analysis.PAREMetrics, n)
		if i < 0 {
			return nil, usagef("--metrics: unknown PARE metric %q: expected some of %s", n, strings.Join(analysis.PAREMetrics, ", "))
		}
		cols = append(cols, i)
	}
	where, err := parseWhere(cmd)
	if err != nil {
		return nil, err
	}
	for d := range where {
		if !slices.Contains(pareDimensions, d) {
			return nil, usagef("--where: PARE runs are selected by %s, found %q", strings.Join(pareDimensions, ", "), d)
		}
	}
	runs, err := w.LoadPARERuns(ctx)
	if err != nil {
		return nil, err
	}
	for i := range runs {
		r := &runs[i]
		if r.Skip != "" {
			continue
		}
		keep := true
		for d, vals := range where {
			keep = keep && slices.Contains(vals, pareDim(r, d))
		}
		if !keep {
			continue
		}
		all := analysis.PARERunValues(r)
		row := make([]float64, len(cols))
		for j, c := range cols {
			row[j] = all[c]
		}
		pv.runs, pv.values, pv.scen = append(pv.runs, r), append(pv.values, row), append(pv.scen, r.Scenario)
	}
	if len(pv.values) == 0 {
		return nil, fmt.Errorf("no PARE or Meta-ARE run to measure in %s (ingest traces first)", w.Path)
	}
	return pv, nil
}

func pareDim(r *ingest.PARERun, d string) string {
	switch d {
	case "config":
		return r.ConfigID
	case "scenario":
		return r.Scenario
	}
	return r.Source
}

// groups gathers the runs by the values of dims, in text order.
func (pv *pareValues) groups(dims []string) []analysis.Group {
	byID := map[string]*analysis.Group{}
	var order []string
	for i, r := range pv.runs {
		key := map[string]string{}
		var parts []string
		for _, d := range dims {
			key[d] = pareDim(r, d)
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

// computePAREMetrics estimates PARE's metrics per group of runs, with a
// cluster bootstrap over scenarios.
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
	return analysis.SummarizeNamed(pv.groups(by), pv.values, pv.scen, pv.names, pv.opt), nil
}

// comparePARE compares PARE configurations pairwise on the same resampled
// scenarios.
func comparePARE(ctx context.Context, cmd *cli.Command, w *ingest.Warehouse, configs []string) ([]analysis.Comparison, error) {
	pv, err := loadPAREValues(ctx, cmd, w)
	if err != nil {
		return nil, err
	}
	byConfig := map[string][]int{}
	for _, g := range pv.groups([]string{"config"}) {
		byConfig[g.Key["config"]] = g.Runs
	}
	for _, c := range configs {
		if byConfig[c] == nil {
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
			pairs = append(pairs, analysis.Pair{A: configs[i], B: configs[j], RunsA: byConfig[configs[i]], RunsB: byConfig[configs[j]]})
		}
	}
	return analysis.CompareNamed(pairs, pv.values, pv.scen, pv.names, pv.opt), nil
}
