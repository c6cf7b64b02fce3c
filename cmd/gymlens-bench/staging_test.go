package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var updateStaging = flag.Bool("update-staging", false, "rewrite testdata/staging.stdout")

// The staging summary pairs the k-th run of every arm (the #NN sub-benchmarks
// of one process) and prints the medians of the run-by-run ratios:
// testdata/staging.stdout was checked by hand (read_csv ÷ the peer, wall:
// 0.4, 0.5, 0.2, median 0.40; the table function ÷ read_csv: 0.75, 0.5, 2,
// median 0.75; validate_typed + typed_file ÷ the peer, CPU: 0.5, 0.55,
// 0.75, median 0.55).
func TestStagingSummary(t *testing.T) {
	in, err := os.Open(filepath.Join("testdata", "staging.bench"))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	runs, err := parseStaging(in)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	writeStaging(&out, runs)
	golden := filepath.Join("testdata", "staging.stdout")
	if *updateStaging {
		if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if out.String() != string(want) {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
}

// Input it cannot pair is refused, saying why.
func TestStagingRefuses(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"PASS\n", "no BenchmarkStaging lines"},
		{"BenchmarkStaging/read_csv-2 1 100 ns/op\n", "no read_ndjson_auto arm"},
		{"BenchmarkStaging/read_ndjson_auto-2 1 100 ns/op\nBenchmarkStaging/read_csv-2 1 100 ns/op\nBenchmarkStaging/read_ndjson_auto#01-2 1 100 ns/op\n",
			"arm read_csv has 1 runs, arm read_ndjson_auto 2"},
	} {
		_, err := parseStaging(strings.NewReader(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want an error saying %q", tc.in, err, tc.want)
		}
	}
}
