package ingest

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/gymlens/gymlens/ingest/runlog"
	"github.com/gymlens/gymlens/internal/mutate"
	"github.com/gymlens/gymlens/internal/sample"
)

var ctx = context.Background()

func openTemp(t *testing.T) *Warehouse {
	t.Helper()
	w, err := Open(ctx, filepath.Join(t.TempDir(), "w.duckdb"), OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

// snapshot counts the rows of every table.
func snapshot(t *testing.T, w *Warehouse) string {
	t.Helper()
	return countRows(t, w, exportTables)
}

// dataSnapshot counts the rows of the data tables, not the bookkeeping.
func dataSnapshot(t *testing.T, w *Warehouse) string {
	t.Helper()
	return countRows(t, w, exportTables[3:])
}

func countRows(t *testing.T, w *Warehouse, tables []exportTable) string {
	var b strings.Builder
	for _, tb := range tables {
		var n int
		if err := w.db.QueryRow(`SELECT count(*) FROM ` + tb.name).Scan(&n); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s=%d ", tb.name, n)
	}
	return b.String()
}

func write(t *testing.T, path, text string) string {
	t.Helper()
	os.MkdirAll(filepath.Dir(path), 0o755)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

const scenarioFile = `type: scenario
scenario: monitor_purchase
domain: shopping
personas:
  reviewer: {group: S, label: Reviewer}
  operator: {group: E}
tasks:
  - id: mp_price
    weight: 2
    expected_depth: {reviewer: suggest, operator: execute}
  - id: mp_buy
    expected_depth: {reviewer: prepare, operator: execute}
tools: {search: read, checkout: execute}
`

const runFile = `{"type":"run","run_id":"r1","scenario":"monitor_purchase","persona":"reviewer","rep":1,"config":{"model":"Claude Opus 5","harness":"CC","family":"Claude"},"gym":"x"}
{"type":"event","run_id":"r1","seq":1,"t":"2026-03-02T18:00:00Z","actor":"user","kind":"message","text":"Is that M27 really £150?","task":"mp_price"}
{"type":"event","run_id":"r1","seq":2,"t":"2026-03-02T18:01:00Z","actor":"agent","kind":"tool_call","tool":"search","args":{"q":"M27"},"task":"mp_price","usage":{"input_tokens":100,"output_tokens":20},"note":"kept"}
{"type":"event","run_id":"r1","seq":3,"t":"2026-03-02T18:02:00.123456+01:00","actor":"agent","kind":"approval_request","actions":["checkout"],"task":"mp_buy","text":"Buy \"it\",\nnow?\r\n\t½ ✓ \\ ''"}
{"type":"event","run_id":"r1","seq":5,"t":"2026-03-02T18:03:00Z","actor":"user","kind":"decision","decision":"approve","ref":3,"task":"mp_buy"}
{"type":"task","run_id":"r1","task":"mp_price","active":true,"final_seq":2,"rules":{"evidence":1,"outputs":null,"constraints":0.5}}
{"type":"task","run_id":"r1","task":"mp_buy","active":false}
`

const judgmentFile = `{"type":"judgment","run_id":"r1","task":"mp_price","metric":"tc","judge":"qwen","scores":{"correctness":0.9,"grounding":0.8,"completeness":0.6,"artifact_quality":0.7},"evidence":[{"seq":2,"quote":"M27"}],"latency":3}
{"type":"judgment","run_id":"r1","metric":"ta","judge":"qwen","scores":{"now":1,"later":0,"cq":0.5}}
`

// smallCorpus writes a hand-made corpus: one scenario, one run, judgments
// and ratings.
func smallCorpus(t *testing.T) string {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "scenario.yaml"), scenarioFile)
	write(t, filepath.Join(dir, "runs.jsonl"), runFile)
	write(t, filepath.Join(dir, "judge.jsonl"), judgmentFile)
	write(t, filepath.Join(dir, "ratings.csv"), "rater,question,value,run_id,task\nann1,trust,4,r1,mp_price\n")
	return dir
}

func TestIngestSmallCorpus(t *testing.T) {
	w := openTemp(t)
	dir := smallCorpus(t)
	sum, err := w.Ingest(ctx, []string{dir}, IngestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"scenario": 1, "run": 1, "event": 4, "task": 2, "judgment": 2, "rating": 1}
	for k, v := range want {
		if sum.Records[k] != v {
			t.Errorf("%s: %d records, want %d", k, sum.Records[k], v)
		}
	}
	// Defaults and derived columns.
	var visible bool
	var extra, config, group string
	var tokens int64
	if err := w.db.QueryRow(`SELECT visible, input_tokens, extra::VARCHAR FROM events WHERE seq = 2`).Scan(&visible, &tokens, &extra); err != nil {
		t.Fatal(err)
	}
	if visible || tokens != 100 || extra != `{"note":"kept"}` {
		t.Errorf("event 2: visible %v tokens %d extra %s", visible, tokens, extra)
	}
	var text string
	var at time.Time
	if err := w.db.QueryRow(`SELECT visible, text, t FROM events WHERE seq = 3`).Scan(&visible, &text, &at); err != nil || !visible {
		t.Errorf("an approval request is visible by default (%v)", err)
	}
	if text != "Buy \"it\",\nnow?\r\n\t½ ✓ \\ ''" || !at.Equal(time.Date(2026, 3, 2, 17, 2, 0, 123456000, time.UTC)) {
		t.Errorf("text %q at %v did not survive staging", text, at)
	}
	if err := w.db.QueryRow(`SELECT config_id, persona_group FROM run_view`).Scan(&config, &group); err != nil {
		t.Fatal(err)
	}
	if config != "Claude Opus 5 | CC | none" || group != "S" {
		t.Errorf("run_view: %q %q", config, group)
	}
	var n int
	w.db.QueryRow(`SELECT count(*) FROM active_task_view`).Scan(&n)
	if n != 1 {
		t.Errorf("%d active tasks, want 1", n)
	}
	if err := w.db.QueryRow(`SELECT extra::VARCHAR FROM judgments WHERE metric = 'tc'`).Scan(&extra); err != nil || extra != `{"latency":3}` {
		t.Errorf("judgment extra %q (%v)", extra, err)
	}
	// Idempotent: the same files again change nothing.
	before := snapshot(t, w)
	sum, err = w.Ingest(ctx, []string{dir}, IngestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Unchanged) != 4 || sum.TotalRecords() != 0 {
		t.Errorf("second ingest: %+v", sum)
	}
	if after := snapshot(t, w); after != before {
		t.Errorf("second ingest changed the warehouse:\n%s\n%s", before, after)
	}
}

// Copies of already stored records in a new file are recognised by their
// content: identical runs and judgments are not loaded twice; different
// ones are an error unless --replace.
func TestIdenticalAndConflictingRecords(t *testing.T) {
	w := openTemp(t)
	dir := smallCorpus(t)
	if _, err := w.Ingest(ctx, []string{dir}, IngestOptions{}); err != nil {
		t.Fatal(err)
	}
	before := dataSnapshot(t, w)
	copyDir := t.TempDir()
	write(t, filepath.Join(copyDir, "copy.jsonl"), runFile+judgmentFile+"\n")
	sum, err := w.Ingest(ctx, []string{copyDir}, IngestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Identical["run"] != 1 || sum.Identical["judgment"] != 2 || sum.Records["event"] != 0 {
		t.Errorf("copy: %+v", sum)
	}
	if got := dataSnapshot(t, w); got != before {
		t.Errorf("an identical copy changed the warehouse:\n%s\n%s", before, got)
	}
	changed := strings.Replace(runFile, "Is that M27 really £150?", "Is that M27 really £140?", 1)
	changedDir := t.TempDir()
	write(t, filepath.Join(changedDir, "changed.jsonl"), changed)
	_, err = w.Ingest(ctx, []string{changedDir}, IngestOptions{})
	if err == nil || !strings.Contains(err.Error(), `run "r1" is already in the warehouse with different content: use --replace`) {
		t.Fatalf("got %v", err)
	}
	if got := dataSnapshot(t, w); got != before {
		t.Errorf("a failed ingest changed the warehouse")
	}
	if _, err := w.Ingest(ctx, []string{changedDir}, IngestOptions{Replace: true}); err != nil {
		t.Fatal(err)
	}
	var text string
	var events, judgments int
	w.db.QueryRow(`SELECT text FROM events WHERE seq = 1`).Scan(&text)
	w.db.QueryRow(`SELECT count(*) FROM events`).Scan(&events)
	w.db.QueryRow(`SELECT count(*) FROM judgments`).Scan(&judgments)
	if text != "Is that M27 really £140?" || events != 4 || judgments != 0 {
		t.Errorf("after --replace: %q, %d events, %d judgments (a replaced run's judgments go with it)", text, events, judgments)
	}
	jdir := t.TempDir()
	write(t, filepath.Join(jdir, "j.jsonl"), strings.Replace(judgmentFile, `"cq":0.5`, `"cq":1`, 1))
	if _, err := w.Ingest(ctx, []string{jdir}, IngestOptions{}); err != nil {
		t.Fatal(err)
	}
	j2 := t.TempDir()
	write(t, filepath.Join(j2, "j.jsonl"), judgmentFile+"\n") // another file: the same bytes would be skipped
	if _, err := w.Ingest(ctx, []string{j2}, IngestOptions{}); err == nil || !strings.Contains(err.Error(), "already in the warehouse with different content") {
		t.Errorf("conflicting judgment: %v", err)
	}
}

// Each bad input: a clear message naming file and line, and the warehouse
// exactly as it was.
// manyColumns is n distinct column names.
func manyColumns(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "c%d", i)
	}
	return b.String()
}

