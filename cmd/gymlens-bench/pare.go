package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

// benchPARE ingests copies of PARE's fixture traces under new scenario
// ids (so that every copy is a run of its own) and prints MB/s.
func benchPARE(args []string) error {
	fl := flag.NewFlagSet("pare", flag.ExitOnError)
	n := fl.Int("traces", 1000, "traces to ingest")
	src := fl.String("fixtures", filepath.Join("ingest", "pare", "testdata"), "folder of PARE traces to copy")
	fl.Parse(args)
	dir, err := os.MkdirTemp("", "gymlens-bench-pare-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	names, _ := filepath.Glob(filepath.Join(*src, "*.json"))
	if len(names) == 0 {
		return fmt.Errorf("no traces in %s (run from the repository's root)", *src)
	}
	var originals [][]byte
	for _, p := range names {
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		originals = append(originals, b)
	}
	traces := filepath.Join(dir, "traces")
	os.MkdirAll(traces, 0o755)
	var total int64
	for i := 0; i < *n; i++ {
		b := originals[i%len(originals)]
		// A new scenario id: the same bytes otherwise.
		b = bytes.Replace(b, []byte(`"scenario_id": "`), []byte(fmt.Sprintf(`"scenario_id": "copy%05d_`, i)), 1)
		p := filepath.Join(traces, fmt.Sprintf("trace_%05d.json", i))
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return err
		}
		total += int64(len(b))
	}
	wall, rss, err := measure("ingest", filepath.Join(dir, "w.duckdb"), traces)
	if err != nil {
		return err
	}
	fmt.Printf("gymlens ingest of %d PARE traces (%.1f MB): %.2f s, %.1f MB/s, peak RSS %d MB (target ≥ 100 MB/s)\n",
		*n, float64(total)/1e6, wall.Seconds(), float64(total)/1e6/wall.Seconds(), rss>>20)
	return nil
}
