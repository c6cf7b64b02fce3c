package ingest

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// sampleWarehouse is a copy of the shared sample warehouse (seed 5, two
// configurations), open read-only.
func sampleWarehouse(t *testing.T) *Warehouse {
	t.Helper()
	path, _ := sampleCopy(t, sampleKind{seed: 5, configs: 2})
	w, err := Open(ctx, path, OpenOptions{ReadOnly: true})
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
	listed = append(listed, derivedTables...)
	slices.Sort(listed)
	if strings.Join(all, ",") != strings.Join(listed, ",") {
		t.Errorf("tables %v, exported %v", all, listed)
	}
	// And the views named in query --help are every view.
	var views []string
	vr, err := w.db.Query(`SELECT view_name FROM duckdb_views() WHERE NOT internal AND database_name = current_database() ORDER BY ALL`)
	if err != nil {
		t.Fatal(err)
	}
	for vr.Next() {
		var n string
		vr.Scan(&n)
		views = append(views, n)
	}
	vr.Close()
	if want := slices.Sorted(slices.Values(ViewNames)); !slices.Equal(views, want) {
		t.Errorf("views %v, ViewNames %v", views, want)
	}
	counts := map[string]int64{}
	var n0 int64
	for _, tb := range exportTables {
		var n int64
		q := `SELECT count(*) FROM ` + tb.name
		if tb.name == "meta" {
			q += ` WHERE key NOT IN ('run_inputs', 'page_packs')` // not the run inputs' freshness
		}
		w.db.QueryRow(q).Scan(&n)
		counts[tb.name] = n
	}
	pq := t.TempDir()
	res, err := w.Export(ctx, pq, "parquet")
	if err != nil {
		t.Fatal(err)
	}
	// Every table, then the run inputs (fresh after an ingest).
	if len(res) != len(exportTables)+1 || res[len(res)-1].Table != "run_inputs" {
		t.Fatalf("%d tables exported", len(res))
	}
	w.db.QueryRow(`SELECT count(*) FROM run_inputs`).Scan(&n0)
	counts["run_inputs"] = n0
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
		want := counts[r.Table]
		if r.Table == "meta" {
			want += 2 // the lake names the warehouse it came from and digests its tables' files
		}
		if n != want || n != r.Rows {
			t.Errorf("%s: %d rows read back, %d in the warehouse", r.Table, n, counts[r.Table])
		}
	}
	// The lake opens as a warehouse: every table's rows, the schema
	// version, the file name it came from; read-only; an incomplete one
	// is refused naming the file it lacks.
	lake, err := Open(ctx, pq, OpenOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, tb := range exportTables {
		var n int64
		if err := lake.db.QueryRow(`SELECT count(*) FROM ` + tb.name).Scan(&n); err != nil || n != counts[tb.name] && !(tb.name == "meta" && n == counts[tb.name]+2) {
			t.Errorf("lake %s: %d rows (%v), want %d", tb.name, n, err, counts[tb.name])
		}
	}
	if v, err := lake.Version(ctx); err != nil || v != migrations()[len(migrations())-1].version || lake.FileName() != filepath.Base(w.Path) {
		t.Errorf("lake: version %d (%v), file name %s", v, err, lake.FileName())
	}
	lake.Close()
	if _, err := Open(ctx, pq, OpenOptions{}); err == nil || !strings.Contains(err.Error(), "read in place, read-only") {
		t.Errorf("a lake opened for writing: %v", err)
	}
	os.Rename(filepath.Join(pq, "runs.parquet"), filepath.Join(pq, "runs.parquet.x"))
	if _, err := Open(ctx, pq, OpenOptions{ReadOnly: true}); err == nil || !strings.Contains(err.Error(), "no runs.parquet") {
		t.Errorf("a lake without runs.parquet: %v", err)
	}
	os.Rename(filepath.Join(pq, "runs.parquet.x"), filepath.Join(pq, "runs.parquet"))
	parts, _ := filepath.Glob(filepath.Join(pq, "events", "config_key=*"))
	if len(parts) != 2 || !strings.Contains(parts[0], "config_key=qwen-3.5-2b_c") {
		t.Errorf("partitions %v", parts)
	}
	// The hive key is the run's configuration, and it is not repeated in
	// the files.
	var wrong, inFile int64
	w.db.QueryRow(`SELECT count(*) FROM read_parquet(` + sqlString(filepath.Join(pq, "events", "*", "*.parquet")) + `, hive_partitioning = true) x
		JOIN runs r USING (run_id) WHERE x.config_key <> r.config_key`).Scan(&wrong)
	w.db.QueryRow(`SELECT count(*) FROM (DESCRIBE SELECT * FROM read_parquet(` + sqlString(parts[0]+"/part_0.parquet") + `, hive_partitioning = false)) WHERE column_name = 'config_key'`).Scan(&inFile)
	if wrong != 0 || inFile != 0 {
		t.Errorf("%d events under another configuration's key; config_key in the file: %d", wrong, inFile)
	}
	// The same warehouse exported again gives the same bytes, file by file.
	again := t.TempDir()
	if _, err := w.Export(ctx, again, "parquet"); err != nil {
		t.Fatal(err)
	}
	filepath.WalkDir(pq, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(pq, p)
		a, _ := os.ReadFile(p)
		b, err := os.ReadFile(filepath.Join(again, rel))
		if err != nil || string(a) != string(b) {
			t.Errorf("%s differs between two exports of the same warehouse (%v)", rel, err)
		}
		return nil
	})
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
		if want := counts[tb.name]; n != want && !(tb.name == "meta" && n == want+1) {
			t.Errorf("%s.arrow: %d rows, want %d", tb.name, n, want)
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
	// Only read statements run, one at a time: a CALL (which aborted the
	// process) or a PRAGMA is refused before anything runs, and so is a
	// read statement after another statement.
	for q, want := range map[string]string{
		`CALL enable_logging(storage='file', storage_path='` + t.TempDir() + `'); SELECT 1`: "only read statements are allowed",
		`PRAGMA database_size`:  "only read statements are allowed",
		`EXPLAIN SELECT 1`:      "only read statements are allowed",
		`SELECT 1; SELECT 2`:    "expected one statement, found 2",
		`SELEC 1`:               `syntax error at or near "SELEC"`,
		`SELECT nope FROM runs`: `Binder Error: Referenced column "nope" not found`,
	} {
		_, _, err := w.Query(ctx, q)
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one line with %q", q, err, want)
		}
	}
	for _, q := range []string{`DESCRIBE runs`, `SHOW TABLES`, `SUMMARIZE runs`, `FROM runs LIMIT 1`, `VALUES (1)`, `WITH a AS (SELECT 1) SELECT * FROM a`} {
		if _, _, err := w.Query(ctx, q); err != nil {
			t.Errorf("%s: %v", q, err)
		}
	}
	// Rows stream: QueryFunc hands them over one at a time.
	n := 0
	err = w.QueryFunc(ctx, `SELECT * FROM events`, func([]string) error { return nil }, func([]any) error { n++; return nil })
	if err != nil || n == 0 {
		t.Errorf("QueryFunc: %d rows, %v", n, err)
	}
}

