package ingest

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// The JSON columns of the Inspect tables hold the JSON the log wrote (an
// object is an object), not that JSON as a string: a sample's metadata
// field, a score's raw value, an item and an eval's spec read with
// DuckDB's JSON functions.
func TestInspectJSONColumnsHoldJSON(t *testing.T) {
	w := openTemp(t)
	if _, err := w.Ingest(ctx, []string{inspectLogs(t, "popularity_cancelled.json", "log_streaming.eval")}, IngestOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ query, want string }{
		{`SELECT coalesce(min(json_type(metadata) || ':' || coalesce(json_extract_string(metadata, '$.nested.foo'), 'none')), 'none') FROM inspect_samples WHERE metadata::VARCHAR LIKE '%nested%'`, "OBJECT:bar"},
		{`SELECT min(json_type(raw)) || ':' || min(json_extract_string(raw, '$')) FROM inspect_scores WHERE raw IS NOT NULL AND value = 1`, "VARCHAR:C"},
		{`SELECT min(json_type(data)) FROM inspect_items WHERE kind = 'message'`, "OBJECT"},
		{`SELECT min(json_type(spec)) FROM inspect_evals`, "OBJECT"},
		{`SELECT min(json_type(stats)) FROM inspect_evals`, "OBJECT"},
	} {
		var got string
		if err := w.DB().QueryRow(tc.query).Scan(&got); err != nil {
			t.Fatalf("%s: %v", tc.query, err)
		}
		if got != tc.want {
			t.Errorf("%s: %q, want %q", tc.query, got, tc.want)
		}
	}
}

// A schema 21 warehouse holds each Inspect JSON value as a JSON string of
// its text; the upgrade to 22 unwraps it, giving what an ingest today
// writes, value for value.
func TestInspectJSONColumnsUpgradedFromSchema21(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w.duckdb")
	w, err := Open(ctx, path, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Ingest(ctx, []string{inspectLogs(t, "popularity_cancelled.json", "log_streaming.eval", "log_tool_call_error.json")}, IngestOptions{}); err != nil {
		t.Fatal(err)
	}
	columns := map[string][]string{
		"inspect_evals":      {"model_args", "harness_args", "spec", "plan", "stats"},
		"inspect_samples":    {"metadata", "input", "target"},
		"inspect_scores":     {"raw"},
		"inspect_items":      {"data"},
		"inspect_results":    {"params"},
		"inspect_reductions": {"raw"},
	}
	fingerprint := func(w *Warehouse) string {
		var b strings.Builder
		for _, table := range []string{"inspect_evals", "inspect_samples", "inspect_scores", "inspect_items", "inspect_results", "inspect_reductions"} {
			for _, c := range columns[table] {
				var s string
				q := `SELECT count(` + c + `) || ':' || coalesce(string_agg(json_type(` + c + `) || '=' || ` + c + `::VARCHAR, '|' ORDER BY ` + c + `::VARCHAR), '') FROM ` + table
				if err := w.DB().QueryRow(q).Scan(&s); err != nil {
					t.Fatalf("%s.%s: %v", table, c, err)
				}
				fmt.Fprintf(&b, "%s.%s %s\n", table, c, s)
			}
		}
		return b.String()
	}
	want := fingerprint(w)
	if !strings.Contains(want, "inspect_items.data ") || strings.Contains(want, "inspect_items.data 0:") {
		t.Fatalf("no items ingested:\n%.500s", want)
	}
	for table, cs := range columns { // what schema 21's loader wrote
		for _, c := range cs {
			if _, err := w.DB().Exec(`UPDATE ` + table + ` SET ` + c + ` = to_json(` + c + `::VARCHAR)`); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := w.DB().Exec(`UPDATE meta SET value = '21' WHERE key = 'schema_version'`); err != nil {
		t.Fatal(err)
	}
	if fingerprint(w) == want {
		t.Fatal("the schema 21 values were not made")
	}
	w.Close()
	w, err = Open(ctx, path, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if got := fingerprint(w); got != want {
		t.Errorf("after the upgrade:\n%.2000s\nwant:\n%.2000s", got, want)
	}
}
