package pare

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gymlens/gymlens/ingest/rows"
)

const handmade = "../testdata/pare"

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestReadPAREResults(t *testing.T) {
	dir := filepath.Join(handmade, "results", "base_full_user_gpt-5-mini_mt_10_umi_1_omi_5_emi_10")
	path := filepath.Join(dir, "obs_claude-4.5_exec_claude-4.5_enmi_0_es_42_tfp_0.0_result.json")
	rows, err := ReadPAREResults(path, readFile(t, path))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 13 {
		t.Fatalf("%d rows", len(rows))
	}
	r := rows[6] // apartment_feature_comparison_query run 4
	if r.Scenario != "apartment_feature_comparison_query" || *r.RunNumber != 4 || r.Status != "success" || *r.Success != 1 ||
		*r.Counts[4] != 9 || *r.AcceptanceRate != 100 || r.Line != 188 ||
		!strings.HasSuffix(r.ExportPath, "/apartment_feature_comparison_query_run_4.json") {
		t.Errorf("%+v", r)
	}
	if got := r.ConfigID(); got != "proactive_claude-4.5_claude-4.5 | gpt-5-mini" {
		t.Errorf("config %q", got)
	}
	if got := r.Key(); got != "apartment_feature_comparison_query_run_4 | proactive_claude-4.5_claude-4.5 | gpt-5-mini" {
		t.Errorf("key %q", got)
	}
	// Noise settings, when on, are part of the configuration.
	tfp, epm := 0.1, 2
	r.ToolFailure, r.EnvEvents = &tfp, &epm
	if r.Noise() != "tfp=0.1 epm=2" || r.ConfigID() != "proactive_claude-4.5_claude-4.5 | gpt-5-mini | tfp=0.1 epm=2" {
		t.Errorf("noise %q, config %q", r.Noise(), r.ConfigID())
	}
	comb := filepath.Join(dir, "combined_result.json")
	rep, err := ReadPARECombined(comb, readFile(t, comb))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Sections) != 2 || rep.Sections[0].Name != "proactive_claude-4.5_claude-4.5 | gpt-5-mini" || rep.Sections[0].Line != 9 ||
		rep.Sections[1].Name != "proactive_gpt-5_gpt-5 | gpt-5-mini" {
		t.Errorf("%+v", rep.Sections)
	}
}

func TestReadAREOutput(t *testing.T) {
	path := filepath.Join(handmade, "are", "standard", "execution", "output.jsonl")
	rows, err := ReadAREOutput(path, readFile(t, path))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 9 {
		t.Fatalf("%d rows", len(rows))
	}
	r := rows[7]
	if r.Scenario != "exec_c" || *r.RunNumber != 2 || r.Status != "exception" || r.Success != nil || !r.HasException ||
		r.ExceptionType != "ScenarioTimeoutError" || r.Line != 8 || r.Capability != "execution" || r.Phase != "standard" ||
		r.Model != "llama-4-maverick" || r.ConfigID() != "llama-4-maverick" || r.Noise() != "standard" {
		t.Errorf("%+v", r)
	}
	stats := filepath.Join(handmade, "are", "benchmark_stats.json")
	rep, err := ReadAREStats(stats, readFile(t, stats))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range rep.Sections {
		names = append(names, s.Name)
	}
	if rep.Model != "llama-4-maverick" || strings.Join(names, ",") != "execution,search,global" {
		t.Errorf("%s %v", rep.Model, names)
	}
}

