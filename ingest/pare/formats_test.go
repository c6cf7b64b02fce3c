package pare

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gymlens/gymlens/ingest/runlog"
)

// Discovery gives each PARE file its kind from what it holds, afresh each
// time: the same path rewritten in another format is classified anew.
func TestDiscoveryKinds(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "x.json")
	for _, c := range []struct {
		text string
		want runlog.Kind
	}{
		{`[{"base_scenario_id": "s", "run_number": 1}]`, KindResults},
		{`{"world_logs": [], "metadata": {}}`, KindTrace},
		{`{"per_config_results": {}}`, KindCombined},
		{`{"statistics": {"per_capability": {}}}`, KindAREStats},
	} {
		if err := os.WriteFile(p, []byte(c.text), 0o644); err != nil {
			t.Fatal(err)
		}
		files, _, err := runlog.Discover([]string{p})
		if err != nil || len(files) != 1 || files[0].Kind != c.want {
			t.Errorf("%s: %v %v, want %v", c.text, files, err, c.want)
		}
	}
	csvPath := filepath.Join(dir, "a.csv")
	os.WriteFile(csvPath, []byte("sample_id,annotator_id,human_decision\ns1,a,accept\n"), 0o644)
	if files, _, err := runlog.Discover([]string{csvPath}); err != nil || files[0].Kind != KindAnnotations || files[0].Kind.String() != "pare_annotations" {
		t.Errorf("annotation CSV: %v %v", files, err)
	}
}
