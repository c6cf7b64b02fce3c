package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"html"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/gymlens/gymlens/ingest"
	"github.com/gymlens/gymlens/reports"
)

// notebookCommands are the gymlens commands a notebook block may run:
// those that only read.
var notebookCommands = []string{"table", "plot", "metrics", "compare", "corr", "agree", "human", "query", "reconcile", "decisions"}

func notebookCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "notebook",
		Usage: "literate analyses: Markdown whose ```sql and ```gymlens blocks are run",
		Commands: []*cli.Command{{
			Name:      "run",
			Usage:     "run a notebook's blocks and write it with their outputs, as Markdown and HTML",
			ArgsUsage: "FILE.md",
			Description: "```sql blocks run read-only against the warehouse and show as tables; ```gymlens blocks run one\n" +
				"gymlens command (" + strings.Join(notebookCommands, ", ") + ") on the warehouse and show its output:\n" +
				"a table as a table, a figure as an image, anything else as text. Writes DIR/NAME.md, DIR/NAME.html\n" +
				"(self-contained) and the figures beside them. The first block that fails stops the run, names the block\n" +
				"and its line, and writes nothing.",
			Flags: []cli.Flag{&cli.StringFlag{Name: "out", Required: true, Usage: "output `DIR`"}},
			Action: func(ctx context.Context, cmd *cli.Command) error {
				if cmd.NArg() != 1 {
					return usagef("notebook run: name one FILE.md")
				}
				file := cmd.Args().First()
				paths, err := runNotebook(ctx, e, cmd.String("db"), file, cmd.String("out"))
				if err != nil {
					return err
				}
				if !cmd.Bool("quiet") {
					fmt.Fprintf(e.stdout, "wrote %s\n", strings.Join(paths, ", "))
				}
				return nil
			},
		}},
	}
}

// runNotebook runs file's blocks against the warehouse db and writes the
// outputs into dir, all or nothing.
func runNotebook(ctx context.Context, e *env, db, file, dir string) ([]string, error) {
	src, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", file, err)
	}
	// The warehouse must be there: a notebook only reads.
	if _, err := os.Stat(db); err != nil {
		return nil, fmt.Errorf("no warehouse at %s: run `gymlens ingest` (or `gymlens demo`) first, or name one with --db", db)
	}
	stem := strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	nfig := 0
	runners := map[string]func(reports.Block) (reports.BlockOutput, error){
		"sql": func(b reports.Block) (reports.BlockOutput, error) {
			w, err := ingest.Open(ctx, db, ingest.OpenOptions{ReadOnly: true})
			if err != nil {
				return reports.BlockOutput{}, err
			}
			defer w.Close()
			cols, rows, err := w.Query(ctx, b.Code)
			if err != nil {
				return reports.BlockOutput{}, err
			}
			t := reports.ResultTable(fmt.Sprintf("%s-%d", stem, b.Line), fmt.Sprintf("%d rows", len(rows)), &reports.Result{Columns: cols, Rows: rows})
			return tableOutput([]*reports.Table{t})
		},
		"gymlens": func(b reports.Block) (reports.BlockOutput, error) {
			args, err := splitArgs(b.Code)
			if err != nil {
				return reports.BlockOutput{}, err
			}
			if len(args) == 0 || !slices.Contains(notebookCommands, args[0]) {
				return reports.BlockOutput{}, fmt.Errorf("a gymlens block runs one of %s", strings.Join(notebookCommands, ", "))
			}
			base := []string{"gymlens", "--db", db, "--quiet"}
			switch args[0] {
			case "table":
				md, err := runCaptured(ctx, append(append(base, args...), "--format", "md"))
				if err != nil {
					return reports.BlockOutput{}, err
				}
				page, err := runCaptured(ctx, append(append(base, args...), "--format", "html"))
				if err != nil {
					return reports.BlockOutput{}, err
				}
				return reports.BlockOutput{Markdown: md, HTML: page}, nil
			case "plot":
				tmp, err := os.MkdirTemp("", "gymlens-notebook-")
				if err != nil {
					return reports.BlockOutput{}, err
				}
				defer os.RemoveAll(tmp)
				if _, err := runCaptured(ctx, append(append(base, args...), "--out", tmp, "--formats", "png")); err != nil {
					return reports.BlockOutput{}, err
				}
				names, _ := filepath.Glob(filepath.Join(tmp, "*.png"))
				if len(names) != 1 {
					return reports.BlockOutput{}, fmt.Errorf("the plot wrote %d images", len(names))
				}
				png, err := os.ReadFile(names[0])
				if err != nil {
					return reports.BlockOutput{}, err
				}
				nfig++
				name := fmt.Sprintf("%s-figure-%d.png", stem, nfig)
				alt := html.EscapeString(strings.Join(args, " "))
				return reports.BlockOutput{
					Markdown: fmt.Sprintf("![%s](%s)", strings.Join(args, " "), name),
					HTML:     fmt.Sprintf("<img src=\"data:image/png;base64,%s\" alt=\"%s\">", base64.StdEncoding.EncodeToString(png), alt),
					Files:    map[string][]byte{name: png},
				}, nil
			}
			out, err := runCaptured(ctx, append(base, args...))
			if err != nil {
				return reports.BlockOutput{}, err
			}
			return reports.BlockOutput{Markdown: "```text\n" + strings.TrimRight(out, "\n") + "\n```",
				HTML: "<pre>" + html.EscapeString(out) + "</pre>"}, nil
		},
	}
	md, page, files, err := reports.RunNotebook(file, src, runners)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("--out: %v", err)
	}
	out := map[string][]byte{stem + ".md": md, stem + ".html": page}
	for name, b := range files {
		out[name] = b
	}
	var paths []string
	for _, name := range sortedKeys(out) {
		p := filepath.Join(dir, name)
		b := out[name]
		if err := reports.WriteFileAtomic(p, func(w io.Writer) error { _, err := w.Write(b); return err }); err != nil {
			return nil, err
		}
		paths = append(paths, p)
	}
	return paths, nil
}

