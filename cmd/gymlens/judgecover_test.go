package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gymlens/gymlens/internal/openaitest"
)

// A trial judge that judged 20 items under a name of its own is named,
// with its share, by metrics (in the table's footnotes, and on stderr
// for JSON), by the other analyses (corr: on stderr, once), by the paper
// tables and by the report; metrics --judge with one judge says nothing
// of the others.
func TestPartialJudgeIsNamedEverywhere(t *testing.T) {
	if testing.Short() {
		t.Skip("a judge run, then metrics, a table and a report: some 10 s")
	}
	t.Parallel()
	dir, db := sharedSampleWarehouse(t, 8, 2)
	f := openaitest.New()
	defer f.Close()
	if code, _, stderr := gymlens(t, "--db", db, "-q", "judge", "--metric", "tc", "--limit", "20", "--judge", "trial=fake@"+f.URL+"/v1"); code != 0 {
		t.Fatal(stderr)
	}
	const note = "judge trial judged 20 of the "
	code, out, stderr := gymlens(t, "--db", db, "metrics", "--resamples", "100")
	if code != 0 || !strings.Contains(out, note) {
		t.Errorf("metrics: exit %d\n%s%s", code, out, stderr)
	}
	code, out, stderr = gymlens(t, "--db", db, "metrics", "--resamples", "100", "-f", "json")
	if code != 0 || !strings.Contains(stderr, "note: "+note) {
		t.Errorf("metrics -f json: exit %d\n%s", code, stderr)
	}
	code, out, stderr = gymlens(t, "--db", db, "corr", "--resamples", "100")
	if code != 0 || strings.Count(stderr, note) != 1 {
		t.Errorf("corr: exit %d\n%s", code, stderr)
	}
	code, out, stderr = gymlens(t, "--db", db, "-q", "metrics", "--resamples", "100", "--judge", "trial")
	if code != 0 || strings.Contains(out+stderr, "items judged") {
		t.Errorf("metrics --judge trial: exit %d\n%s%s", code, out, stderr)
	}
	code, out, stderr = gymlens(t, "--db", db, "-q", "table", "main", "--format", "md", "--resamples", "100")
	if code != 0 || !strings.Contains(out, note) {
		t.Errorf("table main: exit %d\n%s%s", code, out, stderr)
	}
	rep := filepath.Join(dir, "rep")
	if code, _, stderr := gymlens(t, "--db", db, "-q", "report", "--out", rep, "--resamples", "100"); code != 0 {
		t.Fatal(stderr)
	}
	b, _ := os.ReadFile(filepath.Join(rep, "index.html"))
	if !strings.Contains(string(b), note) {
		t.Errorf("the report's index.html does not name judge trial")
	}
}
