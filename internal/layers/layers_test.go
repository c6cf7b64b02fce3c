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
	if testing.Short() {
		t.Skip("-short: runs go list -deps, a process of its own, per package")
	}
	out, err := exec.Command("go", "list", "-deps", module+pkg).Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	return strings.Fields(string(out))
}

// Only ingest (and the commands) link DuckDB; the typed rows depend on
// nothing but the standard library; arrows point one way: cmd → reports →
// plots → analysis → typed rows, the judge beside them on the typed rows,
// and ingest (the one door to the warehouse) below none of them.
func TestLayers(t *testing.T) {
	noDuckDB := []string{"analysis", "analysis/stat", "plots", "reports", "serve", "judge", "ingest/rows", "ingest/runlog", "ingest/pare", "internal/mutate", "internal/sample"}
	for _, p := range noDuckDB {
		for _, d := range deps(t, p) {
			if strings.Contains(d, "duckdb") {
				t.Errorf("%s links DuckDB (through %s): only ingest may", p, d)
				break
			}
		}
	}
	// The generic statistics stand on gonum and nothing of gymlens.
	for _, d := range deps(t, "analysis/stat") {
		if strings.HasPrefix(d, module) && d != module+"analysis/stat" {
			t.Errorf("analysis/stat depends on %s: it is generic and may depend on gonum only", d)
		}
	}
	for _, d := range deps(t, "ingest/rows") {
		if strings.Contains(d, ".") && d != module+"ingest/rows" {
			t.Errorf("ingest/rows depends on %s: it may depend on the standard library only", d)
		}
	}
	upward := map[string][]string{
		"ingest/rows": {"ingest", "analysis", "judge", "plots", "reports", "cmd"},
		"analysis":    {"judge", "plots", "reports", "cmd", "ingest"},
		"reports":     {"cmd", "judge", "ingest", "serve"},
		"judge":       {"ingest", "analysis", "plots", "reports", "cmd"},
		"plots":       {"reports", "judge", "cmd", "ingest"},
		"ingest":      {"analysis", "judge", "plots", "reports", "serve", "cmd"},
		"serve":       {"cmd", "judge", "ingest"}, // the warehouse through an interface
	}
	for p, forbidden := range upward {
		for _, d := range deps(t, p) {
			if d == module+p || d == module+"ingest/rows" { // the typed rows are everyone's
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
