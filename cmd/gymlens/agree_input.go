package main

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/gymlens/gymlens/analysis"
	"github.com/gymlens/gymlens/ingest/runlog"
	"github.com/gymlens/gymlens/reports"
)

// inputFigures are the agreement figures of one question.
type inputFigures struct {
	question                         string
	alpha                            analysis.Estimate
	fleiss, cohen, weighted, percent float64
	nItems, nRaters                  int
	reasons                          map[string]string
}

func figuresOf(q *runlog.Question, level string, opt analysis.BootstrapOptions) inputFigures {
	f := inputFigures{question: q.Name, reasons: map[string]string{}, nItems: len(q.Items), nRaters: len(q.Raters)}
	// Units in item order, each item's values in rater order (the ratings
	// are sorted so).
	var units [][]float64
	for i := 0; i < len(q.Ratings); {
		j := i
		var u []float64
		for j < len(q.Ratings) && q.Ratings[j].Item == q.Ratings[i].Item {
			u = append(u, q.Ratings[j].Value)
			j++
		}
		units = append(units, u)
		i = j
	}
	var why string
	f.alpha, why = analysis.AlphaWithInterval(units, level, opt)
	if math.IsNaN(f.alpha.Value) {
		f.reasons["krippendorff_alpha"] = why
	}
	if math.IsNaN(f.alpha.Lo) || math.IsNaN(f.alpha.Hi) {
		f.reasons["krippendorff_alpha_ci"] = why
	}
	fd := analysis.NewFleissData(units)
	f.fleiss, f.percent = fd.Kappa(nil), 100*fd.Agreement(nil)
	if fd.Items == 0 {
		f.reasons["fleiss_kappa"] = "no item was rated by two raters"
		f.reasons["percent_agreement"] = f.reasons["fleiss_kappa"]
	} else if math.IsNaN(f.fleiss) {
		f.reasons["fleiss_kappa"] = "one category only: κ is undefined"
	}
	f.cohen, f.weighted = math.NaN(), math.NaN()
	if len(q.Raters) == 2 {
		var a, b []float64
		for i := 0; i+1 < len(q.Ratings); i++ {
			if r, n := q.Ratings[i], q.Ratings[i+1]; r.Item == n.Item && r.Rater == 0 && n.Rater == 1 {
				a, b = append(a, r.Value), append(b, n.Value)
			}
		}
		var r1, r2 string
		f.cohen, r1 = analysis.CohenKappa(a, b, analysis.Unweighted)
		f.weighted, r2 = analysis.CohenKappa(a, b, analysis.Quadratic)
		if r1 != "" {
			f.reasons["cohen_kappa"] = r1
		}
		if r2 != "" {
			f.reasons["weighted_kappa"] = r2
		}
		if q.Labels != nil && !q.Ordered {
			f.weighted = math.NaN()
			f.reasons["weighted_kappa"] = "the categories are text with no order: give their order with --categories"
		}
	} else {
		why := fmt.Sprintf("%d raters: Cohen's κ needs exactly two", len(q.Raters))
		f.reasons["cohen_kappa"], f.reasons["weighted_kappa"] = why, why
	}
	return f
}

func agreeInput(e *env, cmd *cli.Command, format string) error {
	level := cmd.String("level")
	if err := analysis.CheckLevel(level); err != nil {
		return usagef("--%v", err)
	}
	opt, err := bootstrapOptions(cmd)
	if err != nil {
		return err
	}
	var cats []string
	if c := cmd.String("categories"); c != "" {
		cats = strings.Split(c, ",")
	}
	lr, err := runlog.ReadLongRatings(cmd.String("input"), cats)
	if err != nil {
		return err
	}
	var figs []inputFigures
	for _, q := range lr.Questions {
		if q.Labels != nil && !q.Ordered && level != analysis.Nominal {
			e := *q.FirstText
			e.Expected += fmt.Sprintf(" (--level %s; text categories need --level nominal, or their order in --categories %s)",
				level, strings.Join(q.Labels, ","))
			return &e
		}
		figs = append(figs, figuresOf(q, level, opt))
	}
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
		of := func(f inputFigures) figures {
			return figures{Alpha: num(f.alpha.Value), AlphaCI: [2]*float64{num(f.alpha.Lo), num(f.alpha.Hi)}, Level: level,
				Fleiss: num(f.fleiss), Cohen: num(f.cohen), Weighted: num(f.weighted), Percent: num(f.percent),
				Items: f.nItems, Raters: f.nRaters, Reasons: f.reasons,
				Boot: bootstrap{Method: opt.Method, Level: opt.Level, Resamples: opt.Resamples, Seed: opt.Seed, Unit: "item"}}
		}
		var v any
		if len(figs) == 1 && figs[0].question == "" {
			v = of(figs[0])
		} else {
			byQ := map[string]figures{}
			for _, f := range figs {
				byQ[f.question] = of(f)
			}
			v = map[string]any{"by_question": byQ}
		}
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(e.stdout, "%s\n", b)
		return err
	}
	t := &reports.Result{Columns: []string{"question", "krippendorff_alpha", "alpha_ci_low", "alpha_ci_high", "level", "fleiss_kappa",
		"cohen_kappa", "weighted_kappa", "percent_agreement", "n_items", "n_raters", "notes"}}
	for _, f := range figs {
		var notes []string
		for _, k := range sortedKeys(f.reasons) {
			notes = append(notes, k+": "+f.reasons[k])
		}
		t.Rows = append(t.Rows, []any{f.question, f.alpha.Value, f.alpha.Lo, f.alpha.Hi, level, f.fleiss, f.cohen, f.weighted,
			f.percent, f.nItems, f.nRaters, strings.Join(notes, "; ")})
	}
	if err := reports.WriteResult(e.stdout, format, t); err != nil {
		return err
	}
	if format == "table" && !cmd.Bool("quiet") {
		fmt.Fprintf(e.stdout, "α interval: %g%% %s bootstrap over items, %d resamples, seed %d\n", 100*opt.Level, opt.Method, opt.Resamples, opt.Seed)
	}
	return nil
}
