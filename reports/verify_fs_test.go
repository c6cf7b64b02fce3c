package reports

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gymlens/gymlens/ingest/rows"
)

// The text planted outside the report folder: no output of verify may
// show any of it.
const secret = "SECRET-7f3a-do-not-print"

// tinyReport writes a small report folder (index.html, the main table in
// five files) and returns it with the report that wrote it.
func tinyReport(t *testing.T) (string, *Report) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "rep")
	r := &Report{Title: "t", Tables: []*Table{{Name: "main", Caption: "c", Keys: []string{"k"}, Columns: []Column{{Header: "x", Digits: 1}}, Rows: []Row{{Keys: []string{"a"}, Cells: []Value{{V: 1.5}}}}}}}
	r.Manifest.Tool, r.Manifest.Version, r.Manifest.Build, r.Manifest.Warehouse = "gymlens", "0.1.0", Build{Go: runtime.Version()}, "gymlens.duckdb"
	if err := WriteReport(dir, r); err != nil {
		t.Fatal(err)
	}
	return dir, r
}

type stubStore struct{}

func (stubStore) Inputs(context.Context) ([]rows.InputFile, error) { return nil, nil }
func (stubStore) Steps(context.Context) (*rows.Steps, error)       { return &rows.Steps{}, nil }
func (stubStore) Close() error                                     { return nil }

// verifyTiny runs Verify on dir against an empty warehouse, the rebuild
// writing r again, and returns everything it printed and its error.
func verifyTiny(t *testing.T, dir string, r *Report) (string, error) {
	t.Helper()
	db := filepath.Join(t.TempDir(), "gymlens.duckdb")
	os.WriteFile(db, nil, 0o644)
	v, err := Verify(context.Background(), VerifyOptions{Dir: dir, DB: db, Version: "0.1.0",
		Open:    func(context.Context, string) (VerifyStore, error) { return stubStore{}, nil },
		Rebuild: func(_ context.Context, _, out string, _ []string) error { return WriteReport(out, r) }})
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	err = v.Write(&b, &b)
	return b.String(), err
}

