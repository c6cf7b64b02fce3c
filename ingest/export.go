package ingest

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// exportTable is one warehouse table and how it is written.
type exportTable struct {
	name, order string
	partitioned bool // large: hive-partitioned by configuration
}

// ExportTables lists every table in export order.
var exportTables = []exportTable{
	{"meta", "key", false},
	{"ingests", "ingest_id", false},
	{"ingested_files", "file_id", false},
	{"scenarios", "scenario", false},
	{"personas", "scenario, persona", false},
	{"task_specs", "scenario, ordinal", false},
	{"task_expected_depths", "scenario, task, persona", false},
	{"scenario_tools", "scenario, tool", false},
	{"runs", "run_id", false},
	{"events", "run_id, seq", true},
	{"run_spans", "run_id, file_id", false},
	{"row_spans", "tbl, run_id, file_id", false},
	{"task_outcomes", "run_id, task", true},
	{"judgments", "run_id, task, metric, judge, prompt", true},
	{"ratings", "file_id, src_line", false},
	{"task_scores", "run_id, task", false},
	{"judge_calls", "judge, model, prompt, run_id, task, metric, input_hash, params, created_at", false},
	{"pare_runs", "run_id", false},
	{"pare_events", "run_id, seq", false},
	{"decision_points", "run_id, sample_id", false},
	{"pare_samples", "sample_id, file_id", false},
	{"pare_annotations", "file_id, src_line", false},
	{"pare_results", "result_id", false},
	{"pare_reports", "file_id, src_line, section", false},
	{"inspect_evals", "eval_id", false},
	{"inspect_samples", "eval_id, sample_id, epoch", false},
	{"inspect_usage", "eval_id, sample_id, epoch, model", false},
	{"inspect_scores", "eval_id, sample_id, epoch, scorer, key", false},
	{"inspect_items", "eval_id, sample_id, epoch, kind, idx", false},
	{"inspect_results", "eval_id, score, metric", false},
	{"inspect_reductions", "eval_id, scorer, sample_id, key", false},
	{"annotation_queues", "queue", false},
	{"annotation_items", "queue, position", false},
	{"annotation_answers", "queue, item, annotator, question", false},
	{"judge_batches", "batch_id", false},
	{"judge_rubrics", "prompt", false},
}

// derivedTables are the tables not exported: derived from the others,
// they are rebuilt, and a lake reads the tables they come from.
var derivedTables = []string{"run_inputs", "event_packs", "page_packs"}

// ExportResult says what Export wrote.
type ExportResult struct {
	Table string
	Rows  int64
	Path  string
}

// ExportTable lays an export's results out as a table: one row per
// table written, its rows and its path.
func ExportTable(res []ExportResult) ([]string, [][]any) {
	var out [][]any
	for _, x := range res {
		out = append(out, []any{x.Table, x.Rows, x.Path})
	}
	return []string{"table", "rows", "path"}, out
}

