package ingest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A table file replaced by one of the same size whose modification time
// was set back (as cp -p, rsync -t or touch -r do) is not the file the
// memory of a checked lake remembers: the lake is checked again.
func TestLakeMemoSeesACopyThatKeptItsTime(t *testing.T) {
	dir, _ := smallLake(t)
	defer func(old func() string) { lakeCheckDir = old }(lakeCheckDir)
	cache := t.TempDir()
	lakeCheckDir = func() string { return cache }
	if err := openLakeErr(dir); err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(dir, "runs.parquet")
	st, err := os.Stat(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	i := strings.LastIndex(string(b), "DuckDB")
	if i < 0 {
		t.Fatal("runs.parquet names no DuckDB writer")
	}
	b[i] = 'd' // the same rows and size, other bytes
	tmp := f + ".new"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(tmp, st.ModTime(), st.ModTime()); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, f); err != nil {
		t.Fatal(err)
	}
	if checked, err := openLakeChecked(t, dir); err != nil || !checked {
		t.Errorf("runs.parquet replaced, same size and time: checked %v, %v", checked, err)
	}
}
