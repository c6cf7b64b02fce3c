package ingest

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gymlens/gymlens/ingest/runlog"
)

// decodeEvents decodes the event lines of the run logs (each with its
// file id) into typed staging columns, as the validation pass would hand
// them to the table function.
func decodeEvents(files []string, fileIDs map[string]int) (*stagedColumns, error) {
	s, _, err := decodeEventsTo(files, fileIDs, nil, nil)
	return s, err
}

// decodeEventsTo is decodeEvents, also writing each event's staging CSV
// row (runlog's AppendCSV) to csv and its typed staging record
// (AppendTyped) to typed when they are not nil; it returns the length of
// the longest CSV row.
func decodeEventsTo(files []string, fileIDs map[string]int, csv, typed io.Writer) (*stagedColumns, int, error) {
	s := newStagedColumns(runlog.TypeEvent)
	var buf, typedRec []byte
	longest := 0
	var d runlog.Decoder
	var row []any
	for _, f := range files {
		in, err := os.Open(f)
		if err != nil {
			return nil, 0, err
		}
		sc := bufio.NewScanner(in)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		line := 0
		for sc.Scan() {
			line++
			if len(sc.Bytes()) == 0 {
				continue
			}
			rec, err := d.DecodeLine(sc.Bytes())
			if err != nil {
				in.Close()
				return nil, 0, fmt.Errorf("%s:%d: %v", f, line, err)
			}
			if ev, ok := rec.(*runlog.Event); ok {
				if csv != nil {
					buf = d.AppendCSV(buf[:0], ev, fileIDs[f], line)
					longest = max(longest, len(buf))
					if _, err := csv.Write(buf); err != nil {
						in.Close()
						return nil, 0, err
					}
				}
				row = d.AppendEventValues(row[:0], ev, fileIDs[f], line)
				if err := s.add(row); err != nil {
					in.Close()
					return nil, 0, err
				}
				if typed != nil {
					typedRec = d.AppendTyped(typedRec[:0], ev, fileIDs[f], line)
					if _, err := typed.Write(typedRec); err != nil {
						in.Close()
						return nil, 0, err
					}
				}
			}
		}
		in.Close()
		if err := sc.Err(); err != nil {
			return nil, 0, err
		}
	}
	return s, longest, nil
}

// stagedEventsInsert is the events' insert of the load (stagedInserts)
// into table from source (a table function's call).
func stagedEventsInsert(table, source string) string {
	return fmt.Sprintf(strings.Replace(stagedInserts[runlog.TypeEvent], "INSERT INTO events", "INSERT INTO "+table, 1), source)
}

