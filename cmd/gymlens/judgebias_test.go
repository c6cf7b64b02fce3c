package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// On the sample corpus, whose third judge (Claude) is made to favour
// Claude agents by 0.3 on TR-J: agree --bias finds it inside its
// interval, compare --debias leaves the two compared families' judges
// out and notes where a conclusion changes, the report gains the
// judge-bias tables, and a name missing from the families file is
// refused with its name.
func TestJudgeBiasOnTheSample(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("ingests the whole sample corpus")
	}
	dir, db, corpus := sharedSample(t, 1, 0)
	families := filepath.Join(corpus, ".sample", "families.csv")
	code, out, stderr := gymlens(t, "--db", db, "agree", "--bias", "--families", families, "--resamples", "500", "-f", "json")
	if code != 0 {
		t.Fatal(stderr)
	}
	var res struct {
		SelfPreference []struct {
			Judge, Score string
			Value        float64 `json:"self_preference"`
			Lo           float64 `json:"ci_low"`
			Hi           float64 `json:"ci_high"`
		} `json:"self_preference"`
		Length []struct{ Judge, Reference, Score string } `json:"length"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err, out)
	}
	found := false
	for _, s := range res.SelfPreference {
		if s.Judge == "judge-sonnet-5" && s.Score == "TRJ" {
			found = true
			if !(s.Lo <= 0.3 && 0.3 <= s.Hi+0.05) || s.Lo <= 0 {
				t.Errorf("the Claude judge's self-preference on TR-J: %.3f [%.3f, %.3f], planted 0.3 (before rounding and clamping)", s.Value, s.Lo, s.Hi)
			}
		}
	}
	if !found || len(res.Length) == 0 {
		t.Errorf("self-preference %v, length %v", res.SelfPreference, res.Length)
	}

	code, out, stderr = gymlens(t, "--db", db, "compare", "--debias", "--families", families, "--resamples", "500",
		"Claude Opus 5 | OC | none", "GPT 5.6 Sol | OC | none")
	if code != 0 {
		t.Fatal(stderr)
	}
	for _, want := range []string{"judge-gpt-5.6-luna, judge-sonnet-5", "leave-family-out", "PPI-corrected"} {
		if !strings.Contains(out, want) {
			t.Errorf("compare --debias lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(stderr, "no correction for the items' length") {
		t.Errorf("stderr: %s", stderr)
	}

	// A model missing from the families file is refused with its name.
	short := filepath.Join(dir, "families.csv")
	b, _ := os.ReadFile(families)
	if err := os.WriteFile(short, []byte(strings.Replace(string(b), "Gemma 4 12B,Gemma\n", "", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := gymlens(t, "--db", db, "agree", "--bias", "--families", short, "--resamples", "100"); code == 0 || !strings.Contains(stderr, `"Gemma 4 12B"`) {
		t.Errorf("exit %d: %s", code, stderr)
	}
	// What does not apply is refused, with a usage error.
	for _, args := range [][]string{
		{"agree", "--judges", "judge-gpt-5.6-luna,judge-qwen3.5-397b", "--families", families},
		{"agree", "--bias"},
		{"agree", "--bias", "--families", families, "--judge", "judge-sonnet-5"},
		{"compare", "--debias", "Claude Opus 5 | OC | none", "GPT 5.6 Sol | OC | none"},
		{"compare", "--families", families, "Claude Opus 5 | OC | none", "GPT 5.6 Sol | OC | none"},
		{"compare", "--debias", "--families", families, "--judge", "judge-sonnet-5", "Claude Opus 5 | OC | none", "GPT 5.6 Sol | OC | none"},
		{"table", "main", "--families", families},
	} {
		if code, _, stderr := gymlens(t, append([]string{"--db", db}, args...)...); code != 2 {
			t.Errorf("%v: exit %d, want 2: %s", args, code, stderr)
		}
	}

	rep := filepath.Join(dir, "report")
	if code, _, stderr := gymlens(t, "--db", db, "report", "--out", rep, "--families", families, "--resamples", "200"); code != 0 {
		t.Fatal(stderr)
	}
	for _, f := range []string{"judge-bias-self-preference.md", "judge-bias-length.md"} {
		if _, err := os.Stat(filepath.Join(rep, "tables", f)); err != nil {
			t.Error(err)
		}
	}
	html, _ := os.ReadFile(filepath.Join(rep, "index.html"))
	if !strings.Contains(string(html), "Judge self-preference") {
		t.Error("index.html has no judge-bias section")
	}
}
