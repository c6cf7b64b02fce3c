package inspect

import (
	"path/filepath"
	"testing"

	"github.com/gymlens/gymlens/internal/sample"
)

type nullSink struct{}

func (nullSink) Begin(*Eval) error         { return nil }
func (nullSink) Item(*Sample, *Item) error { return nil }
func (nullSink) Sample(*Sample) error      { return nil }
func (nullSink) End(*Eval) error           { return nil }

// BenchmarkReadEval reads a generated .eval of 20 samples (about 14 MB
// of JSON); its MB/s is of uncompressed JSON.
func BenchmarkReadEval(b *testing.B) {
	p := filepath.Join(b.TempDir(), "b.eval")
	n, err := sample.WriteInspectEval(p, sample.InspectOptions{Samples: 20, Epochs: 1, Items: 200, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(n)
	for b.Loop() {
		if err := ReadFile(p, nullSink{}); err != nil {
			b.Fatal(err)
		}
	}
}
