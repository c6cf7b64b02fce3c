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
	"time"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/gymlens/gymlens/ingest/runlog"
)

// duckTypes maps the staging types to the table function's column types
// (JSON as VARCHAR: the insert casts it).
var duckTypes = map[string]duckdb.Type{"VARCHAR": duckdb.TYPE_VARCHAR, "JSON": duckdb.TYPE_VARCHAR, "BIGINT": duckdb.TYPE_BIGINT,
	"DOUBLE": duckdb.TYPE_DOUBLE, "BOOLEAN": duckdb.TYPE_BOOLEAN, "TIMESTAMPTZ": duckdb.TYPE_TIMESTAMP_TZ, "INTEGER": duckdb.TYPE_INTEGER}

// stagingColumnInfos are the table function's columns for staging columns.
func stagingColumnInfos(cols []runlog.Column) []duckdb.ColumnInfo {
	infos := make([]duckdb.ColumnInfo, len(cols))
	for i, c := range cols {
		t, err := duckdb.NewTypeInfo(duckTypes[c.Type])
		if err != nil {
			panic(err) // a type missing from duckTypes
		}
		infos[i] = duckdb.ColumnInfo{Name: c.Name, T: t}
	}
	return infos
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

// typedChunkBytes bounds the records a thread takes for one chunk (beyond
// one record): a vector of 2,048 events of long texts could otherwise hold
// gigabytes.
const typedChunkBytes = 4 << 20

// typedLocal is a thread's records of its current chunk.
type typedLocal struct {
	buf  []byte
	ends []int
}

func (src *typedFileSource) ColumnInfos() []duckdb.ColumnInfo {
	return stagingColumnInfos(src.cols)
}

func (src *typedFileSource) Cardinality() *duckdb.CardinalityInfo {
	return &duckdb.CardinalityInfo{Cardinality: uint(src.rows), Exact: true}
}

func (src *typedFileSource) Init() duckdb.ParallelTableSourceInfo {
	return duckdb.ParallelTableSourceInfo{MaxThreads: runtime.GOMAXPROCS(0)}
}

func (src *typedFileSource) NewLocalState() any { return &typedLocal{} }

// take reads up to n records into l, fewer past typedChunkBytes.
func (src *typedFileSource) take(l *typedLocal, n int) error {
	src.mu.Lock()
	defer src.mu.Unlock()
	l.buf, l.ends = l.buf[:0], l.ends[:0]
	if src.err != nil || src.f == nil {
		return src.err
	}
	for range n {
		if len(l.buf) >= typedChunkBytes {
			// A short chunk: DuckDB asks again.
			return nil
		}
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