// Export writes every table to dir: as Parquet (large tables
// hive-partitioned by config_key, dir/TABLE/config_key=…/*.parquet) or as
// Arrow IPC files (dir/TABLE.arrow) written with arrow-go. Rows are sorted
// by each table's key so that the same warehouse gives the same files.
func (w *Warehouse) Export(ctx context.Context, dir, format string) ([]ExportResult, error) {
	if format != "parquet" && format != "arrow" {
		return nil, fmt.Errorf("export format: expected parquet or arrow, found %q", format)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	// One thread while exporting: with DuckDB's default (a thread per
	// core) the events' sort and Parquet writer took export to 1.2 GB at
	// --scale 100 on 2 cores, over the memory bound; on one, 841 MB for
	// the events (docs/benchmarks.md). The setting is the database's: put
	// back after.
	var threads int64
	if err := w.db.QueryRowContext(ctx, `SELECT current_setting('threads')`).Scan(&threads); err != nil {
		return nil, err
	}
	if _, err := w.db.ExecContext(ctx, `SET threads = 1`); err != nil {
		return nil, err
	}
	defer w.db.ExecContext(context.WithoutCancel(ctx), fmt.Sprintf(`SET threads = %d`, threads))
	var out []ExportResult
	metaAt, meta := -1, exportTable{}
	for _, t := range exportTables {
		if t.name == "meta" && format == "parquet" {
			// Written last, with the digests of the other tables' files.
			metaAt, meta = len(out), t
			out = append(out, ExportResult{Table: t.name, Path: filepath.Join(dir, t.name+".parquet")})
			continue
		}
		var n int64
		count := `SELECT count(*) FROM ` + t.name
		if t.name == "meta" {
			count = `SELECT count(*) FROM ` + w.metaSource("")
		}
		if err := w.db.QueryRowContext(ctx, count).Scan(&n); err != nil {
			return nil, err
		}
		res := ExportResult{Table: t.name, Rows: n}
		switch {
		case format == "parquet" && t.partitioned:
			res.Path = filepath.Join(dir, t.name)
			if err := os.RemoveAll(res.Path); err != nil {
				return nil, err
			}
			if err := w.copyPartitions(ctx, t, res.Path); err != nil {
				return nil, err
			}
		case format == "parquet":
			res.Path = filepath.Join(dir, t.name+".parquet")
			if err := w.copyParquet(ctx, t, res.Path, ""); err != nil {
				return nil, err
			}
		default:
			res.Path = filepath.Join(dir, t.name+".arrow")
			tmp := res.Path + ".parquet.tmp"
			if err := w.copyParquet(ctx, t, tmp, ""); err != nil {
				return nil, err
			}
			err := parquetToIPC(ctx, tmp, res.Path)
			os.Remove(tmp)
			if err != nil {
				return nil, fmt.Errorf("exporting %s: %w", t.name, err)
			}
		}
		out = append(out, res)
	}
	if metaAt >= 0 {
		digests, err := w.exportVouches(ctx, dir)
		if err != nil {
			return nil, err
		}
		res := &out[metaAt]
		if err := w.db.QueryRowContext(ctx, `SELECT count(*) FROM `+w.metaSource(digests)).Scan(&res.Rows); err != nil {
			return nil, err
		}
		if err := w.copyParquet(ctx, meta, res.Path, digests); err != nil {
			return nil, err
		}
	}
	if format == "parquet" {
		res, err := w.exportInputs(ctx, dir)
		if err != nil {
			return nil, err
		}
		if res != nil {
			out = append(out, *res)
		}
	}
	return out, nil
}

// exportVouches returns the digests of the table files just written to
// the lake in dir (lakeDigests), to be recorded in its meta.parquet: a
// lake whose files still have them opens without the check of its keys
// and references (lake.go), which the warehouse holds. Ingest holds most
// by construction, refusing what would break them; the others (lakeKeys'
// unvouched) are checked here, on the warehouse, and a warehouse that
// breaks one gets no record: its lake is checked when it opens, and
// refused naming the file and the value.
func (w *Warehouse) exportVouches(ctx context.Context, dir string) (string, error) {
	files, err := lakeTables(dir)
	if err != nil {
		return "", fmt.Errorf("exporting meta: %w", err)
	}
	if err := runLakeCheck(ctx, w.db, dir, files, true); err != nil {
		return "", ctx.Err()
	}
	digests, err := lakeDigests(dir, files)
	if err != nil {
		return "", fmt.Errorf("exporting meta: digesting the tables' files: %w", err)
	}
	return digests, nil
}

// A lake carries the run inputs (inputs.go) when they were fresh in the
// warehouse it was exported from: run_inputs.parquet, one row per run,
// gymlens' own encoding (other engines have no use for it). Without them
// every analysis of a lake reads its tasks and judgments through three
// joins over the Parquet (a second more per command on the sample; most
// of the time at larger scales). The file names, in its Parquet
// key-value metadata, the encoding and a fingerprint of the lake's table
// files (lakeFingerprint); a lake opens with the inputs only if both
// still hold, so a table rewritten by another engine (Spark, Trino) is
// read as it now is, through its tables.
const (
	lakeInputsFile   = "run_inputs.parquet"
	lakeInputsKey    = "gymlens_run_inputs"
	lakeFingerprintK = "gymlens_tables"
)

// exportInputs writes dir/run_inputs.parquet when the run inputs are
// fresh, and removes one an earlier export left when they are not.
func (w *Warehouse) exportInputs(ctx context.Context, dir string) (*ExportResult, error) {
	path := filepath.Join(dir, lakeInputsFile)
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	if !w.inputsFresh(ctx) {
		return nil, nil
	}
	fp, err := lakeFingerprint(dir)
	if err != nil {
		return nil, fmt.Errorf("exporting run_inputs: %w", err)
	}
	n, err := w.writeInputsParquet(ctx, path, map[string]string{lakeInputsKey: inputsFormat, lakeFingerprintK: fp})
	if err != nil {
		os.Remove(path)
		return nil, fmt.Errorf("exporting run_inputs: %w", err)
	}
	return &ExportResult{Table: "run_inputs", Rows: n, Path: path}, nil
}

// inputsRowGroup is how many runs' inputs a row group of
// run_inputs.parquet holds (and a query of the export reads).
const inputsRowGroup = 2000

// writeInputsParquet writes the run inputs to a Parquet file at path, in
// run-id order, a row group of inputsRowGroup runs at a time, with kv as
// the file's key-value metadata. Written from Go rather than by DuckDB's
// COPY, which sorted the whole table's values in memory: at --scale 100
// (234,000 runs, 375 MB of inputs) it ran out of its 512 MB after the
// other tables' export, the process at 1.3 GB.
func (w *Warehouse) writeInputsParquet(ctx context.Context, path string, kv map[string]string) (int64, error) {
	ids, err := w.scanStrings(ctx, `SELECT run_id FROM run_inputs ORDER BY run_id`)
	if err != nil {
		return 0, err
	}
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	schema := arrow.NewSchema([]arrow.Field{{Name: "run_id", Type: arrow.BinaryTypes.String}, {Name: "inputs", Type: arrow.BinaryTypes.Binary}}, nil)
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Zstd), parquet.WithMaxRowGroupLength(inputsRowGroup),
		parquet.WithDictionaryDefault(false), parquet.WithCreatedBy("gymlens"))
	fw, err := pqarrow.NewFileWriter(schema, f, props, pqarrow.DefaultWriterProps())
	if err != nil {
		return 0, err
	}
	keys := make([]string, 0, len(kv))
	for k := range kv {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if err := fw.AppendKeyValueMetadata(k, kv[k]); err != nil {
			fw.Close()
			return 0, err
		}
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	idb, inb := b.Field(0).(*array.StringBuilder), b.Field(1).(*array.BinaryBuilder)
	var n int64
	for lo := 0; lo < len(ids); lo += inputsRowGroup {
		hi := min(lo+inputsRowGroup, len(ids)) - 1
		err := w.scan(ctx, `SELECT run_id, inputs FROM run_inputs WHERE run_id BETWEEN ? AND ? ORDER BY run_id`, func(rows *sql.Rows) error {
			var id string
			var in sql.RawBytes
			if err := rows.Scan(&id, &in); err != nil {
				return err
			}
			idb.Append(id)
			inb.Append(in)
			n++
			return nil
		}, ids[lo], ids[hi])
		if err != nil {
			fw.Close()
			return 0, err
		}
		rec := b.NewRecordBatch()
		err = fw.Write(rec)
		rec.Release()
		if err != nil {
			fw.Close()
			return 0, err
		}
	}
	return n, fw.Close() // and the file
}

