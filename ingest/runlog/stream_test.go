package runlog

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func decodeAll(t *testing.T, data []byte, workers int) ([]Item, error) {
	var items []Item
	err := DecodeStream(context.Background(), bytes.NewReader(data), StreamOptions{File: "f.jsonl", Workers: workers}, func(its []Item) error {
		for _, it := range its {
			it.Raw = nil
			items = append(items, it)
		}
		return nil
	})
	return items, err
}

func TestStreamKeepsOrderAndLineNumbers(t *testing.T) {
	var b strings.Builder
	for i := range 20000 {
		if i%1000 == 0 {
			b.WriteString("\n") // blank lines are passed over but counted
		}
		b.WriteString(strings.Replace(goodEvent, `"seq":7`, `"seq":`+strconv.Itoa(i), 1) + "\n")
	}
	for _, workers := range []int{1, 2, 7} {
		items, err := decodeAll(t, []byte(b.String()), workers)
		if err != nil {
			t.Fatal(err)
		}
		if len(items) != 20000 {
			t.Fatalf("%d items", len(items))
		}
		for i, it := range items {
			if it.Err != nil || it.Rec.(*Event).Seq != int64(i) {
				t.Fatalf("workers %d item %d: %+v", workers, i, it)
			}
			if want := i + 1 + i/1000 + 1; it.Line != want {
				t.Fatalf("item %d on line %d, want %d", i, it.Line, want)
			}
		}
	}
}

func TestTruncatedLastLine(t *testing.T) {
	data := goodEvent + "\n" + goodEvent[:40]
	items, err := decodeAll(t, []byte(data), 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 2 || items[1].Err == nil || !strings.Contains(items[1].Err.Error(), "f.jsonl:2: truncated last line") {
		t.Fatalf("got %+v", items)
	}
	// A complete last line without a newline is fine.
	items, _ = decodeAll(t, []byte(goodEvent+"\n"+goodEvent), 2)
	if len(items) != 2 || items[1].Err != nil {
		t.Fatalf("got %+v", items)
	}
}

func TestLongLineIsAnErrorNotAnAllocation(t *testing.T) {
	long := `{"type":"event","text":"` + strings.Repeat("x", 50<<20) + `"}`
	data := goodEvent + "\n" + long + "\n" + goodEvent + "\n"
	items, err := decodeAll(t, []byte(data), 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 3 || items[1].Err == nil || !strings.Contains(items[1].Err.Error(), "f.jsonl:2: line longer than the 16 MiB limit") {
		t.Fatalf("got %d items: %v", len(items), items[1].Err)
	}
	if items[2].Err != nil || items[2].Line != 3 {
		t.Fatalf("the line after the long one: %+v", items[2])
	}
}

func TestCorruptCompressedStreams(t *testing.T) {
	dir := t.TempDir()
	var plain bytes.Buffer
	for range 2000 {
		plain.WriteString(goodEvent + "\n")
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(plain.Bytes())
	zw.Close()
	var zs bytes.Buffer
	enc, _ := zstd.NewWriter(&zs)
	enc.Write(plain.Bytes())
	enc.Close()
	cases := map[string][]byte{
		"bad.jsonl.gz":        append(gz.Bytes()[:gz.Len()/2:gz.Len()/2], []byte("garbage")...),
		"notgz.jsonl.gz":      []byte("this is not gzip at all\n"),
		"bad.jsonl.zst":       append(zs.Bytes()[:zs.Len()/2:zs.Len()/2], []byte("garbage")...),
		"notzst.jsonl.zst":    []byte("this is not zstd at all\n"),
		"truncated.jsonl.gz":  gz.Bytes()[:gz.Len()-9],
		"truncated.jsonl.zst": zs.Bytes()[:zs.Len()-5],
	}
	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, name)
			os.WriteFile(path, data, 0o644)
			r, err := OpenStream(path, nil)
			if err == nil {
				err = DecodeStream(context.Background(), r, StreamOptions{File: path}, func([]Item) error { return nil })
				r.Close()
			}
			if err == nil || !strings.Contains(err.Error(), name) {
				t.Fatalf("got %v", err)
			}
		})
	}
	// The intact files read fine.
	for name, data := range map[string][]byte{"ok.jsonl.gz": gz.Bytes(), "ok.jsonl.zst": zs.Bytes()} {
		path := filepath.Join(dir, name)
		os.WriteFile(path, data, 0o644)
		r, err := OpenStream(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		err = DecodeStream(context.Background(), r, StreamOptions{File: path}, func(its []Item) error { n += len(its); return nil })
		r.Close()
		if err != nil || n != 2000 {
			t.Fatalf("%s: %d items, %v", name, n, err)
		}
	}
}

