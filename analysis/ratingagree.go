package analysis

import (
	"fmt"
	"math"

	"github.com/gymlens/gymlens/analysis/stat"
	"github.com/gymlens/gymlens/ingest/rows"
)

// RatingSet is one question of a ratings file (rows.RatingSet).
type RatingSet = rows.RatingSet

// RatingFigures are the agreement figures of one question; Reasons say,
// per figure, why it is NaN.
type RatingFigures struct {
	Question                         string
	Alpha                            Estimate
	Fleiss, Cohen, Weighted, Percent float64
	Items, Raters                    int
	Reasons                          map[string]string
}

// RatingAgreement computes Krippendorff's α at level with a bootstrap
// interval over items, Fleiss' κ and percent agreement, and, for two
// raters, Cohen's κ unweighted and quadratic-weighted (not for unordered
// categories).
func RatingAgreement(s RatingSet, level string, opt BootstrapOptions) RatingFigures {
	f := RatingFigures{Question: s.Question, Reasons: map[string]string{}, Items: s.Items, Raters: s.Raters}
	units := s.Units
	var why string
	f.Alpha, why = AlphaWithInterval(units, level, opt)
	if math.IsNaN(f.Alpha.Value) {
		f.Reasons["krippendorff_alpha"] = why
	}
	if math.IsNaN(f.Alpha.Lo) || math.IsNaN(f.Alpha.Hi) {
		f.Reasons["krippendorff_alpha_ci"] = why
	}
	fd := stat.NewFleissData(units)
	f.Fleiss, f.Percent = fd.Kappa(nil), 100*fd.Agreement(nil)
	if fd.Items == 0 {
		f.Reasons["fleiss_kappa"] = "no item was rated by two raters"
		f.Reasons["percent_agreement"] = f.Reasons["fleiss_kappa"]
	} else if math.IsNaN(f.Fleiss) {
		f.Reasons["fleiss_kappa"] = "one category only: κ is undefined"
	}
	f.Cohen, f.Weighted = math.NaN(), math.NaN()
	if s.Raters == 2 {
		var r1, r2 string
		f.Cohen, r1 = stat.CohenKappa(s.A, s.B, Unweighted)
		f.Weighted, r2 = stat.CohenKappa(s.A, s.B, Quadratic)
		if r1 != "" {
			f.Reasons["cohen_kappa"] = r1
		}
		if r2 != "" {
			f.Reasons["weighted_kappa"] = r2
		}
		if s.Unordered {
			f.Weighted = math.NaN()
			f.Reasons["weighted_kappa"] = "the categories are text with no order: give their order with --categories"
		}
	} else {
		why := fmt.Sprintf("%d raters: Cohen's κ needs exactly two", s.Raters)
		f.Reasons["cohen_kappa"], f.Reasons["weighted_kappa"] = why, why
	}
	return f
}
