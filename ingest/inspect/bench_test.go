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

// The generated logs the benchmark reads are logs this reader reads
// whole, in both layouts.
func TestReadGeneratedLogs(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: generates two logs of some 6 MB each")
	}
	for _, chunked := range []bool{false, true} {
		p := filepath.Join(t.TempDir(), "g.eval")
		opt := sample.InspectOptions{Samples: 1, Epochs: 2, Items: 1001, Chunked: chunked, Seed: 1}
		if _, err := sample.WriteInspectEval(p, opt); err != nil {
			t.Fatal(err)
		}
		r := read(t, p)
		if len(r.samples) != 2 || r.items[KindEvent] != 2*1001 || r.samples[0].MessageCount != 1001 || len(r.samples[0].Scores) != 1 {
			t.Errorf("chunked %v: %d samples, items %v, %+v", chunked, len(r.samples), r.items, r.samples[0])
		}
	}
}
