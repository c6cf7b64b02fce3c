package main

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/gymlens/gymlens/analysis"
	"github.com/gymlens/gymlens/reports"
)

// longRatings are ratings in long format: per question, per item, per
// rater, a value.
type longRatings struct {
	questions []string
	items     map[string]map[string]map[string]float64 // question → item → rater → value
	raters    map[string]map[string]bool               // question → raters
}

// readLongRatings reads a CSV with columns item, rater, value and an
// optional question. An empty value is a missing rating; a rater rating
// one item twice on one question is an error.
func readLongRatings(path string) (*longRatings, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s: cannot read: %v", path, err)
	}
	defer f.Close()
	cr := csv.NewReader(f)
	cr.FieldsPerRecord = 0
	head, err := cr.Read()
	if err == io.EOF {
		return nil, fmt.Errorf("%s: empty file: expected a header with item, rater and value", path)
	}
	if err != nil {
		return nil, csvErr(path, err)
	}
	col := map[string]int{}
	for i, h := range head {
		col[strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))] = i
	}
	for _, c := range []string{"item", "rater", "value"} {
		if _, ok := col[c]; !ok {
			return nil, fmt.Errorf("%s:1: field %s: required column is missing from the header (columns: item, rater, value, and optional question)", path, c)
		}
	}
	qcol, hasQ := col["question"]
	lr := &longRatings{items: map[string]map[string]map[string]float64{}, raters: map[string]map[string]bool{}}
	where := map[[3]string]int{}
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, csvErr(path, err)
		}
		line, _ := cr.FieldPos(0)
		item, rater, val := strings.TrimSpace(rec[col["item"]]), strings.TrimSpace(rec[col["rater"]]), strings.TrimSpace(rec[col["value"]])
		q := ""
		if hasQ {
			q = strings.TrimSpace(rec[qcol])
		}
		for name, v := range map[string]string{"item": item, "rater": rater} {
			if v == "" {
				return nil, fmt.Errorf("%s:%d: field %s: empty", path, line, name)
			}
		}
		if val == "" {
			continue // a missing rating
		}
		v, err := strconv.ParseFloat(val, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			_, c := cr.FieldPos(col["value"])
			return nil, fmt.Errorf("%s:%d:%d: field value: expected a number, found %q", path, line, c, val)
		}
		k := [3]string{q, item, rater}
		if first, dup := where[k]; dup {
			return nil, fmt.Errorf("%s:%d: rater %q rated item %q twice (first on line %d)", path, line, rater, item, first)
		}
		where[k] = line
		if lr.items[q] == nil {
			lr.items[q] = map[string]map[string]float64{}
			lr.raters[q] = map[string]bool{}
			lr.questions = append(lr.questions, q)
		}
		if lr.items[q][item] == nil {
			lr.items[q][item] = map[string]float64{}
		}
		lr.items[q][item][rater] = v
		lr.raters[q][rater] = true
	}
	if len(lr.questions) == 0 {
		return nil, fmt.Errorf("%s: no rating in the file", path)
	}
	sort.Strings(lr.questions)
	return lr, nil
}

func csvErr(path string, err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s:%d:%d: malformed CSV: %v", path, pe.Line, pe.Column, pe.Err)
	}
	return fmt.Errorf("%s: %v", path, err)
}

// inputFigures are the agreement figures of one question.
type inputFigures struct {
	question                         string
	alpha                            analysis.Estimate
	fleiss, cohen, weighted, percent float64
	nItems, nRaters                  int
	reasons                          map[string]string
}

func figuresOf(lr *longRatings, q, level string, opt analysis.BootstrapOptions) inputFigures {
	f := inputFigures{question: q, reasons: map[string]string{}, nItems: len(lr.items[q]), nRaters: len(lr.raters[q])}
	raters := sortedKeys(lr.raters[q])
	var units [][]float64
	for _, it := range sortedKeys(lr.items[q]) {
		var u []float64
		for _, r := range raters {
			if v, ok := lr.items[q][it][r]; ok {
				u = append(u, v)
			}
		}
		units = append(units, u)
	}
	var why string
	f.alpha, why = alphaWithInterval(units, level, opt)
	if math.IsNaN(f.alpha.Value) {
		f.reasons["krippendorff_alpha"] = why
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
	if len(raters) == 2 {
		var a, b []float64
		for _, it := range sortedKeys(lr.items[q]) {
			x, ok1 := lr.items[q][it][raters[0]]
			y, ok2 := lr.items[q][it][raters[1]]
			if ok1 && ok2 {
				a, b = append(a, x), append(b, y)
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
	} else {
		why := fmt.Sprintf("%d raters: Cohen's κ needs exactly two", len(raters))
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
	lr, err := readLongRatings(cmd.String("input"))
	if err != nil {
		return err
	}
	var figs []inputFigures
	for _, q := range lr.questions {
		figs = append(figs, figuresOf(lr, q, level, opt))
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
