package ingest

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/gymlens/gymlens/internal/sample"
)

func sampleWarehouse(t *testing.T) *Warehouse {
	t.Helper()
	dir := t.TempDir()
	if _, err := sample.Write(dir, sample.Options{Seed: 5, Configs: 2}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "w.duckdb")
	w, err := Open(ctx, path, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Ingest(ctx, []string{dir}, IngestOptions{}); err != nil {
		t.Fatal(err)
	}
	w.Close()
	w, err = Open(ctx, path, OpenOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

func TestExportParquetAndArrow(t *testing.T) {
	w := sampleWarehouse(t)
	// Every table of the warehouse is exported.
	rows, err := w.db.Query(`SELECT table_name FROM duckdb_tables() WHERE database_name = current_database() AND schema_name = 'main' ORDER BY ALL`)
	if err != nil {
		t.Fatal(err)
	}
	var all, listed []string
	for rows.Next() {
		var n string
		rows.Scan(&n)
		all = append(all, n)
	}
	rows.Close()
	for _, tb := range exportTables {
		listed = append(listed, tb.name)
	}
	slices.Sort(listed)
	if strings.Join(all, ",") != strings.Join(listed, ",") {
		t.Errorf("tables %v, exported %v", all, listed)
	}
	counts := map[string]int64{}
	for _, tb := range exportTables {
		var n int64
		w.db.QueryRow(`SELECT count(*) FROM ` + tb.name).Scan(&n)
		counts[tb.name] = n
	}
	pq := t.TempDir()
	res, err := w.Export(ctx, pq, "parquet")
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != len(exportTables) {
		t.Fatalf("%d tables exported", len(res))
	}
	for _, r := range res {
		glob := r.Path
		if st, err := os.Stat(r.Path); err == nil && st.IsDir() {
			glob = filepath.Join(r.Path, "*", "*.parquet")
		}
		var n int64
		q := `SELECT count(*) FROM read_parquet(` + sqlString(glob) + `, hive_partitioning = true)`
		if err := w.db.QueryRow(q).Scan(&n); err != nil {
			t.Fatalf("%s: %v", r.Table, err)
		}
		if n != counts[r.Table] || n != r.Rows {
			t.Errorf("%s: %d rows read back, %d in the warehouse", r.Table, n, counts[r.Table])
		}
	}
	parts, _ := filepath.Glob(filepath.Join(pq, "events", "config_key=*"))
	if len(parts) != 2 || !strings.Contains(parts[0], "config_key=qwen-3.5-2b_c") {
		t.Errorf("partitions %v", parts)
	}
	arrowDir := t.TempDir()
	if _, err := w.Export(ctx, arrowDir, "arrow"); err != nil {
		t.Fatal(err)
	}
	for _, tb := range exportTables {
		f, err := os.Open(filepath.Join(arrowDir, tb.name+".arrow"))
		if err != nil {
			t.Fatal(err)
		}
		r, err := ipc.NewFileReader(f, ipc.WithAllocator(memory.DefaultAllocator))
		if err != nil {
			t.Fatalf("%s: %v", tb.name, err)
		}
		var n int64
		for i := 0; i < r.NumRecords(); i++ {
			rec, err := r.RecordBatch(i)
			if err != nil {
				t.Fatal(err)
			}
			n += rec.NumRows()
		}
		if n != counts[tb.name] {
			t.Errorf("%s.arrow: %d rows, want %d", tb.name, n, counts[tb.name])
		}
		if tb.name == "events" && r.Schema().FieldIndices("seq") == nil {
			t.Errorf("events.arrow has no seq column: %v", r.Schema())
		}
		r.Close()
		f.Close()
	}
	if _, err := w.Export(ctx, t.TempDir(), "xlsx"); err == nil {
		t.Error("an unknown export format was accepted")
	}
}

func TestQueryIsReadOnly(t *testing.T) {
	w := sampleWarehouse(t)
	cols, rows, err := w.Query(ctx, `SELECT persona_group, count(*) AS runs FROM run_view GROUP BY ALL ORDER BY ALL`)
	if err != nil {
		t.Fatal(err)
	}
	if len(cols) != 2 || len(rows) != 3 || rows[0][0] != "B" {
		t.Errorf("%v %v", cols, rows)
	}
	for _, q := range []string{
		`DELETE FROM runs`,
		`CREATE TABLE x (a INT)`,
		`COPY runs TO '` + filepath.Join(t.TempDir(), "x.csv") + `'`,
		`SELECT * FROM read_csv('/etc/passwd')`,
		`SET enable_external_access = true`,
	} {
		if _, _, err := w.Query(ctx, q); err == nil {
			t.Errorf("%s: allowed", q)
		}
	}
}
