package main

import (
	"context"
	"fmt"
	"math"
	"sort"

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
	code := map[string]float64{}
	for i, d := range ingest.PAREDecisions {
		code[d] = float64(i)
	}
	var units [][]float64
	annotators := map[string]bool{}
	var sim, maj []float64
	ties, unjudged := 0, 0
	for _, s := range samples {
		var unit []float64
		counts := map[string]int{}
		var who []string
		for a := range s.Humans {
			who = append(who, a)
		}
		sort.Strings(who)
		for _, a := range who {
			unit = append(unit, code[s.Humans[a]])
			counts[s.Humans[a]]++
			annotators[a] = true
		}
		units = append(units, unit)
		majority := ""
		if len(counts) == 0 && s.Correct != "" {
			majority = s.Correct
		}
		best := 0
		for _, d := range ingest.PAREDecisions {
			switch {
			case counts[d] > best:
				best, majority = counts[d], d
			case counts[d] == best && best > 0:
				majority = "" // a tie: no majority
			}
		}
		if len(counts) > 0 && majority == "" {
			ties++
			continue
		}
		if majority == "" {
			unjudged++
			continue
		}
		sim, maj = append(sim, code[s.Simulated]), append(maj, code[majority])
	}
	alpha, alphaWhy, _ := analysis.KrippendorffAlpha(units, analysis.Nominal)
	fd := analysis.NewFleissData(units)
	fleiss := fd.Kappa(nil)
	kappa, kappaWhy := analysis.CohenKappa(sim, maj, analysis.Unweighted)
	acc := math.NaN()
	if len(sim) > 0 {
		hit := 0
		for i := range sim {
			if sim[i] == maj[i] {
				hit++
			}
		}
		acc = 100 * float64(hit) / float64(len(sim))
	}
	fleissWhy := ""
	if fd.Items == 0 {
		fleissWhy = "no sample has two annotations"
	}
	t := &reports.Result{Columns: []string{"statistic", "value", "n", "note"}}
	t.Rows = [][]any{
		{"majority_accuracy", acc, len(sim), "percent of samples where the simulated user's decision is the humans' majority (or the answer key)"},
		{"cohen_kappa", kappa, len(sim), firstNonEmpty(kappaWhy, "simulated user against the humans' majority")},
		{"fleiss_kappa", fleiss, fd.Items, firstNonEmpty(fleissWhy, "among the annotators")},
		{"krippendorff_alpha", alpha, fd.Items, firstNonEmpty(alphaWhy, "nominal, among the annotators")},
	}
	if err := reports.WriteResult(e.stdout, format, t); err != nil {
		return err
	}
	if !cmd.Bool("quiet") {
		fmt.Fprintf(e.stderr, "note: %d samples, %d annotators; %d samples with tied annotations and %d with no human decision left out of the comparison; %d annotations of samples not ingested\n",
			len(samples), len(annotators), ties, unjudged, orphans)
	}
	return nil
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}
