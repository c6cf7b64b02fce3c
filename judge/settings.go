package judge

import (
	"context"
	"fmt"
)

// Settings are a judge run as the command line asks for it, before
// anything is read: Options checks them and reads them into RunOptions.
type Settings struct {
	// Source is what is judged: "gym" (Proactivity-Gym runs) or
	// "inspect" (every Inspect sample at every epoch).
	Source string
	// Where says runs are selected by dimension (--where), which only
	// Proactivity-Gym runs have.
	Where bool
	// Metrics are the built-in metrics to judge; MetricsGiven says they
	// were named, without which rubrics (Prompts) judge alone.
	Metrics      []string
	MetricsGiven bool
	Prompts      []string // rubric files and folders (LoadRubrics)
	// Judges and Endpoints are the judges' specs (Endpoints).
	Judges, Endpoints []string
	Prices            string // a prices file (ReadPrices; "": none)
	Limit, Repeats    int
	Force, Replace    bool
	// Client tunes the requests; MaxRetries 0 asks for no retries.
	Client ClientOptions
}

// OptionError is a mistake in how a judge run was asked for (a source,
// metric or judge that cannot be), as opposed to a file that cannot be
// read: the command's usage error.
type OptionError struct{ Err error }

func (e *OptionError) Error() string { return e.Err.Error() }
func (e *OptionError) Unwrap() error { return e.Err }

func optionf(format string, args ...any) error { return &OptionError{fmt.Errorf(format, args...)} }

// Options checks s and reads it into RunOptions, in this order: the
// source and the flags that go with it, the metrics, the rubrics, the
// judges, the prices. A source, flag, metric or judge that cannot be is
// an *OptionError; a rubric or prices file that cannot be read is not.
func (s Settings) Options() (RunOptions, error) {
	switch {
	case s.Source == "inspect" && s.Where:
		return RunOptions{}, optionf("--where selects Proactivity-Gym runs; --source inspect judges every Inspect sample (--limit N: a sample of them, equal shares of configuration × task)")
	case s.Source != "gym" && s.Source != "inspect":
		return RunOptions{}, optionf("--source: expected gym or inspect, found %q", s.Source)
	}
	opt := RunOptions{Limit: s.Limit, Force: s.Force, Replace: s.Replace, Repeats: s.Repeats, Client: s.Client, Samples: s.Source == "inspect"}
	if opt.Client.MaxRetries == 0 {
		opt.Client.MaxRetries = -1 // no retries asked for (0 is NewClient's default)
	}
	var err error
	if opt.Metrics, err = ParseMetrics(s.Metrics); err != nil {
		return opt, &OptionError{err}
	}
	if opt.Rubrics, err = LoadRubrics(s.Prompts); err != nil {
		return opt, err
	} else if len(opt.Rubrics) > 0 && !s.MetricsGiven {
		opt.Metrics = nil
	}
	if opt.Judges, err = Endpoints(s.Judges, s.Endpoints); err != nil {
		return opt, &OptionError{err}
	}
	if s.Prices != "" {
		if opt.Prices, err = ReadPrices(s.Prices); err != nil {
			return opt, err
		}
	}
	return opt, nil
}

// SourceStore is the store of what opt judges: for Proactivity-Gym runs
// the store runs itself, for Inspect samples (opt.Samples) the one
// samples opens (ingest's InspectJudge), which refuses a warehouse
// without them.
func SourceStore[S BatchStore](ctx context.Context, opt RunOptions, runs BatchStore, samples func(context.Context) (S, error)) (BatchStore, error) {
	if !opt.Samples {
		return runs, nil
	}
	st, err := samples(ctx)
	if err != nil {
		return nil, err
	}
	return st, nil
}

// RunOrBatch runs opt against st through the endpoint's Batches API
// (RunBatches) when batch is given, live (Run) otherwise; a dry run only
// counts what would be asked (Run) either way.
func RunOrBatch(ctx context.Context, st BatchStore, opt RunOptions, batch *BatchOptions) ([]JudgeReport, error) {
	if batch != nil && !opt.DryRun {
		return RunBatches(ctx, st, opt, *batch)
	}
	return Run(ctx, st, opt)
}