// TestLakeCarriesTheRunInputs: a lake exported with fresh run inputs
// reads them, giving every run as the warehouse's tables give it; a lake
// whose table files changed since, or whose inputs are in another
// encoding or damaged, reads its tables; an export of stale inputs
// carries none and removes an earlier export's.
func TestLakeCarriesTheRunInputs(t *testing.T) {
	w := sampleWarehouse(t)
	want, err := w.loadRunsFromTables(ctx, nil, false)
	if err != nil || len(want) == 0 {
		t.Fatal(len(want), err)
	}
	openLake := func(dir string) (*Warehouse, []RunRow) {
		t.Helper()
		lake, err := Open(ctx, dir, OpenOptions{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { lake.Close() })
		runs, err := lake.LoadRuns(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return lake, runs
	}
	dir := t.TempDir()
	if _, err := w.Export(ctx, dir, "parquet"); err != nil {
		t.Fatal(err)
	}
	if lake, runs := openLake(dir); !lake.RunInputsFresh(ctx) || !sameRuns(runs, want) {
		t.Errorf("a fresh lake: inputs read %v, the same runs %v", lake.RunInputsFresh(ctx), sameRuns(runs, want))
	}
	// Changed in the lake by another engine: one judgment fewer in one
	// partition. The lake reads the tables, which now lack it.
	changed := t.TempDir()
	os.CopyFS(changed, os.DirFS(dir))
	parts, _ := filepath.Glob(filepath.Join(changed, "judgments", "config_key=*", "part_0.parquet"))
	if len(parts) == 0 {
		t.Fatal("no judgment partitions")
	}
	tmp := parts[0] + ".new"
	if _, err := w.db.Exec(`COPY (SELECT * FROM read_parquet(` + sqlString(parts[0]) + `) OFFSET 1) TO ` + sqlString(tmp) + ` (FORMAT parquet)`); err != nil {
		t.Fatal(err)
	}
	os.Rename(tmp, parts[0])
	lake, runs := openLake(changed)
	tables, err := lake.loadRunsFromTables(ctx, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	if lake.RunInputsFresh(ctx) || !sameRuns(runs, tables) || sameRuns(runs, want) {
		t.Errorf("a changed lake: inputs read %v, runs as its tables %v, as before the change %v", lake.RunInputsFresh(ctx), sameRuns(runs, tables), sameRuns(runs, want))
	}
	// Inputs in another encoding than this gymlens': the tables.
	other := t.TempDir()
	os.CopyFS(other, os.DirFS(dir))
	fp, err := lakeFingerprint(other)
	if err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(other, lakeInputsFile)
	if _, err := w.db.Exec(`COPY (SELECT * FROM read_parquet(` + sqlString(filepath.Join(dir, lakeInputsFile)) + `)) TO ` + sqlString(in) +
		` (FORMAT parquet, KV_METADATA {gymlens_run_inputs: '1', gymlens_tables: ` + sqlString(fp) + `})`); err != nil {
		t.Fatal(err)
	}
	if lake, runs := openLake(other); lake.RunInputsFresh(ctx) || !sameRuns(runs, want) {
		t.Errorf("inputs of another encoding: read %v", lake.RunInputsFresh(ctx))
	}
	// Damaged: the tables.
	os.WriteFile(in, []byte("PAR1 not parquet"), 0o644)
	if lake, runs := openLake(other); lake.RunInputsFresh(ctx) || !sameRuns(runs, want) {
		t.Errorf("damaged inputs: read %v", lake.RunInputsFresh(ctx))
	}
	// Stale in the warehouse when exported: none in the lake, the earlier
	// export's removed.
	path := w.Path
	w.Close()
	rw, err := Open(ctx, path, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer rw.Close()
	if _, err := rw.db.Exec(invalidateInputs); err != nil {
		t.Fatal(err)
	}
	res, err := rw.Export(ctx, dir, "parquet")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, lakeInputsFile)); !os.IsNotExist(err) || res[len(res)-1].Table == "run_inputs" {
		t.Errorf("stale inputs exported: %v", err)
	}
	if lake, runs := openLake(dir); lake.RunInputsFresh(ctx) || !sameRuns(runs, want) {
		t.Errorf("a lake without inputs: read %v", lake.RunInputsFresh(ctx))
	}
}
