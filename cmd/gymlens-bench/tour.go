package main

import (
	"crypto/sha256"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/gymlens/gymlens/internal/openaitest"
)

// benchTour runs every command of the README's tour, each paper table in
// every format, every figure, the report and the notebooks on the sample
// corpus (and the PARE files of the repository's testdata), and stores what
// each printed and wrote under --out: one NNN-name.txt per step with the
// command line, exit status, stdout and stderr, and the SHA-256 of every
// file it wrote. Two trees from two builds compare with diff -r; the
// restructure is checked that way (docs/architecture.md).
//
// The judge runs against the in-process OpenAI-compatible server; its
// address is written as ENDPOINT, and wall times as TIME, so that two runs
// compare. What still differs between two runs of the same build is the
// time of day stored in the warehouse: the exports of ingests,
// ingested_files and task_scores.
func benchTour(args []string) error {
	fl := flag.NewFlagSet("tour", flag.ExitOnError)
	out := fl.String("out", "", "folder for the outputs (required; made afresh)")
	bin := fl.String("bin", "", "gymlens binary (default: built from ./cmd/gymlens)")
	fl.Parse(args)
	if *out == "" {
		return fmt.Errorf("tour: --out DIR is required")
	}
	root, err := os.Getwd()
	if err != nil {
		return err
	}
	outDir, err := filepath.Abs(*out)
	if err != nil {
		return err
	}
	if err := os.RemoveAll(outDir); err != nil {
		return err
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "gymlens-tour-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	gl := *bin
	if gl == "" {
		gl = filepath.Join(work, "gymlens")
		if err := buildGymlens(gl); err != nil {
			return err
		}
	} else if gl, err = filepath.Abs(gl); err != nil {
		return err
	}
	srv := openaitest.New()
	defer srv.Close()
	endpoint := srv.URL + "/v1"

	ratings := "item,rater,value\n1,a,low\n1,b,low\n1,c,mid\n2,a,mid\n2,b,high\n2,c,mid\n3,a,high\n3,b,high\n3,c,high\n4,a,low\n4,b,mid\n4,c,low\n"
	if err := os.WriteFile(filepath.Join(work, "ratings.csv"), []byte(ratings), 0o644); err != nil {
		return err
	}
	pareA := filepath.Join(root, "ingest", "pare", "testdata")
	pareB := filepath.Join(root, "ingest", "testdata", "pare")

	type step struct {
		name string
		args []string
	}
	db := []string{"--db", "runs.duckdb"}
	pdb := []string{"--db", "pare.duckdb"}
	var steps []step
	add := func(name string, args ...string) { steps = append(steps, step{name, args}) }
	formats := func(name string, args ...string) {
		for _, f := range []string{"table", "json", "csv"} {
			add(name+"."+f, append(append(append([]string{}, db...), args...), "-f", f)...)
		}
	}
	add("help", "--help")
	add("sample", "sample", "--out", "corpus", "--seed", "7")
	add("validate", "validate", "corpus")
	add("ingest", append(db, "ingest", "corpus")...)
	add("ingest-again", append(db, "ingest", "corpus")...)
	formats("query", "query", "SELECT config_id, count(*) AS runs FROM run_view GROUP BY ALL ORDER BY ALL")
	formats("score", "score")
	formats("judge-dry-run", "judge", "--metric", "tc,ta,trj", "--judge", "tour=fake@"+endpoint, "--dry-run", "--limit", "40")
	formats("metrics", "metrics", "--by", "harness,persona_group")
	formats("metrics-all", "metrics", "--metrics", "all", "--by", "model", "--resamples", "2000")
	formats("metrics-bca", "metrics", "--by", "harness", "--ci", "bca", "--resamples", "2000")
	formats("compare", "compare", "--harness-switch", "CC,OC")
	formats("corr", "corr")
	formats("agree-judges", "agree", "--judges", "judge-gpt-5.6-luna,judge-qwen3.5-397b")
	formats("agree-human", "agree", "--human")
	for _, f := range []string{"table", "json", "csv"} {
		add("agree-input."+f, "agree", "--input", "ratings.csv", "--level", "ordinal", "--categories", "low,mid,high", "-f", f)
	}
	formats("human", "human")
	for _, t := range []string{"main", "tc-components", "ta-components", "trj-constructs", "judge-agreement", "judge-human", "correlations", "by-scenario", "by-persona"} {
		for _, f := range []string{"latex", "md", "csv", "html"} {
			a := append(append([]string{}, db...), "table", t, "--format", f)
			if t == "judge-agreement" {
				a = append(a, "--judges", "judge-gpt-5.6-luna,judge-qwen3.5-397b")
			}
			add("table-"+t+"."+f, a...)
		}
	}
	add("table-main-intervals.latex", append(db, "table", "main", "--intervals", "--format", "latex")...)
	for _, p := range []string{"model-size", "harness-switch", "correlations", "harness-comparison", "effort", "by-scenario", "by-persona", "human-trust"} {
		add("plot-"+p, append(db, "plot", p, "--out", "figures")...)
	}
	add("report", append(db, "report", "--out", "report")...)
	for _, nb := range []string{"main-analyses", "personas-and-scenarios", "judge-vs-human"} {
		add("notebook-"+nb, append(db, "notebook", "run", filepath.Join(root, "notebooks", nb+".md"), "--out", "nb-"+nb)...)
	}
	add("annotate", append(db, "annotate", "sample", "-n", "200", "--by", "scenario", "--seed", "1", "--out", "sheet.csv")...)
	add("export-parquet", append(db, "export", "--format", "parquet", "--out", "export-parquet")...)
	add("export-arrow", append(db, "export", "--format", "arrow", "--out", "export-arrow")...)
	// The judge last on runs.duckdb: a third judge changes what the steps
	// above see.
	add("judge", append(db, "judge", "--metric", "tc,ta,trj", "--judge", "tour=fake@"+endpoint, "--limit", "40")...)
	formats("judge-costs", "judge", "--costs")
	formats("metrics-judge", "metrics", "--by", "harness", "--judge", "tour", "--resamples", "2000")
	add("pare-ingest", append(pdb, "ingest", pareA, pareB)...)
	for _, f := range []string{"table", "json", "csv"} {
		add("pare-decisions."+f, append(pdb, "decisions", "-f", f)...)
		add("pare-reconcile."+f, append(pdb, "reconcile", "-f", f)...)
		add("pare-metrics."+f, append(pdb, "metrics", "--source", "pare", "--metrics", "success,pass@1,pass@3,pare_pass@k", "-f", f)...)
		add("pare-compare."+f, append(pdb, "compare", "--source", "pare", "proactive_claude-4.5_claude-4.5 | gpt-5-mini",
			"proactive_gpt-5_gpt-5 | gpt-5-mini", "--metrics", "success,pass@1,pass@k,pooled_acceptance_rate", "--resamples", "2000", "-f", f)...)
		add("pare-agree."+f, append(pdb, "agree", "--pare", "-f", f)...)
	}
	add("notebook-pare", append(pdb, "notebook", "run", filepath.Join(root, "notebooks", "pare.md"), "--out", "nb-pare")...)
	add("demo", "demo")
	add("demo-again", "demo")

	clean := func(t string) string {
		t = strings.ReplaceAll(t, endpoint, "ENDPOINT")
		t = strings.ReplaceAll(t, work, "WORK")
		t = strings.ReplaceAll(t, root, "ROOT")
		return timing.ReplaceAllString(t, "in TIME")
	}
	for i, s := range steps {
		before := listFiles(work, clean)
		cmd := exec.Command(gl, s.args...)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "GYMLENS_DB=", "NO_COLOR=1")
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		runErr := cmd.Run()
		code := 0
		if runErr != nil {
			if ee, ok := runErr.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else {
				return fmt.Errorf("%s: %v", s.name, runErr)
			}
		}
		var b strings.Builder
		fmt.Fprintf(&b, "$ gymlens %s\nexit %d\n--- stdout\n%s--- stderr\n%s", clean(strings.Join(s.args, " ")), code, clean(stdout.String()), clean(stderr.String()))
		after := listFiles(work, clean)
		var wrote []string
		for p, sum := range after {
			if before[p] != sum && !strings.HasSuffix(p, ".duckdb") && !strings.HasSuffix(p, ".wal") && !strings.HasSuffix(p, ".jsonl.lock") {
				wrote = append(wrote, p+"  "+sum)
			}
		}
		sort.Strings(wrote)
		if len(wrote) > 0 {
			fmt.Fprintf(&b, "--- files written\n%s\n", strings.Join(wrote, "\n"))
		}
		name := fmt.Sprintf("%03d-%s.txt", i+1, s.name)
		if err := os.WriteFile(filepath.Join(outDir, name), []byte(b.String()), 0o644); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "%-40s exit %d\n", name, code)
	}
	return nil
}

