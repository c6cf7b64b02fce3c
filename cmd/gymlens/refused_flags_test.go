package main

import (
	"strings"
	"testing"
)

// A shared option that a command does not use is refused, with its
// reason, before the warehouse is read — never taken and ignored.
func TestOptionsACommandDoesNotUseAreRefused(t *testing.T) {
	for _, args := range [][]string{
		{"variance", "--two-level"},
		{"variance", "--judge-noise"},
		{"power", "--judge-noise"},
		{"power", "--two-level"},
		{"rank", "--ci", "percentile"},
		{"rank", "--ci", "bca"},
		{"rank", "--ci", "expanded-percentile"},
		{"compare", "--two-level", "--harness-switch", "CC,OC"},
		{"corr", "--two-level"},
		{"power", "--resamples", "200"},
		{"power", "--seed", "2"},
		{"power", "--level", "0.9"},
		{"power", "--ci", "bca"},
		{"table", "--layout", "page", "main"},
	} {
		code, _, stderr := gymlens(t, append([]string{"--db", "none.duckdb"}, args...)...)
		flag := args[1]
		if code != 2 || !strings.Contains(stderr, args[0]+" "+flag+" does not apply: ") || strings.Contains(stderr, "no warehouse") {
			t.Errorf("%v: exit %d, %q", args, code, stderr)
		}
	}
	// plot writes figures: a results format is a usage error.
	if code, _, stderr := gymlens(t, "--db", "none.duckdb", "plot", "rank", "--out", t.TempDir(), "-f", "json"); code != 2 || !strings.Contains(stderr, "--format") {
		t.Errorf("plot -f json: exit %d, %q", code, stderr)
	}
	// The same options where they apply are taken: the error is then the
	// missing warehouse.
	for _, args := range [][]string{{"metrics", "--two-level"}, {"metrics", "--judge-noise"}, {"compare", "--harness-switch", "CC,OC", "--ci", "bca"},
		{"table", "main", "--layout", "page", "-f", "latex"}} {
		code, _, stderr := gymlens(t, append([]string{"--db", "none.duckdb"}, args...)...)
		if code == 2 || strings.Contains(stderr, "does not apply") {
			t.Errorf("%v: exit %d, %q", args, code, stderr)
		}
	}
}
