package reports

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// Formats are the formats every analysis result is written in: the text
// table, JSON and CSV records, and Markdown, LaTeX and HTML tables.
var Formats = []string{"table", "json", "csv", "md", "latex", "html"}

// Wide says whether format lays results out for reading (one row per
// group, "value [lo, hi]" cells: table, md, latex, html) rather than as
// records (json, csv).
func Wide(format string) bool { return format != "json" && format != "csv" }

// Writer writes results in one format, chosen once (from --format): a
// result or sections of results, each with the footnotes saying how they
// were made. The text table prints footnotes as lines under it; Markdown,
// LaTeX and HTML as the notes of the (last) table; JSON and CSV, which are
// records, leave them out. Quiet leaves them out everywhere.
type Writer struct {
	w      io.Writer
	format string
	quiet  bool
}

// NewWriter makes a Writer for format (one of Formats: another is an
// error when the writer first writes).
func NewWriter(w io.Writer, format string, quiet bool) *Writer {
	return &Writer{w: w, format: format, quiet: quiet}
}

// Format is the writer's format.
func (o *Writer) Format() string { return o.format }

// Result writes one result with its footnotes.
func (o *Writer) Result(r *Result, foot []string) error {
	return o.Sections([]Section{{Name: "result", Table: r}}, foot)
}

// Sections writes several results, each under its title (WriteSections
// for table, JSON and CSV; one captioned table each otherwise).
func (o *Writer) Sections(secs []Section, foot []string) error {
	if !slices.Contains(Formats, o.format) {
		return fmt.Errorf("format: expected one of %s, found %q", strings.Join(Formats, ", "), o.format)
	}
	if o.quiet {
		foot = nil
	}
	switch o.format {
	case "table", "json", "csv":
		var err error
		if len(secs) == 1 && secs[0].Title == "" {
			err = WriteResult(o.w, o.format, secs[0].Table)
		} else {
			err = WriteSections(o.w, o.format, secs)
		}
		if err != nil || o.format != "table" {
			return err
		}
		for _, l := range foot {
			if _, err := fmt.Fprintln(o.w, l); err != nil {
				return err
			}
		}
		return nil
	}
	var ts []*Table
	for _, s := range secs {
		ts = append(ts, ResultTable(s.Name, s.Title, s.Table))
	}
	if len(ts) > 0 {
		ts[len(ts)-1].Notes = foot
	}
	return WriteTables(o.w, o.format, ts, TableOptions{})
}
