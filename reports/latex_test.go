package reports

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

// Every character beyond ASCII becomes a command that pdflatex knows.
func TestLaTeXEscapesToASCII(t *testing.T) {
	for in, want := range map[string]string{
		"Spearman ρ":   `Spearman \ensuremath{\rho}`,
		"Δ (B − A)":    `\ensuremath{\Delta} (B \ensuremath{-} A)`,
		"κ, τ-b, α":    `\ensuremath{\kappa}, \ensuremath{\tau}-b, \ensuremath{\alpha}`,
		"CC → OC":      `CC \ensuremath{\rightarrow} OC`,
		"0–100":        `0--100`,
		"Café Müller":  `Caf\'{e} M\"{u}ller`,
		"naïve straße": `na\"{\i}ve stra\ss{}e`,
		"50% & $_#{}":  `50\% \& \$\_\#\{\}`,
		"a\\b ~^":      `a\textbackslash{}b \textasciitilde{}\textasciicircum{}`,
		"模型 x":         `[U+6A21][U+578B] x`,
		"n ≥ 2 · 3×":   `n \ensuremath{\geq} 2 \ensuremath{\cdot} 3\ensuremath{\times}`,
	} {
		got := latex(in)
		if got != want {
			t.Errorf("latex(%q) = %q, want %q", in, got, want)
		}
		for _, c := range []byte(got) {
			if c >= 0x80 {
				t.Errorf("latex(%q) = %q is not ASCII", in, got)
				break
			}
		}
	}
}

func wideTable(cols int) *Table {
	t := &Table{Name: "wide", Caption: "A wide table", Keys: []string{"Model", "Harness"}}
	for j := 0; j < cols; j++ {
		t.Columns = append(t.Columns, Column{Header: "Metric", Digits: 1, Higher: true})
	}
	for i := 0; i < 3; i++ {
		r := Row{Keys: []string{"Claude Opus 5", "CC"}}
		for j := 0; j < cols; j++ {
			r.Cells = append(r.Cells, Value{V: 80.123 + float64(i), Lo: 75.5, Hi: 85.25, CI: true})
		}
		t.Rows = append(t.Rows, r)
	}
	return t
}

// A table too wide for its layout is split by columns, each part with the
// key columns; the page layout holds more columns per part than one column
// does, and a narrow table is one part.
func TestLaTeXSplitsWideTables(t *testing.T) {
	opt := TableOptions{Intervals: true}
	if p := wideTable(3).parts(opt); len(p) != 1 {
		t.Errorf("3 columns: %d parts", len(p))
	}
	col := wideTable(16).parts(opt)
	opt.Layout = "page"
	page := wideTable(16).parts(opt)
	if len(col) < 3 || len(page) >= len(col) || len(page) < 2 {
		t.Errorf("16 columns: %d parts in a column, %d across the page", len(col), len(page))
	}
	var b bytes.Buffer
	if err := WriteTable(&b, "latex", wideTable(16), opt); err != nil {
		t.Fatal(err)
	}
	s := b.String()
	if !strings.HasPrefix(s, "\\begin{table*}") || strings.Count(s, "\\begin{tabular}{@{}ll") != len(page) ||
		strings.Count(s, "Claude Opus 5") != len(page) {
		t.Errorf("page layout:\n%s", s)
	}
	// Each part covers the next columns, all of them once.
	next := 0
	for _, p := range col {
		if p[0] != next || p[1] <= p[0] {
			t.Fatalf("parts %v", col)
		}
		next = p[1]
	}
	if next != 16 {
		t.Errorf("parts %v end at %d", col, next)
	}
}

// --digits sets every value column's decimals (counts keep none), in the
// marks as in the cells, and in every format.
func TestTableDigits(t *testing.T) {
	tb := &Table{Name: "d", Keys: []string{"Model"}, Columns: []Column{{Header: "TC", Digits: 2, Higher: true}, {Header: "Runs"}},
		Rows: []Row{{Keys: []string{"a"}, Cells: []Value{{V: 81.2349}, {V: 90}}}, {Keys: []string{"b"}, Cells: []Value{{V: 81.2361}, {V: 90}}}}}
	for _, tc := range []struct {
		opt  TableOptions
		want []string
	}{
		{TableOptions{}, []string{"**81.24**", "| **81.24** | 90 |"}}, // a tie at two decimals: both best
		{TableOptions{Digits: 3, Fixed: true}, []string{"<u>81.235</u>", "**81.236**"}},
		{TableOptions{Digits: 0, Fixed: true}, []string{"**81** | 90"}},
	} {
		var b bytes.Buffer
		if err := WriteTable(&b, "md", tb, tc.opt); err != nil {
			t.Fatal(err)
		}
		for _, w := range tc.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%+v: no %q in\n%s", tc.opt, w, b.String())
			}
		}
	}
	if tb.Columns[0].Digits != 2 || math.IsNaN(tb.Rows[0].Cells[0].V) {
		t.Error("the options changed the table")
	}
}
