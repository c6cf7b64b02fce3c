package ingest

import (
	"context"
	"database/sql/driver"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/gymlens/gymlens/internal/sample"
)

// How staged events are best handed to DuckDB (docs/benchmarks.md, "Typed
// columns instead of the CSV copy"): row by row through duckdb-go's Appender, or as the CSV file
// the validation pass writes, read by DuckDB's parallel CSV reader. Both
// move the same events of a sample warehouse into an empty copy of the
// events table; the CSV is written once, outside the timing (the pass
// writes it on its workers while validating).
//
//	go test ./ingest -run '^$' -bench Staging -benchtime 5x
func BenchmarkStaging(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	if _, err := sample.Write(filepath.Join(dir, "c"), sample.Options{Seed: 7, Configs: 6}); err != nil {
		b.Fatal(err)
	}
	w, err := Open(ctx, filepath.Join(dir, "w.duckdb"), OpenOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	if _, err := w.Ingest(ctx, []string{filepath.Join(dir, "c")}, IngestOptions{}); err != nil {
		b.Fatal(err)
	}
	conn, err := w.db.Conn(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	rs, err := conn.QueryContext(ctx, `SELECT * FROM events`)
	if err != nil {
		b.Fatal(err)
	}
	cols, _ := rs.Columns()
	var data [][]driver.Value
	for rs.Next() {
		v := make([]any, len(cols))
		p := make([]any, len(cols))
		for i := range v {
			p[i] = &v[i]
		}
		if err := rs.Scan(p...); err != nil {
			b.Fatal(err)
		}
		row := make([]driver.Value, len(v))
		for i := range v {
			row[i] = v[i]
		}
		data = append(data, row)
	}
	rs.Close()
	csv := filepath.Join(dir, "events.csv")
	if _, err := conn.ExecContext(ctx, `COPY events TO `+sqlString(csv)+` (HEADER false)`); err != nil {
		b.Fatal(err)
	}
	var spec []string
	crs, err := conn.QueryContext(ctx, `SELECT column_name, data_type FROM duckdb_columns() WHERE table_name = 'events' AND schema_name = 'main'
		AND database_name = current_database() ORDER BY column_index`)
	if err != nil {
		b.Fatal(err)
	}
	for crs.Next() {
		var n, t string
		crs.Scan(&n, &t)
		spec = append(spec, fmt.Sprintf("%s: %s", sqlString(n), sqlString(t)))
	}
	crs.Close()
	fresh := func(b *testing.B) {
		b.StopTimer()
		if _, err := conn.ExecContext(ctx, `CREATE OR REPLACE TEMP TABLE ev AS SELECT * FROM events LIMIT 0`); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	check := func(b *testing.B) {
		b.StopTimer()
		var n int
		conn.QueryRowContext(ctx, `SELECT count(*) FROM ev`).Scan(&n)
		if n != len(data) {
			b.Fatalf("%d events moved of %d", n, len(data))
		}
		b.StartTimer()
	}
	b.Logf("%d events × %d columns", len(data), len(cols))
	b.Run("appender", func(b *testing.B) {
		for b.Loop() {
			fresh(b)
			err := conn.Raw(func(dc any) error {
				a, err := duckdb.NewAppender(dc.(driver.Conn), "temp", "main", "ev")
				if err != nil {
					return err
				}
				for _, r := range data {
					if err := a.AppendRow(r...); err != nil {
						a.Close()
						return err
					}
				}
				return a.Close()
			})
			if err != nil {
				b.Fatal(err)
			}
			check(b)
		}
	})
	b.Run("read_csv", func(b *testing.B) {
		for b.Loop() {
			fresh(b)
			if _, err := conn.ExecContext(ctx, `INSERT INTO ev SELECT * FROM read_csv(`+sqlString(csv)+`, header = false, auto_detect = false, columns = {`+strings.Join(spec, ", ")+`})`); err != nil {
				b.Fatal(err)
			}
			check(b)
		}
	})
}
