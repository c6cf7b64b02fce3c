package inspect

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/gymlens/gymlens/ingest/runlog"
)

// recorder is a Sink that keeps what it is given.
type recorder struct {
	begun   *Eval
	ended   *Eval
	samples []*Sample
	items   map[string]int // kind → count
	raws    []string
}

func (r *recorder) Begin(e *Eval) error { r.begun = e; return nil }
func (r *recorder) Item(s *Sample, it *Item) error {
	if r.items == nil {
		r.items = map[string]int{}
	}
	r.items[it.Kind]++
	r.raws = append(r.raws, string(it.Raw))
	return nil
}
func (r *recorder) Sample(s *Sample) error { r.samples = append(r.samples, s); return nil }
func (r *recorder) End(e *Eval) error      { r.ended = e; return nil }

func read(t *testing.T, path string) *recorder {
	t.Helper()
	r := &recorder{}
	if err := ReadFile(path, r); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return r
}

func metric(e *Eval, score, name string) (float64, bool) {
	for _, m := range e.Results {
		if m.Score == score && m.Metric == name {
			return m.Value, true
		}
	}
	return 0, false
}

// Inspect's own test logs read whole, with what Inspect's tests and the
// logs' headers say of them.
func TestReadInspectFixtures(t *testing.T) {
	for _, tc := range []struct {
		file            string
		version         int
		status          string
		samples, epochs int
		score           string
		accuracy        float64
		pool            int
	}{
		{"log_formats.eval", 2, "success", 1, 1, "match", 0, 0},
		{"log_formats.json", 2, "success", 1, 1, "match", 0, 0},
		{"log_streaming.eval", 2, "success", 4, 2, "match", 0.75, 0},
		{"log_read_sample.eval", 2, "success", 1, 1, "match", 1, 0},
		{"log_message_deduplication.eval", 3, "success", 1, 1, "closeness_log", -1, 11},
		{"mmlu-summary-choices.eval", 2, "success", 1, 1, "choice", -1, 0},
		{"popularity_cancelled.json", 2, "cancelled", 3, 1, "match", -1, 0},
		{"no_samples_cancelled.json", 2, "cancelled", 0, 1, "match", -1, 0},
		{"log_tool_call_error.json", 2, "success", 1, 1, "includes", -1, 0},
	} {
		t.Run(tc.file, func(t *testing.T) {
			r := read(t, filepath.Join("testdata", tc.file))
			e := r.ended
			if e == nil || r.begun != e {
				t.Fatal("Begin and End not called with the eval")
			}
			if e.Version != tc.version || e.Status != tc.status || e.Epochs != tc.epochs {
				t.Errorf("version %d status %s epochs %d, want %d %s %d", e.Version, e.Status, e.Epochs, tc.version, tc.status, tc.epochs)
			}
			if len(r.samples) != tc.samples {
				t.Errorf("%d samples, want %d", len(r.samples), tc.samples)
			}
			if e.Incomplete != "" {
				t.Errorf("incomplete: %s", e.Incomplete)
			}
			acc, ok := metric(e, tc.score, "accuracy")
			if !ok {
				t.Fatalf("no stored accuracy of %s: %+v", tc.score, e.Results)
			}
			if tc.accuracy >= 0 && acc != tc.accuracy {
				t.Errorf("accuracy %v, want %v", acc, tc.accuracy)
			}
			if r.items[KindPoolMessage] != tc.pool {
				t.Errorf("%d pooled messages, want %d", r.items[KindPoolMessage], tc.pool)
			}
			for _, s := range r.samples {
				if s.Layout != "summary" && s.MessageCount == 0 {
					t.Errorf("sample %s/%d has no messages", s.ID, s.Epoch)
				}
			}
			for _, raw := range r.raws {
				if strings.Contains(raw, "NaN") && !strings.Contains(raw, `"NaN"`) {
					t.Errorf("an item keeps a bare NaN: %.100s", raw)
				}
			}
		})
	}
}

