package analysis

import (
	"math"
	"sort"

	"github.com/gymlens/gymlens/analysis/stat"
	"github.com/gymlens/gymlens/ingest/rows"
)

// PAREHumanAgreement compares the human decisions on PARE's annotation
// samples with the simulated user's.
type PAREHumanAgreement struct {
	Accuracy       float64 // percent of samples where the simulated user's decision is the humans' majority (or the answer key)
	Kappa          float64 // Cohen's κ, simulated user against the majority
	Fleiss, Alpha  float64 // among the annotators (α nominal)
	KappaWhy       string  // why a figure is NaN
	FleissWhy      string
	AlphaWhy       string
	Compared       int // samples compared with the simulated user
	Annotated      int // samples with two annotations or more
	Annotators     int
	Ties, Unjudged int // samples left out: tied annotations; no human decision and no answer key
}

// PAREAgreement computes PAREHumanAgreement. decisions are the decision
// categories in their order; a sample without annotations is judged by
// its answer key (Correct) when it has one, and a tie among the humans
// leaves the sample out.
func PAREAgreement(samples []rows.PARESampleRow, decisions []string) *PAREHumanAgreement {
	code := map[string]float64{}
	for i, d := range decisions {
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
		for _, d := range decisions {
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
	p := &PAREHumanAgreement{Annotators: len(annotators), Ties: ties, Unjudged: unjudged, Compared: len(sim)}
	p.Alpha, p.AlphaWhy, _ = stat.KrippendorffAlpha(units, Nominal)
	fd := stat.NewFleissData(units)
	p.Fleiss, p.Annotated = fd.Kappa(nil), fd.Items
	p.Kappa, p.KappaWhy = stat.CohenKappa(sim, maj, Unweighted)
	p.Accuracy = math.NaN()
	if len(sim) > 0 {
		hit := 0
		for i := range sim {
			if sim[i] == maj[i] {
				hit++
			}
		}
		p.Accuracy = 100 * float64(hit) / float64(len(sim))
	}
	if fd.Items == 0 {
		p.FleissWhy = "no sample has two annotations"
	}
	return p
}
