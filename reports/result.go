// Package reports renders results: tables in several formats, and (later)
// the report folder. It computes nothing statistical.
package reports

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Result is a plain table of values: what query and the summaries print.
type Result struct {
	Columns []string
	Rows    [][]any
}

// Formats a Result can be written in.
var ResultFormats = []string{"table", "json", "csv"}

// WriteResult writes r in format (table, json or csv).
func WriteResult(w io.Writer, format string, r *Result) error {
	switch format {
	case "", "table":
		return writeText(w, r)
	case "json":
		return writeJSON(w, r)
	case "csv":
		return writeCSV(w, r)
	}
	return fmt.Errorf("format: expected one of %s, found %q", strings.Join(ResultFormats, ", "), format)
}

// TableRows is how many rows the table format shows of a streamed result
// (RowWriter); CSV and JSON write every row.
const TableRows = 10000

// RowWriter writes a result row by row in one of ResultFormats, so that
// a result of any size is written in bounded memory: CSV and JSON as the
// rows come, the table (whose columns are as wide as their widest cell)
// from the first TableRows rows, with a note of how many more there were.
type RowWriter struct {
	w      io.Writer
	format string
	cols   []string
	csv    *csv.Writer
	buf    *bufio.Writer
	rows   int
	table  *Result
	more   int
}

// NewRowWriter starts writing a result with columns cols to w.
func NewRowWriter(w io.Writer, format string, cols []string) (*RowWriter, error) {
	rw := &RowWriter{w: w, format: format, cols: cols}
	switch format {
	case "", "table":
		rw.table = &Result{Columns: cols}
	case "json":
		rw.buf = bufio.NewWriterSize(w, 64<<10)
		rw.buf.WriteString("[")
	case "csv":
		rw.csv = csv.NewWriter(w)
		rw.csv.Write(cols)
	default:
		return nil, fmt.Errorf("format: expected one of %s, found %q", strings.Join(ResultFormats, ", "), format)
	}
	return rw, nil
}

// Row writes one row (vals is not kept).
func (rw *RowWriter) Row(vals []any) error {
	switch {
	case rw.table != nil:
		if len(rw.table.Rows) >= TableRows {
			rw.more++
			return nil
		}
		rw.table.Rows = append(rw.table.Rows, append([]any(nil), vals...))
	case rw.csv != nil:
		rec := make([]string, len(vals))
		for i, v := range vals {
			rec[i] = CSVCell(v)
		}
		if err := rw.csv.Write(rec); err != nil {
			return err
		}
	default:
		if rw.rows > 0 {
			rw.buf.WriteString(",")
		}
		writeJSONObject(rw.buf, rw.cols, vals)
	}
	rw.rows++
	return nil
}

// Close finishes the result.
func (rw *RowWriter) Close() error {
	switch {
	case rw.table != nil:
		if err := writeText(rw.w, rw.table); err != nil {
			return err
		}
		if rw.more > 0 {
			_, err := fmt.Fprintf(rw.w, "… and %d more rows, not shown: --format csv or json writes them all\n", rw.more)
			return err
		}
		return nil
	case rw.csv != nil:
		rw.csv.Flush()
		return rw.csv.Error()
	}
	if rw.rows > 0 {
		rw.buf.WriteString("\n")
	}
	rw.buf.WriteString("]\n")
	return rw.buf.Flush()
}

type byteWriter interface {
	io.Writer
	WriteString(string) (int, error)
}

// writeJSONObject writes one row as "\n  {…}", keys in column order.
func writeJSONObject(b byteWriter, cols []string, row []any) {
	b.WriteString("\n  {")
	for i, v := range row {
		if i > 0 {
			b.WriteString(", ")
		}
		k, _ := json.Marshal(cols[i])
		b.Write(k)
		b.WriteString(": ")
		b.Write(jsonValue(v))
	}
	b.WriteString("}")
}

// Cell formats one value as text for people: integers plainly, floats with
// up to six significant digits, times in RFC 3339, NULL as empty. Files
// for programs use CSVCell, which loses no digit.
func Cell(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case []byte:
		return string(x)
	case time.Time:
		return x.UTC().Format(time.RFC3339Nano)
	case float64:
		return formatFloat(x)
	case float32:
		return formatFloat(float64(x))
	case bool:
		return strconv.FormatBool(x)
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return fmt.Sprint(x)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// CSVCell formats one value for CSV: as Cell, except that a float is
// written in full, in the shortest form that reads back as the same
// float64 (the form JSON output uses), and NaN or an infinity, which JSON
// writes as null, is empty.
func CSVCell(v any) string {
	switch x := v.(type) {
	case float32:
		v = float64(x)
	}
	if f, ok := v.(float64); ok {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return ""
		}
		return string(jsonValue(f))
	}
	return Cell(v)
}

