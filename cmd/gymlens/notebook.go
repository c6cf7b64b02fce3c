package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/gymlens/gymlens/ingest"
	"github.com/gymlens/gymlens/ingest/runlog"
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
				"(self-contained) and the figures beside them. A block whose data the warehouse lacks becomes a note (--strict:\n" +
				"an error); the first block that fails stops the run, names the block and its line, and writes nothing.",
			Flags: []cli.Flag{&cli.StringFlag{Name: "out", Required: true, Usage: "output `DIR`"},
				&cli.BoolFlag{Name: "strict", Usage: "fail on a block whose data the warehouse lacks (no human ratings, no effort ablation, no PARE runs) instead of noting it and going on"}},
			Action: func(ctx context.Context, cmd *cli.Command) error {
				if cmd.NArg() != 1 {
					return usagef("notebook run: name one FILE.md")
				}
				file := cmd.Args().First()
				paths, err := runNotebook(ctx, cmd.String("db"), file, cmd.String("out"), cmd.Bool("strict"))
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
// outputs into dir, all or nothing: every block through the library.
func runNotebook(ctx context.Context, db, file, dir string, strict bool) ([]string, error) {
	src, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	// The warehouse must be there: a notebook only reads.
	if _, err := os.Stat(db); err != nil {
		return nil, fmt.Errorf("no warehouse at %s: run `gymlens ingest` (or `gymlens demo`) first, or name one with --db", db)
	}
	w, err := ingest.Open(ctx, db, ingest.OpenOptions{ReadOnly: true, MemoryLimit: ingest.ReadingMemoryLimit("notebook", false)})
	if err != nil {
		return nil, err
	}
	defer w.Close()
	files, err := reports.RunNotebookFile(ctx, file, src, reports.NotebookOptions{Store: w, Name: db, ReadRatings: runlog.ReadRatingSets, Strict: strict})
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("--out: %w", err)
	}
	var paths []string
	for _, name := range slices.Sorted(maps.Keys(files)) {
		p, b := filepath.Join(dir, name), files[name]
		if err := reports.WriteFileAtomic(p, func(w io.Writer) error { _, err := w.Write(b); return err }); err != nil {
			return nil, err
		}
		paths = append(paths, p)
	}
	return paths, nil
}
