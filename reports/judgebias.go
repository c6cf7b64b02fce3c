package reports

import (
	"context"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/gymlens/gymlens/analysis"
)

// ItemLengthStore is a warehouse that can count the length of the items
// its judges read (kind tc, trj or ta; analysis.ItemLengths).
type ItemLengthStore interface {
	ItemLengthFunc(ctx context.Context) (func(runID, kind, task string) (float64, bool), error)
}

// ReadFamiliesFile reads a families file (analysis.ReadFamilies).
func ReadFamiliesFile(path string) (analysis.Families, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--families: %w", err)
	}
	defer f.Close()
	return analysis.ReadFamilies(f, path)
}

// families reads --families, refusing its absence for what needs it.
func (x *Exec) families(what string) (analysis.Families, error) {
	if x.String("families") == "" && x.IsSet("families") {
		return nil, analysis.Optionf("--families: empty: expected FILE.csv")
	}
	path := x.String("families")
	if path == "" {
		return nil, analysis.Optionf("%s needs --families FILE: a CSV with the header name,family and a row for every agent model and judge", what)
	}
	return ReadFamiliesFile(path)
}

// itemLengths are the store's item lengths, or nil when it cannot count
// them.
func (s *Dataset) itemLengths() (analysis.ItemLengths, error) {
	ls, ok := s.store.(ItemLengthStore)
	if !ok {
		return nil, nil
	}
	f, err := ls.ItemLengthFunc(s.ctx)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// JudgeBias measures the judges' self-preference (with fam) and length
// bias (when the store can count the items' lengths) on the runs selected.
func (s *Dataset) JudgeBias(fam analysis.Families) (*analysis.JudgeBias, error) {
	ratings, err := s.packedRatings()
	if err != nil {
		return nil, err
	}
	lengths, err := s.itemLengths()
	if err != nil {
		return nil, err
	}
	runs, err := s.SelectedSet()
	if err != nil {
		return nil, err
	}
	return analysis.MeasureJudgeBias(runs, fam, lengths, ratings.All(), s.opt.Bootstrap)
}

// allRuns are every run with its tasks, by its place in Values().Runs.
func (s *Dataset) allRuns() (analysis.RunSet, error) {
	if s.opt.Keep < KeepPacked {
		return nil, fmt.Errorf("reports: a dataset that keeps no judgments (Keep %d) was asked for them: make it with KeepPacked", s.opt.Keep)
	}
	if s.packed == nil {
		return analysis.RunSlice(s.values.Runs), nil
	}
	idx := make([]int, len(s.values.Runs))
	for i := range idx {
		idx[i] = i
	}
	return packedSelection{s.packed, idx}, nil
}

// CompareDebiased is Compare as measured and leave-family-out, with the
// prediction-powered differences where humans rated the items.
func (s *Dataset) CompareDebiased(configs, harnessSwitch []string, fam analysis.Families) (*analysis.Debiased, error) {
	pairs, err := s.comparePairs(configs, harnessSwitch)
	if err != nil {
		return nil, err
	}
	ratings, err := s.packedRatings()
	if err != nil {
		return nil, err
	}
	runs, err := s.allRuns()
	if err != nil {
		return nil, err
	}
	return analysis.CompareDebiased(pairs, runs, s.values.Metrics, fam, ratings.All(), s.opt.Bootstrap)
}

// JudgeBiasSections lay out the judges' bias: self-preference, then
// length. The text formats show each estimate with its interval in one
// cell; JSON and CSV give every number a column.
func JudgeBiasSections(jb *analysis.JudgeBias, format string) []Section {
	wide := Wide(format)
	sp := &Result{Columns: []string{"judge", "family", "score", "n_own", "n_other", "own_minus_others", "other_minus_others", "self_preference", "ci_low", "ci_high", "p", "warnings"}}
	if wide {
		sp.Columns = []string{"judge", "family", "score", "n_own", "n_other", "own − others", "other − others", "self-preference [95% CI]", "p", "warnings"}
	}
	for _, s := range jb.SelfPreference {
		if wide {
			sp.Rows = append(sp.Rows, []any{s.Judge, s.Family, s.Score, s.NIn, s.NOut, num3(s.In), num3(s.Out), EstimateCell(s.Estimate), pCell(s.P), strings.Join(s.Warnings, "; ")})
			continue
		}
		sp.Rows = append(sp.Rows, []any{s.Judge, s.Family, s.Score, s.NIn, s.NOut, s.In, s.Out, s.Value, s.Lo, s.Hi, s.P, WarningsCell(format, s.Warnings)})
	}
	ln := &Result{Columns: []string{"judge", "reference", "score", "n", "slope_per_1000_chars", "ci_low", "ci_high", "p", "warnings"}}
	if wide {
		ln.Columns = []string{"judge", "reference", "score", "n", "slope per 1,000 chars [95% CI]", "p", "warnings"}
	}
	for _, l := range jb.Length {
		if wide {
			ln.Rows = append(ln.Rows, []any{l.Judge, l.Reference, l.Score, l.N, EstimateCell(l.Estimate), pCell(l.P), strings.Join(l.Warnings, "; ")})
			continue
		}
		ln.Rows = append(ln.Rows, []any{l.Judge, l.Reference, l.Score, l.N, l.Value, l.Lo, l.Hi, l.P, WarningsCell(format, l.Warnings)})
	}
	// A section with no row is left out: the notes say why.
	var secs []Section
	if len(sp.Rows) > 0 {
		secs = append(secs, Section{Name: "self_preference", Title: "Self-preference: (judge − the other judges) on agents of its family minus the same on other agents (TC on 0–100, TR-J on 1–5, TA on 0–1)", Table: sp})
	}
	if len(ln.Rows) > 0 {
		secs = append(secs, Section{Name: "length", Title: "Length: slope of (judge − reference) per 1,000 characters of the item judged (reference: the humans where they rated, else another judge)", Table: ln})
	}
	return secs
}

func num3(x float64) string { return fmt.Sprintf("%.3f", x) }

// pCell is a p-value to three significant digits.
func pCell(p float64) string {
	if math.IsNaN(p) {
		return ""
	}
	return fmt.Sprintf("%.3g", p)
}

// DebiasSections lay out the comparisons as measured and leave-family-out,
// and the prediction-powered differences.
func DebiasSections(d *analysis.Debiased, format string) []Section {
	wide := Wide(format)
	t := &Result{Columns: []string{"a", "b", "metric", "judges_left_out", "measured", "m_ci_low", "m_ci_high", "m_p", "leave_family_out", "l_ci_low", "l_ci_high", "l_p",
		"judge_bias", "b_ci_low", "b_ci_high", "conclusion", "warnings"}}
	if wide {
		t.Columns = []string{"a", "b", "metric", "judges left out", "measured [95% CI]", "p measured", "leave-family-out [95% CI]", "p left out", "judge bias [95% CI]", "conclusion", "warnings"}
	}
	for _, r := range d.Rows {
		var w []string
		for _, e := range []analysis.Estimate{r.Measured, r.LeaveOut, r.Bias} {
			w = append(w, e.Warnings...)
		}
		w = dedupe(w)
		if wide {
			change := ""
			if r.Change != "" {
				change = "changes"
			}
			t.Rows = append(t.Rows, []any{r.A, r.B, r.Metric, strings.Join(r.Dropped, ", "), EstimateCell(r.Measured), pCell(r.PMeasured),
				EstimateCell(r.LeaveOut), pCell(r.PLeaveOut), EstimateCell(r.Bias), change, strings.Join(w, "; ")})
			continue
		}
		t.Rows = append(t.Rows, []any{r.A, r.B, r.Metric, strings.Join(r.Dropped, ","), r.Measured.Value, r.Measured.Lo, r.Measured.Hi, r.PMeasured,
			r.LeaveOut.Value, r.LeaveOut.Lo, r.LeaveOut.Hi, r.PLeaveOut, r.Bias.Value, r.Bias.Lo, r.Bias.Hi, r.Change, WarningsCell(format, w)})
	}
	secs := []Section{{Name: "debiased", Title: "Paired differences B − A as measured (every judge) and leave-family-out (the judges of A's and B's model families left out); judge bias = measured − leave-family-out, from the same resamples", Table: t}}
	if len(d.PPI) > 0 {
		p := &Result{Columns: []string{"a", "b", "score", "n_a", "n_b", "rated_a", "rated_b", "judges", "j_ci_low", "j_ci_high", "ppi_corrected", "ci_low", "ci_high", "p", "warnings"}}
		if wide {
			p.Columns = []string{"a", "b", "score", "n_a", "n_b", "rated_a", "rated_b", "judges [95% CI]", "PPI-corrected [95% CI]", "p", "warnings"}
		}
		for _, x := range d.PPI {
			if wide {
				p.Rows = append(p.Rows, []any{x.A, x.B, x.Score, x.NA, x.NB, x.LabelledA, x.LabelledB, EstimateCell(x.Judge), EstimateCell(x.Corrected), pCell(x.P),
					strings.Join(x.Corrected.Warnings, "; ")})
				continue
			}
			p.Rows = append(p.Rows, []any{x.A, x.B, x.Score, x.NA, x.NB, x.LabelledA, x.LabelledB, x.Judge.Value, x.Judge.Lo, x.Judge.Hi,
				x.Corrected.Value, x.Corrected.Lo, x.Corrected.Hi, x.P, WarningsCell(format, x.Corrected.Warnings)})
		}
		secs = append(secs, Section{Name: "ppi", Title: "Item means B − A, the judges' and corrected by the human ratings (prediction-powered, scenarios resampled for both sides)", Table: p})
	}
	return secs
}

func dedupe(w []string) []string {
	var out []string
	for _, s := range w {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// agreeBias is agree --bias.
func (x *Exec) agreeBias(ctx context.Context) error {
	if x.String("judge") != "" {
		return analysis.Optionf("agree --bias measures every judge against the others: --judge does not apply")
	}
	fam, err := x.families("agree --bias")
	if err != nil {
		return err
	}
	ds, err := x.Dataset(ctx, KeepPacked)
	if err != nil {
		return err
	}
	jb, err := ds.JudgeBias(fam)
	if err != nil {
		return err
	}
	notes := jb.Notes
	if jb.Length == nil {
		notes = append(notes, "length bias not measured: this store cannot count the items' lengths")
	}
	secs := JudgeBiasSections(jb, x.Format)
	if len(secs) == 0 {
		return analysis.NoDataf("no judge bias measured: %s", strings.Join(notes, "; "))
	}
	for _, n := range notes {
		x.note("%s", n)
	}
	return x.Writer().Sections(secs, []string{BiasIntervalNote(ds.Bootstrap().WithDefaults().Level)})
}

// BiasIntervalNote says what the judge-bias intervals at level are: not
// the bootstrap the other estimates use (analysis.MeasureJudgeBias), so
// no resamples and no seed.
func BiasIntervalNote(level float64) string {
	return fmt.Sprintf("%g%% intervals: estimate ± Student's t quantile × cluster-robust (CR1) standard error, clusters = scenarios, "+
		"degrees of freedom = scenarios with items − 1 (no resampling)", 100*level)
}

// compareDebiased is compare --debias.
func (x *Exec) compareDebiased(ctx context.Context, sw []string) error {
	if x.String("judge") != "" {
		return analysis.Optionf("compare --debias compares every judge with the judges of other families: --judge does not apply")
	}
	fam, err := x.families("compare --debias")
	if err != nil {
		return err
	}
	ds, err := x.Dataset(ctx, KeepPacked)
	if err != nil {
		return err
	}
	d, err := ds.CompareDebiased(x.Pos, sw, fam)
	if err != nil {
		return err
	}
	for _, r := range d.Rows {
		if r.Change != "" {
			x.note("%s − %s, %s: %s", r.B, r.A, r.Metric, r.Change)
		}
	}
	notes := append(d.Notes, "no correction for the items' length: it needs human ratings as the reference (agree --bias measures it)")
	return x.Writer().Sections(DebiasSections(d, x.Format), x.footnotes(notes, ds.Bootstrap(), "scenarios"))
}

// FamiliesParam is --families, read by agree --bias, compare --debias and
// the report's judge-bias section.
var FamiliesParam = Param{Name: "families", Default: "", Usage: "`FILE.csv` with the header name,family: the family of every agent model and judge, as the warehouse spells them"}

// JudgeBiasTables are the table judge-bias: self-preference (when
// Options.Families names a families file) and length.
func JudgeBiasTables(ds *Dataset) ([]*Table, error) {
	var fam analysis.Families
	if f := ds.opt.Families; f != "" {
		var err error
		if fam, err = ReadFamiliesFile(f); err != nil {
			return nil, err
		}
	}
	jb, err := ds.JudgeBias(fam)
	if err != nil {
		return nil, err
	}
	note := func(t *Table, e analysis.Estimate) {
		t.Notes = append(t.Notes, BiasIntervalNote(e.Level)+".")
		for _, n := range jb.Notes {
			t.Notes = append(t.Notes, "Note: "+n+".")
		}
	}
	sp := &Table{Name: "judge-bias-self-preference", Keys: []string{"Judge", "Family", "Score"},
		Caption: "Judge self-preference: (judge − the other judges) on agents of its family minus the same on other agents; TC on 0–100, TR-J on 1–5, TA on 0–1",
		Columns: []Column{{Header: "Own − others", Digits: 3}, {Header: "Other − others", Digits: 3}, {Header: "Self-preference", Digits: 3}, {Header: "p", Digits: 3}, {Header: "n own", Digits: 0}, {Header: "n other", Digits: 0}}}
	for _, s := range jb.SelfPreference {
		sp.Rows = append(sp.Rows, Row{Keys: []string{s.Judge, s.Family, s.Score}, Cells: []Value{{V: s.In}, {V: s.Out}, {V: s.Value, Lo: s.Lo, Hi: s.Hi, CI: true}, {V: s.P},
			{V: float64(s.NIn)}, {V: float64(s.NOut)}}})
	}
	ln := &Table{Name: "judge-bias-length", Keys: []string{"Judge", "Reference", "Score"},
		Caption: "Judge length bias: slope of (judge − reference) per 1,000 characters of the item judged; the reference is the humans where they rated, else another judge",
		Columns: []Column{{Header: "Slope", Digits: 3}, {Header: "p", Digits: 3}, {Header: "n", Digits: 0}}}
	for _, l := range jb.Length {
		ln.Rows = append(ln.Rows, Row{Keys: []string{l.Judge, l.Reference, l.Score}, Cells: []Value{{V: l.Value, Lo: l.Lo, Hi: l.Hi, CI: true}, {V: l.P}, {V: float64(l.N)}}})
	}
	var out []*Table
	if len(jb.SelfPreference) > 0 {
		note(sp, jb.SelfPreference[0].Estimate)
		out = append(out, sp)
	}
	if len(jb.Length) > 0 {
		note(ln, jb.Length[0].Estimate)
		out = append(out, ln)
	}
	if len(out) == 0 {
		return nil, analysis.NoDataf("no judge bias measured: %s", strings.Join(jb.Notes, "; "))
	}
	return out, nil
}
