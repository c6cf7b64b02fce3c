package pare

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gymlens/gymlens/internal/mutate"
)

// PARE and Meta-ARE readers, fuzzed: records or an error naming the file,
// never a panic.

func seed(t testing.TB, path string) []byte {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func named(t *testing.T, err error, path string) {
	t.Helper()
	if err != nil && !strings.Contains(err.Error(), path) {
		t.Fatalf("error without its file: %v", err)
	}
}

func traceTarget(t *testing.T, b []byte) {
	_, err := ReadTrace("fuzz.json", b)
	named(t, err, "fuzz.json")
}

func resultsTarget(t *testing.T, b []byte) {
	_, err := ReadPAREResults("r.json", b)
	named(t, err, "r.json")
	_, err = ReadAREOutput(filepath.Join(t.TempDir(), "output.jsonl"), b)
	if err != nil && !strings.Contains(err.Error(), "output.jsonl") {
		t.Fatalf("error without its file: %v", err)
	}
	_, err = ReadPARECombined("c.json", b)
	named(t, err, "c.json")
	_, err = ReadAREStats("s.json", b)
	named(t, err, "s.json")
}

const resultsDir = "../testdata/pare/results/base_full_user_gpt-5-mini_mt_10_umi_1_omi_5_emi_10"

func FuzzPARETrace(f *testing.F) {
	f.Add(seed(f, "testdata/add_missing_group_contacts_run_1.json"))
	f.Add([]byte(`{"version": "are_simulation_v1", "completed_events": [], "world_logs": []}`))
	f.Fuzz(traceTarget)
}

func FuzzPAREResultFiles(f *testing.F) {
	f.Add(seed(f, resultsDir+"/combined_result.json"))
	f.Add(seed(f, resultsDir+"/obs_gpt-5_exec_gpt-5_enmi_0_es_42_tfp_0.0_result.json"))
	f.Add(seed(f, "../testdata/pare/are/benchmark_stats.json"))
	f.Add([]byte(`{"task_id": "s1", "trace_id": null, "score": 1, "metadata": {"scenario_id": "s1", "run_number": 1}}` + "\n"))
	f.Fuzz(resultsTarget)
}

// Seeded mutations of the seeds in every test run.
func TestPAREReadersOnMutatedInput(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: 360 seeded mutations beyond the fuzz corpus (the Fuzz targets' seeds still run)")
	}
	r := rand.New(rand.NewPCG(17, 2))
	trace := seed(t, "testdata/apartment_feature_comparison_query_run_4.json")
	results := [][]byte{seed(t, resultsDir+"/combined_result.json"), seed(t, resultsDir+"/obs_gpt-5_exec_gpt-5_enmi_0_es_42_tfp_0.0_result.json"),
		seed(t, "../testdata/pare/are/benchmark_stats.json")}
	for range 60 {
		traceTarget(t, mutate.Bytes(r, trace))
	}
	for i := range 300 {
		resultsTarget(t, mutate.Bytes(r, results[i%len(results)]))
	}
}