// The epochs of log_streaming.eval: C/I mapped to 1/0, reductions as
// stored (mean over epochs).
func TestReadEpochsAndReductions(t *testing.T) {
	r := read(t, "testdata/log_streaming.eval")
	got := map[string]float64{}
	for _, s := range r.samples {
		if len(s.Scores) != 1 || !s.Scores[0].Valid || s.Scores[0].Metric() != "inspect.match" {
			t.Fatalf("sample %s/%d: scores %+v", s.ID, s.Epoch, s.Scores)
		}
		got[fmt.Sprintf("%s/%d", s.ID, s.Epoch)] = s.Scores[0].Value
		if len(s.Usage) != 1 || s.Usage[0].Total != s.Usage[0].Input+s.Usage[0].Output {
			t.Errorf("sample %s/%d: usage %+v", s.ID, s.Epoch, s.Usage)
		}
	}
	want := map[string]float64{"1/1": 0, "1/2": 1, "2/1": 1, "2/2": 1}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("scores %v, want %v", got, want)
	}
	red := r.ended.Reductions
	if len(red) != 2 || red[0].SampleID != "1" || red[0].Value != 0.5 || red[1].Value != 1 {
		t.Errorf("reductions %+v", red)
	}
}

// Inspect writes NaN (test_read_nan reads this log); a version 1 log's
// results have one scorer beside its metrics.
func TestReadNaNAsAValue(t *testing.T) {
	r := &recorder{}
	if err := readJSONLog("testdata/log_with_nan.txt", r, false); err != nil {
		t.Fatal(err)
	}
	acc, ok := metric(r.ended, "model_graded_fact", "accuracy")
	if !ok || !math.IsNaN(acc) {
		t.Fatalf("accuracy %v (found %v), want NaN", acc, ok)
	}
	if !strings.Contains(string(r.ended.Spec), `"wikipedia"`) {
		t.Error("the spec is not kept")
	}
}

func TestInfinityIsAValue(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "inf.json")
	b, _ := os.ReadFile("testdata/log_formats.json")
	b = bytes.Replace(b, []byte(`"value": 0.0`), []byte(`"value": -Infinity`), 1)
	if !bytes.Contains(b, []byte("-Infinity")) {
		t.Fatal("fixture changed")
	}
	os.WriteFile(p, b, 0o644)
	r := read(t, p)
	acc, _ := metric(r.ended, "match", "accuracy")
	if !math.IsInf(acc, -1) {
		t.Errorf("accuracy %v, want -Inf", acc)
	}
}

// Inspect refuses log_version_3.txt (whose version is 4: test_fail_version).
func TestRefuseNewerVersion(t *testing.T) {
	err := ReadFile("testdata/log_version_3.txt", &recorder{})
	if err == nil || !strings.Contains(err.Error(), "log version 4 is newer") || !strings.Contains(err.Error(), "log_version_3.txt") {
		t.Fatalf("got %v", err)
	}
	// The same in a .eval header.
	p := rezip(t, "testdata/log_formats.eval", func(name string, b []byte) []byte {
		if name == headerEntry {
			return bytes.Replace(b, []byte(`"version": 2`), []byte(`"version": 9`), 1)
		}
		return b
	}, zip.Deflate)
	err = ReadFile(p, &recorder{})
	if err == nil || !strings.Contains(err.Error(), "entry header.json: field version: log version 9 is newer") {
		t.Fatalf("got %v", err)
	}
}

// rezip writes src's entries again through edit (nil: drop the entry),
// with method, into a new file.
func rezip(t *testing.T, src string, edit func(name string, b []byte) []byte, method uint16) string {
	t.Helper()
	zr, err := zip.OpenReader(src)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(rc)
		rc.Close()
		if b = edit(f.Name, b); b == nil {
			continue
		}
		// Sizes in the local headers, as Python's zipfile writes them.
		var comp bytes.Buffer
		var cw io.WriteCloser
		switch method {
		case zip.Deflate:
			cw, _ = flate.NewWriter(&comp, flate.DefaultCompression)
		case zipMethodZstd:
			cw, _ = zstd.NewWriter(&comp)
		default:
			t.Fatalf("method %d", method)
		}
		cw.Write(b)
		cw.Close()
		w, err := zw.CreateRaw(&zip.FileHeader{Name: f.Name, Method: method, CRC32: crc32.ChecksumIEEE(b),
			CompressedSize64: uint64(comp.Len()), UncompressedSize64: uint64(len(b))})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(comp.Bytes())
	}
	zw.Close()
	p := filepath.Join(t.TempDir(), filepath.Base(src))
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func keep(_ string, b []byte) []byte { return b }

