package main

import (
	"strings"
	"testing"
)

// Every command the benchmark binary runs is in its usage, which `help`
// prints.
func TestUsageListsEveryCommand(t *testing.T) {
	names := []string{"help", "ingest"}
	for n := range benches {
		names = append(names, n)
	}
	for _, n := range names {
		if !strings.Contains(usage, "gymlens-bench "+n+" ") && !strings.Contains(usage, "gymlens-bench "+n+"\n") {
			t.Errorf("usage lacks %s", n)
		}
	}
}
