package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gymlens/gymlens/internal/openaitest"
)

// itemsQuery lists every value of the popularity task's samples that
// agree --source inspect compares, as testdata/inspect_agree/items.csv
// holds them: the scorer's, the judge's rubric scores, the humans'
// ratings.
const itemsQuery = `SELECT item, source, rater, value FROM (
	SELECT e.config_id || '|' || c.sample_id || '|' || c.epoch AS item, c.metric AS source, '' AS rater, c.value
		FROM inspect_scores c JOIN inspect_evals e USING (eval_id) WHERE e.task = 'popularity' AND c.value IS NOT NULL
	UNION ALL
	SELECT e.config_id || '|' || s.sample_id || '|' || s.epoch, j.metric || '.' || k.key || ' (' || j.judge || ')', '', k.value::DOUBLE
		FROM judgments j, json_each(j.extra->'$.scores') k, inspect_samples s JOIN inspect_evals e USING (eval_id)
		WHERE e.task = 'popularity' AND j.run_id = 'inspect:' || replace(replace(s.eval_id, '%', '%25'), ':', '%3A') || ':' || s.epoch || ':' || s.sample_id
	UNION ALL
	SELECT g.extra->>'$.config' || '|' || (g.extra->>'$.sample_id') || '|' || (g.extra->>'$.epoch'), 'human.' || g.question, g.rater, g.value
		FROM ratings g WHERE g.task = 'popularity') ORDER BY ALL`

