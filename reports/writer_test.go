package reports

import (
	"bytes"
	"strings"
	"testing"
)

// One writer per format: footnotes under the text table, as the last
// table's notes in Markdown, left out of the records; quiet leaves them
// out; an unknown format is an error, not a panic.
func TestWriterFormats(t *testing.T) {
	r := &Result{Columns: []string{"metric", "value"}, Rows: [][]any{{"TC", 42.5}}}
	foot := []string{"95% intervals"}
	for format, want := range map[string][]string{
		"table": {"metric", "42.5", "95% intervals"},
		"md":    {"| metric | value |", "| TC | 42.5 |", "95% intervals"},
		"latex": {`\begin{tabular}`, `TC & 42.5`, "95\\% intervals"},
		"html":  {"<td>TC</td>", "95% intervals"},
		"json":  {`"value": 42.5`},
		"csv":   {"metric,value", "TC,42.5"},
	} {
		var b bytes.Buffer
		if err := NewWriter(&b, format, false).Result(r, foot); err != nil {
			t.Fatal(format, err)
		}
		for _, w := range want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s: no %q in\n%s", format, w, b.String())
			}
		}
		if (format == "json" || format == "csv") && strings.Contains(b.String(), "intervals") {
			t.Errorf("%s: footnotes in the records", format)
		}
		b.Reset()
		NewWriter(&b, format, true).Result(r, foot)
		if strings.Contains(b.String(), "intervals") {
			t.Errorf("%s: quiet printed the footnotes", format)
		}
	}
	if err := NewWriter(&bytes.Buffer{}, "xlsx", false).Result(r, nil); err == nil {
		t.Error("an unknown format was written")
	}
}
