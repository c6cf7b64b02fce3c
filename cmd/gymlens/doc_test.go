package main

import (
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// docSection returns the indented lines of doc.go's section title (up to
// the next blank comment line after them).
func docSection(t *testing.T, title string) []string {
	t.Helper()
	b, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	in := false
	for _, l := range strings.Split(string(b), "\n") {
		switch {
		case l == "// "+title:
			in = true
		case in && strings.HasPrefix(l, "//\t"):
			out = append(out, strings.TrimPrefix(l, "//\t"))
		case in && len(out) > 0 && l == "//":
			return out
		}
	}
	return out
}

// The package comment is the manual: it names every command there is,
// and nothing else, and its examples run as written (each file they name
// a path in a folder of the test's own).
func TestPackageDocIsTheManual(t *testing.T) {
	t.Parallel()
	var documented []string
	for _, l := range docSection(t, "Commands:") {
		documented = append(documented, strings.Fields(l)[0])
	}
	var have []string
	for _, c := range newApp(&env{stdout: io.Discard, stderr: io.Discard}).Commands {
		if c.Name != "help" {
			have = append(have, c.Name)
		}
	}
	slices.Sort(documented)
	slices.Sort(have)
	if !slices.Equal(documented, have) {
		t.Errorf("doc.go lists %v; the commands are %v", documented, have)
	}
	examples := docSection(t, "Example:")
	if len(examples) < 3 {
		t.Fatalf("examples: %v", examples)
	}
	word := regexp.MustCompile(`"[^"]*"|\S+`)
	var lines [][]string
	for _, ex := range examples {
		var args []string
		for _, w := range word.FindAllString(ex, -1)[1:] {
			args = append(args, strings.Trim(w, `"`))
		}
		lines = append(lines, args)
	}
	// The sample written (its first three configurations) and ingested,
	// as the README's tour begins: once for both tests when the two begin
	// alike.
	start := 0
	for start < len(lines) && (commandOf(lines[start]) == "sample" || commandOf(lines[start]) == "ingest") {
		start++
	}
	dir, _ := startTour(t, smallSample(lines[:start]))
	for _, args := range lines[start:] {
		if code, _, stderr := gymlens(t, append([]string{"-q"}, pathsIn(dir, args)...)...); code != 0 {
			t.Errorf("gymlens %s: exit %d: %s", strings.Join(args, " "), code, stderr)
		}
	}
}
