package main

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v3"
)

// Every flag of every reading command, taken from the CLI's own
// definitions, either changes what the command prints or writes, or is
// refused with a usage error (exit 2): none is accepted and ignored
// (issue 55, item 3). A flag a reading command gains is covered at once:
// it needs a value below to try, or the test fails. The commands that are
// not reading commands (ingest, judge, serve, …) have their flags listed
// in notReading with the test that holds them; a flag added there without
// a line fails too.
func TestEveryFlagChangesTheOutputOrIsRefused(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs every reading command once per flag (about 250 runs on a small warehouse)")
	}
	dir, db, corpus := sharedCopy(t, sampleKey{11, 3, true})
	families := filepath.Join(corpus, ".sample", "families.csv")
	pareDB := filepath.Join(dir, "p.duckdb")
	if code, _, stderr := gymlens(t, "--db", pareDB, "-q", "ingest", pareFixtures, pareHandmade); code != 0 {
		t.Fatal(stderr)
	}
	ratings := writeFile(t, dir, "ratings.csv", "item,rater,value\n1,a,2\n1,b,2\n2,a,3\n2,b,4\n3,a,1\n3,b,1\n4,a,5\n4,b,4\n5,a,2\n5,b,3\n")
	out := filepath.Join(dir, "out")
	const judgeA, judgeB = "judge-gpt-5.6-luna", "judge-qwen3.5-397b"
	// The command as the flag is tried on (the flag's line, else the
	// command's): enough to run, with few resamples.
	base := map[string][]string{
		"table":     {"table", "main"},
		"plot":      {"plot", "harness-switch", "--out", out},
		"metrics":   {"metrics"},
		"compare":   {"compare", "--harness-switch", "CC,CD"},
		"corr":      {"corr"},
		"variance":  {"variance"},
		"power":     {"power"},
		"rank":      {"rank"},
		"agree":     {"agree", "--judges", judgeA + "," + judgeB},
		"human":     {"human"},
		"query":     {"query", "SELECT 1"},
		"reconcile": {"--db", pareDB, "reconcile"},
		"decisions": {"--db", pareDB, "decisions"},
	}
	baseOf := map[string][]string{
		"table judges":        {"table", "judge-agreement"},
		"plot question":       {"plot", "human-trust", "--out", out},
		"agree categories":    {"agree", "--input", ratings, "--level", "ordinal"},
		"agree level":         {"agree", "--input", ratings},
		"agree source":        {"agree", "--input", ratings},
		"agree judge":         {"agree", "--human"},
		"metrics pare-report": {"--db", pareDB, "metrics", "--source", "pare"},
		"compare debias":      {"compare", "--harness-switch", "CC,CD", "--families", families},
		"table families":      {"table", "judge-bias"},
	}
	// The value each flag is tried with: by "command flag", else by flag.
	value := map[string]string{
		"where": "harness=CC", "metrics": "TC,TA", "judge": judgeA, "by": "harness", "source": "pare",
		"resamples": "150", "seed": "2", "level": "0.9", "confidence": "0.9", "ci": "percentile",
		"scenarios": "20", "personas": "2", "repetitions": "2", "alpha": "0.1", "power": "0.9", "delta": "3",
		"metric": "TA", "judges": judgeB + "," + judgeA, "self": judgeA, "input": ratings, "categories": "1,3,2,4,5",
		"acceptance": "trust", "layout": "page", "digits": "1", "mark": "significance", "out": filepath.Join(dir, "out2"),
		"formats": "png", "size": "page", "switch": "CC,CD", "question": "acceptance", "harness-switch": "CC,OC",
		"agree level": "ordinal", "agree source": "inspect", "table judges": judgeB + "," + judgeA, "variance by": "harness", "power by": "harness",
		"families": families, "metrics by": "harness", "rank metric": "TA", "plot metric": "TA", "reconcile source": "inspect", "table source": "inspect", "corr source": "inspect", "cluster": "meta.level", "reducer": "median",
	}
	bools := map[string]bool{} // a bool flag is tried set to the opposite of its default
	var checked int
	app := newApp(&env{})
	// The flags of the other commands and their subcommands are listed,
	// each with a test of this package that exists.
	var sources strings.Builder
	tests, _ := filepath.Glob("*_test.go")
	for _, f := range tests {
		b, _ := os.ReadFile(f)
		sources.Write(b)
	}
	for flag, test := range notReading {
		if test != "" && !strings.Contains(sources.String(), "func "+test+"(t *testing.T)") {
			t.Errorf("notReading[%q]: no test %s in this package", flag, test)
		}
	}
	var listed func(path string, c *cli.Command)
	listed = func(path string, c *cli.Command) {
		for _, f := range c.Flags {
			if _, ok := notReading[path+" --"+f.Names()[0]]; !ok {
				t.Errorf("%s --%s: not a reading command, and not in notReading", path, f.Names()[0])
			}
		}
		for _, s := range c.Commands {
			listed(path+" "+s.Name, s)
		}
	}
	for _, cmd := range app.Commands {
		args, reading := base[cmd.Name]
		if !reading {
			listed(cmd.Name, cmd)
			continue
		}
		// run returns everything the command printed and wrote, and its stderr.
		run := func(args []string) (string, string) {
			os.RemoveAll(out)
			os.RemoveAll(filepath.Join(dir, "out2"))
			code, stdout, stderr := gymlens(t, append([]string{"--db", db}, withResamples(cmd, args)...)...)
			return fmt.Sprintf("exit %d\n%s\n%s\n%s", code, stdout, stderr, filesDigest(t, out, filepath.Join(dir, "out2"))), stderr
		}
		flags := append(slices.Clone(cmd.Flags), &cli.StringFlag{Name: "format"}, &cli.BoolFlag{Name: "quiet"})
		for _, f := range flags {
			name := f.Names()[0]
			key := cmd.Name + " " + name
			b := args
			if o, ok := baseOf[key]; ok {
				b = o
			}
			var extra []string
			switch ff := f.(type) {
			case *cli.BoolFlag:
				bools[key] = true
				extra = []string{fmt.Sprintf("--%s=%v", name, !ff.Value)}
			default:
				v, ok := value[key]
				if !ok {
					v, ok = value[name]
				}
				if name == "format" {
					v, ok = "json", true
					if cmd.Name == "table" {
						v = "latex"
					}
				}
				if !ok {
					t.Errorf("%s --%s: no value to try it with: add one to the test", cmd.Name, name)
					continue
				}
				extra = []string{"--" + name, v}
			}
			before, notes := run(b)
			after, _ := run(append(slices.Clone(b), extra...))
			checked++
			if strings.HasPrefix(after, "exit 2\n") {
				continue // refused, with its reason
			}
			// --quiet silences notes and progress: with none to silence
			// (nothing on stderr) it has nothing to change.
			if name == "quiet" && before == after && notes == "" {
				continue
			}
			if before == after {
				t.Errorf("%s %s: the same output as without it (%s): it is ignored", strings.Join(b, " "), strings.Join(extra, " "), firstLine(before))
			}
		}
	}
	if checked < 100 {
		t.Errorf("only %d command × flag pairs checked", checked)
	}
}

