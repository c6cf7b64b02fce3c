package main

import (
	"context"
	"slices"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/gymlens/gymlens/ingest"
	"github.com/gymlens/gymlens/reports"
)

func tableCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "table",
		Usage:     "a paper table: " + strings.Join(reports.TableNames, ", "),
		ArgsUsage: "NAME",
		Description: "main: the four metrics per model and harness (the paper's Table 7); tc-components, ta-components,\n" +
			"trj-constructs: Tables 8–10; judge-agreement: Tables 4–6 (--judges A,B, or the only two judges); judge-human;\n" +
			"correlations; by-scenario; by-persona. --format latex (booktabs, best bold, second underlined), md, csv or html.",
		Flags: append([]cli.Flag{
			&cli.BoolFlag{Name: "intervals", Value: true, Usage: "show the intervals beside the values"},
			&cli.StringSliceFlag{Name: "where", Usage: "keep runs with `DIM=VALUE` (repeat)"},
			&cli.StringFlag{Name: "judge", Usage: "use one `JUDGE`'s judgments instead of the average"},
			&cli.StringFlag{Name: "judges", Usage: "judge-agreement: compare judges `A,B`"},
		}, bootstrapFlags()...),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.NArg() != 1 {
				return usagef("table: name one table: %s", strings.Join(reports.TableNames, ", "))
			}
			name := cmd.Args().First()
			if !slices.Contains(reports.TableNames, name) {
				return usagef("table: unknown table %q: expected one of %s", name, strings.Join(reports.TableNames, ", "))
			}
			return readingAs(ctx, cmd, "md", reports.TableFormats, func(format string, w *ingest.Warehouse) error {
				ds, err := dataset(ctx, cmd, w, reports.KeepTasks)
				if err != nil {
					return err
				}
				tables, err := reports.Tables(ds, name)
				if err != nil {
					return err
				}
				return reports.WriteTables(e.stdout, format, tables, reports.TableOptions{Intervals: cmd.Bool("intervals")})
			})
		},
	}
}
