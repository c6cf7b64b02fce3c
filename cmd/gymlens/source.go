package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/gymlens/gymlens/analysis"
	"github.com/gymlens/gymlens/ingest"
)

// source is what tables, figures and reports are computed from, each part
// read from the warehouse once however many outputs use it.
type source struct {
	ctx     context.Context
	cmd     *cli.Command
	w       *ingest.Warehouse
	opt     analysis.BootstrapOptions
	rv      *runValues
	sel     []ingest.RunRow
	ratings []ingest.RatingRow
	loaded  bool
	summary map[string][]analysis.Result
	keep    int // what of the tasks to keep (loadValues)
}

func newSource(ctx context.Context, cmd *cli.Command, w *ingest.Warehouse) (*source, error) {
	opt, err := bootstrapOptions(cmd)
	if err != nil {
		return nil, err
	}
	return &source{ctx: ctx, cmd: cmd, w: w, opt: opt, summary: map[string][]analysis.Result{}, keep: keepTasks}, nil
}

// values are every run with its metric values (and --where, --judge).
func (s *source) values() (*runValues, error) {
	if s.rv == nil {
		rv, err := loadValues(s.ctx, s.cmd, s.w, s.keep)
		if err != nil {
			return nil, err
		}
		s.rv = rv
	}
	return s.rv, nil
}

// selected are the runs --where keeps.
func (s *source) selected() ([]ingest.RunRow, error) {
	if s.sel != nil {
		return s.sel, nil
	}
	rv, err := s.values()
	if err != nil {
		return nil, err
	}
	groups, err := analysis.GroupRuns(rv.runs, nil, rv.where)
	if err != nil {
		return nil, err
	}
	if len(groups) == 0 || len(groups[0].Runs) == 0 {
		return nil, fmt.Errorf("no run matches --where %s", strings.Join(s.cmd.StringSlice("where"), " "))
	}
	for _, i := range groups[0].Runs {
		s.sel = append(s.sel, rv.runs[i])
	}
	return s.sel, nil
}

// selectedValues are the values, scenarios and configurations of the
// runs --where keeps.
func (s *source) selectedValues() (values [][]float64, scen, conf []string, err error) {
	rv, err := s.values()
	if err != nil {
		return nil, nil, nil, err
	}
	groups, err := analysis.GroupRuns(rv.runs, nil, rv.where)
	if err != nil {
		return nil, nil, nil, err
	}
	if len(groups) == 0 {
		return nil, nil, nil, fmt.Errorf("no run matches --where %s", strings.Join(s.cmd.StringSlice("where"), " "))
	}
	for _, i := range groups[0].Runs {
		values, scen, conf = append(values, rv.values[i]), append(scen, rv.scen[i]), append(conf, rv.runs[i].ConfigID)
	}
	return values, scen, conf, nil
}

// summarize estimates metrics per group of dims, among the runs where
// keeps (nil: --where), once per question asked.
func (s *source) summarize(dims []string, metrics []string, where map[string][]string) ([]analysis.Result, error) {
	rv, err := s.values()
	if err != nil {
		return nil, err
	}
	if where == nil {
		where = rv.where
	}
	key := fmt.Sprint(dims, metrics, where)
	if r, ok := s.summary[key]; ok {
		return r, nil
	}
	groups, err := analysis.GroupRuns(rv.runs, dims, where)
	if err != nil {
		return nil, err
	}
	if len(groups) == 0 {
		return nil, fmt.Errorf("no run matches --where %s", strings.Join(s.cmd.StringSlice("where"), " "))
	}
	var idx []int
	for _, m := range metrics {
		i := analysis.MetricIndex(m)
		if i < 0 {
			return nil, usagef("unknown metric %q: expected one of %s", m, strings.Join(analysis.AllMetrics, ", "))
		}
		idx = append(idx, i)
	}
	r := analysis.Summarize(groups, rv.values, rv.missing, rv.scen, idx, s.opt)
	s.summary[key] = r
	return r, nil
}

// humanRatings are every human rating.
func (s *source) humanRatings() ([]ingest.RatingRow, error) {
	if !s.loaded {
		r, err := s.w.LoadRatings(s.ctx)
		if err != nil {
			return nil, err
		}
		s.ratings, s.loaded = r, true
	}
	return s.ratings, nil
}

// studyOptions are the bootstrap options of the human study: participants
// resampled, 20,000 times unless --resamples says otherwise.
func (s *source) studyOptions() analysis.BootstrapOptions {
	o := s.opt
	if !s.cmd.IsSet("resamples") {
		o.Resamples = 20000
	}
	return o
}