// timing matches the wall times and speeds that commands print, which
// differ between runs.
var timing = regexp.MustCompile(`in [0-9]+(\.[0-9]+)? s(, [0-9]+(\.[0-9]+)? MB/s)?`)

// hashCache keeps each file's SHA-256 by path, size and modification time,
// so that the corpus is hashed once, not once per step.
var hashCache = map[string]string{}

// listFiles maps every regular file under dir (relative path) to its
// SHA-256, leaving out the gymlens binary the tour built there. Text files
// (a report's manifest and page, which name the warehouse and the inputs
// by absolute path) are hashed after clean.
func listFiles(dir string, clean func(string) string) map[string]string {
	m := map[string]string{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		if rel == "gymlens" {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		key := fmt.Sprintf("%s\x00%d\x00%d", p, info.Size(), info.ModTime().UnixNano())
		if sum, ok := hashCache[key]; ok {
			m[rel] = sum
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil
		}
		switch filepath.Ext(p) {
		case ".json", ".html", ".md", ".csv", ".tex", ".txt":
			if len(b) < 64<<20 {
				b = []byte(clean(string(b)))
			}
		}
		m[rel] = fmt.Sprintf("%x", sha256.Sum256(b))
		hashCache[key] = m[rel]
		return nil
	})
	return m
}
