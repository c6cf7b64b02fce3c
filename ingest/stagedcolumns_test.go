package ingest

import (
	"database/sql"
	"fmt"
	"runtime"
	"sync/atomic"
	"time"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/gymlens/gymlens/ingest/runlog"
)

// stagedColumns holds validated staging rows of one bulk record type
// (runlog.CSVColumns) column by column, as typed Go values, for a table
// function to hand DuckDB as vectors: -bench Staging's table_function arm
// (docs/benchmarks.md, "Tried and dropped": no faster than the typed file,
// and its memory grows with the input). JSON columns are their text; DuckDB
// casts them on insert, as it does the CSV's.
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

// stagedSource is one scan of stagedColumns: DuckDB's threads each claim
// the next vector's worth of rows and fill a chunk with them.
type stagedSource struct {
	s    *stagedColumns
	next atomic.Int64
}

func (src *stagedSource) ColumnInfos() []duckdb.ColumnInfo { return stagingColumnInfos(src.s.cols) }

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
