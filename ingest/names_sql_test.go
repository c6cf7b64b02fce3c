package ingest

import (
	"os"
	"path/filepath"
	"testing"
)

// Paths the user names reach DuckDB only as quoted literals: a warehouse
// and a lake in folders whose names hold quotes, SQL and glob characters
// open, export and read as any other, and nothing of the name runs.
func TestNamesWithQuotesReachSQLQuoted(t *testing.T) {
	base := filepath.Join(t.TempDir(), `it's "q"; DROP TABLE runs; -- [1] *?`)
	if err := os.MkdirAll(base, 0o755); err != nil {
		t.Fatal(err)
	}
	w, err := Open(ctx, filepath.Join(base, `w'"; --.duckdb`), OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.Ingest(ctx, []string{smallCorpus(t)}, IngestOptions{}); err != nil {
		t.Fatal(err)
	}
	tables := []string{"runs", "events", "task_outcomes", "judgments"}
	want := map[string]int64{}
	for _, tb := range tables {
		var n int64
		if err := w.db.QueryRow(`SELECT count(*) FROM ` + tb).Scan(&n); err != nil || n == 0 {
			t.Fatalf("%s: %d %v", tb, n, err)
		}
		want[tb] = n
	}
	lake := filepath.Join(base, `lake'); SELECT 1; --`)
	if _, err := w.Export(ctx, lake, "parquet"); err != nil {
		t.Fatal(err)
	}
	l, err := Open(ctx, lake, OpenOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	// Every table, the ones split by configuration too: the folder's
	// [1], * and ? are its name, not a pattern.
	for _, tb := range tables {
		_, got, err := l.Query(ctx, `SELECT count(*) FROM `+tb)
		if err != nil || len(got) != 1 || got[0][0] != want[tb] {
			t.Errorf("the lake's %s: %v %v, want %d", tb, got, err, want[tb])
		}
	}
}