// Entries compressed with zstd (zip method 93, Inspect's default) read
// as the deflated ones do.
func TestReadZstdEntries(t *testing.T) {
	p := rezip(t, "testdata/log_streaming.eval", keep, zipMethodZstd)
	r := read(t, p)
	want := read(t, "testdata/log_streaming.eval")
	if len(r.samples) != 4 || fmt.Sprint(r.ended.Results) != fmt.Sprint(want.ended.Results) || r.items[KindEvent] != want.items[KindEvent] {
		t.Fatalf("zstd: %d samples, results %v, %d events", len(r.samples), r.ended.Results, r.items[KindEvent])
	}
}

// A log still being written: no header.json, summaries in the journal;
// cut before its central directory, its whole entries are read.
func TestReadIncompleteLog(t *testing.T) {
	p := rezip(t, "testdata/log_streaming.eval", func(name string, b []byte) []byte {
		switch name {
		case headerEntry, summariesEntry, reductionsEntry, "samples/2_epoch_2.json":
			return nil
		}
		return b
	}, zip.Deflate)
	r := read(t, p)
	e := r.ended
	if e.Incomplete == "" || e.Status != "started" || e.HasResults {
		t.Fatalf("incomplete %q status %q results %v", e.Incomplete, e.Status, e.HasResults)
	}
	// Three sample entries, and 2/2 from the journal's summary.
	if len(r.samples) != 4 || r.samples[3].Layout != "summary" || r.samples[3].ID != "2" {
		t.Fatalf("samples %d: %+v", len(r.samples), r.samples[len(r.samples)-1])
	}
	// Cut the archive inside its fourth entry: no central directory.
	b, _ := os.ReadFile(p)
	cut := bytes.Index(b, []byte("samples/1_epoch_2.json"))
	q := filepath.Join(t.TempDir(), "cut.eval")
	os.WriteFile(q, b[:cut+40], 0o644)
	r = read(t, q)
	if !strings.Contains(r.ended.Incomplete, "no central directory") || len(r.samples) != 2 {
		t.Fatalf("cut: incomplete %q, %d samples", r.ended.Incomplete, len(r.samples))
	}
	// A finished log whose central directory is lost: every entry is
	// read, and the log is said to be incomplete all the same.
	b, _ = os.ReadFile("testdata/log_streaming.eval")
	end := bytes.Index(b, []byte("PK\x01\x02")) // the first central directory header
	q = filepath.Join(t.TempDir(), "nocd.eval")
	os.WriteFile(q, b[:end], 0o644)
	r = read(t, q)
	if !strings.Contains(r.ended.Incomplete, "no central directory") || len(r.samples) != 4 || !r.ended.HasResults {
		t.Fatalf("no central directory: incomplete %q, %d samples, results %v", r.ended.Incomplete, len(r.samples), r.ended.HasResults)
	}
}