// agree --source inspect on two of Inspect's logs of one task (two
// configurations), judged by a rubric through the in-process endpoint and
// rated by two humans: a row for the scorer against each judge score and
// each human question, and for each judge score against each human
// question, binary or continuous as their values are, every value the
// reference script's (make_refs.py, from the items the warehouse holds);
// a rating that names no sample, or a sample two configurations ran, is
// an error naming its file, line and field.
func TestAgreeInspectSamples(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "w.duckdb")
	logs := filepath.Join(dir, "logs")
	os.MkdirAll(logs, 0o755)
	for _, n := range []string{"log_streaming.eval", "popularity_cancelled.json"} {
		b, err := os.ReadFile(filepath.Join(inspectFixtures, n))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(logs, n), b, 0o644)
	}
	ref := filepath.Join("testdata", "inspect_agree")
	b, _ := os.ReadFile(filepath.Join(ref, "ratings.csv"))
	os.WriteFile(filepath.Join(logs, "ratings.csv"), b, 0o644)
	if code, stdout, stderr := gymlens(t, "--db", db, "ingest", logs); code != 0 {
		t.Fatalf("ingest: %d %s %s", code, stdout, stderr)
	}
	f := openaitest.New()
	defer f.Close()
	rubric := filepath.Join("..", "..", "ingest", "testdata", "inspect_answer.yaml")
	if code, stdout, stderr := gymlens(t, "--db", db, "-q", "judge", "--source", "inspect", "--prompt", rubric, "--judge", "a=fake@"+f.URL+"/v1"); code != 0 {
		t.Fatalf("judge: %d %s %s", code, stdout, stderr)
	}
	// What judge --source inspect refuses: a selection of runs, another
	// source, the built-in metrics.
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--where", "harness=CC"}, 2, "--where selects Proactivity-Gym runs"},
		{[]string{"--source", "pare"}, 2, `--source: expected gym or inspect, found "pare"`},
		{[]string{"--metric", "tc"}, 1, "the built-in metrics (tc) judge Proactivity-Gym tasks and runs"},
	} {
		args := append([]string{"--db", db, "judge", "--source", "inspect", "--prompt", rubric, "--judge", "a=fake@" + f.URL + "/v1"}, c.args...)
		if code, _, stderr := gymlens(t, args...); code != c.code || !strings.Contains(stderr, c.want) {
			t.Errorf("judge %v: exit %d, %s", c.args, code, stderr)
		}
	}
	// The items are those the reference was computed from.
	code, items, stderr := gymlens(t, "--db", db, "-f", "csv", "query", itemsQuery)
	if code != 0 {
		t.Fatalf("query: %s", stderr)
	}
	want, _ := os.ReadFile(filepath.Join(ref, "items.csv"))
	if items != string(want) {
		t.Fatalf("the warehouse's items differ from %s (write them there and run make_refs.py again when that is meant):\n%s", filepath.Join(ref, "items.csv"), items)
	}
	code, stdout, stderr := gymlens(t, "--db", db, "agree", "--source", "inspect", "--resamples", "200", "-f", "json")
	if code != 0 {
		t.Fatalf("agree: %d %s %s", code, stdout, stderr)
	}
	var out map[string][]map[string]any
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatal(err, stdout)
	}
	var refs map[string]struct {
		Binary bool
		N      int
		Stats  map[string]*float64
	}
	rb, _ := os.ReadFile(filepath.Join(ref, "refs.json"))
	if err := json.Unmarshal(rb, &refs); err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for sec, rows := range out {
		for _, r := range rows {
			pair := r["a"].(string) + " ~ " + r["b"].(string)
			rf, ok := refs[pair]
			if !ok || r["task"] != "popularity" || rf.Binary != (sec == "binary") || int(r["n"].(float64)) != rf.N {
				t.Errorf("%s: %v (reference %+v)", sec, r, rf)
				continue
			}
			seen[pair]++
			st := r["statistic"].(string)
			w, has := rf.Stats[st]
			if !has {
				t.Errorf("%s: statistic %s not in the reference", pair, st)
				continue
			}
			v, isNum := r["value"].(float64)
			switch {
			case w == nil && isNum:
				t.Errorf("%s %s = %v, the reference has none", pair, st, v)
			case w != nil && (!isNum || math.Abs(v-*w) > 1e-9):
				t.Errorf("%s %s = %v, want %v", pair, st, r["value"], *w)
			}
		}
	}
	if len(seen) != len(refs) {
		t.Errorf("pairs %v, want the %d of the reference", seen, len(refs))
	}
	for _, p := range []string{"inspect.match ~ custom.answer.correct (a)", "inspect.match ~ human.correct", "inspect.match ~ human.quality",
		"custom.answer.quality (a) ~ human.quality"} {
		if seen[p] == 0 {
			t.Errorf("no row %s", p)
		}
	}

	// A rating of a sample both configurations ran, without naming one;
	// one of a sample that is not there.
	for _, c := range []struct{ row, want string }{
		{"cat,correct,1,popularity,1,1,", `bad.csv:2: field "config": sample "1" of task "popularity" at epoch 1 was run 2 times`},
		{"cat,correct,1,popularity,9,1,openai/gpt-4o-mini | system_message+generate | none", `bad.csv:2: field "config": no sample "9" of task "popularity" at epoch 1 run by configuration openai/gpt-4o-mini`},
	} {
		bad := filepath.Join(t.TempDir(), "bad.csv")
		os.WriteFile(bad, []byte("rater,question,value,task,sample_id,epoch,config\n"+c.row+"\n"), 0o644)
		cp := filepath.Join(t.TempDir(), "w.duckdb")
		wb, _ := os.ReadFile(db)
		os.WriteFile(cp, wb, 0o644)
		if code, _, stderr := gymlens(t, "--db", cp, "-q", "ingest", bad); code != 0 {
			t.Fatalf("ingest %s: %s", c.row, stderr)
		}
		code, _, stderr := gymlens(t, "--db", cp, "agree", "--source", "inspect", "--resamples", "100")
		if code == 0 || !strings.Contains(stderr, c.want) {
			t.Errorf("%s: exit %d, %s\nwant %s", c.row, code, stderr, c.want)
		}
	}
	// A bad row is refused when ingested, with its file, line and field.
	bad := filepath.Join(t.TempDir(), "bad.csv")
	os.WriteFile(bad, []byte("rater,question,value,task,sample_id,epoch\ncat,correct,1,popularity,1,first\n"), 0o644)
	if code, _, stderr := gymlens(t, "--db", db, "ingest", bad); code == 0 || !strings.Contains(stderr, `bad.csv:2:28: field "epoch": expected an epoch: an integer from 1, found string "first"`) {
		t.Errorf("ingest of a bad rating: exit %d, %s", code, stderr)
	}
	// --source inspect stands alone.
	if code, _, stderr := gymlens(t, "--db", db, "agree", "--source", "inspect", "--human"); code != 2 || !strings.Contains(stderr, "--human does not apply") {
		t.Errorf("--source inspect --human: exit %d, %s", code, stderr)
	}
}
