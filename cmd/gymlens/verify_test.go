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
