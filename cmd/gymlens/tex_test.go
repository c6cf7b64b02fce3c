package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// texEngines are the TeX engines every table must compile with.
var texEngines = []string{"pdflatex", "lualatex", "xelatex"}

// overfull matches TeX's report of a line wider than its box.
var overfull = regexp.MustCompile(`Overfull \\hbox \(([0-9.]+)pt too wide\)`)

// floatTooLarge matches TeX's report of a table or figure taller than the
// page, with the input file being read.
var floatTooLarge = regexp.MustCompile(`Float too large for page by [0-9.]+pt on input line [0-9]+`)

// texFile matches a table's file where TeX's log says it opens it.
var texFile = regexp.MustCompile(`[^/ ()]+\.tex`)

// checkTeX compiles the report's LaTeX tables, the column layout
// (NAME.tex) in a two-column article and the page layout (NAME.page.tex)
// across it, with each engine, loading only the packages docs/outputs.md
// names; it fails on any error, any overfull box over 1 pt, any float taller than the page, any glyph
// missing from the font, and any byte beyond ASCII in a table. Without TeX
// it skips, except in CI (.ci/run installs Debian's TeX Live).
func checkTeX(t *testing.T, tables string) {
	needTeX(t)
	all, _ := filepath.Glob(filepath.Join(tables, "*.tex"))
	layouts := map[string][]string{}
	for _, f := range all {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, c := range b {
			if c >= 0x80 {
				t.Errorf("%s: byte %d is %#x: a table must be ASCII", f, i, c)
				break
			}
		}
		if strings.HasSuffix(f, ".page.tex") {
			layouts["page"] = append(layouts["page"], f)
		} else {
			layouts["column"] = append(layouts["column"], f)
		}
	}
	if len(layouts["column"]) == 0 || len(layouts["column"]) != len(layouts["page"]) {
		t.Fatalf("tables: %d in a column, %d across the page", len(layouts["column"]), len(layouts["page"]))
	}
	var wg sync.WaitGroup
	for layout, files := range layouts {
		var doc strings.Builder
		doc.WriteString("\\documentclass[twocolumn]{article}\n\\usepackage{booktabs}\n\\usepackage{graphicx}\n\\begin{document}\n")
		for _, f := range files {
			abs, _ := filepath.Abs(f)
			fmt.Fprintf(&doc, "\\input{%s}\nSome text of the paper.\\clearpage\n", filepath.ToSlash(abs))
		}
		doc.WriteString("\\end{document}\n")
		for _, engine := range texEngines {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "doc.tex"), []byte(doc.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				cmd := exec.Command(engine, "-interaction=nonstopmode", "-halt-on-error", "doc.tex")
				cmd.Dir = dir
				out, err := cmd.CombinedOutput()
				log, _ := os.ReadFile(filepath.Join(dir, "doc.log"))
				if err != nil {
					t.Errorf("%s, %s layout: %v\n%s", engine, layout, err, tail(string(out), 1500))
					return
				}
				for _, m := range overfull.FindAllStringSubmatch(string(log), -1) {
					if pt, _ := strconv.ParseFloat(m[1], 64); pt > 1 {
						t.Errorf("%s, %s layout: %s", engine, layout, m[0])
					}
				}
				for _, at := range floatTooLarge.FindAllStringIndex(string(log), -1) {
					// The table is the last file TeX opened before.
					file := texFile.FindAllString(string(log[:at[0]]), -1)
					t.Errorf("%s, %s layout: %v: %s", engine, layout, file[max(0, len(file)-1):], log[at[0]:at[1]])
				}
				if strings.Contains(string(log), "Missing character") {
					t.Errorf("%s, %s layout: a glyph is missing from the font", engine, layout)
				}
			}()
		}
	}
	wg.Wait()
}

// needTeX skips the test when a TeX engine is missing, or fails it in CI
// (.ci/run installs TeX Live).
func needTeX(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: compiles LaTeX with three TeX engines")
	}
	for _, e := range texEngines {
		if _, err := exec.LookPath(e); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is not installed: .ci/run installs TeX Live", e)
			}
			t.Skipf("no %s on this machine (apt-get install texlive-latex-recommended texlive-luatex texlive-xetex): the TeX checks are skipped", e)
		}
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// checkPaper builds docs/paper/paper.tex — a two-column paper of the
// report's tables and figures, unedited — with each engine, two passes
// (so that references settle), and fails on any warning, overfull or
// underfull box, or error. Without TeX it skips, except in CI.
func checkPaper(t *testing.T, report string) {
	needTeX(t)
	src, err := os.ReadFile(filepath.Join("..", "..", "docs", "paper", "paper.tex"))
	if err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs(report)
	warn := regexp.MustCompile(`(?i)warning|overfull|underfull`)
	var wg sync.WaitGroup
	for _, engine := range texEngines {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "paper.tex"), src, 0o644)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for pass := 1; pass <= 2; pass++ {
				cmd := exec.Command(engine, "-interaction=nonstopmode", "-halt-on-error", `\def\reportdir{`+filepath.ToSlash(abs)+`}\input{paper.tex}`)
				cmd.Dir = dir
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Errorf("%s, pass %d: %v\n%s", engine, pass, err, tail(string(out), 1500))
					return
				}
			}
			log, _ := os.ReadFile(filepath.Join(dir, "paper.log"))
			for _, line := range strings.Split(string(log), "\n") {
				if warn.MatchString(line) {
					t.Errorf("%s: the paper: %s", engine, line)
				}
			}
		}()
	}
	wg.Wait()
}
