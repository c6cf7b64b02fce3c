package main

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/gymlens/gymlens/analysis"
	"github.com/gymlens/gymlens/ingest"
	"github.com/gymlens/gymlens/reports"
)

// TableNames are the tables `gymlens table` writes.
var TableNames = []string{"main", "tc-components", "ta-components", "trj-constructs", "judge-agreement", "judge-human",
	"correlations", "by-scenario", "by-persona"}

func tableCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "table",
		Usage:     "a paper table: " + strings.Join(TableNames, ", "),
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
				return usagef("table: name one table: %s", strings.Join(TableNames, ", "))
			}
			name := cmd.Args().First()
			if !slices.Contains(TableNames, name) {
				return usagef("table: unknown table %q: expected one of %s", name, strings.Join(TableNames, ", "))
			}
			return readingAs(ctx, cmd, "md", reports.TableFormats, func(format string, w *ingest.Warehouse) error {
				src, err := newSource(ctx, cmd, w)
				if err != nil {
					return err
				}
				tables, err := buildTables(src, name)
				if err != nil {
					return err
				}
				for i, t := range tables {
					if i > 0 && format != "csv" {
						fmt.Fprintln(e.stdout)
					}
					if err := reports.WriteTable(e.stdout, format, t, reports.TableOptions{Intervals: cmd.Bool("intervals")}); err != nil {
						return err
					}
				}
				return nil
			})
		},
	}
}

// metricTables are the tables of metric estimates: their grouping and
// their metrics.
var metricTables = map[string]struct {
	caption string
	dims    []string
	metrics []string
}{
	"main":           {"Main results: the 3T metrics per model and harness", []string{"model", "harness", "effort"}, analysis.MainMetrics},
	"tc-components":  {"Task Capability components", []string{"model", "harness", "effort"}, []string{"TC.evidence", "TC.outputs", "TC.constraints", "TC.semantics", "TC.completion", "TC"}},
	"ta-components":  {"Temporal Allocation: now, later and clarifying questions", []string{"model", "harness", "effort"}, []string{"TA.now", "TA.later", "TA.cq", "TA"}},
	"trj-constructs": {"Judged trust: the five constructs", []string{"model", "harness", "effort"}, []string{"TRJ.understandability", "TRJ.competence", "TRJ.reliability", "TRJ.attachment", "TRJ.faith", "TR-J"}},
	"by-scenario":    {"The 3T metrics per scenario", []string{"scenario"}, analysis.MainMetrics},
	"by-persona":     {"The 3T metrics per persona group", []string{"persona_group"}, analysis.MainMetrics},
}

// buildTables computes what a named table shows and lays it out.
func buildTables(src *source, name string) ([]*reports.Table, error) {
	switch name {
	case "judge-agreement":
		ja, err := compareJudges(src)
		if err != nil {
			return nil, err
		}
		ab := fmt.Sprintf(" (A = %s, B = %s)", ja.A, ja.B)
		return []*reports.Table{
			reports.AgreementTable("judge-agreement-continuous", "Judge agreement on continuous scores"+ab+"; TC on 0–100, TR-J on 1–5", ja.cont, "scenarios"),
			reports.AgreementTable("judge-agreement-binary", "Judge agreement on the TA labels"+ab, ja.bin, "scenarios"),
			reports.AgreementTable("judge-agreement-configuration", "Judge agreement between configuration means"+ab, ja.cfg, "scenarios"),
		}, nil
	case "judge-human":
		h, err := compareHumans(src, false)
		if err != nil {
			return nil, err
		}
		out := []*reports.Table{reports.AgreementTable("judge-human", judgeLabel(h.judge)+" (A) against the humans' mean rating (B)", h.vsStats, "scenarios")}
		if h.conflation != nil {
			out = append(out, reports.AgreementTable("judge-human-conflation", "Conflation check: r(TR-J, TC) for the judge and r(trust, tc) for the humans", h.conflation, "scenarios"))
		}
		return out, nil
	case "correlations":
		values, scen, conf, err := src.selectedValues()
		if err != nil {
			return nil, err
		}
		return []*reports.Table{reports.CorrelationTable(analysis.Correlations(values, scen, conf, []int{0, 1, 2, 3}, src.opt))}, nil
	}
	mt := metricTables[name]
	res, err := src.summarize(mt.dims, mt.metrics, nil)
	if err != nil {
		return nil, err
	}
	return []*reports.Table{reports.MetricTable(name, mt.caption, res, mt.dims, mt.metrics)}, nil
}
