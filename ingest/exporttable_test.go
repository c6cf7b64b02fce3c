package ingest

import (
	"reflect"
	"testing"
)

// ExportTable lays an export's results out as gymlens export prints
// them: one row per table, its rows and path.
func TestExportTable(t *testing.T) {
	cols, rows := ExportTable([]ExportResult{{Table: "runs", Rows: 3, Path: "out/runs.parquet"}, {Table: "events", Rows: 120, Path: "out/events"}})
	if !reflect.DeepEqual(cols, []string{"table", "rows", "path"}) ||
		!reflect.DeepEqual(rows, [][]any{{"runs", int64(3), "out/runs.parquet"}, {"events", int64(120), "out/events"}}) {
		t.Errorf("%v %v", cols, rows)
	}
	if _, rows := ExportTable(nil); rows != nil {
		t.Errorf("no tables: %v", rows)
	}
}
