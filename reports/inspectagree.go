package reports

import (
	"context"
	"slices"

	"github.com/gymlens/gymlens/analysis"
	"github.com/gymlens/gymlens/ingest/rows"
)

// InspectRaterStore is a warehouse that holds what agreement on Inspect
// samples compares (the warehouse satisfies it).
type InspectRaterStore interface {
	LoadInspectRaters(ctx context.Context) (*rows.InspectRaters, error)
}

// agreeInspect is agree --source inspect: each Inspect scorer, judge
// score and human question a rater of the samples (analysis.InspectAgreement).
func (x *Exec) agreeInspect(ctx context.Context) error {
	w, err := x.Warehouse(ctx)
	if err != nil {
		return err
	}
	s, ok := w.(InspectRaterStore)
	if !ok {
		return analysis.Optionf("--source inspect: %s holds no Inspect tables", x.Name)
	}
	opt, err := x.Bootstrap()
	if err != nil {
		return err
	}
	d, err := s.LoadInspectRaters(ctx)
	if err != nil {
		return err
	}
	if len(d.Evals) == 0 {
		return analysis.NoDataf("no Inspect evaluation in %s (ingest .eval or .json logs first)", x.Name)
	}
	pairs, notes, err := analysis.InspectAgreement(d, opt)
	if err != nil {
		return err
	}
	return x.Writer().Sections(InspectAgreementSections(pairs, x.Format), x.footnotes(notes, opt, "samples (task, sample id)"))
}

// InspectAgreementSections lays out the pairs of raters of Inspect
// samples: a section of binary pairs and one of continuous pairs, with
// the columns task, a, b and n, then one "value [lo, hi]" cell per
// statistic for text; a row per statistic (AgreementColumns after task,
// a and b) for JSON and CSV.
func InspectAgreementSections(pairs []analysis.InspectPair, format string) []Section {
	var secs []Section
	for _, binary := range []bool{true, false} {
		name, title := "continuous", "Inspect samples, continuous scores: A and B each a scorer, a judge's rubric score or the humans' mean rating (items: samples × epochs × configurations)"
		if binary {
			name, title = "binary", "Inspect samples, 0/1 scores: A and B each a scorer, a judge's rubric score or the humans' mean rating (rates and agreement in percent)"
		}
		var sel []analysis.InspectPair
		for _, p := range pairs {
			if p.Binary == binary {
				sel = append(sel, p)
			}
		}
		if len(sel) == 0 {
			continue
		}
		t := &Result{}
		if Wide(format) {
			var stats []string
			for _, s := range sel[0].Stats {
				stats = append(stats, s.Stat)
			}
			t.Columns = append([]string{"task", "a", "b", "n"}, stats...)
			for _, p := range sel {
				row := []any{p.Task, p.A, p.B, 0}
				for _, s := range p.Stats {
					row[3] = s.N
					row = append(row, EstimateCell(s.Estimate))
				}
				t.Rows = append(t.Rows, row)
			}
		} else {
			t.Columns = append([]string{"task", "a", "b"}, AgreementColumns[1:]...)
			for _, p := range sel {
				long := AgreementLong(format, p.Stats)
				for _, r := range long.Rows {
					t.Rows = append(t.Rows, append([]any{p.Task, p.A, p.B}, slices.Clone(r[1:])...))
				}
			}
		}
		secs = append(secs, Section{Name: name, Title: title, Table: t})
	}
	return secs
}
