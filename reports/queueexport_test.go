package reports

import (
	"encoding/csv"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gymlens/gymlens/analysis"
	"github.com/gymlens/gymlens/ingest/rows"
)

// An export writes the annotators' comments and skips in NAME.notes.csv
// beside NAME.csv (one row per item and annotator), and keeps them out of
// the ratings and PARE's decisions, which their readers read back (a
// comment is no rating, a skip no value nor decision).
func TestQueueExportWritesCommentsAndSkips(t *testing.T) {
	at := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	ans := func(item, who, q, choice string, v float64) rows.Answer {
		return rows.Answer{Item: item, Annotator: who, Question: q, Choice: choice, Value: v, At: at}
	}
	nan := math.NaN()
	dir := t.TempDir()
	items := []rows.QueueItem{{Item: "r1#t1", RunID: "r1", Task: "t1"}, {Item: "r2#t1", RunID: "r2", Task: "t1", Pos: 1}}
	q := rows.Queue{Name: "q", Kind: rows.QueueRatings, K: 2, Questions: []string{"tc"}}
	answers := []rows.Answer{ans("r1#t1", "ann", "tc", "", 0.5), ans("r1#t1", "ann", analysis.CommentQuestion, "a, \"quoted\" note", nan),
		ans("r2#t1", "ann", "tc", analysis.SkipAnswer, nan)}
	path := filepath.Join(dir, "ratings.csv")
	if n, err := WriteQueueExport(path, analysis.NewQueueState(q, items, answers), answers); err != nil || n != 1 {
		t.Fatalf("%d rows, %v", n, err)
	}
	if got := joinRecs(readCSV(t, path)); strings.Contains(got, "skip") || strings.Contains(got, "note") {
		t.Errorf("the ratings hold a skip or a comment:\n%s", got)
	}
	got := joinRecs(readCSV(t, QueueNotesPath(path)))
	if !strings.Contains(got, `q|r1#t1|r1|t1||false|ann||a, "quoted" note|2026-03-02T09:00:00Z`) || !strings.Contains(got, "q|r2#t1|r2|t1||false|ann|tc||") {
		t.Errorf("notes:\n%s", got)
	}
	// No comment, no skip: no notes file.
	path = filepath.Join(dir, "plain.csv")
	if _, err := WriteQueueExport(path, analysis.NewQueueState(q, items, answers[:1]), answers[:1]); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(QueueNotesPath(path)); err == nil {
		t.Error("a notes file without notes")
	}
}

func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

func joinRecs(recs [][]string) string {
	var b strings.Builder
	for _, r := range recs {
		b.WriteString(strings.Join(r, "|") + "\n")
	}
	return b.String()
}
