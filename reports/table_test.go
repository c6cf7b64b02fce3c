package reports

import (
	"bytes"
	"encoding/csv"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./reports -update to write it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file:\n%s", name, got)
	}
}

// sampleTable has groups, a tie for best, a missing value, intervals and
// names that every format must escape.
func sampleTable() *Table {
	nan := math.NaN()
	return &Table{
		Name: "main", Caption: "Main results & <script>alert(1)</script> 100% of_runs",
		Keys:    []string{"Model", "Harness"},
		Columns: []Column{{Header: "TC", Digits: 1, Higher: true}, {Header: "TR-J", Digits: 2, Higher: true}, {Header: "n", Digits: 0}},
		Rows: []Row{
			{Keys: []string{"Claude Opus 5", "CC"}, Cells: []Value{{V: 62.71, Lo: 58.1, Hi: 67.04, CI: true}, {V: 3.9, Lo: 3.7, Hi: 4.1, CI: true}, {V: 90}}},
			{Keys: []string{"Claude Opus 5", "OC"}, Cells: []Value{{V: 55.0, Lo: 50.2, Hi: 59.9, CI: true}, {V: 3.91, Lo: 3.6, Hi: 4.2, CI: true}, {V: 90}}},
			{Keys: []string{"Qwen_3.5 <b>2B</b>", "CD"}, Cells: []Value{{V: 62.7, Lo: 57, Hi: 66, CI: true}, {V: nan}, {V: 30}}},
			{Keys: []string{"Qwen_3.5 <b>2B</b>", "OC|x"}, Cells: []Value{{V: 12.3, CI: true, Lo: nan, Hi: nan}, {V: 2.5, Lo: 2.1, Hi: 2.9, CI: true}, {V: 30}}},
		},
		Notes: []string{"95% cluster-bootstrap intervals (expanded percentile), 10000 resamples, seed 1; n = runs"},
	}
}

func TestTableGoldens(t *testing.T) {
	for _, f := range TableFormats {
		for _, ci := range []bool{false, true} {
			var b bytes.Buffer
			if err := WriteTable(&b, f, sampleTable(), TableOptions{Intervals: ci}); err != nil {
				t.Fatal(err)
			}
			name := "table." + f
			if ci {
				name = "table_ci." + f
			}
			golden(t, name, b.Bytes())
		}
	}
}

// Best and second best: ties share the mark, on the values as shown.
func TestTableMarks(t *testing.T) {
	m := sampleTable().marks()
	want := [][]int{{1, 2, 0}, {2, 1, 0}, {1, 0, 0}, {0, 0, 0}}
	for i := range want {
		for j := range want[i] {
			if m[i][j] != want[i][j] {
				t.Errorf("row %d column %d: mark %d, want %d", i, j, m[i][j], want[i][j])
			}
		}
	}
}

// Text is data in every format: no raw tag in HTML or Markdown, no
// unescaped LaTeX special.
func TestTableEscaping(t *testing.T) {
	for _, f := range []string{"html", "md"} {
		var b bytes.Buffer
		WriteTable(&b, f, sampleTable(), TableOptions{})
		if strings.Contains(b.String(), "<script>") || strings.Contains(b.String(), "<b>") {
			t.Errorf("%s: raw tag in\n%s", f, b.String())
		}
	}
	var b bytes.Buffer
	WriteTable(&b, "latex", sampleTable(), TableOptions{})
	if !strings.Contains(b.String(), `\& \textless{}script\textgreater{}`) || !strings.Contains(b.String(), `100\% of\_runs`) {
		t.Errorf("latex:\n%s", b.String())
	}
	if err := WriteTable(&b, "docx", sampleTable(), TableOptions{}); err == nil {
		t.Error("unknown format accepted")
	}
}

// A configuration named like a formula reaches a table's CSV neutralised;
// its values read back as numbers.
func TestTableCSVNeutralisesFormulas(t *testing.T) {
	tb := sampleTable()
	tb.Rows[0].Keys[0] = `=HYPERLINK("http://evil.example","x")`
	tb.Rows[1].Keys[1] = "@SUM(A1:A9)"
	var b bytes.Buffer
	if err := WriteTable(&b, "csv", tb, TableOptions{Intervals: true}); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if recs[1][0] != `'=HYPERLINK("http://evil.example","x")` || recs[2][1] != "'@SUM(A1:A9)" || recs[1][2] != "62.71" {
		t.Errorf("%q", recs[1:3])
	}
}
