package ingest

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/gymlens/gymlens/internal/sample"
)

// Most tests need a sample warehouse to read or change, not an ingest to
// watch. Each kind is ingested once per test binary, and every test gets a
// copy of the file: a copy takes milliseconds, an ingest about a second.
// The tests that watch an ingest ingest their own.

// sampleKind names one shared warehouse.
type sampleKind struct {
	seed    uint64
	configs int
	version int  // the schema version written, 0 the latest
	runs    bool // the scenarios and runs only, without the judgments
}

type sampleBuild struct {
	once       sync.Once
	db, corpus string
	err        error
}

var shared struct {
	sync.Mutex
	dir string // made and removed by TestMain
	by  map[sampleKind]*sampleBuild
}

// sampleCopy returns a copy of the warehouse of kind k, closed, in a folder
// of the test's own, and the folder of the corpus it was ingested from,
// which the test must not change.
func sampleCopy(t testing.TB, k sampleKind) (db, corpus string) {
	t.Helper()
	shared.Lock()
	if shared.by == nil {
		shared.by = map[sampleKind]*sampleBuild{}
	}
	b := shared.by[k]
	if b == nil {
		b = &sampleBuild{}
		shared.by[k] = b
	}
	shared.Unlock()
	b.once.Do(func() { b.db, b.corpus, b.err = buildSample(k) })
	if b.err != nil {
		t.Fatal(b.err)
	}
	db = filepath.Join(t.TempDir(), "w.duckdb")
	if err := sample.CopyFile(db, b.db); err != nil {
		t.Fatal(err)
	}
	return db, b.corpus
}

func buildSample(k sampleKind) (db, corpus string, err error) {
	if shared.dir == "" {
		return "", "", fmt.Errorf("no folder for the shared warehouses: TestMain makes it")
	}
	d, err := os.MkdirTemp(shared.dir, "sample-")
	if err != nil {
		return "", "", err
	}
	corpus = filepath.Join(d, "c")
	if _, err := sample.Write(corpus, sample.Options{Seed: k.seed, Configs: k.configs}); err != nil {
		return "", "", err
	}
	paths := []string{corpus}
	if k.runs {
		paths = []string{filepath.Join(corpus, "scenarios"), filepath.Join(corpus, "runs")}
	}
	db = filepath.Join(d, "w.duckdb")
	w, err := Open(ctx, db, OpenOptions{SchemaVersion: k.version})
	if err != nil {
		return "", "", err
	}
	if _, err := w.Ingest(ctx, paths, IngestOptions{}); err != nil {
		w.Close()
		return "", "", err
	}
	if err := w.Close(); err != nil {
		return "", "", err
	}
	// Closing checkpoints: the file alone is the warehouse.
	if _, err := os.Stat(db + ".wal"); err == nil {
		return "", "", fmt.Errorf("%s.wal is left after closing: a copy of the file alone would lose it", db)
	}
	return db, corpus, nil
}

// SampleCopy is sampleCopy for the package's external tests: the sample
// of the seed and configurations, its scenarios and runs alone, or with
// its judgments too.
func SampleCopy(t testing.TB, seed uint64, configs int, runsOnly bool) (db, corpus string) {
	t.Helper()
	return sampleCopy(t, sampleKind{seed: seed, configs: configs, runs: runsOnly})
}
