package reports

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"html"
	"io"
	"math"
	"strconv"
	"strings"
)

// Table is the one model every paper table is written from: leading text
// columns (Keys: model, harness, …) and numeric columns, each cell a value
// with an optional interval.
type Table struct {
	Name    string // file stem and LaTeX label, e.g. "main"
	Caption string
	Keys    []string // headers of the text columns
	Columns []Column
	Rows    []Row
	Notes   []string // what every number rests on: n, interval method, resamples, seed
	// NoGroups shows every key of every row (query results), instead of
	// writing a repeated first key once per group.
	NoGroups bool
	// Ties, when not nil, marks by significance instead of rank: a cell
	// is bold when its row is the column's best or not distinguishable
	// from it (Ties[row][column]); nothing is underlined.
	Ties [][]bool
}

// Column is a numeric column.
type Column struct {
	Header string
	Digits int  // decimals shown
	Higher bool // higher is better: the best value is bold, the second underlined
}

// Row is a row: its text cells, then one cell per column. Rows whose first
// key repeats the previous row's form a group: the key is written once and
// groups are ruled apart.
type Row struct {
	Keys  []string
	Cells []Value
}

// Value is a value (NaN: none) with its interval when CI is set.
type Value struct {
	V, Lo, Hi float64
	CI        bool
}

// TableFormats are the formats WriteTable writes.
var TableFormats = []string{"latex", "md", "csv", "html"}

// TableOptions tune the writers.
type TableOptions struct {
	Intervals bool // show intervals where cells have them
	// Layout is the LaTeX layout (Layouts): "column" (or "") for one
	// column of a two-column paper, "page" for a table across both.
	Layout string
	// Digits, when Fixed, is the decimals of every value column (counts
	// keep none); otherwise each column shows its own (the metric
	// registry's).
	Digits int
	Fixed  bool
}

// apply returns t with the options' decimals.
func (o TableOptions) apply(t *Table) *Table {
	if !o.Fixed {
		return t
	}
	c := *t
	c.Columns = make([]Column, len(t.Columns))
	for j, col := range t.Columns {
		if col.Digits > 0 {
			col.Digits = o.Digits
		}
		c.Columns[j] = col
	}
	return &c
}

// WriteTable writes t in format.
func WriteTable(w io.Writer, format string, t *Table, opt TableOptions) error {
	var b bytes.Buffer
	t = opt.apply(t)
	switch format {
	case "latex":
		writeLaTeX(&b, t, opt)
	case "md":
		writeMarkdown(&b, t, opt)
	case "csv":
		if err := writeTableCSV(&b, t); err != nil {
			return err
		}
	case "html":
		writeHTML(&b, t, opt)
	default:
		return fmt.Errorf("format: expected one of %s, found %q", strings.Join(TableFormats, ", "), format)
	}
	_, err := w.Write(b.Bytes())
	return err
}

// Marks are the marks the writers put on each cell: 1 bold (the
// column's best, or not distinguishable from it under Ties), 2
// underlined (the second best), 0 none.
func (t *Table) Marks() [][]int { return t.marks() }

// marks ranks each Higher column's shown values: 1 for the best, 2 for the
// second best (ties share a rank), 0 otherwise.
func (t *Table) marks() [][]int {
	m := make([][]int, len(t.Rows))
	for i := range m {
		m[i] = make([]int, len(t.Columns))
	}
	if t.Ties != nil {
		for i := range m {
			for j := range m[i] {
				if i < len(t.Ties) && j < len(t.Ties[i]) && t.Ties[i][j] {
					m[i][j] = 1
				}
			}
		}
		return m
	}
	for j, c := range t.Columns {
		if !c.Higher {
			continue
		}
		var best, second = math.Inf(-1), math.Inf(-1)
		shown := func(v float64) float64 {
			p := math.Pow(10, float64(c.Digits))
			return math.Round(v*p) / p
		}
		for _, r := range t.Rows {
			v := shown(r.Cells[j].V)
			if math.IsNaN(v) {
				continue
			}
			if v > best {
				best, second = v, best
			} else if v < best && v > second {
				second = v
			}
		}
		for i, r := range t.Rows {
			v := shown(r.Cells[j].V)
			switch {
			case v == best:
				m[i][j] = 1
			case v == second && !math.IsInf(second, -1):
				m[i][j] = 2
			}
		}
	}
	return m
}

