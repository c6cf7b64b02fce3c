package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/gymlens/gymlens/ingest"
	"github.com/gymlens/gymlens/ingest/rows"
	"github.com/gymlens/gymlens/reports"
)

func notebookCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "notebook",
		Usage: "literate analyses: Markdown whose ```sql and ```gymlens blocks are run",
		Commands: []*cli.Command{{
			Name:      "run",
			Usage:     "run a notebook's blocks and write it with their outputs, as Markdown and HTML",
			ArgsUsage: "FILE.md",
			Description: "```sql blocks run read-only against the warehouse and show as tables; ```gymlens blocks run one\n" +
				"gymlens command (" + strings.Join(reports.NotebookCommands, ", ") + ") on the warehouse and show its output:\n" +
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
// outputs into dir, all or nothing: tables and figures through the
// library, the other commands as the CLI prints them.
func runNotebook(ctx context.Context, e *env, db, file, dir string) ([]string, error) {
	src, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	// The warehouse must be there: a notebook only reads.
	if _, err := os.Stat(db); err != nil {
		return nil, fmt.Errorf("no warehouse at %s: run `gymlens ingest` (or `gymlens demo`) first, or name one with --db", db)
	}
	store := openEach{db}
	files, err := reports.RunNotebookFile(ctx, file, src, reports.NotebookOptions{Store: store, Name: db, Query: store.Query,
		Command: func(ctx context.Context, args []string) (string, error) {
			return runCaptured(ctx, append([]string{"gymlens", "--db", db, "--quiet"}, args...))
		}})
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("--out: %w", err)
	}
	var paths []string
	for _, name := range sortedKeys(files) {
		p, b := filepath.Join(dir, name), files[name]
		if err := reports.WriteFileAtomic(p, func(w io.Writer) error { _, err := w.Write(b); return err }); err != nil {
			return nil, err
		}
		paths = append(paths, p)
	}
	return paths, nil
}

// openEach opens the warehouse read-only for each read and closes it
// after, so that the commands a notebook runs in this process can open it
// too (DuckDB keeps one configuration per open file in a process).
type openEach struct{ db string }

func (o openEach) open(ctx context.Context) (*ingest.Warehouse, error) {
	return ingest.Open(ctx, o.db, ingest.OpenOptions{ReadOnly: true, MemoryLimit: ingest.DefaultMemoryLimit})
}

func (o openEach) LoadRunsWith(ctx context.Context, visit func(int, *rows.RunRow), dropTasks bool) ([]rows.RunRow, error) {
	w, err := o.open(ctx)
	if err != nil {
		return nil, err
	}
	defer w.Close()
	return w.LoadRunsWith(ctx, visit, dropTasks)
}

func (o openEach) LoadRatings(ctx context.Context) ([]rows.RatingRow, error) {
	w, err := o.open(ctx)
	if err != nil {
		return nil, err
	}
	defer w.Close()
	return w.LoadRatings(ctx)
}

func (o openEach) Query(ctx context.Context, q string) ([]string, [][]any, error) {
	w, err := o.open(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer w.Close()
	return w.Query(ctx, q)
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
