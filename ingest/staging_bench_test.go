package ingest

import (
	"bufio"
	"context"
	"database/sql/driver"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/gymlens/gymlens/ingest/runlog"
	"github.com/gymlens/gymlens/internal/sample"
)

// How validated events are best handed to DuckDB (docs/benchmarks.md,
// "Typed records instead of the CSV copy"), beside DuckDB's own reader of
// the same event lines. The arms, in this order:
//
//   - read_ndjson_auto: the peer, DuckDB reading the run logs' event lines
//     (extracted beforehand) into a new table, unchecked;
//   - validate, validate_typed: what the validation pass does to those
//     lines (decoded, checked, hashed, the staging rows written) on every
//     core, with CSV rows as before issue 63 and with typed records as now;
//   - read_csv: the load as before issue 63, DuckDB's parallel CSV reader
//     moving the staged rows into an empty copy of the events table;
//   - table_function: the same rows handed as typed vectors by a parallel
//     chunk table function (stagedSource), from typed columns in memory;
//   - typed_file: the load now, the same from the typed staging file
//     (typedFileSource), whose memory stays bounded whatever the input;
//   - appender: the same rows through duckdb-go's Appender, a row at a time.
//
// The staged CSV, the typed columns and file are made outside the timing (the
// pass makes its form while it validates), from one decoding of the lines.
// GYMLENS_STAGING_ROUNDS (default 1) runs every arm that many times in
// turn, so that the arms alternate run by run and a shared machine's load
// falls on them alike (-count would run each arm's runs back to back):
//
//	GYMLENS_STAGING_ROUNDS=7 go test ./ingest -run '^$' -bench Staging -benchtime 1x | go run ./cmd/gymlens-bench staging
//
// prints each run's figures, the medians and the ratios to the peer.
func BenchmarkStaging(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	corpus := filepath.Join(dir, "c")
	if _, err := sample.Write(corpus, sample.Options{Seed: 7, Configs: 12}); err != nil {
		b.Fatal(err)
	}
	w, err := Open(ctx, filepath.Join(dir, "w.duckdb"), OpenOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	if _, err := w.Ingest(ctx, []string{corpus}, IngestOptions{}); err != nil {
		b.Fatal(err)
	}
	conn, err := w.db.Conn(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()

	// The run logs' event lines, for the peer and the validation; their
	// staging rows, as CSV and as typed columns, with the file ids the
	// ingest gave them.
	logs, _ := filepath.Glob(filepath.Join(corpus, "runs", "*.jsonl"))
	lines := filepath.Join(dir, "lines")
	ids := map[string]int{}
	for _, f := range logs {
		abs, _ := filepath.Abs(f)
		var id int
		if err := conn.QueryRowContext(ctx, `SELECT file_id FROM ingested_files WHERE path = ?`, abs).Scan(&id); err != nil {
			b.Fatal(err)
		}
		ids[f] = id
		if err := copyEventLines(f, filepath.Join(lines, filepath.Base(f))); err != nil {
			b.Fatal(err)
		}
	}
	csvPath := filepath.Join(dir, "events.csv")
	out, err := os.Create(csvPath)
	if err != nil {
		b.Fatal(err)
	}
	typedPath := filepath.Join(dir, "events.typed")
	tout, err := os.Create(typedPath)
	if err != nil {
		b.Fatal(err)
	}
	bw := bufio.NewWriterSize(out, 1<<20)
	tw := bufio.NewWriterSize(tout, 1<<20)
	typed, longest, err := decodeEventsTo(logs, ids, bw, tw)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = tw.Flush()
	}
	out.Close()
	tout.Close()
	if err != nil {
		b.Fatal(err)
	}
	readCSV := stagedEventsInsert("ev", readStage(&stageFile{path: csvPath, longest: longest}, runlog.TypeEvent))
	if err := registerStaged(conn, "staged_events", typed); err != nil {
		b.Fatal(err)
	}
	if err := registerTypedFile(conn, "typed_events", typedPath, typed.cols, int64(typed.n)); err != nil {
		b.Fatal(err)
	}

	// The appender's rows: the events as stored.
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
	if len(data) != typed.n {
		b.Fatalf("%d events stored, %d decoded", len(data), typed.n)
	}

	// cpu is the CPU time of the timed statements (reported as cpu-ms/op):
	// on a machine shared with other work, wall times vary with the load
	// far more than the work done.
	var cpu time.Duration
	exec := func(b *testing.B, q string) {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			b.Fatal(err)
		}
	}
	timed := func(b *testing.B, q string) {
		c0 := processCPU()
		exec(b, q)
		cpu += processCPU() - c0
	}
	report := func(b *testing.B) {
		b.ReportMetric(float64(cpu)/1e6/float64(b.N), "cpu-ms/op")
		cpu = 0
	}
	// Every arm writes a table of the warehouse file, empty before, with
	// the log checkpointed, so that none pays for another's writes.
	fresh := func(b *testing.B) {
		b.StopTimer()
		exec(b, `DROP TABLE IF EXISTS peer`)
		exec(b, `CREATE OR REPLACE TABLE ev AS SELECT * FROM events LIMIT 0`)
		exec(b, `CHECKPOINT`)
		b.StartTimer()
	}
	check := func(b *testing.B, table string) {
		b.StopTimer()
		var n int
		if err := conn.QueryRowContext(ctx, `SELECT count(*) FROM `+table).Scan(&n); err != nil {
			b.Fatal(err)
		}
		if n != len(data) {
			b.Fatalf("%d events in %s of %d", n, table, len(data))
		}
		b.StartTimer()
	}
	b.Logf("%d events × %d columns", len(data), len(cols))
	validate := func(b *testing.B, typed bool) {
		lineFiles, _ := filepath.Glob(filepath.Join(lines, "*.jsonl"))
		for b.Loop() {
			b.StopTimer()
			out, err := os.Create(filepath.Join(dir, "validated.csv"))
			if err != nil {
				b.Fatal(err)
			}
			bw := bufio.NewWriterSize(out, 1<<20)
			b.StartTimer()
			c0 := processCPU()
			n := 0
			for _, f := range lineFiles {
				in, err := os.Open(f)
				if err != nil {
					b.Fatal(err)
				}
				err = runlog.DecodeStream(ctx, in, runlog.StreamOptions{File: f, Rows: true, FileID: 1, TypedEvents: typed}, func(items []runlog.Item) error {
					for i := range items {
						if items[i].Err != nil {
							return items[i].Err
						}
						n++
						if _, err := bw.Write(items[i].Row); err != nil {
							return err
						}
					}
					return nil
				})
				in.Close()
				if err != nil {
					b.Fatal(err)
				}
			}
			if err := bw.Flush(); err != nil {
				b.Fatal(err)
			}
			cpu += processCPU() - c0
			b.StopTimer()
			out.Close()
			if n != len(data) {
				b.Fatalf("%d events validated of %d", n, len(data))
			}
			b.StartTimer()
		}
		report(b)
	}
	rounds, _ := strconv.Atoi(os.Getenv("GYMLENS_STAGING_ROUNDS"))
	for range max(1, rounds) {
		b.Run("read_ndjson_auto", func(b *testing.B) {
			for b.Loop() {
				fresh(b)
				timed(b, `CREATE TABLE peer AS SELECT * FROM read_ndjson_auto(`+sqlString(filepath.Join(lines, "*.jsonl"))+`)`)
				check(b, "peer")
			}
			report(b)
		})
		for _, v := range []struct {
			name  string
			typed bool
		}{{"validate", false}, {"validate_typed", true}} {
			b.Run(v.name, func(b *testing.B) { validate(b, v.typed) })
		}
		b.Run("read_csv", func(b *testing.B) {
			for b.Loop() {
				fresh(b)
				timed(b, readCSV)
				check(b, "ev")
			}
			report(b)
		})
		b.Run("table_function", func(b *testing.B) {
			for b.Loop() {
				fresh(b)
				timed(b, stagedEventsInsert("ev", "staged_events()"))
				check(b, "ev")
			}
			report(b)
		})
		b.Run("typed_file", func(b *testing.B) {
			for b.Loop() {
				fresh(b)
				timed(b, stagedEventsInsert("ev", "typed_events()"))
				check(b, "ev")
			}
			report(b)
		})
		b.Run("appender", func(b *testing.B) {
			for b.Loop() {
				fresh(b)
				c0 := processCPU()
				err := conn.Raw(func(dc any) error {
					a, err := duckdb.NewAppender(dc.(driver.Conn), "", "main", "ev")
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
				cpu += processCPU() - c0
				if err != nil {
					b.Fatal(err)
				}
				check(b, "ev")
			}
			report(b)
		})
	}
}

// copyEventLines copies the event lines of the run log src to dst.
func copyEventLines(src, dst string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(out, 1<<20)
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), `{"type":"event"`) {
			w.Write(sc.Bytes())
			w.WriteByte('\n')
		}
	}
	if err := w.Flush(); err != nil {
		out.Close()
		return err
	}
	if err := sc.Err(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
