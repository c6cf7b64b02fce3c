package ingest

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/gymlens/gymlens/internal/sample"
)

// Reading every run for its metric values (docs/benchmarks.md, "The runs'
// stored inputs read by their rows"): LoadRunsWith with dropTasks, from
// the stored inputs of a sample warehouse of 26 configurations (2,340
// runs); and the decoding of those runs' inputs alone, into an arena
// reused from run to run.
//
//	go test ./ingest -run '^$' -bench 'LoadRuns|DecodeInputs'
func BenchmarkLoadRuns(b *testing.B) {
	w := benchWarehouse(b)
	visited := 0
	for b.Loop() {
		if _, err := w.LoadRunsWith(context.Background(), func(int, *RunRow) { visited++ }, true); err != nil {
			b.Fatal(err)
		}
	}
	if visited == 0 {
		b.Fatal("no run read")
	}
}

func BenchmarkDecodeInputs(b *testing.B) {
	w := benchWarehouse(b)
	runs, err := w.LoadRuns(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	enc := make([][]byte, len(runs))
	var n int64
	for i := range runs {
		enc[i] = encodeInputs(nil, &runs[i])
		n += int64(len(enc[i]))
	}
	b.SetBytes(n)
	var a inputsArena
	var strs []string
	in := interner{}
	for b.Loop() {
		for _, e := range enc {
			var r RunRow
			if strs, err = decodeInputs(e, &r, in, strs[:0], &a); err != nil {
				b.Fatal(err)
			}
			a.reuse()
		}
	}
}

func benchWarehouse(b *testing.B) *Warehouse {
	b.Helper()
	dir := b.TempDir()
	if _, err := sample.Write(filepath.Join(dir, "c"), sample.Options{Seed: 1}); err != nil {
		b.Fatal(err)
	}
	w, err := Open(context.Background(), filepath.Join(dir, "w.duckdb"), OpenOptions{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { w.Close() })
	if _, err := w.Ingest(context.Background(), []string{filepath.Join(dir, "c")}, IngestOptions{}); err != nil {
		b.Fatal(err)
	}
	if !w.RunInputsFresh(context.Background()) {
		b.Fatal("the run inputs are not fresh after the ingest")
	}
	return w
}