// Bad result files: an error naming the file, the line and the field.
func TestBadResultFiles(t *testing.T) {
	row := `{"base_scenario_id": "s", "run_number": 1, "status": "success", "success_numeric": 1.0, "proactive_model": "p", "user_model": "u"}`
	for name, c := range map[string]struct {
		src  string
		read func(string, []byte) ([]Result, error)
		want string
	}{
		"truncated":    {"[\n" + row + ",\n{\"base_", ReadPAREResults, "truncated.json:3: not JSON"},
		"not a list":   {`{"a": 1}`, ReadPAREResults, "not a list.json:1: expected a list"},
		"status":       {"[\n" + strings.Replace(row, `"success",`, `"won",`, 1) + "]", ReadPAREResults, `status.json:2: field status: expected one of success, failed, exception, no_validation, found "won"`},
		"disagree":     {"[\n\n" + strings.Replace(row, `"success",`, `"failed",`, 1) + "]", ReadPAREResults, `:3: field success_numeric: is 1 but status is "failed"`},
		"count":        {"[" + strings.Replace(row, `"run_number": 1`, `"run_number": 1, "proposal_count": -2`, 1) + "]", ReadPAREResults, "field proposal_count: expected a count"},
		"fractional":   {"[" + strings.Replace(row, `"run_number": 1`, `"run_number": 1.5`, 1) + "]", ReadPAREResults, "field run_number: expected a count"},
		"scenario":     {`[{"status": "failed", "success_numeric": 0, "proactive_model": "p"}]`, ReadPAREResults, "field base_scenario_id: missing"},
		"probability":  {"[" + strings.Replace(row, `"run_number": 1`, `"run_number": 1, "tool_failure_probability": 5`, 1) + "]", ReadPAREResults, "tool_failure_probability: expected a probability"},
		"rate":         {"[" + strings.Replace(row, `"run_number": 1`, `"run_number": 1, "acceptance_rate": -1`, 1) + "]", ReadPAREResults, "acceptance_rate: a rate cannot be negative"},
		"are line":     {`{"task_id": "a", "score": 1.0}` + "\n{\"task_id\": ", ReadAREOutput, "are line.json:2: not JSON (truncated?)"},
		"are score":    {`{"task_id": "a", "score": 0.5}`, ReadAREOutput, "are score.json:1: field score: expected 1, 0 or null"},
		"are metadata": {`{"task_id": "a", "score": 1, "metadata": {"run_number": "x"}}`, ReadAREOutput, "field metadata.run_number: expected a number"},
		"are scenario": {`{"score": 1}`, ReadAREOutput, "field task_id: missing"},
	} {
		_, err := c.read(name+".json", []byte(c.src))
		var fe *FileError
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), name+".json") {
			t.Errorf("%s: %v; want %q", name, err, c.want)
		}
	}
	for name, c := range map[string]struct{ src, want string }{
		"no list":   {`{"metadata": {}}`, "field per_config_results: missing"},
		"stat":      {`{"per_config_results": [{"user_model": "u", "proactive_model": "p", "success_rate": "high"}]}`, `:1: field success_rate: expected a number, found "high"`},
		"duplicate": {"{\"per_config_results\": [\n{\"user_model\": \"u\", \"proactive_model\": \"p\"},\n{\"user_model\": \"u\", \"proactive_model\": \"p\"}]}", `:3: configuration "p | u" is also on line 2`},
	} {
		_, err := ReadPARECombined(name+".json", []byte(c.src))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want %q", name, err, c.want)
		}
	}
	if _, err := ReadAREStats("s.json", []byte(`{"statistics": {"per_capability": {"search": {"success_rate": "x"}}}}`)); err == nil ||
		!strings.Contains(err.Error(), "s.json:1: field statistics.search.success_rate: expected a number") {
		t.Errorf("stats: %v", err)
	}
	if _, err := ReadAREStats("s.json", []byte(`{"metadata": {}}`)); err == nil || !strings.Contains(err.Error(), "field statistics: missing") {
		t.Errorf("stats: %v", err)
	}
}

// The typed rows name the places of the stored counts as CountFields has them.
func TestCountPlaces(t *testing.T) {
	for place, name := range map[int]string{rows.CountProposals: "proposal_count", rows.CountAcceptances: "acceptance_count",
		rows.CountReads: "read_only_actions", rows.CountWrites: "write_actions", rows.CountTurns: "number_of_turns"} {
		if CountFields[place] != name {
			t.Errorf("place %d is %s in CountFields, %s in rows", place, CountFields[place], name)
		}
	}
}
