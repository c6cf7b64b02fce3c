package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/urfave/cli/v3"

	"github.com/gymlens/gymlens/analysis"
	"github.com/gymlens/gymlens/ingest"
	"github.com/gymlens/gymlens/reports"
)

// pareOptions turns the flags of metrics and compare --source pare into
// the options of the PARE engine.
func pareOptions(cmd *cli.Command) (analysis.PAREOptions, error) {
	opt := analysis.PAREOptions{By: splitList(cmd.String("by"))}
	var err error
	if opt.Bootstrap, err = bootstrapOptions(cmd); err != nil {
		return opt, err
	}
	if opt.Where, err = parseWhereIn(cmd, analysis.PAREDimensions); err != nil {
		return opt, err
	}
	if cmd.IsSet("metrics") {
		opt.Metrics = splitList(cmd.String("metrics"))
	}
	return opt, nil
}

// noPARE names the warehouse when there is no PARE run to measure.
func noPARE(err error, w *ingest.Warehouse) error {
	if errors.Is(err, analysis.ErrNoPARERuns) {
		return fmt.Errorf("no PARE or Meta-ARE run to measure in %s (ingest traces or result files first)", w.Path)
	}
	return err
}

func computePAREMetrics(ctx context.Context, cmd *cli.Command, w *ingest.Warehouse) ([]analysis.GroupEstimate, error) {
	opt, err := pareOptions(cmd)
	if err != nil {
		return nil, err
	}
	units, err := reports.PAREUnits(ctx, w)
	if err != nil {
		return nil, err
	}
	res, err := analysis.PAREEstimates(units, opt)
	return res, noPARE(err, w)
}

func comparePARE(ctx context.Context, cmd *cli.Command, w *ingest.Warehouse, configs []string) ([]analysis.Comparison, error) {
	opt, err := pareOptions(cmd)
	if err != nil {
		return nil, err
	}
	units, err := reports.PAREUnits(ctx, w)
	if err != nil {
		return nil, err
	}
	res, err := analysis.ComparePARE(units, opt, configs)
	return res, noPARE(err, w)
}

func pareReport(ctx context.Context, w *ingest.Warehouse) (*reports.Result, error) {
	results, err := w.LoadPAREResults(ctx)
	if err != nil {
		return nil, err
	}
	if len(results) == 0 {
		return nil, fmt.Errorf("no PARE or Meta-ARE result rows in %s: PARE's report is computed from its result files (ingest *_result.json or output.jsonl)", w.Path)
	}
	return reports.PAREReport(results), nil
}
