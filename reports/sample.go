package reports

import (
	"fmt"
	"io"

	"github.com/gymlens/gymlens/internal/sample"
)

// WriteSampleSummary writes what sample.Write made of dir: one line in
// the table format, one row of named columns in the others.
func WriteSampleSummary(w io.Writer, format, dir string, st *sample.Stats) error {
	if format != "table" {
		r := &Result{
			Columns: []string{"dir", "files", "scenarios", "configurations", "runs", "events", "task_records", "judgments", "ratings", "record_bytes", "planted_disagreements"},
			Rows:    [][]any{{dir, st.Files, st.Scenarios, st.Configs, st.Runs, st.Events, st.Tasks, st.Judgments, st.Ratings, st.RecordBytes, st.Planted}},
		}
		return WriteResult(w, format, r)
	}
	_, err := fmt.Fprintf(w, "wrote %s: %d files, %d scenarios, %d configurations, %s runs, %s events, %s task records, %s judgments, %s ratings (%.1f MB of records)\n",
		dir, st.Files, st.Scenarios, st.Configs, Thousands(int64(st.Runs)), Thousands(st.Events), Thousands(st.Tasks),
		Thousands(st.Judgments), Thousands(st.Ratings), float64(st.RecordBytes)/1e6)
	return err
}

// DemoCorpusLine is demo's line on the corpus in dir: its files and MB
// of records, and whether it was written now or reused (sample.Existing).
func DemoCorpusLine(dir string, st *sample.Stats, reused bool) string {
	how := "written"
	if reused {
		how = "reused: written before with the same seed and scale, and unchanged"
	}
	return fmt.Sprintf("sample corpus: %s (%d files, %.1f MB; %s)", dir, st.Files, float64(st.RecordBytes)/1e6, how)
}
