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
