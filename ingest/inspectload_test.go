package ingest

import (
	"github.com/gymlens/gymlens/ingest/rows"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// inspectLogs copies Inspect's test logs into a new folder.
func inspectLogs(t *testing.T, names ...string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "logs")
	os.MkdirAll(dir, 0o755)
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join("inspect", "testdata", n))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, n), b, 0o644)
	}
	return dir
}

var inspectFixtures = []string{"log_formats.eval", "log_streaming.eval", "log_message_deduplication.eval", "log_read_sample.eval",
	"mmlu-summary-choices.eval", "popularity_cancelled.json", "no_samples_cancelled.json", "log_tool_call_error.json"}

func TestIngestInspectLogs(t *testing.T) {
	w := openTemp(t)
	dir := inspectLogs(t, inspectFixtures...)
	sum, err := w.Ingest(ctx, []string{dir}, IngestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Records["inspect_eval"] != 8 || sum.Records["inspect_sample"] != 12 {
		t.Errorf("records %v", sum.Records)
	}
	notes := strings.Join(sum.Notes, "\n")
	for _, want := range []string{"Inspect: 8 evals (2 cancelled, 0 errored, 0 incomplete, 0 without results)", "12 samples × epochs (", "1 unscored"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes do not say %q:\n%s", want, notes)
		}
	}
	q := func(query string) string {
		t.Helper()
		var s string
		if err := w.DB().QueryRow(query).Scan(&s); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		return s
	}
	// The epochs of log_streaming.eval, C/I as 1/0; its stored results
	// and reductions.
	if got := q(`SELECT string_agg(s.sample_id || '/' || s.epoch || '=' || s.value, ',' ORDER BY s.sample_id, s.epoch)
		FROM inspect_scores s JOIN inspect_evals e USING (eval_id) WHERE e.task = 'popularity' AND e.format = 'eval' AND e.epochs = 2`); got != "1/1=0.0,1/2=1.0,2/1=1.0,2/2=1.0" {
		t.Errorf("scores %s", got)
	}
	if got := q(`SELECT string_agg(metric || '=' || value, ',' ORDER BY metric) FROM inspect_results r JOIN inspect_evals e USING (eval_id) WHERE e.epochs = 2`); got != "accuracy=0.75,stderr=0.25" {
		t.Errorf("results %s", got)
	}
	if got := q(`SELECT string_agg(sample_id || '=' || value, ',' ORDER BY sample_id) FROM inspect_reductions r JOIN inspect_evals e USING (eval_id) WHERE e.epochs = 2`); got != "1=0.5,2=1.0" {
		t.Errorf("reductions %s", got)
	}
	// The configuration, the trajectory and the pools.
	if got := q(`SELECT config_id FROM inspect_evals WHERE epochs = 2`); got != "azureai/Meta-Llama-3-1-405B-Instruct-jqf | system_message+generate | none" {
		t.Errorf("config %s", got)
	}
	if got := q(`SELECT string_agg(kind || ':' || n, ',' ORDER BY kind) FROM (SELECT kind, count(*) n FROM inspect_items i JOIN inspect_evals e USING (eval_id) WHERE e.log_version = 3 GROUP BY kind)`); got != "attachment:1,event:42,message:12,pool_message:11" {
		t.Errorf("items %s", got)
	}
	if got := q(`SELECT count(*) FROM inspect_evals WHERE status = 'cancelled' AND has_results`); got != "2" {
		t.Errorf("cancelled evals with results: %s", got)
	}
	// Ingested again: nothing new.
	sum, err = w.Ingest(ctx, []string{dir}, IngestOptions{})
	if err != nil || sum.Files != 0 {
		t.Fatalf("again: %v, %d files", err, sum.Files)
	}
}

