package reports

import (
	"testing"

	"github.com/gymlens/gymlens/internal/sample"
)

// DemoCorpusLine is demo's line on its corpus: where, how many files and
// MB, and whether it was written now or reused.
func TestDemoCorpusLine(t *testing.T) {
	st := &sample.Stats{Files: 16, RecordBytes: 5_149_999}
	if got, want := DemoCorpusLine("out/corpus", st, false), "sample corpus: out/corpus (16 files, 5.1 MB; written)"; got != want {
		t.Errorf("written: %q, want %q", got, want)
	}
	if got, want := DemoCorpusLine("out/corpus", st, true), "sample corpus: out/corpus (16 files, 5.1 MB; reused: written before with the same seed and scale, and unchanged)"; got != want {
		t.Errorf("reused: %q, want %q", got, want)
	}
}
