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
// and every citation of one of its sections (docs/benchmarks.md or a
// Markdown link to it, then a heading in quotes or a list of them, in code
// or docs) names a heading it has.
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
	// A citation: the page's name (or a Markdown link to it), then one
	// heading in quotes or a list of them ("A", "B" and "C").
	cite := regexp.MustCompile(`benchmarks\.md(?:\]\([^)]*\))?,?\s+\(?("[^"]+"(?:(?:,\s*|,?\s+and\s+)"[^"]+")*)`)
	quotedHeading := regexp.MustCompile(`"([^"]+)"`)
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
			for _, h := range quotedHeading.FindAllStringSubmatch(m[1], -1) {
				cited++
				if !headings[h[1]] {
					t.Errorf("%s cites docs/benchmarks.md, %q: no such heading", path, h[1])
				}
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

// No page of docs/, the README or a notebook narrates its own history: a
// page says what is true of the code beside it, and git log holds how it
// got there. The phrases below say "it was otherwise before"; they are
// looked for in the prose alone, with fenced blocks, code spans and quoted
// text (a command's output, a user's words) taken out. A date and a commit
// that identify a measurement are not history.
func TestDocsSayWhatIsTrue(t *testing.T) {
	root := filepath.Join("..", "..")
	narration := regexp.MustCompile(`(?i)\b(this session|(a|the) (second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|previous) round|the previous version|after the change|(as of|before) the fix|we (changed|fixed|added|removed|moved|made|replaced)|since issue \d+|used to (be|include|hold|have|take|read|write|give)|(did|was done|were done) before|until now|(is|are|has|have|was|were) now|now (is|are|has|have)|as it now|(has|have) since)\b`)
	fenced := regexp.MustCompile("(?s)```.*?```")
	span := regexp.MustCompile("`[^`]*`")
	quoted := regexp.MustCompile(`"[^"]{0,300}"|“[^”]{0,300}”`)
	pages := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && path != root || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || filepath.Ext(path) != ".md" {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		pages++
		text := span.ReplaceAllString(fenced.ReplaceAllString(string(b), " "), " ")
		text = quoted.ReplaceAllString(strings.Join(strings.Fields(text), " "), " ")
		for _, m := range narration.FindAllStringIndex(text, -1) {
			from, to := max(0, m[0]-60), min(len(text), m[1]+40)
			t.Errorf("%s narrates its history (%q): …%s…", path, text[m[0]:m[1]], text[from:to])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if pages < 10 {
		t.Errorf("found %d Markdown pages: the walk no longer reaches docs/", pages)
	}
}

// Every command output pasted in docs/benchmarks.md (a fenced block other
// than a shell one) begins with the line header prints: the date (and the
// time where it is known), the commit and the machine it was measured on.
func TestBenchmarksOutputsNameDateAndCommit(t *testing.T) {
	page, err := os.ReadFile(filepath.Join("..", "..", "docs", "benchmarks.md"))
	if err != nil {
		t.Fatal(err)
	}
	first := regexp.MustCompile(`^measured \d{4}-\d{2}-\d{2}( \d{2}:\d{2} UTC)? · commit [0-9a-f]{7} · [1-9][0-9]* cores · \S`)
	lines := strings.Split(string(page), "\n")
	blocks := 0
	for i := 0; i < len(lines); i++ {
		if !strings.HasPrefix(lines[i], "```") {
			continue
		}
		open, j := lines[i], i+1
		for j < len(lines) && !strings.HasPrefix(lines[j], "```") {
			j++
		}
		if open == "```" {
			blocks++
			if i+1 >= j || !first.MatchString(lines[i+1]) {
				t.Errorf("docs/benchmarks.md:%d: an output block without its measured line (date, commit, cores, CPU)", i+1)
			}
		}
		i = j
	}
	if blocks == 0 {
		t.Error("no output block found in docs/benchmarks.md")
	}
}
