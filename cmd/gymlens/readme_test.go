package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gymlens/gymlens/internal/openaitest"
	"github.com/gymlens/gymlens/internal/sample"
	"github.com/gymlens/gymlens/reports"
)

// readmeTour reads the README's "same steps by hand": one command line per
// entry (continuations joined, comments dropped), each a list of gymlens
// invocations joined by &&.
func readmeTour(t *testing.T) [][][]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, "The same steps by hand:")
	if i < 0 {
		t.Fatal("README: no tour")
	}
	block := regexp.MustCompile("(?s)```sh\n(.*?)```").FindStringSubmatch(s[i:])
	if block == nil {
		t.Fatal("README: no sh block in the tour")
	}
	text := strings.ReplaceAll(block[1], "\\\n", " ")
	var lines [][][]string
	for _, line := range strings.Split(text, "\n") {
		if c := strings.Index(line, "   #"); c >= 0 {
			line = line[:c]
		} else if c := strings.Index(line, "  #"); c >= 0 {
			line = line[:c]
		}
		if line = strings.TrimSpace(line); line == "" || strings.HasPrefix(line, "go build") {
			continue
		}
		var cmds [][]string
		for _, part := range strings.Split(line, "&&") {
			if i := strings.LastIndex(part, " > "); i >= 0 { // stdout to a file: the file is the last word
				part = part[:i] + " __stdout__ " + strings.TrimSpace(part[i+3:])
			}
			words, err := reports.SplitArgs(strings.TrimSpace(part))
			if err != nil {
				t.Fatalf("README %q: %v", part, err)
			}
			if len(words) == 0 || words[0] != "./gymlens" {
				t.Fatalf("README tour: %q is not a gymlens command", part)
			}
			cmds = append(cmds, words[1:])
		}
		lines = append(lines, cmds)
	}
	return lines
}

// Every command of the README's tour runs as written, in order, in a
// fresh folder holding the repository's notebooks and PARE fixtures; the
// judge's endpoint (localhost:8000) is the in-process OpenAI-compatible
// server instead, the one change. Each command is a process of its own
// (this test binary as gymlens) started in that folder, so that the test
// need not change this process's working folder and runs beside the
// others.
func TestReadmeTourRunsAsWritten(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs the README's whole tour, each command a process of its own (TestReadmeTourSmoke runs its spine)")
	}
	t.Parallel()
	dir := t.TempDir()
	for _, p := range []string{"notebooks", filepath.Join("ingest", "pare", "testdata"), filepath.Join("ingest", "testdata", "inspect")} {
		abs, _ := filepath.Abs(filepath.Join("..", "..", p))
		os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755)
		if err := os.Symlink(abs, filepath.Join(dir, p)); err != nil {
			t.Fatal(err)
		}
	}
	tour := readmeTour(t)
	f := openaitest.New()
	defer f.Close()
	if len(tour) < 20 {
		t.Fatalf("README tour: %d lines", len(tour))
	}
	for _, cmds := range tour {
		for _, args := range cmds {
			for i, a := range args {
				args[i] = strings.Replace(a, "http://localhost:8000", f.URL, 1)
			}
			var to string
			if n := len(args); n >= 2 && args[n-2] == "__stdout__" {
				args, to = args[:n-2], args[n-1]
			}
			cmd := exec.Command(os.Args[0], append([]string{"-q"}, args...)...)
			cmd.Dir, cmd.Env = dir, append(os.Environ(), "GYMLENS_TEST_CLI=1")
			var out, errOut bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errOut
			code := 0
			if err := cmd.Run(); err != nil {
				code = -1
				if ee, ok := err.(*exec.ExitError); ok {
					code = ee.ExitCode()
				}
			}
			stdout, stderr := out.String(), errOut.String()
			if code != 0 {
				t.Errorf("README: gymlens %s: exit %d: %s", strings.Join(args, " "), code, stderr)
			}
			if to != "" {
				os.WriteFile(filepath.Join(dir, to), []byte(stdout), 0o644)
			}
		}
	}
	if f.Count() != 100 {
		t.Errorf("the judge sent %d requests, want 100 (--limit 100)", f.Count())
	}
}

// pathsIn makes the files a tour's command names (the values of --db and
// --out, the folders given to ingest) paths in dir, so that the command
// runs in this process as it would in dir.
func pathsIn(dir string, args []string) []string {
	args = slices.Clone(args)
	for j := 1; j < len(args); j++ {
		if p := args[j-1]; (p == "--db" || p == "--out" || p == "ingest") && !strings.HasPrefix(args[j], "-") && !filepath.IsAbs(args[j]) {
			args[j] = filepath.Join(dir, args[j])
		}
	}
	return args
}

// tourSpine is the commands of the README's tour that TestReadmeTourSmoke
// runs: a corpus written, ingested, summed up and reported.
var tourSpine = map[string]bool{"sample": true, "ingest": true, "metrics": true, "report": true}