// The events' table function moves the validated events into the table
// exactly as the staged CSV does: the same rows, every column, nothing more
// or less.
func TestStagedTableFunctionMatchesCSV(t *testing.T) {
	if testing.Short() {
		t.Skip("decodes and loads a sample corpus's 17,386 events again")
	}
	ctx := context.Background()
	db, corpus := sampleCopy(t, sampleKind{seed: 5, configs: 2})
	w, err := Open(ctx, db, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	files, _ := filepath.Glob(filepath.Join(corpus, "runs", "*.jsonl"))
	if len(files) == 0 {
		t.Fatal("no run logs in the sample corpus")
	}
	ids := map[string]int{}
	for _, f := range files {
		abs, _ := filepath.Abs(f)
		var id int
		if err := w.db.QueryRowContext(ctx, `SELECT file_id FROM ingested_files WHERE path = ?`, abs).Scan(&id); err != nil {
			t.Fatalf("%s: %v", abs, err)
		}
		ids[f] = id
	}
	tmp := t.TempDir()
	typedPath, csvPath := filepath.Join(tmp, "events.typed"), filepath.Join(tmp, "events.csv")
	typedOut, err := os.Create(typedPath)
	if err != nil {
		t.Fatal(err)
	}
	csvOut, err := os.Create(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	tw, cw := bufio.NewWriter(typedOut), bufio.NewWriter(csvOut)
	s, longest, err := decodeEventsTo(files, ids, cw, tw)
	for _, w := range []*bufio.Writer{tw, cw} {
		if err == nil {
			err = w.Flush()
		}
	}
	typedOut.Close()
	csvOut.Close()
	if err != nil {
		t.Fatal(err)
	}
	conn, err := w.db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := registerStaged(conn, "staged_events", s); err != nil {
		t.Fatal(err)
	}
	if err := registerTypedFile(conn, "typed_events", typedPath, s.cols, int64(s.n)); err != nil {
		t.Fatal(err)
	}
	// The ingest loaded the events from their typed staging file; the
	// staged CSV, the typed columns in memory and the typed file written
	// here must give the same table.
	for _, arm := range [][2]string{{"read_csv", readStage(&stageFile{path: csvPath, longest: longest}, runlog.TypeEvent)},
		{"columns", "staged_events()"}, {"typed_file", "typed_events()"}} {
		fn := arm[1]
		t.Run(arm[0], func(t *testing.T) {
			for _, q := range []string{`CREATE OR REPLACE TEMP TABLE ev AS SELECT * FROM events LIMIT 0`, stagedEventsInsert("ev", fn)} {
				if _, err := conn.ExecContext(ctx, q); err != nil {
					t.Fatal(err)
				}
			}
			sameEvents(t, conn)
		})
	}
}

// sameEvents checks that the temporary table ev holds the rows of events.
func sameEvents(t *testing.T, conn *sql.Conn) {
	ctx := context.Background()
	var stored, moved, missing, extra int
	for q, n := range map[string]*int{
		`SELECT count(*) FROM events`:                                &stored,
		`SELECT count(*) FROM ev`:                                    &moved,
		`SELECT count(*) FROM (FROM events EXCEPT ALL FROM ev)`:      &missing,
		`SELECT count(*) FROM (FROM ev EXCEPT ALL FROM main.events)`: &extra,
	} {
		if err := conn.QueryRowContext(ctx, q).Scan(n); err != nil {
			t.Fatal(err)
		}
	}
	if stored == 0 || moved != stored || missing != 0 || extra != 0 {
		showDiff(t, conn)
		t.Fatalf("events: %d in the warehouse, %d moved by this arm; %d rows of the first missing from the second, %d extra", stored, moved, missing, extra)
	}
}

// showDiff logs a few rows that differ between events and ev.
func showDiff(t *testing.T, conn *sql.Conn) {
	rows, err := conn.QueryContext(context.Background(), `(SELECT 'csv' AS arm, * FROM (FROM events EXCEPT ALL FROM ev) LIMIT 2)
		UNION ALL (SELECT 'udf', * FROM (FROM ev EXCEPT ALL FROM main.events) LIMIT 2)`)
	if err != nil {
		t.Log(err)
		return
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	for rows.Next() {
		v := make([]any, len(cols))
		p := make([]any, len(cols))
		for i := range v {
			p[i] = &v[i]
		}
		rows.Scan(p...)
		t.Logf("%v", v)
	}
}

// A typed staging file cut short fails the insert with an error naming it,
// whichever byte it ends at; it never panics.
func TestTypedFileCutShort(t *testing.T) {
	ctx := context.Background()
	cols := runlog.CSVColumns[runlog.TypeEvent]
	row := []any{"r1", int64(3), time.Date(2026, 4, 6, 11, 25, 0, 0, time.UTC), "agent", "message", nil, "hello \"x\"", nil,
		`{"a":1}`, nil, true, nil, `["confirm"]`, nil, int64(2), false, nil, int64(10), nil, nil, 1.5, nil, nil, int32(4), int32(7)}
	rec, err := runlog.AppendTypedValues(nil, cols, row)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := runlog.AppendTypedValues(nil, cols, append(slices.Clone(row[:len(row)-1]), "7")); err == nil {
		t.Error("a string for an INTEGER column was taken")
	}
	w, err := Open(ctx, filepath.Join(t.TempDir(), "w.duckdb"), OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	conn, err := w.db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	dir := t.TempDir()
	for cut := 0; cut <= len(rec); cut++ {
		path := filepath.Join(dir, fmt.Sprintf("%d.typed", cut))
		if err := os.WriteFile(path, append(slices.Clone(rec), rec[:cut]...), 0o644); err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("typed_%d", cut)
		if err := registerTypedFile(conn, name, path, cols, 2); err != nil {
			t.Fatal(err)
		}
		var n int
		err := conn.QueryRowContext(ctx, `SELECT count(*) FROM `+name+`()`).Scan(&n)
		switch {
		case cut == 0 || cut == len(rec):
			if err != nil || n != 1+cut/len(rec) {
				t.Errorf("whole records: %d rows, %v", n, err)
			}
		case err == nil:
			t.Errorf("cut at byte %d of %d: %d rows, no error", cut, len(rec), n)
		case !strings.Contains(err.Error(), "typed staging file"):
			t.Errorf("cut at byte %d: %v", cut, err)
		}
	}
	var got string
	if err := registerTypedFile(conn, "typed_one", filepath.Join(dir, "0.typed"), cols, 1); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRowContext(ctx, `SELECT concat_ws('|', run_id, seq, t, text, args, ok, actions, ref, visible, input_tokens, latency_ms, file_id, src_line) FROM typed_one()`).Scan(&got); err != nil {
		t.Fatal(err)
	}
	if want := `r1|3|2026-04-06 11:25:00+00|hello "x"|{"a":1}|true|["confirm"]|2|false|10|1.5|4|7`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

// The events' table function failing mid-load (a staging file cut short)
// fails the insert, and the transaction's rollback leaves the events as
// they were, as an ingest's load does on any error.
func TestTypedEventsLoadFailureRollsBack(t *testing.T) {
	ctx := context.Background()
	db, _ := sampleCopy(t, sampleKind{seed: 5, configs: 1})
	w, err := Open(ctx, db, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	conn, err := w.db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := w.registerTypedEvents(conn); err != nil {
		t.Fatal(err)
	}
	count := func() (n int) {
		if err := conn.QueryRowContext(ctx, `SELECT count(*) FROM events`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := count()
	// Three thousand whole records (more than a vector's worth), then one cut.
	var file []byte
	for i := range 3000 {
		row := []any{"cut-run", int64(i + 1), time.Date(2026, 4, 6, 11, 0, 0, 0, time.UTC), "user", "message", nil, "hi", nil,
			nil, nil, nil, nil, nil, nil, nil, false, nil, nil, nil, nil, nil, nil, nil, int32(99), int32(i + 1)}
		if file, err = runlog.AppendTypedValues(file, runlog.CSVColumns[runlog.TypeEvent], row); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), "event.typed")
	if err := os.WriteFile(path, file[:len(file)-5], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, "BEGIN TRANSACTION"); err != nil {
		t.Fatal(err)
	}
	_, err = conn.ExecContext(ctx, stagedEventsInsert("events", fmt.Sprintf("%s(%s, 3000)", typedEventsFunction, sqlString(path))))
	if err == nil || !strings.Contains(err.Error(), "typed staging file") {
		t.Errorf("a cut staging file loaded: %v", err)
	}
	if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	if after := count(); after != before {
		t.Errorf("events: %d before, %d after the failed load", before, after)
	}
}

// Records past typedChunkBytes make short chunks, and every row still
// arrives once.
func TestTypedFileShortChunks(t *testing.T) {
	ctx := context.Background()
	cols := runlog.CSVColumns[runlog.TypeEvent]
	text := strings.Repeat("x", 8<<10)
	var file []byte
	const n = 1500 // 12 MB: three times typedChunkBytes, under 2,048 records
	for i := range n {
		row := []any{"r", int64(i + 1), time.Date(2026, 4, 6, 11, 0, 0, 0, time.UTC), "user", "message", nil, text, nil,
			nil, nil, nil, nil, nil, nil, nil, false, nil, nil, nil, nil, nil, nil, nil, int32(1), int32(i + 1)}
		var err error
		if file, err = runlog.AppendTypedValues(file, cols, row); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), "long.typed")
	if err := os.WriteFile(path, file, 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := Open(ctx, filepath.Join(t.TempDir(), "w.duckdb"), OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	conn, err := w.db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := registerTypedFile(conn, "long_events", path, cols, n); err != nil {
		t.Fatal(err)
	}
	var rows, distinct, chars int64
	if err := conn.QueryRowContext(ctx, `SELECT count(*), count(DISTINCT seq), sum(length(text)) FROM long_events()`).Scan(&rows, &distinct, &chars); err != nil {
		t.Fatal(err)
	}
	if rows != n || distinct != n || chars != n*int64(len(text)) {
		t.Errorf("%d rows, %d seqs, %d characters; want %d, %d, %d", rows, distinct, chars, n, n, n*len(text))
	}
}
