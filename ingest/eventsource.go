package ingest

import (
	"bufio"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/gymlens/gymlens/ingest/runlog"
)

// stagedColumns holds validated staging rows of one bulk record type
// (runlog.CSVColumns) column by column, as typed Go values, for a table
// function to hand DuckDB as vectors (docs/benchmarks.md, "Tried and
// dropped": the staged read_csv is faster, so only `-bench Staging` uses
// it). JSON columns are their text; DuckDB casts them on insert, as it does
// the CSV's.
type stagedColumns struct {
	cols []runlog.Column
	n    int
	data []columnData
}

// columnData is one column: the slice of its type, and which rows are NULL.
type columnData struct {
	str  []string
	i64  []int64
	f64  []float64
	b    []bool
	t    []time.Time
	i32  []int32
	null []bool
}

func newStagedColumns(typ string) *stagedColumns {
	cols := runlog.CSVColumns[typ]
	return &stagedColumns{cols: cols, data: make([]columnData, len(cols))}
}

// add appends one row of typed values (runlog's AppendEventValues): nil is
// NULL; a value of another type than its column's is a programmer error.
func (s *stagedColumns) add(row []any) error {
	if len(row) != len(s.cols) {
		return fmt.Errorf("staging row of %d values for %d columns", len(row), len(s.cols))
	}
	for i, v := range row {
		c := &s.data[i]
		c.null = append(c.null, v == nil)
		var ok bool
		switch s.cols[i].Type {
		case "VARCHAR", "JSON":
			var x string
			x, ok = v.(string)
			c.str = append(c.str, x)
		case "BIGINT":
			var x int64
			x, ok = v.(int64)
			c.i64 = append(c.i64, x)
		case "DOUBLE":
			var x float64
			x, ok = v.(float64)
			c.f64 = append(c.f64, x)
		case "BOOLEAN":
			var x bool
			x, ok = v.(bool)
			c.b = append(c.b, x)
		case "TIMESTAMPTZ":
			var x time.Time
			x, ok = v.(time.Time)
			c.t = append(c.t, x)
		case "INTEGER":
			var x int32
			x, ok = v.(int32)
			c.i32 = append(c.i32, x)
		}
		if !ok && v != nil {
			return fmt.Errorf("staging column %s (%s): a %T", s.cols[i].Name, s.cols[i].Type, v)
		}
	}
	s.n++
	return nil
}

// duckTypes maps the staging types to the table function's column types
// (JSON as VARCHAR: the insert casts it).
var duckTypes = map[string]duckdb.Type{"VARCHAR": duckdb.TYPE_VARCHAR, "JSON": duckdb.TYPE_VARCHAR, "BIGINT": duckdb.TYPE_BIGINT,
	"DOUBLE": duckdb.TYPE_DOUBLE, "BOOLEAN": duckdb.TYPE_BOOLEAN, "TIMESTAMPTZ": duckdb.TYPE_TIMESTAMP_TZ, "INTEGER": duckdb.TYPE_INTEGER}

// stagedSource is one scan of stagedColumns: DuckDB's threads each claim
// the next vector's worth of rows and fill a chunk with them.
type stagedSource struct {
	s    *stagedColumns
	next atomic.Int64
}

func (src *stagedSource) ColumnInfos() []duckdb.ColumnInfo {
	infos := make([]duckdb.ColumnInfo, len(src.s.cols))
	for i, c := range src.s.cols {
		t, err := duckdb.NewTypeInfo(duckTypes[c.Type])
		if err != nil {
			panic(err) // a type missing from duckTypes
		}
		infos[i] = duckdb.ColumnInfo{Name: c.Name, T: t}
	}
	return infos
}

func (src *stagedSource) Cardinality() *duckdb.CardinalityInfo {
	return &duckdb.CardinalityInfo{Cardinality: uint(src.s.n), Exact: true}
}

func (src *stagedSource) Init() duckdb.ParallelTableSourceInfo {
	return duckdb.ParallelTableSourceInfo{MaxThreads: runtime.GOMAXPROCS(0)}
}

func (src *stagedSource) NewLocalState() any { return new(struct{}) }