// aliasBomb is 1 KB of YAML whose aliases expand to 9⁹ values.
var aliasBomb = func() string {
	var b strings.Builder
	b.WriteString("type: scenario\nscenario: bomb\nl0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
	for i := 1; i <= 8; i++ {
		fmt.Fprintf(&b, "l%d: &l%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*l%d, ", i-1), 9), ", "))
	}
	b.WriteString("personas: {reviewer: {group: S}}\ntasks: [{id: a, expected_depth: {reviewer: suggest}}]\n")
	return b.String()
}()

func TestBadInputsLeaveTheWarehouseUnchanged(t *testing.T) {
	run := func(lines ...string) string { return strings.Join(lines, "\n") + "\n" }
	ev := func(seq int, extra string) string {
		return fmt.Sprintf(`{"type":"event","run_id":"r2","seq":%d,"t":"2026-03-02T18:00:00Z","actor":"user","kind":"message"%s}`, seq, extra)
	}
	runRec := `{"type":"run","run_id":"r2","scenario":"monitor_purchase","persona":"operator","rep":1,"config":{"model":"m","harness":"CD"}}`
	trj := `{"type":"judgment","run_id":"r2","task":"mp_buy","metric":"trj","judge":"j","scores":{"understandability":4,"competence":3,"reliability":3,"attachment":3,"faith":3}}`
	cases := []struct {
		name, file, content, want string
	}{
		{"truncated last line", "bad.jsonl", runRec + "\n" + ev(1, "")[:50], "bad.jsonl:2: truncated last line"},
		{"invalid utf-8", "bad.jsonl", run(runRec, ev(1, `,"text":"caf`+"\xe9"+`"`)), "bad.jsonl:2:"},
		{"one 50 MB line", "bad.jsonl", run(runRec, ev(1, `,"text":"`+strings.Repeat("a", 50<<20)+`"`)), "bad.jsonl:2: line longer than the 16 MiB limit"},
		{"wrong type", "bad.jsonl", run(runRec, ev(1, `,"visible":"yes"`)), `bad.jsonl:2:`},
		{"unknown record type", "bad.jsonl", run(runRec, `{"type":"evnt"}`), `bad.jsonl:2:2: field "type": expected one of`},
		{"missing field", "bad.jsonl", run(`{"type":"run","run_id":"r2","scenario":"monitor_purchase","persona":"operator","config":{"model":"m","harness":"CD"}}`), `bad.jsonl:1: field "rep": required field is missing`},
		{"score out of range", "bad.jsonl", run(runRec, `{"type":"judgment","run_id":"r2","task":"mp_buy","metric":"trj","judge":"j","scores":{"understandability":6,"competence":3,"reliability":3,"attachment":3,"faith":3}}`), `field "scores.understandability": expected a score in [1,5], found 6`},
		{"seq not increasing", "bad.jsonl", run(runRec, ev(4, ""), ev(4, "")), `bad.jsonl:3: field "seq": expected seq greater than 4`},
		{"duplicate run_id", "bad.jsonl", run(runRec, runRec), `bad.jsonl:2: field "run_id": duplicate run_id "r2": already given at`},
		{"judgment of no run", "bad.jsonl", run(`{"type":"judgment","run_id":"ghost","metric":"ta","judge":"j","scores":{"now":1,"later":1}}`), `bad.jsonl:1: field "run_id": run "ghost" is nowhere`},
		{"task not in scenario", "bad.jsonl", run(runRec, `{"type":"task","run_id":"r2","task":"nope","active":true}`), `task "nope" is not a task of scenario`},
		{"unknown persona", "bad.jsonl", run(strings.Replace(runRec, "operator", "boss", 1)), `names persona "boss"`},
		{"final_seq of no event", "bad.jsonl", run(runRec, ev(1, ""), `{"type":"task","run_id":"r2","task":"mp_buy","active":true,"final_seq":9}`), `bad.jsonl:3: field "final_seq"`},
		{"decision answering nothing", "bad.jsonl", run(runRec, `{"type":"event","run_id":"r2","seq":1,"t":"2026-03-02T18:00:00Z","actor":"user","kind":"decision","decision":"approve","ref":7}`), `field "ref"`},
		{"corrupt gzip", "bad.jsonl.gz", "\x1f\x8b\x08\x00garbage-garbage", "bad.jsonl.gz"},
		{"corrupt zstd", "bad.jsonl.zst", "\x28\xb5\x2f\xfdgarbage-garbage", "bad.jsonl.zst"},
		{"malformed csv", "bad.csv", "rater,question,value\n\"a,trust,3\n", "bad.csv:2"},
		// Hostile input (issue 13): duplicate keys, JSON beyond RFC 8259,
		// duplicate CSV columns, an alias bomb.
		{"duplicate key", "bad.jsonl", run(runRec, ev(1, `,"text":"a","text":"b"`)), `bad.jsonl:2:`},
		{"duplicate empty key", "bad.jsonl", run(runRec, ev(1, `,"":1,"":2`)), `bad.jsonl:2: the empty key "" occurs twice in the record`},
		{"judgment twice in the input", "bad.jsonl", run(runRec, trj, ev(1, ""), trj), `bad.jsonl:4: field "judge": duplicate judgment in this input: run "r2", task "mp_buy", metric trj, judge "j", prompt "" occurs 2 times`},
		{"duplicate nested key", "bad.jsonl", run(strings.Replace(runRec, `"harness":"CD"`, `"harness":"CD","harness":"CC"`, 1)), `field "config.harness": the key occurs twice`},
		{"leading zero", "bad.jsonl", run(runRec, ev(1, `,"usage":{"latency_ms":00.5}`)), `bad.jsonl:2:121: not valid JSON (RFC 8259): invalid character '0'`},
		{"bare fraction", "bad.jsonl", run(runRec, ev(1, `,"usage":{"latency_ms":.5}`)), `bad.jsonl:2:120: not valid JSON (RFC 8259): invalid character '.'`},
		{"raw control character", "bad.jsonl", run(runRec, ev(1, `,"text":"a`+"\x01"+`b"`)), `bad.jsonl:2:107: not valid JSON (RFC 8259): invalid character '\x01' in string literal`},
		{"lone surrogate", "bad.jsonl", run(runRec, ev(1, `,"text":"a\ud800b"`)), `bad.jsonl:2:107: not valid JSON (RFC 8259): a lone UTF-16 surrogate \ud800`},
		{"duplicate csv column", "bad.csv", "rater,question,value,value\na,trust,3,4\n", `bad.csv:1: field "value": the header names this column twice (columns 3 and 4)`},
		{"yaml alias bomb", "bomb.yaml", aliasBomb, "alias bomb"},
		{"a million columns", "bad.csv", "rater,question,value," + manyColumns(1<<20) + "\n", "bad.csv:1: 1048579 columns: a ratings CSV may have at most 1024"},
		{"a 20 MB cell", "bad.csv", "rater,question,value,item\na,trust,3," + strings.Repeat("x", 20<<20) + "\n", `bad.csv:2:11: field "item": a cell longer than the 16 MiB limit`},
		{"event credited to no task of the scenario", "bad.jsonl", run(runRec, ev(1, `,"task":"mp_nope"`)), `bad.jsonl:2: field "task": task "mp_nope" is not a task of scenario "monitor_purchase" (run "r2")`},
		{"event credited before its run is known", "bad.jsonl", run(ev(1, `,"task":"mp_nope"`), runRec), `bad.jsonl:1: field "task": task "mp_nope" is not a task of scenario "monitor_purchase"`},
	}
	w := openTemp(t)
	if _, err := w.Ingest(ctx, []string{smallCorpus(t)}, IngestOptions{}); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, w)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, filepath.Join(dir, "good.jsonl"), strings.ReplaceAll(strings.ReplaceAll(runFile, `"r1"`, `"g9"`), "reviewer", "operator"))
			write(t, filepath.Join(dir, c.file), c.content)
			_, err := w.Ingest(ctx, []string{dir}, IngestOptions{})
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error does not say %q:\n%v", c.want, err)
			}
			if got := snapshot(t, w); got != before {
				t.Errorf("the warehouse changed:\n%s\n%s", before, got)
			}
		})
	}
	if _, err := w.Ingest(ctx, []string{write(t, filepath.Join(t.TempDir(), "notes.txt"), "x")}, IngestOptions{}); err == nil {
		t.Error("a file in no known format was accepted")
	}
	empty := t.TempDir()
	write(t, filepath.Join(empty, "readme.txt"), "x")
	if _, err := w.Ingest(ctx, []string{empty}, IngestOptions{}); err == nil || !strings.Contains(err.Error(), "folder holds no file gymlens reads") {
		t.Errorf("folder with no recognised files: %v", err)
	}
}

