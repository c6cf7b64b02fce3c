package reports

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/gymlens/gymlens/analysis"
)

func TestWriteResult(t *testing.T) {
	r := &Result{
		Columns: []string{"name", "n", "mean", "when", "note"},
		Rows: [][]any{
			{"GPT 5.6 Sol | CD | none", int64(90), 62.7125, time.Date(2026, 3, 2, 18, 0, 0, 0, time.UTC), nil},
			{`say "hi",` + "\nthen", int64(7), math.NaN(), nil, true},
			{"digits", int64(-1), 123456.789, nil, 1.0 / 3},
		},
	}
	want := map[string]string{
		"table": "name                      n     mean  when                  note\n" +
			"───────────────────────  ──  ───────  ────────────────────  ────────\n" +
			"GPT 5.6 Sol | CD | none  90  62.7125  2026-03-02T18:00:00Z\n" +
			"say \"hi\",⏎then            7      NaN                        true\n" +
			"digits                   -1   123457                        0.333333\n",
		"json": "[\n  {\"name\": \"GPT 5.6 Sol | CD | none\", \"n\": 90, \"mean\": 62.7125, \"when\": \"2026-03-02T18:00:00Z\", \"note\": null},\n" +
			"  {\"name\": \"say \\\"hi\\\",\\nthen\", \"n\": 7, \"mean\": null, \"when\": null, \"note\": true},\n" +
			"  {\"name\": \"digits\", \"n\": -1, \"mean\": 123456.789, \"when\": null, \"note\": 0.3333333333333333}\n]\n",
		"csv": "name,n,mean,when,note\nGPT 5.6 Sol | CD | none,90,62.7125,2026-03-02T18:00:00Z,\n\"say \"\"hi\"\",\nthen\",7,,,true\ndigits,-1,123456.789,,0.3333333333333333\n",
	}
	for format, w := range want {
		var b bytes.Buffer
		if err := WriteResult(&b, format, r); err != nil {
			t.Fatal(err)
		}
		if b.String() != w {
			t.Errorf("%s:\n%s\nwant\n%s", format, b.String(), w)
		}
	}
	if err := WriteResult(&bytes.Buffer{}, "xml", r); err == nil {
		t.Error("xml accepted")
	}
}

// Cells a spreadsheet would run as formulas are neutralised in the CSV of
// tables; numbers stay numbers.
func TestSpreadsheetSafe(t *testing.T) {
	got := SpreadsheetSafe([]string{`=HYPERLINK("http://x","y")`, "@SUM(A1)", "+1+1", "-2.33", "-1e-5", "+3", "\tx", "plain", "", "-", "1"})
	want := []string{`'=HYPERLINK("http://x","y")`, "'@SUM(A1)", "'+1+1", "-2.33", "-1e-5", "'+3", "'\tx", "plain", "", "'-", "1"}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%d: %q, want %q", i, got[i], want[i])
		}
	}
}

// The metrics table's foot describes the bootstrap the bootstrapped
// metrics had, whichever metric comes first, and names the metrics whose
// interval is of another kind (PARE's success with one validated run per
// scenario: a Wilson interval, no resamples).
func TestMetricsFootNamesEachIntervalKind(t *testing.T) {
	wilson := analysis.GroupEstimate{Group: map[string]string{"config": "c"}, Metric: "success", NRuns: 2,
		Estimate: analysis.Estimate{Value: 50, Lo: 9.5, Hi: 90.5, Level: 0.95, Method: "wilson", Seed: 1}}
	boot := analysis.GroupEstimate{Group: map[string]string{"config": "c"}, Metric: "proposals", NRuns: 2,
		Estimate: analysis.Estimate{Value: 1, Lo: 1, Hi: 1, Level: 0.95, Method: "expanded-percentile", Resamples: 10000, Seed: 1}}
	_, foot := MetricsOutput("table", []string{"config"}, []analysis.GroupEstimate{wilson, boot})
	if len(foot) == 0 || !strings.Contains(foot[0], "expanded-percentile interval], cluster bootstrap over scenarios, 10000 resamples") ||
		!strings.Contains(foot[0], "success: 95% Wilson score interval") || strings.Contains(strings.Join(foot, "\n"), " 0 resamples") {
		t.Errorf("foot: %q", foot)
	}
	_, foot = MetricsOutput("table", []string{"config"}, []analysis.GroupEstimate{wilson})
	if len(foot) == 0 || strings.Contains(foot[0], "bootstrap") || !strings.Contains(foot[0], "Wilson") {
		t.Errorf("foot with no bootstrap: %q", foot)
	}
}