func (src *stagedSource) FillChunk(_ any, chunk duckdb.DataChunk) error {
	size := int64(duckdb.GetDataChunkCapacity())
	start := src.next.Add(size) - size
	if start >= int64(src.s.n) {
		return chunk.SetSize(0)
	}
	end := min(start+size, int64(src.s.n))
	if err := chunk.SetSize(int(end - start)); err != nil {
		return err
	}
	for ci := range src.s.cols {
		c := &src.s.data[ci]
		var err error
		switch {
		case c.str != nil:
			err = fillColumn(chunk, ci, c.null[start:end], c.str[start:end])
		case c.i64 != nil:
			err = fillColumn(chunk, ci, c.null[start:end], c.i64[start:end])
		case c.f64 != nil:
			err = fillColumn(chunk, ci, c.null[start:end], c.f64[start:end])
		case c.b != nil:
			err = fillColumn(chunk, ci, c.null[start:end], c.b[start:end])
		case c.t != nil:
			err = fillColumn(chunk, ci, c.null[start:end], c.t[start:end])
		case c.i32 != nil:
			err = fillColumn(chunk, ci, c.null[start:end], c.i32[start:end])
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// fillColumn writes vals (NULL where null) to the chunk's column ci, from
// its first row.
func fillColumn[T any](chunk duckdb.DataChunk, ci int, null []bool, vals []T) error {
	for r, v := range vals {
		var err error
		if null[r] {
			err = duckdb.SetChunkValue[any](chunk, ci, r, nil)
		} else {
			err = duckdb.SetChunkValue(chunk, ci, r, v)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// registerStaged registers, on conn's connection, the table function name
// (no arguments) scanning s afresh at each call.
func registerStaged(conn *sql.Conn, name string, s *stagedColumns) error {
	return duckdb.RegisterTableUDF(conn, name, duckdb.ParallelChunkTableFunction{
		BindArguments: func(map[string]any, ...any) (duckdb.ParallelChunkTableSource, error) {
			return &stagedSource{s: s}, nil
		},
	})
}

// A typed staging file holds validated rows on disk, one typed staging
// record each (runlog.AppendTyped), so that memory stays bounded whatever
// the input.

// typedFileSource is one scan of a typed staging file: DuckDB's threads
// each take the next vector's worth of records under a lock, then decode
// them into their chunk apart.
type typedFileSource struct {
	cols []runlog.Column
	rows int64 // the file's number of rows
	mu   sync.Mutex
	f    *os.File // nil once read to the end or failed
	r    *bufio.Reader
	err  error
}

// typedLocal is a thread's records of its current chunk.
type typedLocal struct {
	buf  []byte
	ends []int
}

func (src *typedFileSource) ColumnInfos() []duckdb.ColumnInfo {
	return (&stagedSource{s: &stagedColumns{cols: src.cols}}).ColumnInfos()
}

func (src *typedFileSource) Cardinality() *duckdb.CardinalityInfo {
	return &duckdb.CardinalityInfo{Cardinality: uint(src.rows), Exact: true}
}

func (src *typedFileSource) Init() duckdb.ParallelTableSourceInfo {
	return duckdb.ParallelTableSourceInfo{MaxThreads: runtime.GOMAXPROCS(0)}
}

func (src *typedFileSource) NewLocalState() any { return &typedLocal{} }

// take reads up to n records into l.
func (src *typedFileSource) take(l *typedLocal, n int) error {
	src.mu.Lock()
	defer src.mu.Unlock()
	l.buf, l.ends = l.buf[:0], l.ends[:0]
	if src.err != nil || src.f == nil {
		return src.err
	}
	for range n {
		size, err := binary.ReadUvarint(src.r)
		if err == io.EOF {
			src.f.Close()
			src.f = nil
			return nil
		}
		if err == nil {
			l.buf = slices.Grow(l.buf, int(size))
			start := len(l.buf)
			l.buf = l.buf[:start+int(size)]
			_, err = io.ReadFull(src.r, l.buf[start:])
		}
		if err != nil {
			src.f.Close()
			src.f = nil
			src.err = fmt.Errorf("reading the typed staging file: %w", err)
			return src.err
		}
		l.ends = append(l.ends, len(l.buf))
	}
	return nil
}

func (src *typedFileSource) FillChunk(local any, chunk duckdb.DataChunk) error {
	l := local.(*typedLocal)
	if err := src.take(l, duckdb.GetDataChunkCapacity()); err != nil {
		return err
	}
	if err := chunk.SetSize(len(l.ends)); err != nil {
		return err
	}
	start := 0
	for r, end := range l.ends {
		rec := l.buf[start:end]
		start = end
		for ci, c := range src.cols {
			if len(rec) == 0 {
				return errTypedRecord
			}
			null := rec[0] == 0
			rec = rec[1:]
			if null {
				if err := duckdb.SetChunkValue[any](chunk, ci, r, nil); err != nil {
					return err
				}
				continue
			}
			var err error
			var n int
			switch c.Type {
			case "VARCHAR", "JSON":
				var size uint64
				size, n = binary.Uvarint(rec)
				if n <= 0 || uint64(len(rec)-n) < size {
					return errTypedRecord
				}
				err = duckdb.SetChunkValue(chunk, ci, r, rec[n:n+int(size)])
				n += int(size)
			case "BIGINT":
				var x int64
				x, n = binary.Varint(rec)
				err = duckdb.SetChunkValue(chunk, ci, r, x)
			case "INTEGER":
				var x int64
				x, n = binary.Varint(rec)
				err = duckdb.SetChunkValue(chunk, ci, r, int32(x))
			case "DOUBLE":
				if len(rec) < 8 {
					return errTypedRecord
				}
				err = duckdb.SetChunkValue(chunk, ci, r, math.Float64frombits(binary.LittleEndian.Uint64(rec)))
				n = 8
			case "BOOLEAN":
				if len(rec) < 1 {
					return errTypedRecord
				}
				err = duckdb.SetChunkValue(chunk, ci, r, rec[0] == 1)
				n = 1
			case "TIMESTAMPTZ":
				var x int64
				x, n = binary.Varint(rec)
				err = duckdb.SetChunkValue(chunk, ci, r, time.UnixMicro(x).UTC())
			}
			if n <= 0 {
				return errTypedRecord
			}
			if err != nil {
				return err
			}
			rec = rec[n:]
		}
	}
	return nil
}

var errTypedRecord = errors.New("a record of the typed staging file is cut short")

// typedEventsFunction is the table function (path VARCHAR, rows BIGINT)
// reading a typed staging file of events, registered once per warehouse.
const typedEventsFunction = "gymlens_typed_events"

// registerTypedEvents registers typedEventsFunction in w's database, once.
func (w *Warehouse) registerTypedEvents(conn *sql.Conn) error {
	w.typedOnce.Do(func() {
		cols := runlog.CSVColumns[runlog.TypeEvent]
		varchar, _ := duckdb.NewTypeInfo(duckdb.TYPE_VARCHAR)
		bigint, _ := duckdb.NewTypeInfo(duckdb.TYPE_BIGINT)
		w.typedErr = duckdb.RegisterTableUDF(conn, typedEventsFunction, duckdb.ParallelChunkTableFunction{
			Config: duckdb.TableFunctionConfig{Arguments: []duckdb.TypeInfo{varchar, bigint}},
			BindArguments: func(_ map[string]any, args ...any) (duckdb.ParallelChunkTableSource, error) {
				path, _ := args[0].(string)
				rows, _ := args[1].(int64)
				return openTypedFile(path, cols, rows)
			},
		})
	})
	return w.typedErr
}

func openTypedFile(path string, cols []runlog.Column, rows int64) (*typedFileSource, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	// take closes it at the end or at an error; a scan stopped before
	// leaves it to the collector.
	return &typedFileSource{cols: cols, rows: rows, f: f, r: bufio.NewReaderSize(f, 1<<20)}, nil
}

// registerTypedFile registers, on conn's connection, the table function
// name (no arguments) scanning the typed staging file path, of rows rows
// of the columns cols, afresh at each call.
func registerTypedFile(conn *sql.Conn, name, path string, cols []runlog.Column, rows int64) error {
	return duckdb.RegisterTableUDF(conn, name, duckdb.ParallelChunkTableFunction{
		BindArguments: func(map[string]any, ...any) (duckdb.ParallelChunkTableSource, error) {
			return openTypedFile(path, cols, rows)
		},
	})
}
