package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/gymlens/gymlens/reports"
)

// verify --inputs rebuilds a report from the input files alone, into a new
// warehouse, rescored as the manifest's steps were: a fresh copy of the
// inputs passes; a changed input and a missing one are named, and nothing
// is rebuilt. (TestAgreeAndHumanOnTheSample verifies the whole sample's
// report against its warehouse and its lake; this is a smaller corpus, so
// that the second ingest it needs is cheap.)
func TestVerifyFromTheInputsAlone(t *testing.T) {
	t.Parallel()
	dir, db, corpus := sharedCopy(t, sampleKey{8, 2, true})
	if code, _, stderr := gymlens(t, "--db", db, "-q", "score"); code != 0 {
		t.Fatal(stderr)
	}
	rep := filepath.Join(dir, "rep")
	if code, _, stderr := gymlens(t, "--db", db, "-q", "report", "--out", rep, "--resamples", "200"); code != 0 {
		t.Fatal(stderr)
	}
	m, err := reports.ReadManifest(rep)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Steps.Scores) != 1 || len(m.Inputs) < 10 {
		t.Fatalf("manifest: %d score steps, %d inputs", len(m.Steps.Scores), len(m.Inputs))
	}
	inputs := filepath.Join(t.TempDir(), "copy")
	if err := os.CopyFS(inputs, os.DirFS(corpus)); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := gymlens(t, "verify", "--inputs", inputs, rep)
	all := regexp.MustCompile(`all (\d+) files match a rebuild from the (\d+) inputs`).FindStringSubmatch(out)
	if code != 0 || all == nil || all[1] != strconv.Itoa(len(m.Files)+1) || all[2] != strconv.Itoa(len(m.Inputs)) {
		t.Fatalf("--inputs: exit %d\n%s%s", code, out, stderr)
	}
	// A changed input (one byte more) and a missing one.
	var runs []string
	for _, in := range m.Inputs {
		if strings.HasPrefix(in.Path, "runs/") {
			runs = append(runs, in.Path)
		}
	}
	if len(runs) < 2 {
		t.Fatalf("inputs: %d run files", len(runs))
	}
	f, err := os.OpenFile(filepath.Join(inputs, runs[0]), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("\n")
	f.Close()
	os.Remove(filepath.Join(inputs, runs[1]))
	code, out, stderr = gymlens(t, "verify", "--inputs", inputs, rep)
	for _, want := range []string{runs[0] + ": differs from the report's input", runs[1] + ": not found under " + inputs} {
		if code != 1 || !strings.Contains(out, want) {
			t.Errorf("--inputs with a changed and a missing input: exit %d, no %q in\n%s%s", code, want, out, stderr)
		}
	}
}

// verify --inputs replays the warehouse's ingests one by one, in their
// order and with their options: a warehouse made by three ingests (the
// corpus, PARE files added under it and ingested again with --replace,
// then the ratings, in a folder beside it) rebuilds to the same manifest. Its inputs lie
// under two folders: given one of them, verify says once which folder to
// give, instead of naming every input as not found.
func TestVerifyInputsReplaysEveryIngest(t *testing.T) {
	if testing.Short() {
		t.Skip("three ingests and two rebuilds of a report: some 20 s")
	}
	t.Parallel()
	_, _, corpus := sharedCopy(t, sampleKey{8, 2, false})
	x := filepath.Join(t.TempDir(), "x")
	c, d := filepath.Join(x, "c"), filepath.Join(x, "d")
	if err := os.CopyFS(c, os.DirFS(corpus)); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(c, "ratings"), d); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(t.TempDir(), "w.duckdb")
	if code, _, stderr := gymlens(t, "--db", db, "-q", "ingest", c); code != 0 {
		t.Fatal(stderr)
	}
	pare := os.DirFS(filepath.Join("..", "..", "ingest", "pare", "testdata"))
	if err := os.CopyFS(filepath.Join(c, "pare"), pare); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := gymlens(t, "--db", db, "-q", "ingest", "--replace", c); code != 0 {
		t.Fatal(stderr)
	}
	if code, _, stderr := gymlens(t, "--db", db, "-q", "ingest", d); code != 0 {
		t.Fatal(stderr)
	}
	rep := filepath.Join(t.TempDir(), "rep")
	if code, _, stderr := gymlens(t, "--db", db, "-q", "report", "--out", rep, "--resamples", "200"); code != 0 {
		t.Fatal(stderr)
	}
	m, err := reports.ReadManifest(rep)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Steps.Ingests) != 3 || m.Steps.Ingests[1].Options["replace"] != true || m.InputRoot != "x" {
		t.Fatalf("manifest: %d ingests (%+v), input root %q", len(m.Steps.Ingests), m.Steps.Ingests, m.InputRoot)
	}
	code, out, stderr := gymlens(t, "verify", "--inputs", c, rep)
	if lines := strings.Split(strings.TrimSpace(out), "\n"); code != 1 || len(lines) != 1 || !strings.Contains(out, "give --inputs "+x) {
		t.Errorf("--inputs x/c: exit %d, want 1 and one line saying to give %s:\n%s%s", code, x, out, stderr)
	}
	code, out, stderr = gymlens(t, "verify", "--inputs", x, rep)
	if code != 0 || !strings.Contains(out, "all ") {
		t.Errorf("--inputs x: exit %d\n%s%s", code, out, stderr)
	}
}