func TestEmptyFileIsANote(t *testing.T) {
	w := openTemp(t)
	dir := t.TempDir()
	write(t, filepath.Join(dir, "empty.jsonl"), "")
	sum, err := w.Ingest(ctx, []string{dir}, IngestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Empty) != 1 || sum.TotalRecords() != 0 {
		t.Errorf("%+v", sum)
	}
}

func TestManyErrorsAreReportedUpToTheLimit(t *testing.T) {
	w := openTemp(t)
	dir := smallCorpus(t)
	var lines []string
	for i := range 30 {
		lines = append(lines, fmt.Sprintf(`{"type":"rating","rater":"a","question":"q","value":"v%d"}`, i))
	}
	write(t, filepath.Join(dir, "bad.jsonl"), strings.Join(lines, "\n")+"\n")
	_, err := w.Ingest(ctx, []string{dir}, IngestOptions{MaxErrors: 5})
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	if strings.Count(msg, "bad.jsonl:") != 5 || !strings.Contains(msg, "bad.jsonl:1:") || !strings.Contains(msg, "bad.jsonl:5:") {
		t.Errorf("expected the first five errors:\n%s", msg)
	}
}

func TestSkipInvalidLoadsTheRest(t *testing.T) {
	trjTwice := `{"type":"judgment","run_id":"r3","task":"mp_buy","metric":"trj","judge":"j","scores":{"understandability":4,"competence":3,"reliability":3,"attachment":3,"faith":3}}`
	w := openTemp(t)
	dir := smallCorpus(t)
	rejects := filepath.Join(t.TempDir(), "rejects.jsonl")
	write(t, filepath.Join(dir, "more.jsonl"), strings.Join([]string{
		`{"type":"run","run_id":"r3","scenario":"monitor_purchase","persona":"operator","rep":1,"config":{"model":"m","harness":"CD"}}`,
		`{"type":"event","run_id":"r3","seq":1,"t":"2026-03-02T18:00:00Z","actor":"user","kind":"message"}`,
		`{"type":"event","run_id":"r3","seq":1,"t":"2026-03-02T18:00:00Z","actor":"user","kind":"message"}`,
		`{"type":"judgment","run_id":"ghost","metric":"ta","judge":"j","scores":{"now":1,"later":1}}`,
		`{"type":"rating","rater":"a","question":"q","value":"high"}`,
		`not json`,
		trjTwice, `{"type":"judgment","run_id":"r3","metric":"ta","judge":"j","scores":{"now":1,"later":0}}`, trjTwice,
	}, "\n")+"\n")
	sum, err := w.Ingest(ctx, []string{dir}, IngestOptions{SkipInvalid: true, RejectsPath: rejects})
	if err != nil {
		t.Fatal(err)
	}
	// The judgment given twice goes, both times; the other stays.
	var trj, ta int
	if err := w.db.QueryRow(`SELECT count(*) FILTER (metric = 'trj'), count(*) FILTER (metric = 'ta') FROM judgments WHERE run_id = 'r3'`).Scan(&trj, &ta); err != nil || trj != 0 || ta != 1 {
		t.Errorf("r3's judgments: %d trj, %d ta (%v)", trj, ta, err)
	}
	if sum.Rejected != 6 || sum.Records["event"] != 5 || sum.Records["run"] != 2 || sum.Records["judgment"] != 3 {
		t.Errorf("%+v", sum)
	}
	b, _ := os.ReadFile(rejects)
	if strings.Count(string(b), "\n") != 5 || !strings.Contains(string(b), `more.jsonl:6: not valid JSON`) || !strings.Contains(string(b), `"record":"not json"`) ||
		!strings.Contains(string(b), `more.jsonl:9: field \"judge\": duplicate judgment in this input`) || !strings.Contains(string(b), `"records_dropped":2`) {
		t.Errorf("rejects file:\n%s", b)
	}
}