func formatFloat(f float64) string {
	if math.IsNaN(f) {
		return "NaN"
	}
	if f == math.Trunc(f) && math.Abs(f) < 1e15 {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return strconv.FormatFloat(f, 'g', 6, 64)
}

func numeric(v any) bool {
	switch v.(type) {
	case float64, float32, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return true
	}
	return false
}

func writeText(w io.Writer, r *Result) error {
	width := make([]int, len(r.Columns))
	right := make([]bool, len(r.Columns))
	cells := make([][]string, len(r.Rows))
	for i, c := range r.Columns {
		width[i] = utf8.RuneCountInString(c)
		right[i] = true
	}
	for ri, row := range r.Rows {
		cells[ri] = make([]string, len(row))
		for i, v := range row {
			s := strings.ReplaceAll(Cell(v), "\n", "⏎")
			if n := utf8.RuneCountInString(s); n > 60 {
				s = string([]rune(s)[:59]) + "…"
			}
			cells[ri][i] = s
			width[i] = max(width[i], utf8.RuneCountInString(s))
			if v != nil && !numeric(v) {
				right[i] = false
			}
		}
	}
	var b bytes.Buffer
	line := func(vals []string) {
		start := b.Len()
		for i, s := range vals {
			if i > 0 {
				b.WriteString("  ")
			}
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(s))
			if right[i] {
				b.WriteString(pad + s)
			} else if i < len(vals)-1 {
				b.WriteString(s + pad)
			} else {
				b.WriteString(s)
			}
		}
		b.Truncate(start + len(bytes.TrimRight(b.Bytes()[start:], " ")))
		b.WriteByte('\n')
	}
	line(r.Columns)
	rule := make([]string, len(r.Columns))
	for i := range rule {
		rule[i] = strings.Repeat("─", width[i])
	}
	line(rule)
	for _, row := range cells {
		line(row)
	}
	_, err := w.Write(b.Bytes())
	return err
}

// writeJSON writes an array of objects whose keys keep the column order.
func writeJSON(w io.Writer, r *Result) error {
	var b bytes.Buffer
	b.WriteString("[")
	for ri, row := range r.Rows {
		if ri > 0 {
			b.WriteString(",")
		}
		writeJSONObject(&b, r.Columns, row)
	}
	if len(r.Rows) > 0 {
		b.WriteString("\n")
	}
	b.WriteString("]\n")
	_, err := w.Write(b.Bytes())
	return err
}

func jsonValue(v any) []byte {
	switch x := v.(type) {
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return []byte("null")
		}
	case time.Time:
		v = x.UTC().Format(time.RFC3339Nano)
	case []byte:
		v = string(x)
	}
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(fmt.Sprint(v))
	}
	return b
}

func writeCSV(w io.Writer, r *Result) error {
	cw := csv.NewWriter(w)
	cw.Write(r.Columns)
	for _, row := range r.Rows {
		rec := make([]string, len(row))
		for i, v := range row {
			rec[i] = CSVCell(v)
		}
		cw.Write(rec)
	}
	cw.Flush()
	return cw.Error()
}

// Section is a named table of a result made of several.
type Section struct {
	Name, Title string
	Table       *Result
}

// WriteSections writes several tables: as text, each under its title; as
// CSV, one long table whose first column, table, names the section and
// whose other columns are every section's, in order of first appearance
// (a section leaves the columns it lacks empty), so that every record has
// the same fields; as JSON, one object with a member per section.
func WriteSections(w io.Writer, format string, secs []Section) error {
	switch format {
	case "", "table":
		for i, s := range secs {
			if i > 0 {
				fmt.Fprintln(w)
			}
			fmt.Fprintf(w, "%s\n", s.Title)
			if err := writeText(w, s.Table); err != nil {
				return err
			}
		}
		return nil
	case "csv":
		var parts []csvPart
		for _, s := range secs {
			p := csvPart{name: s.Name, head: s.Table.Columns}
			for _, row := range s.Table.Rows {
				rec := make([]string, len(row))
				for i, v := range row {
					rec[i] = CSVCell(v)
				}
				p.rows = append(p.rows, rec)
			}
			parts = append(parts, p)
		}
		return writeLongCSV(w, parts)
	case "json":
		var b bytes.Buffer
		b.WriteString("{")
		for i, s := range secs {
			if i > 0 {
				b.WriteString(",")
			}
			k, _ := json.Marshal(s.Name)
			b.WriteString("\n")
			b.Write(k)
			b.WriteString(": ")
			var t bytes.Buffer
			if err := writeJSON(&t, s.Table); err != nil {
				return err
			}
			b.Write(bytes.TrimRight(t.Bytes(), "\n"))
		}
		b.WriteString("\n}\n")
		_, err := w.Write(b.Bytes())
		return err
	}
	return fmt.Errorf("format: expected one of %s, found %q", strings.Join(ResultFormats, ", "), format)
}

// JSONValue encodes v as JSON, NaN and infinities as null.
func JSONValue(v any) string { return string(jsonValue(v)) }

// csvPart is one table of a long CSV: its name, header and records.
type csvPart struct {
	name string
	head []string
	rows [][]string
}

// writeLongCSV writes tables as one CSV: a first column, table, naming
// each record's table, then the union of the tables' columns in order of
// first appearance; a table leaves the columns it lacks empty.
func writeLongCSV(w io.Writer, parts []csvPart) error {
	cols := []string{"table"}
	at := map[string]int{"table": 0}
	for _, p := range parts {
		for _, c := range p.head {
			if _, ok := at[c]; !ok {
				at[c] = len(cols)
				cols = append(cols, c)
			}
		}
	}
	cw := csv.NewWriter(w)
	cw.Write(SpreadsheetSafe(append([]string(nil), cols...)))
	for _, p := range parts {
		for _, row := range p.rows {
			rec := make([]string, len(cols))
			rec[0] = p.name
			for i, v := range row {
				rec[at[p.head[i]]] = v
			}
			cw.Write(rec)
		}
	}
	cw.Flush()
	return cw.Error()
}
