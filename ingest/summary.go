package ingest

import (
	"fmt"
	"sort"
	"strings"

	"github.com/gymlens/gymlens/ingest/rows"
)

// RecordTypes are the kinds of record an ingest counts, in the order a
// summary names them.
var RecordTypes = []string{"scenario", "run", "event", "task", "judgment", "rating", "pare_run", "pare_event", "decision_point",
	"pare_sample", "pare_annotation", "pare_result", "pare_report", "inspect_eval", "inspect_sample", "inspect_score", "inspect_item"}

// Line says in one line what was ingested (verb: "ingested", "valid"):
// files, megabytes, time, speed and the records of each kind.
func (s *Summary) Line(verb string) string {
	secs, mbps := s.speed()
	var parts []string
	for _, t := range RecordTypes {
		if n := s.Records[t]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %s", thousands(n), strings.ReplaceAll(plural(t, n), "_", " ")))
		}
	}
	if len(parts) == 0 {
		parts = append(parts, "no new records")
	}
	rejected := fmt.Sprintf("%d rejected", s.Rejected)
	if s.RejectsUnwritten > 0 {
		rejected += fmt.Sprintf(" (%s not in the rejects file)", thousands(s.RejectsUnwritten))
	}
	if s.Files == 0 { // nothing read but hashes: no speed to speak of
		return fmt.Sprintf("%s 0 files in %.2f s: %s; %s", verb, secs, strings.Join(parts, ", "), rejected)
	}
	return fmt.Sprintf("%s %d files (%.1f MB) in %.2f s, %.1f MB/s: %s; %s",
		verb, s.Files, float64(s.Bytes)/1e6, secs, mbps, strings.Join(parts, ", "), rejected)
}

func (s *Summary) speed() (secs, mbps float64) {
	secs = s.Elapsed.Seconds()
	if secs > 0 {
		mbps = float64(s.Bytes) / 1e6 / secs
	}
	return secs, mbps
}

// Record is the summary as one record: its columns and values.
func (s *Summary) Record() ([]string, []any) {
	secs, mbps := s.speed()
	cols := []string{"files", "bytes", "seconds", "mb_per_s", "runs", "replaced", "rejected", "rejects_file", "rejects_unwritten", "rejects_truncated",
		"unchanged_files", "empty_files", "skipped_files"}
	row := []any{s.Files, s.Bytes, secs, mbps, s.Runs, s.Replaced, s.Rejected, s.RejectsPath, s.RejectsUnwritten, s.RejectsTruncated,
		len(s.Unchanged), len(s.Empty), len(s.Skipped)}
	for _, t := range RecordTypes {
		cols = append(cols, t+"_records", t+"_identical")
		row = append(row, s.Records[t], s.Identical[t])
	}
	return cols, row
}

// NoteLines are what deserves a word: files skipped, empty or not read,
// records already stored, replaced or rejected.
func (s *Summary) NoteLines() []string {
	var out []string
	if n := len(s.Unchanged); n > 0 {
		out = append(out, fmt.Sprintf("%d files unchanged since an earlier ingest (same content): skipped", n))
	}
	for _, f := range s.Empty {
		out = append(out, fmt.Sprintf("%s is empty: nothing to ingest", f))
	}
	for _, sk := range s.Skipped {
		out = append(out, fmt.Sprintf("%s not read: %s", sk.Path, sk.Reason))
	}
	out = append(out, s.Notes...)
	var ids []string
	for t, n := range s.Identical {
		if n > 0 {
			ids = append(ids, fmt.Sprintf("%s %s", thousands(n), plural(t, n)))
		}
	}
	sort.Strings(ids)
	if len(ids) > 0 {
		out = append(out, "already stored with the same content, not loaded again: "+strings.Join(ids, ", "))
	}
	if s.Replaced > 0 {
		out = append(out, fmt.Sprintf("%d runs or scenarios replaced", s.Replaced))
	}
	if s.Rejected > 0 {
		out = append(out, fmt.Sprintf("%d records rejected; see %s", s.Rejected, s.RejectsPath))
	}
	if s.RejectsUnwritten > 0 {
		out = append(out, fmt.Sprintf("%s of them not written to %s: it keeps the first %s entries of each input file, %d MiB in all (--max-rejects)",
			thousands(s.RejectsUnwritten), s.RejectsPath, thousands(int64(s.MaxRejects)), MaxRejectsFileBytes>>20))
	}
	if s.RejectsTruncated > 0 {
		out = append(out, fmt.Sprintf("%s rejected records longer than an entry of %s allows (%d KiB) written cut (record_truncated)",
			thousands(s.RejectsTruncated), s.RejectsPath, MaxRejectLine>>10))
	}
	return out
}

func plural(t string, n int64) string {
	if n == 1 {
		return t
	}
	return t + "s"
}

func thousands(n int64) string { return rows.Thousands(n) }