func tableOutput(ts []*reports.Table) (reports.BlockOutput, error) {
	var md, page bytes.Buffer
	for _, t := range ts {
		if err := reports.WriteTable(&md, "md", t, reports.TableOptions{}); err != nil {
			return reports.BlockOutput{}, err
		}
		if err := reports.WriteTable(&page, "html", t, reports.TableOptions{}); err != nil {
			return reports.BlockOutput{}, err
		}
	}
	return reports.BlockOutput{Markdown: md.String(), HTML: "<div class=\"table-wrap\">" + page.String() + "</div>"}, nil
}

// runCaptured runs gymlens in this process and returns what it printed;
// a non-zero exit is an error with what it printed on stderr.
func runCaptured(ctx context.Context, args []string) (string, error) {
	var stdout, stderr bytes.Buffer
	if code := run(ctx, args, &stdout, &stderr); code != 0 {
		msg := strings.TrimSpace(strings.ReplaceAll(stderr.String(), "gymlens: ", ""))
		return "", errors.New(strings.SplitN(msg, "\n", 2)[0])
	}
	return stdout.String(), nil
}

// splitArgs splits a command line into words, with single and double
// quotes; "gymlens" in front is allowed and dropped; newlines are spaces.
func splitArgs(s string) ([]string, error) {
	var out []string
	var cur strings.Builder
	inWord := false
	var quote rune
	for _, r := range s {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t' || r == '\n' || r == '\r':
			if inWord {
				out = append(out, cur.String())
				cur.Reset()
				inWord = false
			}
		case r == '\\':
			// A line continuation, as in a shell.
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unclosed %c quote", quote)
	}
	if inWord {
		out = append(out, cur.String())
	}
	if len(out) > 0 && out[0] == "gymlens" {
		out = out[1:]
	}
	return out, nil
}