func (c Column) format(v float64) string {
	if math.IsNaN(v) {
		return "–"
	}
	return strconv.FormatFloat(v, 'f', c.Digits, 64)
}

// groupStart says whether row i starts a group (its first key differs from
// the previous row's).
func (t *Table) groupStart(i int) bool {
	if t.NoGroups {
		return i == 0
	}
	if i == 0 || len(t.Keys) == 0 {
		return true
	}
	return t.Rows[i].Keys[0] != t.Rows[i-1].Keys[0]
}

// style is how a format escapes text and marks values.
type style struct {
	esc          func(string) string
	best, second func(string) string
	interval     func(lo, hi string) string
	join         func(value, interval string) string // nil: the interval after the value
}

var (
	mdStyle = style{esc: mdEscaper.Replace, best: func(s string) string { return "**" + s + "**" },
		second:   func(s string) string { return "<u>" + s + "</u>" },
		interval: func(lo, hi string) string { return fmt.Sprintf(" [%s, %s]", lo, hi) }}
	htmlStyle = style{esc: html.EscapeString, best: func(s string) string { return "<strong>" + s + "</strong>" },
		second:   func(s string) string { return "<u>" + s + "</u>" },
		interval: func(lo, hi string) string { return fmt.Sprintf(" <span class=\"ci\">[%s, %s]</span>", lo, hi) }}
)

// cells are row i's text cells (a group's repeated first key blank) and
// its values, marked and with their intervals, in a format's style.
func (t *Table) cells(i int, marks [][]int, opt TableOptions, st style) (keys, nums []string) {
	r := t.Rows[i]
	for k, key := range r.Keys {
		if k == 0 && !t.NoGroups && !t.groupStart(i) {
			key = ""
		}
		keys = append(keys, st.esc(key))
	}
	for j, c := range r.Cells {
		s := st.esc(t.Columns[j].format(c.V))
		switch marks[i][j] {
		case 1:
			s = st.best(s)
		case 2:
			s = st.second(s)
		}
		if opt.Intervals && c.CI && !math.IsNaN(c.Lo) {
			ci := st.interval(st.esc(t.Columns[j].format(c.Lo)), st.esc(t.Columns[j].format(c.Hi)))
			if st.join != nil {
				s = st.join(s, ci)
			} else {
				s += ci
			}
		}
		nums = append(nums, s)
	}
	return keys, nums
}

var mdEscaper = strings.NewReplacer(`|`, `\|`, `<`, `&lt;`, `>`, `&gt;`, `&`, `&amp;`, "*", `\*`, "_", `\_`, "`", "\\`", "\n", " ")

func writeMarkdown(b *bytes.Buffer, t *Table, opt TableOptions) {
	marks := t.marks()
	if t.Caption != "" {
		fmt.Fprintf(b, "**%s**\n\n", mdEscaper.Replace(t.Caption))
	}
	var head, rule []string
	for _, k := range t.Keys {
		head, rule = append(head, mdEscaper.Replace(k)), append(rule, ":--")
	}
	for _, c := range t.Columns {
		head, rule = append(head, mdEscaper.Replace(c.Header)), append(rule, "--:")
	}
	b.WriteString("| " + strings.Join(head, " | ") + " |\n| " + strings.Join(rule, " | ") + " |\n")
	for i := range t.Rows {
		keys, nums := t.cells(i, marks, opt, mdStyle)
		b.WriteString("| " + strings.Join(append(keys, nums...), " | ") + " |\n")
	}
	if len(t.Notes) > 0 {
		b.WriteString("\n")
		for _, n := range t.Notes {
			b.WriteString(mdEscaper.Replace(n) + "\n")
		}
	}
}

// formulaStarts are the first characters with which a spreadsheet reads a
// cell as a formula (=HYPERLINK(…), @SUM(…), +, -) or a control.
const formulaStarts = "=+-@\t\r"

// SpreadsheetSafe neutralises, in place, every text cell that a spreadsheet
// would run as a formula — one that starts with = + - @, a tab or a carriage
// return and is not a number — by putting an apostrophe before it (the
// OWASP advice): names come from run logs, which are data, and the CSV
// files of tables, the report and annotation sheets are opened in
// spreadsheets. Numbers (-2.33) stay as they are; gymlens's ratings reader
// takes the apostrophe off again. query --format csv writes values exactly.
func SpreadsheetSafe(cells []string) []string {
	for i, c := range cells {
		if c != "" && strings.IndexByte(formulaStarts, c[0]) >= 0 && !isNumber(c) {
			cells[i] = "'" + c
		}
	}
	return cells
}

