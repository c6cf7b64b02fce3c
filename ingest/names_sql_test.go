package ingest

import (
	"os"
	"path/filepath"
	"testing"
)

// Paths the user names reach DuckDB only as quoted literals: a warehouse
// and a lake in folders whose names hold quotes and SQL open, export and
// read as any other, and nothing of the name runs.
func TestNamesWithQuotesReachSQLQuoted(t *testing.T) {
	base := filepath.Join(t.TempDir(), `it's "q"; DROP TABLE runs; --`)
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
	var runs int
	if err := w.db.QueryRow(`SELECT count(*) FROM runs`).Scan(&runs); err != nil || runs == 0 {
		t.Fatalf("runs: %d %v", runs, err)
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
	_, got, err := l.Query(ctx, `SELECT count(*) FROM runs`)
	if err != nil || len(got) != 1 || got[0][0] != int64(runs) {
		t.Fatalf("the lake's runs: %v %v, want %d", got, err, runs)
	}
}