// notReading are the flags of the commands that do not read the
// warehouse through reports.Commands (they write warehouses, call judges,
// serve pages, build reports): each with the test of this package that
// runs it, "" where none does yet. These commands are not run here.
var notReading = map[string]string{
	"demo --out":                       "TestDemo",
	"demo --by":                        "",
	"demo --where":                     "",
	"demo --metrics":                   "",
	"demo --judge":                     "",
	"demo --seed":                      "",
	"demo --scale":                     "",
	"demo --compress":                  "",
	"demo --configs":                   "TestUsageErrorsExitTwo",
	"demo --resamples":                 "TestDemo",
	"demo --level":                     "",
	"demo --ci":                        "",
	"sample --out":                     "TestGoldenCommandOutputs",
	"sample --seed":                    "TestGoldenCommandOutputs",
	"sample --scale":                   "TestUsageErrorsExitTwo",
	"sample --compress":                "",
	"sample --configs":                 "TestReadmeTourSmoke",
	"ingest --max-errors":              "TestUsageErrorsExitTwo",
	"ingest --skip-invalid":            "TestMaxRejectsFlag",
	"ingest --rejects":                 "TestMaxRejectsFlag",
	"ingest --max-rejects":             "TestMaxRejectsFlag",
	"ingest --replace":                 "TestJudgeUnderAnIngestedJudgesName",
	"validate --max-errors":            "",
	"score --prefer":                   "TestScoreFindsThePlantedDisagreements",
	"score --examples":                 "",
	"judge --metric":                   "TestJudgeEndToEnd",
	"judge --prompt":                   "TestRubricThroughPoolAndBatch",
	"judge --judge":                    "TestJudgeEndToEnd",
	"judge --endpoint":                 "TestIngestAndQueryWithGlobalFlagsAnywhere",
	"judge --concurrency":              "TestJudgeOverAPool",
	"judge --rpm":                      "",
	"judge --tpm":                      "",
	"judge --timeout":                  "",
	"judge --retries":                  "",
	"judge --seed":                     "TestGoldenCommandOutputs",
	"judge --repeats":                  "TestRepeatsThenAgreeSelf",
	"judge --temperature":              "TestRepeatsThenAgreeSelf",
	"judge --limit":                    "TestJudgeEndToEnd",
	"judge --force":                    "",
	"judge --replace":                  "TestJudgeUnderAnIngestedJudgesName",
	"judge --prices":                   "",
	"judge --where":                    "TestJudgeEndToEnd",
	"judge --source":                   "TestAgreeInspectSamples",
	"judge --dry-run":                  "TestJudgeEndToEnd",
	"judge --costs":                    "TestJudgeEndToEnd",
	"judge --batch":                    "TestJudgeBatchAPI",
	"judge --batch-wait":               "TestJudgeBatchAPI",
	"judge --batch-poll":               "TestJudgeBatchAPI",
	"report --out":                     "TestVerifyFromTheInputsAlone",
	"report --where":                   "",
	"report --judge":                   "TestRubricThroughPoolAndBatch",
	"report --judges":                  "TestAgreeAndHumanOnTheSample",
	"report --families":                "TestJudgeBiasOnTheSample",
	"report --size":                    "TestUsageErrorsExitTwo",
	"report --digits":                  "TestUsageErrorsExitTwo",
	"report --mark":                    "TestUsageErrorsExitTwo",
	"report --resamples":               "TestVerifyFromTheInputsAlone",
	"report --seed":                    "TestAgreeAndHumanOnTheSample",
	"report --level":                   "",
	"report --ci":                      "",
	"report --source":                  "TestInspectReport",
	"serve --addr":                     "TestServeOnTheSample",
	"serve --token":                    "TestServeTokenAuto",
	"serve --allowed-hosts":            "TestServeFlagsRefused",
	"serve --read-only":                "TestServeTokenAuto",
	"serve --resamples":                "TestServeTokenAuto",
	"serve --seed":                     "",
	"serve --level":                    "",
	"serve --ci":                       "",
	"export --out":                     "TestAgreeAndHumanOnTheSample",
	"verify --inputs":                  "TestVerifyFromTheInputsAlone",
	"judge export-batch --metric":      "TestJudgeBatchCommands",
	"judge export-batch --prompt":      "",
	"judge export-batch --judge":       "TestJudgeBatchCommands",
	"judge export-batch --endpoint":    "",
	"judge export-batch --concurrency": "",
	"judge export-batch --rpm":         "",
	"judge export-batch --tpm":         "",
	"judge export-batch --timeout":     "",
	"judge export-batch --retries":     "",
	"judge export-batch --seed":        "",
	"judge export-batch --repeats":     "",
	"judge export-batch --temperature": "",
	"judge export-batch --limit":       "TestJudgeBatchCommands",
	"judge export-batch --force":       "",
	"judge export-batch --replace":     "",
	"judge export-batch --prices":      "",
	"judge export-batch --where":       "",
	"judge export-batch --source":      "",
	"judge export-batch --out":         "TestJudgeBatchCommands",
	"judge import-batch --metric":      "TestJudgeBatchCommands",
	"judge import-batch --prompt":      "",
	"judge import-batch --judge":       "TestJudgeBatchCommands",
	"judge import-batch --endpoint":    "",
	"judge import-batch --concurrency": "",
	"judge import-batch --rpm":         "",
	"judge import-batch --tpm":         "",
	"judge import-batch --timeout":     "",
	"judge import-batch --retries":     "",
	"judge import-batch --seed":        "",
	"judge import-batch --repeats":     "",
	"judge import-batch --temperature": "",
	"judge import-batch --limit":       "TestJudgeBatchCommands",
	"judge import-batch --force":       "",
	"judge import-batch --replace":     "",
	"judge import-batch --prices":      "",
	"judge import-batch --where":       "",
	"judge import-batch --source":      "",
	"annotate sample --n":              "",
	"annotate sample --by":             "TestAgreeAndHumanOnTheSample",
	"annotate sample --unit":           "",
	"annotate sample --questions":      "TestAnnotateInBrowser",
	"annotate sample --seed":           "TestAgreeAndHumanOnTheSample",
	"annotate sample --out":            "TestAgreeAndHumanOnTheSample",
	"annotate sample --queue":          "TestAnnotateInBrowser",
	"annotate sample --k":              "TestAgreeAndHumanOnTheSample",
	"annotate sample --tutorial":       "TestAnnotateInBrowser",
	"annotate sample --max-annotators": "TestAgreeAndHumanOnTheSample",
	"annotate sample --over-assign":    "TestStatusPageWithACrowd",
	"annotate sample --where":          "",
	"annotate queue --sheet":           "TestAgreeAndHumanOnTheSample",
	"annotate queue --pare":            "TestAgreeAndHumanOnTheSample",
	"annotate queue --k":               "TestAgreeAndHumanOnTheSample",
	"annotate queue --max-annotators":  "TestAgreeAndHumanOnTheSample",
	"annotate queue --over-assign":     "",
	"annotate export --out":            "TestAgreeAndHumanOnTheSample",
	"notebook run --out":               "TestAgreeAndHumanOnTheSample",
	"notebook run --strict":            "TestNotebooksRunOnAnyWarehouse",
}

// withResamples puts --resamples 100 after the command's words, when the
// command takes it and the arguments do not set it.
func withResamples(cmd *cli.Command, args []string) []string {
	if slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--resamples") }) {
		return args
	}
	for _, f := range cmd.Flags {
		if f.Names()[0] == "resamples" {
			return append(slices.Clone(args), "--resamples", "100")
		}
	}
	return args
}

// filesDigest is a digest of every file under the folders (none: "").
func filesDigest(t *testing.T, dirs ...string) string {
	h := sha256.New()
	for _, d := range dirs {
		filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() {
				return nil
			}
			b, _ := os.ReadFile(p)
			fmt.Fprintf(h, "%s %d\n", filepath.Base(p), len(b))
			h.Write(b)
			return nil
		})
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

func firstLine(s string) string {
	lines := strings.SplitN(s, "\n", 4)
	return strings.Join(lines[:min(3, len(lines))], " | ")
}