// lakeFingerprint hashes the name and size of every table file of the
// lake in dir (not run_inputs.parquet).
func lakeFingerprint(dir string) (string, error) {
	h := sha256.New()
	for _, t := range exportTables {
		files, err := lakeFiles(dir, t)
		if err != nil {
			return "", err
		}
		for _, f := range files {
			st, err := os.Stat(f)
			if err != nil {
				return "", err
			}
			rel, err := filepath.Rel(dir, f)
			if err != nil {
				return "", err
			}
			fmt.Fprintf(h, "%s\x00%d\n", filepath.ToSlash(rel), st.Size())
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// lakeInputsUsable says whether the lake in dir has run inputs in this
// gymlens' encoding, written for the table files it now holds.
func lakeInputsUsable(ctx context.Context, db *sql.DB, dir string) (bool, error) {
	path := filepath.Join(dir, lakeInputsFile)
	if _, err := os.Stat(path); err != nil {
		return false, nil
	}
	rs, err := db.QueryContext(ctx, `SELECT decode(key), decode(value) FROM parquet_kv_metadata(`+sqlString(path)+`)`)
	if err != nil {
		return false, nil // not a Parquet file: derived data, the tables stand
	}
	kv := map[string]string{}
	for rs.Next() {
		var k, v string
		if err := rs.Scan(&k, &v); err != nil {
			rs.Close()
			return false, err
		}
		kv[k] = v
	}
	rs.Close()
	if err := rs.Err(); err != nil {
		return false, fmt.Errorf("lake %s: %s: %w", dir, lakeInputsFile, err)
	}
	if kv[lakeInputsKey] != inputsFormat {
		return false, nil
	}
	fp, err := lakeFingerprint(dir)
	return err == nil && fp == kv[lakeFingerprintK], err
}

// copyPartitions writes a table hive-partitioned by configuration, one
// COPY per partition into dir/config_key=K/part_0.parquet. DuckDB's own
// PARTITION_BY writes the same rows but splits them into row groups
// differently from one run to the next (its threads race), so that the
// same warehouse would not give the same bytes.
func (w *Warehouse) copyPartitions(ctx context.Context, t exportTable, dir string) error {
	rs, err := w.db.QueryContext(ctx, `SELECT DISTINCT r.config_key FROM `+t.name+` x JOIN runs r USING (run_id) ORDER BY 1`)
	if err != nil {
		return fmt.Errorf("exporting %s: %w", t.name, err)
	}
	var keys []string
	for rs.Next() {
		var k string
		if err := rs.Scan(&k); err != nil {
			rs.Close()
			return fmt.Errorf("exporting %s: %w", t.name, err)
		}
		keys = append(keys, k)
	}
	rs.Close()
	if err := rs.Err(); err != nil {
		return fmt.Errorf("exporting %s: %w", t.name, err)
	}
	for _, k := range keys {
		// Keys are path-safe slugs (runlog.ConfigKey); refuse anything else
		// rather than write outside dir.
		if k == "" || strings.ContainsAny(k, "/\\\x00") || k == "." || k == ".." {
			return fmt.Errorf("exporting %s: configuration key %q is not a path-safe name", t.name, k)
		}
		part := filepath.Join(dir, "config_key="+k)
		if err := os.MkdirAll(part, 0o755); err != nil {
			return err
		}
		q := fmt.Sprintf(`COPY (SELECT x.* FROM %s x JOIN runs r USING (run_id) WHERE r.config_key = %s ORDER BY %s) TO %s (FORMAT parquet)`,
			t.name, sqlString(k), prefixed("x", t.order), sqlString(filepath.Join(part, "part_0.parquet")))
		if _, err := w.db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("exporting %s: %w", t.name, err)
		}
	}
	return nil
}

// metaSource is the meta rows an export writes (a FROM clause): not the
// run inputs' rows (derived data, not exported: a lake reads the tables);
// the warehouse it is exported from, by file name, in place of any
// earlier one (a lake keeps the one it was exported from); and the table
// files' digests (lakeDigestsKey) when digests is not empty, in place of
// a lake's earlier ones.
func (w *Warehouse) metaSource(digests string) string {
	q := `(SELECT * FROM meta WHERE key NOT IN ('` + lakeDigestsKey + `', 'run_inputs', 'page_packs')`
	if !w.Lake {
		q = `(SELECT * FROM meta WHERE key NOT IN ('` + lakeDigestsKey + `', 'run_inputs', 'page_packs', 'exported_from')` +
			` UNION ALL SELECT 'exported_from', ` + sqlString(filepath.Base(w.Path))
	}
	if digests != "" {
		q += ` UNION ALL SELECT '` + lakeDigestsKey + `', ` + sqlString(digests)
	}
	return q + `)`
}

// copyParquet writes table t to a Parquet file at path, sorted by its
// key; meta as metaSource(digests) has it.
func (w *Warehouse) copyParquet(ctx context.Context, t exportTable, path, digests string) error {
	from := t.name
	if t.name == "meta" {
		from = w.metaSource(digests)
	}
	q := fmt.Sprintf(`COPY (SELECT * FROM %s ORDER BY %s) TO %s (FORMAT parquet)`, from, t.order, sqlString(path))
	if _, err := w.db.ExecContext(ctx, q); err != nil {
		return fmt.Errorf("exporting %s: %w", t.name, err)
	}
	return nil
}

// parquetToIPC streams a Parquet file into an Arrow IPC file, record batch
// by record batch.
func parquetToIPC(ctx context.Context, src, dst string) error {
	pf, err := file.OpenParquetFile(src, false)
	if err != nil {
		return err
	}
	defer pf.Close()
	mem := memory.DefaultAllocator
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 64 << 10, Parallel: false}, mem)
	if err != nil {
		return err
	}
	rr, err := fr.GetRecordReader(ctx, nil, nil)
	if err != nil {
		return err
	}
	defer rr.Release()
	f, err := os.Create(dst)
	if err != nil {
		return err
	}
	iw, err := ipc.NewFileWriter(f, ipc.WithSchema(rr.Schema()), ipc.WithAllocator(mem))
	if err != nil {
		f.Close()
		return err
	}
	for rr.Next() {
		if err := iw.Write(rr.RecordBatch()); err != nil {
			iw.Close()
			f.Close()
			return err
		}
	}
	if err := rr.Err(); err != nil {
		iw.Close()
		f.Close()
		return err
	}
	if err := iw.Close(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// TableNames are the warehouse's tables, in export order (a test checks
// that they are every table the schema makes).
func TableNames() []string {
	var out []string
	for _, t := range exportTables {
		out = append(out, t.name)
	}
	return out
}

// ViewNames are the warehouse's views.
var ViewNames = []string{"run_view", "active_task_view"}
