package ingest

import (
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