// A bad log fails the ingest, names the file, the entry and the field,
// and leaves the warehouse as it was.
func TestIngestInspectBadLogWritesNothing(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	j, _ := os.ReadFile(filepath.Join("inspect", "testdata", "log_formats.json"))
	os.WriteFile(bad, []byte(strings.Replace(string(j), `"role": "user"`, `"role": user`, 1)), 0o644)
	w2 := openTemp(t)
	_, err := w2.Ingest(ctx, []string{bad, filepath.Join("inspect", "testdata", "log_streaming.eval")}, IngestOptions{})
	if err == nil || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), "samples[0].messages[") {
		t.Fatalf("got %v", err)
	}
	var n int
	w2.DB().QueryRow(`SELECT (SELECT count(*) FROM inspect_evals) + (SELECT count(*) FROM inspect_samples) + (SELECT count(*) FROM inspect_items) + (SELECT count(*) FROM ingested_files)`).Scan(&n)
	if n != 0 {
		t.Errorf("%d rows written", n)
	}
}

// The same eval from a second file (the .json of a .eval) is refused,
// naming the file it came from.
func TestIngestInspectSameEvalTwice(t *testing.T) {
	w := openTemp(t)
	if _, err := w.Ingest(ctx, []string{inspectLogs(t, "log_formats.eval")}, IngestOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err := w.Ingest(ctx, []string{inspectLogs(t, "log_formats.json")}, IngestOptions{})
	if err == nil || !strings.Contains(err.Error(), "is already in the warehouse, from") || !strings.Contains(err.Error(), "log_formats.eval") {
		t.Fatalf("got %v", err)
	}
	if _, err := w.Ingest(ctx, []string{inspectLogs(t, "log_formats.json")}, IngestOptions{Replace: true}); err != nil {
		t.Fatalf("--replace: %v", err)
	}
	var n int
	w.DB().QueryRow(`SELECT count(*) FROM inspect_samples`).Scan(&n)
	if n != 1 {
		t.Errorf("%d samples after the replacement", n)
	}
}

// validate counts what an ingest would write.
func TestValidateInspectLogsCounts(t *testing.T) {
	sum, err := Validate(ctx, nil, []string{inspectLogs(t, "log_streaming.eval", "log_formats.json")}, IngestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Records["inspect_eval"] != 2 || sum.Records["inspect_sample"] != 5 || sum.Records["inspect_score"] != 5 || sum.Records["inspect_item"] == 0 {
		t.Errorf("records %v", sum.Records)
	}
}

// A sample's metadata fields are read by name as bound JSON paths: a name
// with a quote or SQL in it is a key like any other; a sample without the
// field, or with null there, reads as absent.
func TestLoadInspectMetaByName(t *testing.T) {
	w := openTemp(t)
	if _, err := w.Ingest(ctx, []string{inspectLogs(t, inspectFixtures...)}, IngestOptions{}); err != nil {
		t.Fatal(err)
	}
	odd := "it's; DROP TABLE runs --"
	if _, err := w.DB().Exec(`UPDATE inspect_samples SET metadata = json_object('level', CASE WHEN sample_id = '1' THEN 'easy' ELSE 'hard' END, ?::VARCHAR, 7, 'gone', NULL)
		WHERE eval_id IN (SELECT eval_id FROM inspect_evals WHERE task = 'popularity' AND format = 'eval' AND epochs = 2)`, odd); err != nil {
		t.Fatal(err)
	}
	ms, err := w.LoadInspectMeta(ctx, []string{"level", odd, "gone", "never"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range ms {
		if m.Values[0] != rows.Absent {
			got = append(got, m.SampleID+":"+strings.Join(m.Values, "|"))
		}
	}
	if want := "1:easy|7|(absent)|(absent) 2:hard|7|(absent)|(absent)"; strings.Join(got, " ") != want {
		t.Errorf("got %q, want %q", strings.Join(got, " "), want)
	}
	var n int
	if err := w.DB().QueryRow(`SELECT count(*) FROM runs`).Scan(&n); err != nil {
		t.Errorf("runs: %v", err)
	}
}
