package ingest

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	duckdb "github.com/duckdb/duckdb-go/v2"
)

// A lake is the folder `gymlens export --format parquet` writes: one
// Parquet file per table, the large tables split into one file per
// configuration (TABLE/config_key=K/part_0.parquet). Opened as a
// warehouse (--db DIR), it is read in place and read-only: an in-memory
// DuckDB holds the schema, and each table with data is a view over its
// Parquet files, so every query, and every analysis on top, reads the same
// rows as on the DuckDB file the lake came from.

// IsLake says whether path is a folder holding an exported warehouse.
func IsLake(path string) bool {
	st, err := os.Stat(path)
	if err != nil || !st.IsDir() {
		return false
	}
	_, err = os.Stat(filepath.Join(path, "meta.parquet"))
	return err == nil
}

func openLake(ctx context.Context, path string, opt OpenOptions) (*Warehouse, error) {
	if !opt.ReadOnly {
		return nil, fmt.Errorf("%s is a Parquet lake (gymlens export): it is read in place, read-only; ingest, score, judge and annotate write to a DuckDB file (--db FILE.duckdb)", path)
	}
	mem := opt.MemoryLimit
	if mem == "" {
		mem = DefaultMemoryLimit
	}
	settings := []string{"SET memory_limit='" + strings.ReplaceAll(mem, "'", "") + "'", "SET preserve_insertion_order = false"}
	if opt.Threads > 0 {
		settings = append(settings, fmt.Sprintf("SET threads = %d", opt.Threads))
	}
	connector, err := duckdb.NewConnector("", firstConnection(ctx, settings))
	if err != nil {
		return nil, openError(path, err)
	}
	// Every connection of the connector reaches the same in-memory database.
	db := sql.OpenDB(connector)
	w := &Warehouse{Path: path, MemoryLimit: mem, connector: connector, db: db, viewer: opt.Viewer, Lake: true}
	if err := w.migrate(ctx, OpenOptions{}); err != nil {
		w.Close()
		return nil, err
	}
	for _, t := range exportTables {
		files, err := lakeFiles(path, t)
		if err != nil {
			w.Close()
			return nil, err
		}
		if len(files) == 0 {
			continue // no rows: the empty table stands
		}
		q := make([]string, len(files))
		for i, f := range files {
			q[i] = sqlString(f)
		}
		if _, err := w.db.ExecContext(ctx, `DROP TABLE `+t.name); err != nil {
			w.Close()
			return nil, fmt.Errorf("lake %s: %w", path, err)
		}
		if _, err := w.db.ExecContext(ctx, `CREATE VIEW `+t.name+` AS SELECT * FROM read_parquet([`+strings.Join(q, ", ")+`])`); err != nil {
			w.Close()
			return nil, fmt.Errorf("lake %s: table %s: %w", path, t.name, err)
		}
	}
	// The run inputs, when the lake carries them for the tables it holds
	// (export.go): else the analyses read the tables.
	ok, err := lakeInputsUsable(ctx, w.db, path)
	if err != nil {
		w.Close()
		return nil, err
	}
	if ok {
		if _, err := w.db.ExecContext(ctx, `DROP TABLE run_inputs`); err != nil {
			w.Close()
			return nil, fmt.Errorf("lake %s: %w", path, err)
		}
		if _, err := w.db.ExecContext(ctx, `CREATE VIEW run_inputs AS SELECT * FROM read_parquet(`+sqlString(filepath.Join(path, lakeInputsFile))+`)`); err != nil {
			w.Close()
			return nil, fmt.Errorf("lake %s: %s: %w", path, lakeInputsFile, err)
		}
		w.lakeInputs = true
	}
	var v string
	if err := w.db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'schema_version'`).Scan(&v); err != nil {
		w.Close()
		return nil, fmt.Errorf("lake %s: meta.parquet: %w", path, err)
	}
	ms := migrations()
	if n, _ := strconv.Atoi(v); n != ms[len(ms)-1].version {
		w.Close()
		return nil, fmt.Errorf("lake %s has schema version %s, this gymlens reads %d: export it again from its warehouse with this gymlens", path, v, ms[len(ms)-1].version)
	}
	// What export recorded of the warehouse: its file name (none in a
	// lake written before it did).
	if err := w.db.QueryRowContext(ctx, `SELECT coalesce(max(value), '') FROM meta WHERE key = 'exported_from'`).Scan(&w.exportedFrom); err != nil {
		w.Close()
		return nil, fmt.Errorf("lake %s: meta.parquet: %w", path, err)
	}
	w.ReadOnly = true
	return w, nil
}

// lakeFiles lists a table's Parquet files in the lake, in order.
func lakeFiles(dir string, t exportTable) ([]string, error) {
	if !t.partitioned {
		f := filepath.Join(dir, t.name+".parquet")
		if _, err := os.Stat(f); err != nil {
			return nil, fmt.Errorf("lake %s: no %s.parquet: is it a complete gymlens export?", dir, t.name)
		}
		return []string{f}, nil
	}
	parts, err := filepath.Glob(filepath.Join(dir, t.name, "config_key=*", "*.parquet"))
	sort.Strings(parts)
	return parts, err
}
