package reports

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gymlens/gymlens/analysis"
	"github.com/gymlens/gymlens/ingest/rows"
)

// inputsUnder writes files (path → content) under root and returns them
// as a manifest's inputs, in that order.
func inputsUnder(t *testing.T, root string, files ...string) []rows.InputFile {
	t.Helper()
	var out []rows.InputFile
	for _, f := range files {
		p := filepath.Join(root, filepath.FromSlash(f))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(f), 0o644); err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256([]byte(f))
		out = append(out, rows.InputFile{Path: f, SHA256: hex.EncodeToString(sum[:]), Size: int64(len(f))})
	}
	return out
}

// The inputs of ingests of two folders lie under the folder holding
// both: given one of the two, InputFiles says once which folder to give;
// given the right one, it finds them all; a folder of them missing is
// one problem, a file missing one each.
func TestInputFilesUnderTwoFolders(t *testing.T) {
	x := filepath.Join(t.TempDir(), "x")
	m := &Manifest{InputRoot: "x", Inputs: inputsUnder(t, x, "c/runs/a.jsonl", "c/runs/b.jsonl", "d/r1.csv", "d/r2.csv")}
	paths, bad, err := InputFiles(m, filepath.Join(x, "c"), t.TempDir())
	if err != nil || len(paths) != 0 || len(bad) != 1 || !strings.HasSuffix(bad[0].What, "give --inputs "+x+" instead") {
		t.Errorf("--inputs x/c: %v %v %v", paths, bad, err)
	}
	if paths, bad, err = InputFiles(m, x, t.TempDir()); err != nil || len(paths) != 4 || len(bad) != 0 {
		t.Errorf("--inputs x: %v %v %v", paths, bad, err)
	}
	os.RemoveAll(filepath.Join(x, "d"))
	os.Remove(filepath.Join(x, "c", "runs", "b.jsonl"))
	_, bad, _ = InputFiles(m, x, t.TempDir())
	if want := []Problem{{"c/runs/b.jsonl", "not found under " + x}, {"d/", "2 inputs of the report are under d/, and " + x + " has no folder d"}}; !reflect.DeepEqual(bad, want) {
		t.Errorf("missing d/ and c/runs/b.jsonl: %v", bad)
	}
}

type replayStore struct{ analysis.ScoreStore }

func (replayStore) Close() error { return nil }

// loadInputs replays each recorded ingest in its order, with its files
// and options.
func TestLoadInputsReplaysEachIngest(t *testing.T) {
	m := &Manifest{Steps: Steps{Ingests: []rows.IngestStep{
		{Ingest: 1, Options: map[string]any{"skip_invalid": false, "replace": false, "max_errors": 20.0}, Files: []string{"b", "a"}},
		{Ingest: 2, Options: map[string]any{"skip_invalid": true, "replace": true, "max_errors": 5.0, "max_rejects": 7.0}, Files: []string{"c"}},
	}}}
	type call struct {
		files []string
		opt   IngestReplay
	}
	var got []call
	o := VerifyOptions{Load: func(_ context.Context, _ string, files []string, opt IngestReplay) (LoadedStore, error) {
		got = append(got, call{files, opt})
		return replayStore{}, nil
	}}
	found := map[string]string{"a": "/in/a", "b": "/in/b", "c": "/in/c"}
	if err := loadInputs(context.Background(), o, m, "w.duckdb", found, []string{"/in/a", "/in/b", "/in/c"}); err != nil {
		t.Fatal(err)
	}
	want := []call{{[]string{"/in/b", "/in/a"}, IngestReplay{MaxErrors: 20}}, {[]string{"/in/c"}, IngestReplay{SkipInvalid: true, Replace: true, MaxErrors: 5, MaxRejects: 7}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("loads %+v, want %+v", got, want)
	}
}
