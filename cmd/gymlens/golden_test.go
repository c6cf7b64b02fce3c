package main

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// timing matches the wall times and speeds commands print.
var timing = regexp.MustCompile(`in [0-9]+(\.[0-9]+)? s(, [0-9]+(\.[0-9]+)? MB/s)?`)

// Each command's exit status, stdout and stderr on a small sample
// warehouse are pinned by testdata/commands/NAME.txt (go test
// ./cmd/gymlens -run Golden -update rewrites them): a change in what a
// command prints, a number included, shows as a diff to review.
func TestGoldenCommandOutputs(t *testing.T) {
	t.Parallel()
	dir, db, corpus := sharedCopy(t, sampleKey{11, 3, true})
	bad := writeFile(t, dir, "bad.jsonl", `{"type":"run","run_id":"r1","scenario":"nowhere","persona":"p","rep":1,"config":{"model":"m","harness":"CD"}}
{"type":"event","run_id":"r1","seq":1,"t":"2026-03-02 18:00","actor":"user","kind":"message"}
`)
	ratings := writeFile(t, dir, "ratings.csv", "item,rater,value\n1,a,2\n1,b,2\n2,a,3\n2,b,4\n3,a,1\n3,b,1\n4,a,5\n4,b,4\n")
	B := "--resamples=200"
	cases := []struct {
		name string
		args []string
	}{
		{"metrics", []string{"metrics", "--by", "harness", B}},
		{"metrics.json", []string{"metrics", "--by", "harness", "--metrics", "TC,TR-J", B, "-f", "json"}},
		{"metrics.csv", []string{"metrics", "--by", "persona_group", B, "-f", "csv"}},
		{"metrics.md", []string{"metrics", "--by", "harness", B, "-f", "md"}},
		{"metrics.latex", []string{"metrics", "--by", "harness", "--metrics", "TC", B, "-f", "latex"}},
		{"compare.html", []string{"compare", "--harness-switch", "CC,CD", "--metrics", "TC", B, "-f", "html"}},
		{"agree-judges.md", []string{"agree", "--judges", "judge-gpt-5.6-luna,judge-qwen3.5-397b", B, "-f", "md"}},
		{"metrics-unknown-format", []string{"metrics", "-f", "xlsx"}},
		{"metrics-unknown-dimension", []string{"metrics", "--by", "colour"}},
		{"compare", []string{"compare", "--harness-switch", "CC,CD", B}},
		{"corr", []string{"corr", B}},
		{"power", []string{"power", "--metrics", "TC,TA"}},
		{"agree-judges", []string{"agree", "--judges", "judge-gpt-5.6-luna,judge-qwen3.5-397b", B}},
		{"agree-human", []string{"agree", "--human", B}},
		{"agree-input", []string{"agree", "--input", ratings, "--level", "ordinal", B}},
		{"agree-bias", []string{"agree", "--bias", "--families", filepath.Join(corpus, ".sample", "families.csv"), B}},
		{"compare-debias", []string{"compare", "--debias", "--families", filepath.Join(corpus, ".sample", "families.csv"), "--harness-switch", "CC,OC", B}},
		{"human", []string{"human", B}},
		{"table-main.latex", []string{"table", "main", "--format", "latex", B}},
		{"score", []string{"score"}},
		{"query.csv", []string{"query", "-f", "csv", "SELECT config_id, count(*) AS runs FROM run_view GROUP BY ALL ORDER BY ALL"}},
		{"query-write-refused", []string{"query", "DELETE FROM runs"}},
		{"validate-bad", []string{"validate", bad}},
		{"annotate-too-many", []string{"annotate", "sample", "-n", "100000000", "--out", filepath.Join(dir, "sheet.csv")}},
		{"annotate", []string{"annotate", "sample", "-n", "20", "--by", "harness", "--out", filepath.Join(dir, "sheet.csv")}},
		{"judge-dry-run", []string{"judge", "--metric", "tc,trj", "--judge", "g=org/model@http://127.0.0.1:9/v1", "--dry-run", "--limit", "10"}},
		{"judge-costs", []string{"judge", "--costs"}},
		{"plot", []string{"plot", "harness-comparison", "--out", filepath.Join(dir, "fig"), B}},
		{"sample", []string{"sample", "--out", filepath.Join(dir, "s2"), "--seed", "3"}},
		{"ingest-again", []string{"ingest", corpus}},
		{"validate-ok", []string{"validate", filepath.Join(corpus, "scenarios")}},
		{"notebook-unknown-command", []string{"notebook", "run", writeFile(t, dir, "nb.md", "# x\n\n```gymlens\nscore\n```\n"), "--out", filepath.Join(dir, "nb")}},
		{"pare-ingest", []string{"--db", filepath.Join(dir, "p.duckdb"), "ingest", pareFixtures, pareHandmade}},
		{"pare-decisions", []string{"--db", filepath.Join(dir, "p.duckdb"), "decisions"}},
		{"pare-reconcile", []string{"--db", filepath.Join(dir, "p.duckdb"), "reconcile"}},
		{"pare-metrics", []string{"--db", filepath.Join(dir, "p.duckdb"), "metrics", "--source", "pare", "--metrics", "success,pass@1,pare_pass@k", B}},
		{"pare-agree", []string{"--db", filepath.Join(dir, "p.duckdb"), "agree", "--pare"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := gymlens(t, append([]string{"--db", db}, c.args...)...) // a later --db wins
			root, _ := filepath.Abs(filepath.Join("..", ".."))
			clean := func(s string) string {
				s = strings.ReplaceAll(s, dir, "DIR")
				s = strings.ReplaceAll(s, filepath.Dir(corpus), "DIR") // the shared corpus, shown as DIR/c
				s = strings.ReplaceAll(s, root, "ROOT")
				return timing.ReplaceAllString(s, "in TIME")
			}
			got := fmt.Sprintf("$ gymlens %s\nexit %d\n--- stdout\n%s--- stderr\n%s", clean(strings.Join(c.args, " ")), code, clean(stdout), clean(stderr))
			goldenFile(t, filepath.Join("testdata", "commands", c.name+".txt"), []byte(got))
		})
	}
}
