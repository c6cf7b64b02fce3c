package main

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v3"

	"github.com/gymlens/gymlens/analysis"
	"github.com/gymlens/gymlens/ingest"
	"github.com/gymlens/gymlens/reports"
)

// agreePARE compares the human decisions on PARE's annotation samples with
// the simulated user's: the humans' agreement among themselves (Fleiss' κ,
// Krippendorff's α, nominal) and the simulated user against the humans'
// majority (accuracy and Cohen's κ). A sample without annotations is judged
// by its answer key (correct_decision) when it has one.
func agreePARE(ctx context.Context, e *env, cmd *cli.Command, format string, w *ingest.Warehouse) error {
	samples, orphans, err := w.LoadPARESamples(ctx)
	if err != nil {
		return err
	}
	if len(samples) == 0 {
		return fmt.Errorf("no PARE annotation sample in %s: ingest the samples (Parquet) first", w.Path)
	}
	pa := analysis.PAREAgreement(samples, ingest.PAREDecisions)
	t := reports.PAREAgreementResult(pa)
	if err := writer(e, cmd, format).Result(t, nil); err != nil {
		return err
	}
	if !cmd.Bool("quiet") {
		fmt.Fprintf(e.stderr, "note: %d samples, %d annotators; %d samples with tied annotations and %d with no human decision left out of the comparison; %d annotations of samples not ingested\n",
			len(samples), pa.Annotators, pa.Ties, pa.Unjudged, orphans)
	}
	return nil
}
