package reports

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/gymlens/gymlens/analysis"
)

// WriteRatingAgreement writes the agreement figures of a ratings file
// (agree --input): in JSON one object per question (the shape
// docs/agreement.md documents: an object, or {"by_question": …} when the
// file has a question column), written by encoding/json; otherwise one row
// per question, with how the α interval was made.
func WriteRatingAgreement(out *Writer, figs []analysis.RatingFigures, level string, opt analysis.BootstrapOptions) error {
	w, format := out.w, out.format
	if format == "json" {
		// One object per question (the documented shape, docs/agreement.md),
		// written by encoding/json: names of any text are escaped right.
		type bootstrap struct {
			Method    string  `json:"method"`
			Level     float64 `json:"level"`
			Resamples int     `json:"resamples"`
			Seed      uint64  `json:"seed"`
			Unit      string  `json:"unit"`
		}
		type figures struct {
			Alpha    *float64          `json:"krippendorff_alpha"`
			AlphaCI  [2]*float64       `json:"krippendorff_alpha_ci"`
			Level    string            `json:"level"`
			Fleiss   *float64          `json:"fleiss_kappa"`
			Cohen    *float64          `json:"cohen_kappa"`
			Weighted *float64          `json:"weighted_kappa"`
			Percent  *float64          `json:"percent_agreement"`
			Items    int               `json:"n_items"`
			Raters   int               `json:"n_raters"`
			Boot     bootstrap         `json:"bootstrap"`
			Reasons  map[string]string `json:"reasons"`
		}
		num := func(v float64) *float64 {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil
			}
			return &v
		}
		of := func(f analysis.RatingFigures) figures {
			return figures{Alpha: num(f.Alpha.Value), AlphaCI: [2]*float64{num(f.Alpha.Lo), num(f.Alpha.Hi)}, Level: level,
				Fleiss: num(f.Fleiss), Cohen: num(f.Cohen), Weighted: num(f.Weighted), Percent: num(f.Percent),
				Items: f.Items, Raters: f.Raters, Reasons: f.Reasons,
				Boot: bootstrap{Method: opt.Method, Level: opt.Level, Resamples: opt.Resamples, Seed: opt.Seed, Unit: "item"}}
		}
		var v any
		if len(figs) == 1 && figs[0].Question == "" {
			v = of(figs[0])
		} else {
			byQ := map[string]figures{}
			for _, f := range figs {
				byQ[f.Question] = of(f)
			}
			v = map[string]any{"by_question": byQ}
		}
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	}
	t := &Result{Columns: []string{"question", "krippendorff_alpha", "alpha_ci_low", "alpha_ci_high", "level", "fleiss_kappa",
		"cohen_kappa", "weighted_kappa", "percent_agreement", "n_items", "n_raters", "notes"}}
	for _, f := range figs {
		var notes []string
		for _, k := range slices.Sorted(maps.Keys(f.Reasons)) {
			notes = append(notes, k+": "+f.Reasons[k])
		}
		t.Rows = append(t.Rows, []any{f.Question, f.Alpha.Value, f.Alpha.Lo, f.Alpha.Hi, level, f.Fleiss, f.Cohen, f.Weighted,
			f.Percent, f.Items, f.Raters, strings.Join(notes, "; ")})
	}
	return out.Result(t, []string{fmt.Sprintf("α interval: %g%% %s bootstrap over items, %d resamples, seed %d", 100*opt.Level, opt.Method, opt.Resamples, opt.Seed)})
}
