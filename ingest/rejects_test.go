package ingest

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRejectsAreBounded: with --skip-invalid, the rejects file keeps the
// first MaxRejects entries of each input file and cuts a long record's
// text; the summary and the ingests table count every rejected record
// and those the file leaves out.
func TestRejectsAreBounded(t *testing.T) {
	w := openTemp(t)
	dir := smallCorpus(t)
	var many strings.Builder
	for range 2500 {
		many.WriteString("not json\n")
	}
	write(t, filepath.Join(dir, "bad1.jsonl"), many.String())
	write(t, filepath.Join(dir, "bad2.jsonl"), "nope\nnope\nnope\n{"+strings.Repeat("<x\x01", 100_000)+"\n")
	rejects := filepath.Join(t.TempDir(), "rejects.jsonl")
	sum, err := w.Ingest(ctx, []string{dir}, IngestOptions{SkipInvalid: true, RejectsPath: rejects, MaxRejects: 3})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Rejected != 2504 || sum.RejectsUnwritten != 2498 || sum.RejectsTruncated != 0 || sum.Records["run"] != 1 {
		t.Errorf("rejected %d, not written %d, truncated %d, %v", sum.Rejected, sum.RejectsUnwritten, sum.RejectsTruncated, sum.Records)
	}
	f, err := os.Open(rejects)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	byFile := map[string]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<30)
	for sc.Scan() {
		if len(sc.Bytes()) > MaxRejectLine {
			t.Errorf("a rejects line of %d bytes", len(sc.Bytes()))
		}
		var rec struct {
			File      string `json:"file"`
			Record    string `json:"record"`
			Truncated bool   `json:"record_truncated"`
			Bytes     int    `json:"record_bytes"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatal(err)
		}
		byFile[filepath.Base(rec.File)]++
	}
	if byFile["bad1.jsonl"] != 3 || byFile["bad2.jsonl"] != 3 {
		t.Errorf("rejects by file: %v", byFile)
	}
	var rejected, unwritten int64
	if err := w.db.QueryRow(`SELECT rejected, rejects_unwritten FROM ingests`).Scan(&rejected, &unwritten); err != nil || rejected != 2504 || unwritten != 2498 {
		t.Errorf("ingests: %d rejected, %d not written (%v)", rejected, unwritten, err)
	}
	if notes := strings.Join(sum.NoteLines(), "\n"); !strings.Contains(notes, "2,498 of them not written") {
		t.Errorf("notes:\n%s", notes)
	}
}

// TestLongRejectedRecordIsCut: a rejected line longer than the entry's
// limit is kept cut, with its length, in an entry of at most
// MaxRejectLine bytes; the rejects file stops at its size limit.
func TestLongRejectedRecordIsCut(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "long.jsonl"), "{"+strings.Repeat("<x\x01é", 100_000)+"\n")
	var many strings.Builder
	for range 50 {
		many.WriteString("{" + strings.Repeat("y", 10_000) + "\n")
	}
	write(t, filepath.Join(dir, "many.jsonl"), many.String())
	rejects := filepath.Join(t.TempDir(), "rejects.jsonl")
	defer func(old int64) { maxRejectsFileBytes = old }(maxRejectsFileBytes)
	maxRejectsFileBytes = 200_000
	sum, err := Validate(ctx, nil, []string{dir}, IngestOptions{SkipInvalid: true, RejectsPath: rejects})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(rejects)
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(b) > 200_000 || sum.Rejected != 51 || sum.RejectsTruncated != 1 || sum.RejectsUnwritten != 51-int64(len(lines)) || len(lines) < 10 {
		t.Fatalf("%d bytes, %d lines; rejected %d, truncated %d, not written %d", len(b), len(lines), sum.Rejected, sum.RejectsTruncated, sum.RejectsUnwritten)
	}
	var rec struct {
		Record    string `json:"record"`
		Truncated bool   `json:"record_truncated"`
		Bytes     int    `json:"record_bytes"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &rec); err != nil {
		t.Fatal(err)
	}
	if len(lines[0]) > MaxRejectLine || len(lines[0]) < MaxRejectLine/2 || !rec.Truncated || rec.Bytes != 1+500_000 || !strings.HasPrefix(rec.Record, "{<x\x01é<x") {
		t.Errorf("the long record's entry: %d bytes, truncated %v, record_bytes %d, starts %q", len(lines[0]), rec.Truncated, rec.Bytes, rec.Record[:min(10, len(rec.Record))])
	}
}