// Bad input names the file, the entry and the field.
func TestBadInputNamesEntryAndField(t *testing.T) {
	for _, tc := range []struct {
		name string
		src  string
		edit func(string, []byte) []byte
		want []string
	}{
		{"not JSON", "testdata/log_formats.eval", func(n string, b []byte) []byte {
			if n == "samples/1_epoch_1.json" {
				return bytes.Replace(b, []byte(`"role": "user"`), []byte(`"role": user`), 1)
			}
			return b
		}, []string{"entry samples/1_epoch_1.json", "field messages[", "not JSON"}},
		{"pool ref", "testdata/log_message_deduplication.eval", func(n string, b []byte) []byte {
			if strings.HasPrefix(n, "samples/") {
				return bytes.Replace(b, []byte(`"input_refs": [[0, 1]]`), []byte(`"input_refs": [[0, 99]]`), 1)
			}
			return b
		}, []string{"entry samples/0_epoch_1.json", "field events[", "input_refs", "message 98 of the message pool"}},
		{"attachment", "testdata/log_message_deduplication.eval", func(n string, b []byte) []byte {
			if strings.HasPrefix(n, "samples/") {
				return bytes.Replace(b, []byte(`"ddc588d90e1c276163c3a0eec966c6af": `), []byte(`"other": `), 1)
			}
			return b
		}, []string{"entry samples/0_epoch_1.json", "attachment://ddc588d90e1c276163c3a0eec966c6af"}},
		{"sample id", "testdata/log_formats.eval", func(n string, b []byte) []byte {
			if n == "samples/1_epoch_1.json" {
				return bytes.Replace(b, []byte(`"id": 1`), []byte(`"id": 7`), 1)
			}
			return b
		}, []string{"entry samples/1_epoch_1.json", "field id", "is 7, but the entry's name says 1"}},
		{"truncated JSON", "testdata/log_formats.eval", func(n string, b []byte) []byte {
			if n == "samples/1_epoch_1.json" {
				return b[:len(b)/2]
			}
			return b
		}, []string{"entry samples/1_epoch_1.json", "ends too early"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := rezip(t, tc.src, tc.edit, zip.Deflate)
			err := ReadFile(p, &recorder{})
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range append(tc.want, p) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%v: does not say %q", err, w)
				}
			}
		})
	}
	// A zip cut inside a deflated sample entry, central directory intact
	// elsewhere: the entry's bytes are corrupt.
	b, _ := os.ReadFile("testdata/log_streaming.eval")
	i := bytes.Index(b, []byte("samples/2_epoch_1.json")) + 60
	b[i], b[i+1], b[i+2] = ^b[i], ^b[i+1], ^b[i+2]
	p := filepath.Join(t.TempDir(), "corrupt.eval")
	os.WriteFile(p, b, 0o644)
	err := ReadFile(p, &recorder{})
	if err == nil || !strings.Contains(err.Error(), "entry samples/2_epoch_1.json") {
		t.Fatalf("corrupt entry: %v", err)
	}
}

// An entry that inflates past the ratio cap is refused.
func TestCompressionRatioCap(t *testing.T) {
	p := rezip(t, "testdata/log_formats.eval", func(n string, b []byte) []byte {
		if n == "samples/1_epoch_1.json" {
			pad := bytes.Repeat([]byte(" "), 8<<20)
			return append(append([]byte{'{'}, pad...), b[1:]...)
		}
		return b
	}, zipMethodZstd)
	err := ReadFile(p, &recorder{})
	if err == nil || !strings.Contains(err.Error(), "compression ratio above the cap") || !strings.Contains(err.Error(), "samples/1_epoch_1.json") {
		t.Fatalf("got %v", err)
	}
}

// Discovery gives .eval and Inspect's .json logs to this reader, a
// .json log past runlog.MaxWholeFile included (it is streamed).
func TestDiscoverInspectLogs(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"log_formats.eval", "log_formats.json"} {
		b, _ := os.ReadFile(filepath.Join("testdata", f))
		os.WriteFile(filepath.Join(dir, f), b, 0o644)
	}
	big := filepath.Join(dir, "big.json")
	f, _ := os.Create(big)
	f.WriteString(`{"version": 2, "status": "success", "eval": {`)
	f.Truncate(runlog.MaxWholeFile + 1)
	f.Close()
	files, skipped, err := runlog.Discover([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 3 || len(skipped) != 0 {
		t.Fatalf("files %+v skipped %+v", files, skipped)
	}
	for _, f := range files {
		if f.Kind != KindLog {
			t.Errorf("%s: kind %v", f.Path, f.Kind)
		}
	}
}

// failingSink fails on its nth item.
type failingSink struct {
	recorder
	n int
}

var errSinkFull = errors.New("the warehouse is full")

func (f *failingSink) Item(s *Sample, it *Item) error {
	if f.n--; f.n == 0 {
		return errSinkFull
	}
	return nil
}

// An error of the sink (the warehouse's) comes back as it is, not as
// the log's fault.
func TestSinkErrorsPassThrough(t *testing.T) {
	for _, f := range []string{"testdata/log_formats.eval", "testdata/log_formats.json"} {
		err := ReadFile(f, &failingSink{n: 3})
		var ie *Error
		if err != errSinkFull || errors.As(err, &ie) {
			t.Errorf("%s: %v", f, err)
		}
	}
}
