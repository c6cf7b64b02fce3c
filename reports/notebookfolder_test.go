package reports

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// queryStore answers a notebook's sql blocks: one row, or refuses a query
// that says "fail".
type queryStore struct {
	Warehouse
}

func (queryStore) Query(_ context.Context, q string, _ ...any) ([]string, [][]any, error) {
	if strings.Contains(q, "fail") {
		return nil, nil, errors.New("no such table")
	}
	return []string{"n"}, [][]any{{int64(42)}}, nil
}

// WriteNotebookFolder reads the notebook before it opens the warehouse,
// writes nothing unless every block ran, makes the folder and returns the
// files written in name order.
func TestWriteNotebookFolder(t *testing.T) {
	ctx := context.Background()
	src := t.TempDir()
	nb := filepath.Join(src, "study.md")
	os.WriteFile(nb, []byte("# Study\n\n```sql\nSELECT 42 AS n\n```\n"), 0o644)
	opened := 0
	open := func(context.Context) (Warehouse, error) { opened++; return queryStore{}, nil }

	dir := filepath.Join(t.TempDir(), "out", "nested")
	paths, err := WriteNotebookFolder(ctx, nb, dir, NotebookOptions{Name: "w.duckdb"}, open)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(dir, "study.html"), filepath.Join(dir, "study.md")}
	if strings.Join(paths, " ") != strings.Join(want, " ") || opened != 1 {
		t.Errorf("paths %v (want %v), opened %d", paths, want, opened)
	}
	if md, err := os.ReadFile(want[1]); err != nil || !strings.Contains(string(md), "42") {
		t.Errorf("study.md: %q %v", md, err)
	}

	// A notebook that cannot be read: named, and the warehouse never opened.
	missing := filepath.Join(src, "missing.md")
	if _, err := WriteNotebookFolder(ctx, missing, dir, NotebookOptions{}, open); err == nil || !strings.HasPrefix(err.Error(), missing+": ") || opened != 1 {
		t.Errorf("a missing notebook: %v, opened %d", err, opened)
	}
	// The warehouse refused, or a block failed: nothing written.
	for name, c := range map[string]struct {
		src  string
		open func(context.Context) (Warehouse, error)
		want string
	}{
		"no warehouse":  {"# Study\n", func(context.Context) (Warehouse, error) { return nil, errors.New("no warehouse at w.duckdb") }, "no warehouse at w.duckdb"},
		"a block fails": {"# Study\n\n```sql\nSELECT fail\n```\n", open, `:3: the sql block "SELECT fail" failed: no such table`},
	} {
		os.WriteFile(nb, []byte(c.src), 0o644)
		empty := filepath.Join(t.TempDir(), "out")
		if _, err := WriteNotebookFolder(ctx, nb, empty, NotebookOptions{}, c.open); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
		if _, err := os.Stat(empty); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: %s was made (%v)", name, empty, err)
		}
	}
}