func TestDiscover(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "a", ".hidden"), 0o755)
	writeFile(t, filepath.Join(dir, "a", "runs.jsonl"), goodEvent+"\n")
	writeFile(t, filepath.Join(dir, "a", ".hidden", "x.jsonl"), goodEvent+"\n")
	writeFile(t, filepath.Join(dir, "a", "s.yaml"), scenarioYAML)
	writeFile(t, filepath.Join(dir, "a", "notes.txt"), "hello")
	writeFile(t, filepath.Join(dir, "a", "other.json"), `{"type":"something"}`)
	writeFile(t, filepath.Join(dir, "a", "r.csv"), "rater,question,value\na,trust,3\n")
	files, skipped, err := Discover([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range files {
		got = append(got, filepath.Base(f.Path)+":"+f.Kind.String())
	}
	if strings.Join(got, " ") != "s.yaml:scenario runs.jsonl:jsonl r.csv:ratings" {
		t.Errorf("files %v", got)
	}
	if len(skipped) != 2 {
		t.Errorf("skipped %v", skipped)
	}
	empty := filepath.Join(dir, "empty")
	os.MkdirAll(empty, 0o755)
	writeFile(t, filepath.Join(empty, "notes.txt"), "hello")
	if _, _, err := Discover([]string{empty}); err == nil || !strings.Contains(err.Error(), "folder holds no file gymlens reads") {
		t.Errorf("empty folder: %v", err)
	}
	if _, _, err := Discover([]string{filepath.Join(dir, "a", "notes.txt")}); err == nil || !strings.Contains(err.Error(), "notes.txt") {
		t.Errorf("explicit unknown file: %v", err)
	}
	// Streams that start with run records are read before the others.
	ord := t.TempDir()
	writeFile(t, filepath.Join(ord, "a-judgments.jsonl"), `{"type":"judgment"}`+"\n")
	writeFile(t, filepath.Join(ord, "b-runs.jsonl"), "\n"+`{"type":"run"}`+"\n")
	writeFile(t, filepath.Join(ord, "c-events.jsonl"), goodEvent+"\n")
	files, _, _ = Discover([]string{ord})
	got = got[:0]
	for _, f := range files {
		got = append(got, filepath.Base(f.Path))
	}
	if strings.Join(got, " ") != "b-runs.jsonl a-judgments.jsonl c-events.jsonl" {
		t.Errorf("order %v", got)
	}
}

func TestRatingsCSV(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.csv")
	writeFile(t, path, "rater,question,value,day,condition,extra_col\nP01,trust,5,2,AMA,x\nP02,trust,abc,2,AMA,\nP03,trust,4,,,\n")
	var good int
	var errs []*Error
	err := ReadRatingsCSV(path, 1, func(line int, g *Rating, raw, row []byte, e *Error) error {
		if e != nil {
			errs = append(errs, e)
		} else {
			good++
			if line == 2 && (g.Day == nil || *g.Day != 2 || string(g.Extra) != `{"extra_col":"x"}`) {
				t.Errorf("row 2: %+v", g)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if good != 2 || len(errs) != 1 || errs[0].Line != 3 || errs[0].Field != "value" || errs[0].Column != 11 {
		t.Fatalf("good %d errs %v", good, errs)
	}
}

// FuzzDecodeStream feeds arbitrary bytes to the stream decoder: it must
// return an item per non-blank line, in order, each a record or an error
// naming its line, and never panic.
func FuzzDecodeStream(f *testing.F) {
	f.Add([]byte(goodEvent + "\n" + goodEvent[:30]))
	f.Add([]byte("\n\n{}\n[1]\n\"x\"\n"))
	f.Add([]byte(`{"type":"run","run_id":"r","scenario":"s","persona":"p","rep":1,"config":{"model":"m","harness":"h"}}` + "\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		prev := 0
		err := DecodeStream(context.Background(), bytes.NewReader(data), StreamOptions{File: "fuzz", Workers: 2, Rows: true, FileID: 1},
			func(items []Item) error {
				for _, it := range items {
					if it.Line <= prev {
						t.Fatalf("line %d after %d", it.Line, prev)
					}
					prev = it.Line
					if (it.Rec == nil) == (it.Err == nil) {
						t.Fatalf("line %d: record %v and error %v", it.Line, it.Rec, it.Err)
					}
					if it.Err != nil && !strings.HasPrefix(it.Err.Error(), "fuzz:") {
						t.Fatalf("error without its file: %v", it.Err)
					}
					if it.Rec != nil && Bulk(it.Rec.RecordType()) && (len(it.Row) == 0 || it.Row[len(it.Row)-1] != '\n') {
						t.Fatalf("line %d: staging row %q", it.Line, it.Row)
					}
				}
				return nil
			})
		if err != nil {
			t.Fatal(err)
		}
	})
}