// The spine of the README's tour, as written, in this process: the sample
// written, ingested, the metrics printed and the report written, in a
// fresh folder (each file the tour names made a path in it). It is the
// quick end-to-end check; TestReadmeTourRunsAsWritten runs every command.
func TestReadmeTourSmoke(t *testing.T) {
	t.Parallel()
	var spine [][]string
	for _, cmds := range readmeTour(t) {
		for _, args := range cmds {
			if c := commandOf(args); tourSpine[c] && !slices.ContainsFunc(spine, func(s []string) bool { return commandOf(s) == c }) {
				spine = append(spine, args)
			}
		}
	}
	var ran []string
	for _, args := range spine {
		ran = append(ran, commandOf(args))
	}
	if strings.Join(ran, " ") != "sample ingest metrics report" {
		t.Fatalf("the README's tour has %v, want sample, ingest, metrics and report in that order", ran)
	}
	dir, out := startTour(t, smallSample(spine[:2]))
	for _, args := range spine[2:] {
		code, stdout, stderr := gymlens(t, pathsIn(dir, args)...)
		if code != 0 {
			t.Fatalf("README: gymlens %s: exit %d: %s", strings.Join(args, " "), code, stderr)
		}
		out = append(out, stdout)
	}
	for i, want := range []string{"3 configurations, 270 runs", "270 runs", "TR-J", "index.html"} {
		if !strings.Contains(out[i], want) {
			t.Errorf("README: %s printed no %q:\n%s", ran[i], want, out[i])
		}
	}
	m, err := reports.ReadManifest(filepath.Join(dir, "report"))
	if err != nil {
		t.Fatal(err)
	}
	// The grid's first three configurations have everything the report
	// shows but the reasoning-effort ablation; that one is left out, saying
	// why. (TestReadmeTourRunsAsWritten reports on the whole sample.)
	if len(m.Tables) != 16 || len(m.Figures) != 9 || len(m.Inputs) != 24 ||
		len(m.Skipped) != 1 || !strings.Contains(m.Skipped[0], "no model and harness were run at two effort levels") {
		t.Errorf("the report: %d tables, %d figures, %d inputs, skipped %v", len(m.Tables), len(m.Figures), len(m.Inputs), m.Skipped)
	}
	for _, o := range append(m.Tables, m.Figures...) {
		for _, f := range o.Files {
			if _, err := os.Stat(filepath.Join(dir, "report", f)); err != nil {
				t.Error(err)
			}
		}
	}
}

// smallSample is steps with each sample command writing the grid's first
// three configurations (270 runs, 14 MB) rather than all 26: the quick
// checks run the tour's commands on a corpus an eighth of the size.
func smallSample(steps [][]string) [][]string {
	out := make([][]string, len(steps))
	for i, s := range steps {
		out[i] = slices.Clone(s)
		if commandOf(s) == "sample" {
			out[i] = append(out[i], "--configs", "3")
		}
	}
	return out
}

// commandOf is the command of a gymlens command line, after its global
// flags and their values ("" when there is none).
func commandOf(args []string) string {
	i := 0
	for i < len(args) && strings.HasPrefix(args[i], "-") {
		i += 2
	}
	if i < len(args) {
		return args[i]
	}
	return ""
}

// The README's tour and the manual's example begin alike: the sample
// written, then ingested (117 MB, 2,340 runs). Such a start runs once per
// test binary, in a shared folder; each test gets a folder of its own with
// a copy of each file the start made (the warehouse) and a link to each
// folder (the corpus, which the test must not change).
var tourStarts struct {
	sync.Mutex
	by map[string]*tourStart
}

type tourStart struct {
	once   sync.Once
	dir    string
	stdout []string
	err    error
}

// startTour runs steps (gymlens command lines naming files relative to
// their folder) once per test binary and returns the test's folder and
// what each step printed.
func startTour(t *testing.T, steps [][]string) (dir string, stdout []string) {
	t.Helper()
	var key strings.Builder
	for _, s := range steps {
		fmt.Fprintf(&key, "%q\n", s)
	}
	tourStarts.Lock()
	if tourStarts.by == nil {
		tourStarts.by = map[string]*tourStart{}
	}
	b := tourStarts.by[key.String()]
	if b == nil {
		b = &tourStart{}
		tourStarts.by[key.String()] = b
	}
	tourStarts.Unlock()
	b.once.Do(func() {
		if b.dir, b.err = os.MkdirTemp(shared.dir, "tour-"); b.err != nil {
			return
		}
		for _, args := range steps {
			var o, e bytes.Buffer
			if code := run(context.Background(), append([]string{"gymlens"}, pathsIn(b.dir, args)...), &o, &e); code != 0 {
				b.err = fmt.Errorf("gymlens %s: exit %d: %s", strings.Join(args, " "), code, e.String())
				return
			}
			b.stdout = append(b.stdout, o.String())
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	dir = t.TempDir()
	ents, err := os.ReadDir(b.dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		from, to := filepath.Join(b.dir, e.Name()), filepath.Join(dir, e.Name())
		if e.IsDir() {
			err = os.Symlink(from, to)
		} else {
			err = sample.CopyFile(to, from)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return dir, slices.Clone(b.stdout)
}
