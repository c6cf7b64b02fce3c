package main

import (
	"context"
	"fmt"
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
// outputs into dir (reports.WriteNotebookFolder).
func runNotebook(ctx context.Context, db, file, dir string, strict bool) ([]string, error) {
	var w *ingest.Warehouse
	defer func() {
		if w != nil {
			w.Close()
		}
	}()
	return reports.WriteNotebookFolder(ctx, file, dir, reports.NotebookOptions{Name: db, ReadRatings: runlog.ReadRatingSets, Strict: strict},
		func(ctx context.Context) (reports.Warehouse, error) {
			var err error
			if w, err = ingest.Open(ctx, db, ingest.OpenOptions{ReadOnly: true, MemoryLimit: ingest.ReadingMemoryLimit("notebook", false)}); err != nil {
				return nil, err // ingest.Open says when there is no warehouse at db
			}
			return w, nil
		})
}