func TestMigrations(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w.duckdb")
	w, err := Open(ctx, path, OpenOptions{SchemaVersion: 1})
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := w.Version(ctx); v != 1 {
		t.Fatalf("version %d", v)
	}
	w.Close()
	w, err = Open(ctx, path, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := w.Version(ctx); v != SchemaVersion() {
		t.Errorf("not upgraded: version %d", v)
	}
	if _, err := w.db.Exec(`SELECT * FROM run_view`); err != nil {
		t.Errorf("views missing after upgrade: %v", err)
	}
	w.db.Exec(`UPDATE meta SET value = '99' WHERE key = 'schema_version'`)
	w.Close()
	if _, err := Open(ctx, path, OpenOptions{}); err == nil || !strings.Contains(err.Error(), "schema version 99, newer than this gymlens") {
		t.Errorf("newer warehouse: %v", err)
	}
}

// TestMain lets the test binary act as a second gymlens process that
// holds a warehouse open; otherwise it makes (and at the end removes) the
// folder of the shared sample warehouses (sampleCopy).
func TestMain(m *testing.M) {
	if path := os.Getenv("GYMLENS_TEST_HOLD"); path != "" {
		w, err := Open(ctx, path, OpenOptions{})
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		fmt.Println("holding")
		time.Sleep(20 * time.Second)
		w.Close()
		os.Exit(0)
	}
	var err error
	if shared.dir, err = os.MkdirTemp("", "gymlens-ingest-test-"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// The lake checks passed are remembered in the test's folder, not the user's.
	lakeCheckDir = func() string { return filepath.Join(shared.dir, "lake-checks") }
	code := m.Run()
	os.RemoveAll(shared.dir)
	os.Exit(code)
}

func TestWarehouseInUse(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: holds the warehouse open in a second process")
	}
	path := filepath.Join(t.TempDir(), "w.duckdb")
	w, err := Open(ctx, path, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "GYMLENS_TEST_HOLD="+path)
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	buf := make([]byte, 7)
	if _, err := out.Read(buf); err != nil || string(buf) != "holding" {
		t.Fatalf("helper: %q %v", buf, err)
	}
	_, err = Open(ctx, path, OpenOptions{})
	if err == nil || !strings.Contains(err.Error(), "is in use by another process") {
		t.Errorf("got %v", err)
	}
}

func TestSampleCorpusIngests(t *testing.T) {
	dir := t.TempDir()
	st, err := sample.Write(dir, sample.Options{Seed: 3, Configs: 2, Compress: "zst"})
	if err != nil {
		t.Fatal(err)
	}
	w := openTemp(t)
	sum, err := w.Ingest(ctx, []string{dir}, IngestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Records["event"] != st.Events || sum.Records["task"] != st.Tasks || sum.Records["judgment"] != st.Judgments ||
		sum.Records["rating"] != st.Ratings || sum.Runs != st.Runs || sum.Records["scenario"] != 10 {
		t.Errorf("ingested %+v, sample wrote %+v", sum, st)
	}
	var configs, personas int
	w.db.QueryRow(`SELECT count(DISTINCT config_id), count(DISTINCT persona_group) FROM run_view`).Scan(&configs, &personas)
	if configs != 2 || personas != 3 {
		t.Errorf("%d configurations, %d persona groups", configs, personas)
	}
}

func TestLoadRuns(t *testing.T) {
	w := openTemp(t)
	if _, err := w.Ingest(ctx, []string{smallCorpus(t)}, IngestOptions{}); err != nil {
		t.Fatal(err)
	}
	runs, err := w.LoadRuns(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 {
		t.Fatalf("%d runs", len(runs))
	}
	r := runs[0]
	if r.ConfigID != "Claude Opus 5 | CC | none" || r.PersonaGroup != "S" || r.HasTAWindow || len(r.Tasks) != 1 || len(r.TA) != 1 {
		t.Fatalf("run %+v", r)
	}
	task := r.Tasks[0]
	if task.Task != "mp_price" || task.Weight != 2 || task.RuleSet != [3]bool{true, false, true} || task.Rules[2] != 0.5 ||
		len(task.TC) != 1 || task.TC[0].Correctness != 0.9 || task.TC[0].ArtifactQ != 0.7 {
		t.Errorf("task %+v", task)
	}
	if ta := r.TA[0]; ta.Now != 1 || ta.Later != 0 || !ta.HasCQ || ta.CQ != 0.5 {
		t.Errorf("TA %+v", ta)
	}
}

// An ingest that loads nothing leaves no transaction open on the pool's
// connection: the next write works.
func TestNothingToLoadLeavesNoTransaction(t *testing.T) {
	w := openTemp(t)
	dir := smallCorpus(t)
	for range 2 {
		if _, err := w.Ingest(ctx, []string{dir}, IngestOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.WriteScores(ctx, []TaskScore{{RunID: "r1", Task: "mp_price", DerivedExpected: "suggest", DerivedChosen: "noop",
		EffectiveExpected: "suggest", EffectiveChosen: "noop", Prefer: "logged"}}); err != nil {
		t.Fatal(err)
	}
}

// Scores replaced as they are computed: a producer that fails part-way
// leaves the stored scores as they were, one that finishes replaces them.
func TestReplaceScoresIsAllOrNothing(t *testing.T) {
	w := openTemp(t)
	if _, err := w.Ingest(ctx, []string{smallCorpus(t)}, IngestOptions{}); err != nil {
		t.Fatal(err)
	}
	score := func(chosen string) TaskScore {
		return TaskScore{RunID: "r1", Task: "mp_price", DerivedExpected: "suggest", DerivedChosen: chosen,
			EffectiveExpected: "suggest", EffectiveChosen: chosen, Prefer: "logged"}
	}
	stored := func() string {
		t.Helper()
		var got []string
		rs, err := w.db.Query(`SELECT derived_chosen FROM task_scores ORDER BY ALL`)
		if err != nil {
			t.Fatal(err)
		}
		defer rs.Close()
		for rs.Next() {
			var c string
			rs.Scan(&c)
			got = append(got, c)
		}
		return strings.Join(got, ",")
	}
	if err := w.WriteScores(ctx, []TaskScore{score("noop")}); err != nil {
		t.Fatal(err)
	}
	failed := errors.New("the scorer failed")
	err := w.ReplaceScores(ctx, func(emit func(TaskScore) error) error {
		if err := emit(score("suggest")); err != nil {
			return err
		}
		return failed
	})
	if !errors.Is(err, failed) || stored() != "noop" {
		t.Errorf("a failed replacement: %v; stored %q, want the old noop", err, stored())
	}
	if err := w.ReplaceScores(ctx, func(emit func(TaskScore) error) error { return emit(score("execute")) }); err != nil || stored() != "execute" {
		t.Errorf("a replacement: %v; stored %q", err, stored())
	}
}

// A scenario written as a line of a JSONL stream ingests exactly as the same
// scenario in a file of its own: every table holds the same rows, apart from
// the file ids and lines that say where a record came from.
func TestScenarioLinesIngestLikeScenarioFiles(t *testing.T) {
	// The scenario files' warehouse is the shared one, ingested from them.
	db, files := sampleCopy(t, sampleKind{seed: 5, configs: 2})
	w1, err := Open(ctx, db, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w1.Close() })
	lines := t.TempDir()
	if err := os.CopyFS(lines, os.DirFS(files)); err != nil {
		t.Fatal(err)
	}
	specs, _ := filepath.Glob(filepath.Join(lines, "scenarios", "*.yaml"))
	if len(specs) != 10 {
		t.Fatalf("%d scenario files", len(specs))
	}
	var stream []byte
	for _, p := range specs {
		_, js, err := runlog.ReadScenarioFile(p)
		if err != nil {
			t.Fatal(err)
		}
		stream = append(append(stream, js...), '\n')
		os.Remove(p)
	}
	// The scenarios go in the middle of a run log, among its records.
	logs, _ := filepath.Glob(filepath.Join(lines, "runs", "*.jsonl"))
	b, err := os.ReadFile(logs[0])
	if err != nil {
		t.Fatal(err)
	}
	cut := bytes.IndexByte(b[len(b)/2:], '\n') + len(b)/2 + 1
	os.WriteFile(logs[0], append(append(append([]byte(nil), b[:cut]...), stream...), b[cut:]...), 0o644)

	w2 := openTemp(t)
	if _, err := w2.Ingest(ctx, []string{lines}, IngestOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, tb := range exportTables[3:] {
		a, b := tableRows(t, w1, tb.name), tableRows(t, w2, tb.name)
		if len(a) != len(b) {
			t.Errorf("%s: %d rows from scenario files, %d from scenario lines", tb.name, len(a), len(b))
			continue
		}
		for i := range a {
			if a[i] != b[i] {
				t.Errorf("%s differs:\n files: %s\n lines: %s", tb.name, a[i], b[i])
				break
			}
		}
	}
}

// tableRows returns every row of a table as text, sorted, without the
// columns that name the file and line a record came from.
func tableRows(t *testing.T, w *Warehouse, table string) []string {
	t.Helper()
	var drop []string
	// Where a row was read (and the spans' lines, which say where rows
	// were) is not what it holds.
	rows, err := w.db.Query(`SELECT column_name FROM information_schema.columns WHERE table_name = ?
		AND (column_name IN ('file_id', 'src_line') OR (table_name IN ('run_spans', 'row_spans') AND column_name IN ('lo', 'hi')))`, table)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var c string
		rows.Scan(&c)
		drop = append(drop, c)
	}
	rows.Close()
	sel := "*"
	if len(drop) > 0 {
		sel = "* EXCLUDE (" + strings.Join(drop, ", ") + ")"
	}
	rows, err = w.db.Query(`SELECT CAST(x AS VARCHAR) AS r FROM (SELECT ` + sel + ` FROM ` + table + `) x ORDER BY r`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var r string
		if err := rows.Scan(&r); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

// A UTF-8 byte order mark (Excel's default) is accepted at the start of
// every text format, on the command line and inside a folder.
func TestByteOrderMarks(t *testing.T) {
	dir := t.TempDir()
	bom := "\ufeff"
	write(t, filepath.Join(dir, "scenario.yaml"), bom+scenarioFile)
	write(t, filepath.Join(dir, "runs.jsonl"), bom+runFile)
	write(t, filepath.Join(dir, "judge.jsonl"), bom+judgmentFile)
	ratings := write(t, filepath.Join(dir, "ratings.csv"), bom+"rater,question,value,run_id,task\nann1,trust,4,r1,mp_price\n")
	w := openTemp(t)
	sum, err := w.Ingest(ctx, []string{dir}, IngestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Records["rating"] != 1 || sum.Records["scenario"] != 1 || sum.Records["event"] != 4 || sum.Records["judgment"] != 2 || len(sum.Skipped) != 0 {
		t.Errorf("with BOMs: %+v", sum)
	}
	// The same ratings named on the command line.
	w2 := openTemp(t)
	os.Remove(ratings)
	other := write(t, filepath.Join(t.TempDir(), "more.csv"), bom+"rater,question,value,item\nann1,trust,4,x\n")
	if sum, err := w2.Ingest(ctx, []string{other}, IngestOptions{}); err != nil || sum.Records["rating"] != 1 {
		t.Errorf("a ratings CSV with a BOM on the command line: %v %+v", err, sum)
	}
}

// A FIFO named on the command line is refused at once (reading it would
// block forever); inside a folder it is skipped with a note, as is a broken
// link. Links to files and folders are followed, a loop read once.
func TestFIFOsAndLinks(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe.jsonl")
	if err := exec.Command("mkfifo", fifo).Run(); err != nil {
		t.Skip("mkfifo:", err)
	}
	w := openTemp(t)
	done := make(chan error, 1)
	go func() { _, err := w.Ingest(ctx, []string{fifo}, IngestOptions{}); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "not a regular file (a named pipe)") {
			t.Errorf("FIFO on the command line: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ingest of a FIFO hangs")
	}
	corpus := smallCorpus(t)
	real := t.TempDir()
	os.Rename(filepath.Join(corpus, "runs.jsonl"), filepath.Join(real, "runs.jsonl"))
	os.Symlink(filepath.Join(real, "runs.jsonl"), filepath.Join(corpus, "runs.jsonl"))
	os.Symlink(real, filepath.Join(corpus, "linked")) // the same file again, through a folder link
	os.Symlink(corpus, filepath.Join(corpus, "loop")) // a loop
	os.Symlink(filepath.Join(dir, "gone"), filepath.Join(corpus, "broken.jsonl"))
	exec.Command("mkfifo", filepath.Join(corpus, "pipe.jsonl")).Run()
	sum, err := w.Ingest(ctx, []string{corpus}, IngestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Records["event"] != 4 {
		t.Errorf("the linked run log was not read once: %+v", sum.Records)
	}
	why := map[string]string{}
	for _, s := range sum.Skipped {
		why[filepath.Base(s.Path)] = s.Reason
	}
	if !strings.Contains(why["pipe.jsonl"], "named pipe") || !strings.Contains(why["broken.jsonl"], "broken symbolic link") || !strings.Contains(why["loop"], "loop") {
		t.Errorf("skipped: %v", why)
	}
}

// What a killed ingest left beside the warehouse — its staging folder and
// DuckDB's spill files — goes when the warehouse is next opened for
// writing; a live process's folder and another warehouse's stay.
func TestLeftoversOfKilledIngestsAreCleaned(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "w.duckdb")
	w, err := Open(ctx, db, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	// A process that has exited: a child we ran and waited for.
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip(err)
	}
	dead := cmd.Process.Pid
	mk := func(name string) string {
		p := filepath.Join(dir, name)
		os.MkdirAll(p, 0o755)
		os.WriteFile(filepath.Join(p, "event.csv"), []byte("x"), 0o644)
		return p
	}
	gone := mk(fmt.Sprintf(".gymlens-ingest-w.duckdb-%d-123", dead))
	live := mk(fmt.Sprintf(".gymlens-ingest-w.duckdb-%d-456", os.Getppid()))
	other := mk(fmt.Sprintf(".gymlens-ingest-x.duckdb-%d-789", dead))
	spill := mk("w.duckdb.tmp")
	os.WriteFile(filepath.Join(spill, "duckdb_temp_storage-0.tmp"), []byte("x"), 0o644)
	os.Remove(filepath.Join(spill, "event.csv"))
	w, err = Open(ctx, db, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	exists := func(p string) bool { _, err := os.Stat(p); return err == nil }
	if exists(gone) || exists(spill) || !exists(live) || !exists(other) || len(w.Leftovers) != 3 {
		t.Errorf("dead %v, spill %v, live %v, other %v; removed %v", exists(gone), exists(spill), exists(live), exists(other), w.Leftovers)
	}
	// A read-only open touches nothing.
	mk(fmt.Sprintf(".gymlens-ingest-w.duckdb-%d-124", dead))
	w.Close()
	r, err := Open(ctx, db, OpenOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	if !exists(filepath.Join(dir, fmt.Sprintf(".gymlens-ingest-w.duckdb-%d-124", dead))) {
		t.Error("a read-only open cleaned up")
	}
}

// DuckDB running out of its memory limit while loading names the files
// and the flag that helps, and writes nothing.
func TestOutOfMemoryNamesTheFilesAndTheFlag(t *testing.T) {
	dir := t.TempDir()
	if _, err := sample.Write(dir, sample.Options{Seed: 2, Configs: 3}); err != nil {
		t.Fatal(err)
	}
	w, err := Open(ctx, filepath.Join(t.TempDir(), "w.duckdb"), OpenOptions{MemoryLimit: "8MB"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	before := snapshot(t, w)
	_, err = w.Ingest(ctx, []string{dir}, IngestOptions{})
	if err == nil || !strings.Contains(err.Error(), "DuckDB ran out of its memory limit (8MB) while loading") ||
		!strings.Contains(err.Error(), "--memory-limit") || !strings.Contains(err.Error(), ".jsonl") {
		t.Errorf("%v", err)
	}
	if after := snapshot(t, w); after != before {
		t.Errorf("the warehouse changed:\n%s\n%s", before, after)
	}
}

// A few dozen random corruptions of the sample corpus, a file at a time:
// each ingests or fails naming the file, never panics, and leaves the
// warehouse as it was (gymlens-bench mutate runs a thousand).
func TestMutatedCorpusFilesIngestOrFailCleanly(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: seeded mutations of the sample corpus beyond the fuzz corpus, each an ingest")
	}
	corpus := t.TempDir()
	if _, err := sample.Write(corpus, sample.Options{Seed: 6, Configs: 1}); err != nil {
		t.Fatal(err)
	}
	var files []string
	filepath.WalkDir(corpus, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !strings.Contains(p, "/.") {
			files = append(files, p)
		}
		return nil
	})
	w := openTemp(t)
	if _, err := w.Ingest(ctx, []string{filepath.Join(corpus, "scenarios")}, IngestOptions{}); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(23, 5))
	for i := range 40 {
		src := files[r.IntN(len(files))]
		b, _ := os.ReadFile(src)
		bad := filepath.Join(t.TempDir(), filepath.Base(src))
		os.WriteFile(bad, mutate.Bytes(r, b), 0o644)
		before := snapshot(t, w)
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Fatalf("corruption %d of %s: panic %v", i, src, p)
				}
			}()
			_, err := w.Ingest(ctx, []string{bad}, IngestOptions{})
			if err == nil {
				return
			}
			if !strings.Contains(err.Error(), bad) {
				t.Errorf("corruption %d: the error names no file: %v", i, err)
			}
			if after := snapshot(t, w); after != before {
				t.Errorf("corruption %d of %s: refused, but the warehouse changed", i, src)
			}
		}()
	}
}

// A reading command that holds every run's tasks (the report, the
// agreement tables, metrics --judge-noise) gets the report's smaller pool
// of DuckDB, so that the process stays under 1 GB at 234,000 runs
// (docs/benchmarks.md); export and score a smaller one than the default
// (their joins, sorts and writers spill); the others the default.
func TestReadingMemoryLimits(t *testing.T) {
	for _, c := range []struct {
		command    string
		holdsTasks bool
		want       string
	}{
		{"metrics", false, DefaultMemoryLimit},
		{"metrics", true, ReportMemoryLimit},
		{"corr", false, DefaultMemoryLimit},
		{"report", false, ReportMemoryLimit},
		{"agree", false, ReportMemoryLimit},
		{"notebook", false, ReportMemoryLimit},
		{"export", false, ExportMemoryLimit},
		{"score", false, ExportMemoryLimit},
	} {
		if got := ReadingMemoryLimit(c.command, c.holdsTasks); got != c.want {
			t.Errorf("%s (holds tasks %v): %s, want %s", c.command, c.holdsTasks, got, c.want)
		}
	}
}

// Every warehouse opens with DuckDB's memory limit and its allocator's
// background thread, which hands back what finished queries freed (without
// it the export at --scale 100 grew to 1.19 GB; docs/benchmarks.md), on
// every connection of the pool. They are set once: a limit lowered later
// (lowerMemory) holds on a connection opened after, which neither puts
// the default back nor makes DuckDB hand its freed memory back again.
func TestOpenSettings(t *testing.T) {
	w := openTemp(t)
	conns := make([]*sql.Conn, 3)
	for i := range conns {
		c, err := w.db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns[i] = c
	}
	for i, c := range conns {
		var bg, mem string
		if err := c.QueryRowContext(ctx, `SELECT current_setting('allocator_background_threads')::VARCHAR, current_setting('memory_limit')`).Scan(&bg, &mem); err != nil {
			t.Fatal(err)
		}
		if bg != "true" || !strings.Contains(mem, "488") { // 512 MB, shown in MiB
			t.Errorf("connection %d: allocator_background_threads %s, memory_limit %s", i, bg, mem)
		}
	}
	if _, err := conns[0].ExecContext(ctx, `SET memory_limit = '100MB'`); err != nil {
		t.Fatal(err)
	}
	c, err := w.db.Conn(ctx) // a fourth: the others are held
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var mem string
	if err := c.QueryRowContext(ctx, `SELECT current_setting('memory_limit')`).Scan(&mem); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(mem, "95") { // 100 MB, shown in MiB
		t.Errorf("a connection opened after the limit was lowered: memory_limit %s, want 100 MB", mem)
	}
}

// During a pass the Go heap's soft limit follows the live heap: twice it
// once that is past goMemoryLimit (the per-run state of a large input),
// back to goMemoryLimit when it shrinks.
func TestRoomForState(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(goMemoryLimit))
	held := make([]byte, 3*goMemoryLimit/4)
	for i := range held {
		held[i] = byte(i)
	}
	runtime.GC()
	roomForState()
	if got := debug.SetMemoryLimit(-1); got < 2*int64(len(held)) || got > 2*int64(len(held))+64<<20 {
		t.Errorf("live heap of %d MB: limit %d MB", len(held)>>20, got>>20)
	}
	runtime.KeepAlive(held)
	held = nil
	runtime.GC()
	roomForState()
	if got := debug.SetMemoryLimit(-1); got != goMemoryLimit {
		t.Errorf("the state let go: limit %d MB, want %d", got>>20, goMemoryLimit>>20)
	}
}

// A pass paces the collector its own way (roomForState) and gives the
// caller's pace back when it ends, whether it loaded, refused its input,
// or only validated; the rebuild of the run inputs after a load already
// runs at the caller's pace.
func TestIngestGivesTheCollectorBack(t *testing.T) {
	const percent, limit = 77, 900 << 20
	defer debug.SetGCPercent(debug.SetGCPercent(percent))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(limit))
	check := func(step string) {
		t.Helper()
		p := debug.SetGCPercent(percent)
		if l := debug.SetMemoryLimit(-1); p != percent || l != limit {
			t.Errorf("%s: GOGC %d and a limit of %d MB, want %d and %d MB", step, p, l>>20, percent, limit>>20)
		}
	}
	w := openTemp(t)
	good := smallCorpus(t)
	if _, err := w.Ingest(ctx, []string{good}, IngestOptions{}); err != nil {
		t.Fatal(err)
	}
	if !w.RunInputsFresh(ctx) {
		t.Fatal("the ingest did not rebuild the run inputs")
	}
	check("after a load")
	bad := write(t, filepath.Join(t.TempDir(), "bad.jsonl"), `{"type":"run","run_id":"r2"}`+"\n")
	if _, err := w.Ingest(ctx, []string{bad}, IngestOptions{}); err == nil {
		t.Fatal("a run without its scenario was taken")
	}
	check("after a refused input")
	if _, err := Validate(ctx, nil, []string{good}, IngestOptions{}); err != nil {
		t.Fatal(err)
	}
	check("after a validation")
}
