package ingest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// copyFixtures copies PARE's fixture traces into a new folder.
func copyFixtures(t *testing.T, names ...string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "traces")
	os.MkdirAll(dir, 0o755)
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join("pare", "testdata", n))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, n), b, 0o644)
	}
	return dir
}

var pareFixtures = []string{"add_missing_group_contacts_run_1.json", "apartment_feature_comparison_query_run_4.json",
	"urgent_meeting_bumps_personal_errand_run_3.json"}

func TestIngestPARETraces(t *testing.T) {
	w := openTemp(t)
	dir := copyFixtures(t, pareFixtures...)
	sum, err := w.Ingest(ctx, []string{dir}, IngestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Records["pare_run"] != 3 || sum.Records["decision_point"] != 2 || sum.Records["pare_event"] != 75 {
		t.Errorf("records %v", sum.Records)
	}
	if len(sum.Notes) != 1 || !strings.Contains(sum.Notes[0], "RateLimitError") || !strings.Contains(sum.Notes[0], "urgent_meeting") {
		t.Errorf("notes %v", sum.Notes)
	}
	var classes string
	if err := w.DB().QueryRow(`SELECT string_agg(sample_id || ':' || decision_class || ':' || final_decision, ',' ORDER BY sample_id) FROM decision_points`).Scan(&classes); err != nil {
		t.Fatal(err)
	}
	if classes != "add_missing_group_contacts_run_1_p0:reject:false,apartment_feature_comparison_query_run_4_p0:gather_context:true" {
		t.Errorf("decision points %s", classes)
	}
	// Events in time order, with actor, app class and mode; the source's
	// metadata kept; the file recorded with its counts.
	var n int
	w.DB().QueryRow(`SELECT count(*) FROM pare_events e WHERE e.seq > 0 AND e.t < (SELECT t FROM pare_events p WHERE p.run_id = e.run_id AND p.seq = e.seq - 1)`).Scan(&n)
	if n != 0 {
		t.Errorf("%d events out of time order", n)
	}
	w.DB().QueryRow(`SELECT count(*) FROM pare_events WHERE actor = 'agent' AND function = 'send_message_to_user' AND proactive_mode = 'observe' AND app_class LIKE 'PAS%'`).Scan(&n)
	if n < 2 {
		t.Errorf("%d observe-mode proposals with their app class", n)
	}
	var scen, rec string
	w.DB().QueryRow(`SELECT metadata->>'$.definition.scenario_id' FROM pare_runs WHERE scenario = 'apartment_feature_comparison_query'`).Scan(&scen)
	w.DB().QueryRow(`SELECT records::VARCHAR FROM ingested_files WHERE path LIKE '%apartment%'`).Scan(&rec)
	if scen != "apartment_feature_comparison_query" || !strings.Contains(rec, `"decision_point":1`) {
		t.Errorf("metadata %q, records %s", scen, rec)
	}
	// Again: nothing new.
	before := snapshot(t, w)
	if _, err := w.Ingest(ctx, []string{dir}, IngestOptions{}); err != nil {
		t.Fatal(err)
	}
	if snapshot(t, w) != before {
		t.Error("a second ingest of the same traces changed the warehouse")
	}
}

// A bad trace is an error naming the file, and nothing is written; the
// same run in two files is an error too.
func TestIngestPARETraceErrors(t *testing.T) {
	w := openTemp(t)
	dir := copyFixtures(t, pareFixtures[:1]...)
	b, _ := os.ReadFile(filepath.Join(dir, pareFixtures[0]))
	os.WriteFile(filepath.Join(dir, "truncated.json"), b[:len(b)/2], 0o644)
	before := snapshot(t, w)
	_, err := w.Ingest(ctx, []string{dir}, IngestOptions{})
	if err == nil || !strings.Contains(err.Error(), "truncated.json") || !strings.Contains(err.Error(), "not JSON (truncated?)") {
		t.Fatalf("got %v", err)
	}
	if snapshot(t, w) != before {
		t.Error("a failed ingest wrote something")
	}
	os.Remove(filepath.Join(dir, "truncated.json"))
	// The same run under another name, in the same ingest.
	os.WriteFile(filepath.Join(dir, "copy.json"), append(b, '\n'), 0o644)
	if _, err := w.Ingest(ctx, []string{dir}, IngestOptions{}); err == nil || !strings.Contains(err.Error(), "is also in") {
		t.Fatalf("duplicate run in one ingest: %v", err)
	}
	os.Remove(filepath.Join(dir, "copy.json"))
	if _, err := w.Ingest(ctx, []string{dir}, IngestOptions{}); err != nil {
		t.Fatal(err)
	}
	// And again from another file, later.
	other := t.TempDir()
	os.WriteFile(filepath.Join(other, "renamed.json"), append(b, ' '), 0o644)
	if _, err := w.Ingest(ctx, []string{other}, IngestOptions{}); err == nil || !strings.Contains(err.Error(), "already in the warehouse") {
		t.Fatalf("duplicate run across ingests: %v", err)
	}
}

// A trace whose execute model differs from its observe model names both in
// its configuration; one that agrees names the observe model only.
func TestPAREConfigNamesExecuteModel(t *testing.T) {
	w := openTemp(t)
	dir := t.TempDir()
	prompts := `"{\"timestamp\": 1.0, \"log_type\": \"system_prompt\", \"agent_id\": \"u\", \"content\": \"You are simulating a real human user\"}",` +
		`"{\"timestamp\": 1.1, \"log_type\": \"system_prompt\", \"agent_id\": \"o\", \"content\": \"You are a proactive assistant that monitors\"}"`
	trace := func(scen, models string) string {
		return `{"version": "are_simulation_v1", "apps": [], "completed_events": [], "world_logs": [` + prompts + `],
			"metadata": {"definition": {"scenario_id": "` + scen + `", "run_number": 1}, "simulation": {"model_id": "` + models + `"}}}`
	}
	os.WriteFile(filepath.Join(dir, "a.json"), []byte(trace("a", "user:u|observe:o|execute:e")), 0o644)
	os.WriteFile(filepath.Join(dir, "b.json"), []byte(trace("b", "user:u|observe:o|execute:o")), 0o644)
	if _, err := w.Ingest(ctx, []string{dir}, IngestOptions{}); err != nil {
		t.Fatal(err)
	}
	var got []string
	rows, err := w.db.Query(`SELECT config_id FROM pare_runs ORDER BY scenario`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var c string
		rows.Scan(&c)
		got = append(got, c)
	}
	rows.Close()
	if strings.Join(got, ";") != "o / e | u;o | u" {
		t.Errorf("%v", got)
	}
}

// Linking result rows to traces by the path they name: the trace sharing
// the most trailing names; a tie, or a trace of another scenario, links
// nothing and says so.
func TestPAREResultLinks(t *testing.T) {
	w := openTemp(t)
	dir := t.TempDir()
	trace := func(scen, model string) string {
		return `{"version": "are_simulation_v1", "apps": [], "completed_events": [], "world_logs": [],
			"metadata": {"definition": {"scenario_id": "` + scen + `", "run_number": 1}, "simulation": {"model_id": "` + model + `"}}}`
	}
	for _, d := range []string{"cfgA", "cfgB"} {
		os.MkdirAll(filepath.Join(dir, "traces", d), 0o755)
	}
	// The same file name under two configurations, and one trace of
	// scenario "other" under the name of "s2".
	os.WriteFile(filepath.Join(dir, "traces", "cfgA", "s1_run_1.json"), []byte(trace("s1", "m")), 0o644)
	os.WriteFile(filepath.Join(dir, "traces", "cfgB", "s1_run_1.json"), []byte(trace("s1", "m2")), 0o644)
	os.WriteFile(filepath.Join(dir, "traces", "cfgA", "s2_run_1.json"), []byte(trace("other", "m")), 0o644)
	row := func(scen, user, path string) string {
		return `{"base_scenario_id": "` + scen + `", "run_number": 1, "status": "failed", "success_numeric": 0.0, "proactive_model": "p", "user_model": "` + user + `", "export_path": "` + path + `"}`
	}
	rows := "[\n" + strings.Join([]string{
		row("s1", "u1", "/far/away/cfgB/s1_run_1.json"), // two names shared with one trace: linked
		row("s1", "u2", "/far/away/cfgC/s1_run_1.json"), // the file name only, with both: a tie
		row("s2", "u1", "/far/away/cfgA/s2_run_1.json"), // a trace of another scenario
		row("s3", "u1", ""),                             // no trace named
	}, ",\n") + "]"
	os.WriteFile(filepath.Join(dir, "x_result.json"), []byte(rows), 0o644)
	sum, err := w.Ingest(ctx, []string{dir}, IngestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	notes := strings.Join(sum.Notes, "\n")
	if !strings.Contains(notes, "x_result.json:3: the trace /far/away/cfgC/s1_run_1.json matches more than one ingested trace") ||
		!strings.Contains(notes, `x_result.json:4: the trace named (/far/away/cfgA/s2_run_1.json) is of scenario "other", the row of "s2"; not linked`) ||
		!strings.Contains(notes, "4 result rows, 1 linked to an ingested trace") {
		t.Errorf("notes:\n%s", notes)
	}
	var linked string
	if err := w.db.QueryRow(`SELECT string_agg(r.result_id || ' -> ' || f.path, '; ') FROM pare_results r JOIN pare_runs t USING (run_id) JOIN ingested_files f ON f.file_id = t.file_id`).Scan(&linked); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(linked, "s1_run_1 | p | u1 -> ") || !strings.HasSuffix(linked, filepath.Join("cfgB", "s1_run_1.json")) {
		t.Errorf("linked: %s", linked)
	}
}

// A PARE run's texts come in the orders of LoadPARERuns: each event's
// message (its content argument), arguments and result, each proposal's
// text, cut at PARETextLimit.
func TestPARETexts(t *testing.T) {
	w := openTemp(t)
	if _, err := w.Ingest(ctx, []string{copyFixtures(t, pareFixtures...)}, IngestOptions{}); err != nil {
		t.Fatal(err)
	}
	runs, err := w.LoadPARERuns(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		tx, err := w.PARETexts(ctx, r.RunID)
		if err != nil {
			t.Fatal(err)
		}
		if len(tx.Events) != len(r.Events) || len(tx.Proposals) != len(r.Decisions) {
			t.Errorf("%s: %d event texts for %d events, %d proposals for %d decision points", r.RunID, len(tx.Events), len(r.Events), len(tx.Proposals), len(r.Decisions))
			continue
		}
		for i, e := range r.Events {
			x := tx.Events[i]
			if e.Function == "send_message_to_user" && (x.Text == "" || !strings.Contains(x.Args, `"content"`)) {
				t.Errorf("%s: event %d sends no text: %+v", r.RunID, i, x)
			}
			if utf8.RuneCountInString(x.Result) > PARETextLimit || utf8.RuneCountInString(x.Args) > PARETextLimit {
				t.Errorf("%s: event %d: a text longer than the limit", r.RunID, i)
			}
		}
		for i, p := range tx.Proposals {
			if p == "" {
				t.Errorf("%s: proposal %d has no text", r.RunID, i)
			}
		}
	}
	if tx, err := w.PARETexts(ctx, "nope"); err != nil || len(tx.Events) != 0 {
		t.Errorf("a run not there: %+v, %v", tx, err)
	}
}
