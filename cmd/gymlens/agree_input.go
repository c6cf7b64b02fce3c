package main

import (
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
	f.alpha, why = alphaWithInterval(units, level, opt)
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
	num := func(v float64) any {
		if math.IsNaN(v) {
			return nil
		}
		return v
	}
	if format == "json" {
		obj := func(f inputFigures) string {
			var b strings.Builder
			fields := []struct {
				k string
				v any
			}{
				{"krippendorff_alpha", num(f.alpha.Value)}, {"krippendorff_alpha_ci", []any{num(f.alpha.Lo), num(f.alpha.Hi)}},
				{"level", level}, {"fleiss_kappa", num(f.fleiss)}, {"cohen_kappa", num(f.cohen)}, {"weighted_kappa", num(f.weighted)},
				{"percent_agreement", num(f.percent)}, {"n_items", f.nItems}, {"n_raters", f.nRaters},
				{"bootstrap", map[string]any{"method": opt.Method, "level": opt.Level, "resamples": opt.Resamples, "seed": opt.Seed, "unit": "item"}},
				{"reasons", f.reasons},
			}
			b.WriteString("{")
			for i, kv := range fields {
				if i > 0 {
					b.WriteString(", ")
				}
				fmt.Fprintf(&b, "%q: %s", kv.k, reports.JSONValue(kv.v))
			}
			b.WriteString("}")
			return b.String()
		}
		if len(figs) == 1 && figs[0].question == "" {
			fmt.Fprintln(e.stdout, obj(figs[0]))
			return nil
		}
		fmt.Fprint(e.stdout, "{\"by_question\": {")
		for i, f := range figs {
			if i > 0 {
				fmt.Fprint(e.stdout, ",")
			}
			fmt.Fprintf(e.stdout, "\n  %q: %s", f.question, obj(f))
		}
		fmt.Fprintln(e.stdout, "\n}}")
		return nil
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
