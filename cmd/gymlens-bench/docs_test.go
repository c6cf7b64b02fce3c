package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// docs/benchmarks.md is a reference, not a diary: at most 400 lines, no
// page of docs/ or the README numbering the rounds of work that wrote it,
// and every citation of one of its sections ("docs/benchmarks.md,
// then a heading in quotes, in code or docs) names a heading it has.
func TestBenchmarksPageIsAReference(t *testing.T) {
	root := filepath.Join("..", "..")
	page, err := os.ReadFile(filepath.Join(root, "docs", "benchmarks.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(page), "\n"); n > 400 {
		t.Errorf("docs/benchmarks.md has %d lines, more than 400", n)
	}
	headings := map[string]bool{}
	for _, l := range strings.Split(string(page), "\n") {
		if strings.HasPrefix(l, "#") {
			headings[strings.TrimSpace(strings.TrimLeft(l, "#"))] = true
		}
	}
	cite := regexp.MustCompile(`benchmarks\.md,?\s+\(?"([^"]+)"`)
	rounds := regexp.MustCompile(`(?i)\b(this|a|the (first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|last|previous|next)) session\b`)
	cited := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && path != root || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		ext := filepath.Ext(path)
		if d.IsDir() || (ext != ".go" && ext != ".md") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		text := string(b)
		if ext == ".go" { // a comment's lines joined
			text = regexp.MustCompile(`\n\s*//`).ReplaceAllString(text, " ")
		}
		text = strings.Join(strings.Fields(text), " ")
		for _, m := range cite.FindAllStringSubmatch(text, -1) {
			cited++
			if !headings[m[1]] {
				t.Errorf("%s cites docs/benchmarks.md, %q: no such heading", path, m[1])
			}
		}
		if ext == ".md" && rounds.MatchString(text) {
			t.Errorf("%s numbers the rounds of work that wrote it (%q)", path, rounds.FindString(text))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if cited == 0 {
		t.Error("no citation of a section found: the pattern no longer matches the docs")
	}
}
