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

// computePAREMetrics estimates PARE's metrics per group of runs, with a
// cluster bootstrap over scenarios. Runs PARE itself leaves out (a
// RateLimitError) are left out too.
func computePAREMetrics(ctx context.Context, cmd *cli.Command, w *ingest.Warehouse) ([]analysis.Result, error) {
	opt, err := bootstrapOptions(cmd)
	if err != nil {
		return nil, err
	}
	by := splitList(cmd.String("by"))
	for _, d := range by {
		if !slices.Contains(pareDimensions, d) {
			return nil, usagef("--by: PARE runs break down by %s, found %q", strings.Join(pareDimensions, ", "), d)
		}
	}
	names := analysis.PAREMetrics
	if cmd.IsSet("metrics") {
		names = splitList(cmd.String("metrics"))
	}
	var cols []int
	for _, n := range names {
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
	runs, err := w.LoadPARERuns(ctx)
	if err != nil {
		return nil, err
	}
	dim := func(r *ingest.PARERun, d string) string {
		switch d {
		case "config":
			return r.ConfigID
		case "scenario":
			return r.Scenario
		}
		return r.Source
	}
	var values [][]float64
	var scen []string
	groups := map[string]*analysis.Group{}
	var order []string
	for i := range runs {
		r := &runs[i]
		if r.Skip != "" {
			continue
		}
		keep := true
		for d, vals := range where {
			if !slices.Contains(pareDimensions, d) {
				return nil, usagef("--where: PARE runs are selected by %s, found %q", strings.Join(pareDimensions, ", "), d)
			}
			keep = keep && slices.Contains(vals, dim(r, d))
		}
		if !keep {
			continue
		}
		all := analysis.PARERunValues(r)
		row := make([]float64, len(cols))
		for j, c := range cols {
			row[j] = all[c]
		}
		key := map[string]string{}
		var parts []string
		for _, d := range by {
			key[d] = dim(r, d)
			parts = append(parts, key[d])
		}
		id := strings.Join(parts, "\x00")
		g := groups[id]
		if g == nil {
			g = &analysis.Group{Key: key}
			groups[id] = g
			order = append(order, id)
		}
		g.Runs = append(g.Runs, len(values))
		values, scen = append(values, row), append(scen, r.Scenario)
	}
	if len(values) == 0 {
		return nil, fmt.Errorf("no PARE or Meta-ARE run to measure in %s (ingest traces first)", w.Path)
	}
	slices.Sort(order)
	var gs []analysis.Group
	for _, id := range order {
		gs = append(gs, *groups[id])
	}
	return analysis.SummarizeNamed(gs, values, scen, names, opt), nil
}