// plantSecret writes a file holding the secret outside any report folder
// and returns its path.
func plantSecret(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "outside.csv")
	if err := os.WriteFile(p, []byte(secret+",1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// A link inside the report folder, to a file or a folder outside it, is
// refused by its name before anything is read: nothing of its target is
// printed. The folder named on the command line may itself be a link.
func TestVerifyRefusesLinksInTheFolder(t *testing.T) {
	t.Run("untouched, through a link to the folder", func(t *testing.T) {
		dir, r := tinyReport(t)
		link := filepath.Join(t.TempDir(), "named")
		if err := os.Symlink(dir, link); err != nil {
			t.Fatal(err)
		}
		if out, err := verifyTiny(t, link, r); err != nil || !strings.Contains(out, "all 7 files match") {
			t.Errorf("%v\n%s", err, out)
		}
	})
	for _, c := range []struct{ name, link string }{
		{"a listed file", "tables/main.csv"},
		{"an unlisted file", "tables/extra.csv"},
		{"the manifest", "manifest.json"},
		{"a folder", "tables"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir, r := tinyReport(t)
			target := plantSecret(t)
			if c.link == "tables" {
				// The folder's copy, its main.csv the secret.
				target = filepath.Join(t.TempDir(), "tables")
				if err := os.CopyFS(target, os.DirFS(filepath.Join(dir, "tables"))); err != nil {
					t.Fatal(err)
				}
				os.WriteFile(filepath.Join(target, "main.csv"), []byte(secret+"\n"), 0o600)
			}
			p := filepath.Join(dir, filepath.FromSlash(c.link))
			if err := os.RemoveAll(p); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, p); err != nil {
				t.Fatal(err)
			}
			out, err := verifyTiny(t, dir, r)
			all := out + "\n" + errString(err)
			if err == nil || !strings.Contains(err.Error(), c.link+": a symbolic link") {
				t.Errorf("want %s refused as a link; got %v\n%s", c.link, err, out)
			}
			if strings.Contains(all, secret[:6]) || strings.Contains(all, "'S'") {
				t.Errorf("the link's target shows:\n%s", all)
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// A manifest larger than MaxManifestBytes is refused, naming the limit,
// by its size alone: the sparse file of a terabyte is never read.
func TestVerifyRefusesAnOversizeManifest(t *testing.T) {
	for _, size := range []int64{MaxManifestBytes + 1, 1 << 40} {
		dir, _ := tinyReport(t)
		if err := os.Truncate(filepath.Join(dir, "manifest.json"), size); err != nil {
			t.Skipf("no sparse file of %d bytes here: %v", size, err)
		}
		start := time.Now()
		_, err := ReadManifest(dir)
		if err == nil || !strings.Contains(err.Error(), "manifest.json: ") || !strings.Contains(err.Error(), "larger than the 16 MiB") {
			t.Errorf("%d bytes: %v", size, err)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("%d bytes: refused after %v", size, d)
		}
	}
}

// Checking a listed file and comparing it with the rebuild stream it:
// a 32 MB file costs a few buffers, not its size.
func TestVerifyStreamsLargeFiles(t *testing.T) {
	const size = 32 << 20
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a", "t.csv"), filepath.Join(dir, "b", "t.csv")
	for _, p := range []string{a, b} {
		os.Mkdir(filepath.Dir(p), 0o755)
		os.WriteFile(p, nil, 0o644)
		if err := os.Truncate(p, size); err != nil {
			t.Fatal(err)
		}
	}
	f, _ := os.OpenFile(b, os.O_WRONLY, 0)
	f.WriteAt([]byte("x"), size-1)
	f.Close()
	m := &Manifest{Files: []OutputFile{{Path: "t.csv", Size: size, SHA256: strings.Repeat("0", 64)}}}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	checked := CheckFolder(filepath.Dir(a), m)
	compared := CompareFolders(filepath.Dir(a), filepath.Dir(b), m)
	runtime.ReadMemStats(&after)
	if len(checked) != 1 || !strings.Contains(checked[0].What, "SHA-256 83ee47245398…") {
		t.Errorf("check: %v", checked)
	}
	want := `t.csv: differs from the rebuild: first at line 1, byte 33554432 of it: the report has …"` + strings.Repeat(`\x00`, 41) + `", the rebuild …"` + strings.Repeat(`\x00`, 40) + `x"`
	if len(compared) != 1 || compared[0].String() != want {
		t.Errorf("compare: %v\nwant %s", compared, want)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 4<<20 {
		t.Errorf("allocated %d MB for two files of 32 MB", n>>20)
	}
}

// During the rebuild verify holds of the manifest only what the rebuild
// and the comparison need: a manifest of 0.8 MB that decodes to some 16 MB
// (a quarter of a million empty table entries) is let go before.
func TestVerifyLetsTheManifestGoBeforeTheRebuild(t *testing.T) {
	dir, r := tinyReport(t)
	p := filepath.Join(dir, "manifest.json")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	junk := `"tables": [` + strings.Repeat("{},", 1<<18) + "{}]"
	b = bytes.Replace(b, []byte(`"tables": [`), []byte(junk[:len(junk)-1]+","), 1)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	var held uint64
	db := filepath.Join(t.TempDir(), "gymlens.duckdb")
	os.WriteFile(db, nil, 0o644)
	v, err := Verify(context.Background(), VerifyOptions{Dir: dir, DB: db, Version: "0.1.0",
		Open: func(context.Context, string) (VerifyStore, error) { return stubStore{}, nil },
		Rebuild: func(_ context.Context, _, out string, _ []string) error {
			var ms runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&ms)
			held = ms.HeapAlloc
			return WriteReport(out, r)
		}})
	if err != nil {
		t.Fatal(err)
	}
	if held > 8<<20 {
		t.Errorf("%d MB of heap held during the rebuild", held>>20)
	}
	if len(v.Problems) != 1 || !strings.HasPrefix(v.Problems[0].String(), "manifest.json: differs from the rebuild") {
		t.Errorf("%v", v.Problems)
	}
}

// A manifest of more than MaxManifestValues JSON values is refused,
// naming the limit, before it is decoded (empty objects in as many bytes
// would decode to some 30 times their size).
func TestVerifyRefusesAManifestOfTooManyValues(t *testing.T) {
	dir, _ := tinyReport(t)
	p := filepath.Join(dir, "manifest.json")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	b = bytes.Replace(b, []byte(`"skipped": []`), []byte(`"skipped": [`+strings.Repeat(`"",`, MaxManifestValues)+`""]`), 1)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadManifest(dir); err == nil || !strings.Contains(err.Error(), "manifest.json: more than 1048576 JSON values") {
		t.Errorf("%v", err)
	}
}

// Of many links, the first 20 are named (in the walk's order) and the
// rest counted.
func TestVerifyNamesTwentyLinksAndCountsTheRest(t *testing.T) {
	dir, r := tinyReport(t)
	target := plantSecret(t)
	for i := range 25 {
		if err := os.Symlink(target, filepath.Join(dir, fmt.Sprintf("l%02d", i))); err != nil {
			t.Fatal(err)
		}
	}
	_, err := verifyTiny(t, dir, r)
	if err == nil || !strings.Contains(err.Error(), "l19: a symbolic link") || strings.Contains(err.Error(), "l20") || !strings.HasSuffix(err.Error(), "\n  and 5 more") {
		t.Errorf("%v", err)
	}
}

// valuesPast counts what decoding into any finds: every object, array,
// key, string, number and literal, escapes and all.
func TestValuesPastCountsEveryValue(t *testing.T) {
	dir, _ := tinyReport(t)
	m, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range []string{string(m), `{"a":1,"b\"]":[true, null,"x\\\"y,{" ,-1.5e3],"c":{ } , "d":[[]]}`, `"x"`, `[]`} {
		var v any
		if err := json.Unmarshal([]byte(doc), &v); err != nil {
			t.Fatal(err)
		}
		n := countValues(v)
		if got := valuesPast([]byte(doc), n); got != -1 {
			t.Errorf("%.40s…: %d values, more found at %d", doc, n, got)
		}
		if got := valuesPast([]byte(doc), n-1); got < 0 {
			t.Errorf("%.40s…: %d values, fewer found", doc, n)
		}
	}
}

func countValues(v any) int {
	n := 1
	switch v := v.(type) {
	case map[string]any:
		for _, x := range v {
			n += 1 + countValues(x)
		}
	case []any:
		for _, x := range v {
			n += countValues(x)
		}
	}
	return n
}
