package layers

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/gymlens/gymlens/"

// deps lists the packages pkg depends on (go list -deps).
func deps(t *testing.T, pkg string) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", module+pkg).Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	return strings.Fields(string(out))
}

// Only ingest (and the commands) link DuckDB; the typed rows depend on
// nothing but the standard library; arrows point one way.
func TestLayers(t *testing.T) {
	noDuckDB := []string{"analysis", "plots", "reports", "ingest/rows", "ingest/runlog", "ingest/pare", "internal/mutate", "internal/sample"}
	for _, p := range noDuckDB {
		for _, d := range deps(t, p) {
			if strings.Contains(d, "duckdb") {
				t.Errorf("%s links DuckDB (through %s): only ingest may", p, d)
				break
			}
		}
	}
	for _, d := range deps(t, "ingest/rows") {
		if strings.Contains(d, ".") && d != module+"ingest/rows" {
			t.Errorf("ingest/rows depends on %s: it may depend on the standard library only", d)
		}
	}
	upward := map[string][]string{
		"ingest/rows": {"ingest", "analysis", "judge", "plots", "reports", "cmd"},
		"analysis":    {"judge", "plots", "reports", "cmd"},
		"plots":       {"reports", "judge", "cmd"},
		"reports":     {"cmd"},
		"ingest":      {"analysis", "judge", "plots", "reports", "cmd"},
	}
	for p, forbidden := range upward {
		for _, d := range deps(t, p) {
			if d == module+p {
				continue
			}
			for _, f := range forbidden {
				if d == module+f || strings.HasPrefix(d, module+f+"/") {
					t.Errorf("%s imports %s, a layer above it", p, d)
				}
			}
		}
	}
}