func isNumber(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return err == nil && s[0] != '+' && !strings.ContainsAny(s, "xXpP_nN")
}

// writeTableCSV writes every value at full precision: a column per value
// and, for columns with intervals, its bounds.
func writeTableCSV(b *bytes.Buffer, t *Table) error {
	head, rows := t.csvRecords()
	cw := csv.NewWriter(b)
	cw.Write(SpreadsheetSafe(head))
	for _, r := range rows {
		cw.Write(r)
	}
	cw.Flush()
	return cw.Error()
}

// csvRecords are the CSV header and records of t.
func (t *Table) csvRecords() (head []string, recs [][]string) {
	hasCI := make([]bool, len(t.Columns))
	for _, r := range t.Rows {
		for j, c := range r.Cells {
			hasCI[j] = hasCI[j] || c.CI
		}
	}
	head = append([]string(nil), t.Keys...)
	for j, c := range t.Columns {
		head = append(head, c.Header)
		if hasCI[j] {
			head = append(head, c.Header+" ci_low", c.Header+" ci_high")
		}
	}
	num := func(v float64) string {
		if math.IsNaN(v) {
			return ""
		}
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	for _, r := range t.Rows {
		rec := SpreadsheetSafe(append([]string(nil), r.Keys...))
		for j, c := range r.Cells {
			rec = append(rec, num(c.V))
			if hasCI[j] {
				lo, hi := math.NaN(), math.NaN()
				if c.CI {
					lo, hi = c.Lo, c.Hi
				}
				rec = append(rec, num(lo), num(hi))
			}
		}
		recs = append(recs, rec)
	}
	return head, recs
}

// writeHTML writes the table as an HTML fragment; every text is escaped.
func writeHTML(b *bytes.Buffer, t *Table, opt TableOptions) {
	marks := t.marks()
	e := html.EscapeString
	fmt.Fprintf(b, "<table class=\"gl-table\" id=\"table-%s\">\n", e(t.Name))
	if t.Caption != "" {
		fmt.Fprintf(b, "<caption>%s</caption>\n", e(t.Caption))
	}
	b.WriteString("<thead><tr>")
	for _, k := range t.Keys {
		fmt.Fprintf(b, "<th scope=\"col\">%s</th>", e(k))
	}
	for _, c := range t.Columns {
		fmt.Fprintf(b, "<th scope=\"col\" class=\"num\">%s</th>", e(c.Header))
	}
	b.WriteString("</tr></thead>\n<tbody>\n")
	for i := range t.Rows {
		cls := ""
		if i > 0 && t.groupStart(i) {
			cls = " class=\"group\""
		}
		fmt.Fprintf(b, "<tr%s>", cls)
		keys, nums := t.cells(i, marks, opt, htmlStyle)
		for k, key := range keys {
			if k == 0 && key == "" && len(t.Rows[i].Keys) > 0 && t.Rows[i].Keys[0] != "" {
				// The group's key, written once, kept for a page that sorts.
				fmt.Fprintf(b, "<td data-key=\"%s\"></td>", e(t.Rows[i].Keys[0]))
				continue
			}
			fmt.Fprintf(b, "<td>%s</td>", key)
		}
		for _, n := range nums {
			fmt.Fprintf(b, "<td class=\"num\">%s</td>", n)
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</tbody>\n</table>\n")
	for _, n := range t.Notes {
		fmt.Fprintf(b, "<p class=\"note\">%s</p>\n", e(n))
	}
}

// WriteTables writes tables one after the other in format, a blank line
// between two; in CSV, several tables are one long table with a first
// column naming each record's table (WriteSections).
func WriteTables(w io.Writer, format string, ts []*Table, o TableOptions) error {
	if format == "csv" && len(ts) > 1 {
		parts := make([]csvPart, len(ts))
		for i, t := range ts {
			parts[i].name = t.Name
			parts[i].head, parts[i].rows = t.csvRecords()
		}
		return writeLongCSV(w, parts)
	}
	for i, t := range ts {
		if i > 0 {
			if _, err := io.WriteString(w, "\n"); err != nil {
				return err
			}
		}
		if err := WriteTable(w, format, t, o); err != nil {
			return err
		}
	}
	return nil
}
