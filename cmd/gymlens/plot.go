package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/gymlens/gymlens/analysis"
	"github.com/gymlens/gymlens/ingest"
	"github.com/gymlens/gymlens/plots"
)

func plotCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "plot",
		Usage:     "a paper figure as PNG, SVG and PDF: " + strings.Join(plots.FigureNames, ", "),
		ArgsUsage: "NAME",
		Description: "model-size: a metric against model size per family; harness-switch: the change per open model (known size)\n" +
			"when switching harness; correlations: the run-level correlation matrix; harness-comparison: the four metrics per\n" +
			"harness; effort: the four metrics against reasoning effort (the model and harness with most effort levels, or\n" +
			"--where); by-scenario, by-persona; human-trust: a study question over checkpoint days by condition.",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "out", Required: true, Usage: "write NAME.png, NAME.svg and NAME.pdf into `DIR`"},
			&cli.StringFlag{Name: "formats", Value: strings.Join(plots.Formats, ","), Usage: "image `FORMATS`"},
			&cli.StringFlag{Name: "metric", Value: "TC", Usage: "model-size, harness-switch: the `METRIC`"},
			&cli.StringFlag{Name: "switch", Value: "CC,OC", Usage: "harness-switch: from and to `HARNESS,HARNESS`"},
			&cli.StringFlag{Name: "question", Value: "trust", Usage: "human-trust: the study `QUESTION`"},
			&cli.StringSliceFlag{Name: "where", Usage: "keep runs with `DIM=VALUE` (repeat)"},
			&cli.StringFlag{Name: "judge", Usage: "use one `JUDGE`'s judgments instead of the average"},
		}, bootstrapFlags()...),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.NArg() != 1 {
				return usagef("plot: name one figure: %s", strings.Join(plots.FigureNames, ", "))
			}
			name := cmd.Args().First()
			if !slices.Contains(plots.FigureNames, name) {
				return usagef("plot: unknown figure %q: expected one of %s", name, strings.Join(plots.FigureNames, ", "))
			}
			formats := splitList(cmd.String("formats"))
			for _, f := range formats {
				if !slices.Contains(plots.Formats, f) {
					return usagef("--formats: expected some of %s, found %q", strings.Join(plots.Formats, ", "), f)
				}
			}
			return reading(ctx, cmd, func(_ string, w *ingest.Warehouse) error {
				src, err := newSource(ctx, cmd, w)
				if err != nil {
					return err
				}
				fig, err := buildFigure(src, name)
				if err != nil {
					return err
				}
				paths, err := writeFigure(fig, cmd.String("out"), formats)
				if err != nil {
					return err
				}
				if !cmd.Bool("quiet") {
					fmt.Fprintf(e.stdout, "wrote %s\n", strings.Join(paths, ", "))
				}
				return nil
			})
		},
	}
}

// writeFigure renders fig in each format into dir, each file whole or not
// at all.
func writeFigure(fig *plots.Figure, dir string, formats []string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("--out: %v", err)
	}
	var paths []string
	for _, f := range formats {
		b, err := fig.Render(f)
		if err != nil {
			return nil, err
		}
		p := filepath.Join(dir, fig.Name+"."+f)
		if err := writeAtomic(p, b); err != nil {
			return nil, err
		}
		paths = append(paths, p)
	}
	return paths, nil
}

func writeAtomic(path string, b []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".gymlens-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// buildFigure computes what a named figure shows and draws it.
func buildFigure(src *source, name string) (*plots.Figure, error) {
	cmd := src.cmd
	if name == "human-trust" {
		ratings, err := src.humanRatings()
		if err != nil {
			return nil, err
		}
		stats, _, err := analysis.Study(studyRatings(ratings), "acceptance", src.studyOptions())
		if err != nil {
			return nil, err
		}
		question := "trust"
		if hasFlag(cmd, "question") {
			question = cmd.String("question")
		}
		return plots.HumanTrust(stats, question)
	}
	metric := "TC"
	if hasFlag(cmd, "metric") {
		metric = cmd.String("metric")
	}
	if analysis.MetricIndex(metric) < 0 {
		return nil, usagef("--metric: unknown metric %q: expected one of %s", metric, strings.Join(analysis.AllMetrics, ", "))
	}
	switch name {
	case "model-size":
		res, err := src.summarize([]string{"family", "size"}, []string{metric}, nil)
		if err != nil {
			return nil, err
		}
		return plots.ModelSize(res, metric)
	case "harness-switch":
		sw := []string{"CC", "OC"}
		if hasFlag(cmd, "switch") {
			sw = splitList(cmd.String("switch"))
		}
		if len(sw) != 2 {
			return nil, usagef("--switch: expected FROM,TO, found %q", cmd.String("switch"))
		}
		res, err := src.summarize([]string{"model", "size", "harness"}, []string{metric}, nil)
		if err != nil {
			return nil, err
		}
		return plots.HarnessSwitch(res, metric, sw[0], sw[1])
	case "correlations":
		values, scen, _, err := src.selectedValues()
		if err != nil {
			return nil, err
		}
		return plots.CorrelationMatrix(analysis.RunCorrelationMatrix(values, scen, []int{0, 1, 2, 3}, src.opt))
	case "harness-comparison":
		res, err := src.summarize([]string{"harness"}, analysis.MainMetrics, nil)
		if err != nil {
			return nil, err
		}
		return plots.HarnessComparison(res, analysis.MainMetrics)
	case "by-scenario", "by-persona":
		dim, label := "scenario", "scenario"
		if name == "by-persona" {
			dim, label = "persona_group", "persona group"
		}
		res, err := src.summarize([]string{dim}, analysis.MainMetrics, nil)
		if err != nil {
			return nil, err
		}
		return plots.Breakdown(name, label, res, dim, analysis.MainMetrics)
	case "effort":
		rv, err := src.values()
		if err != nil {
			return nil, err
		}
		where, what, err := effortSelection(rv)
		if err != nil {
			return nil, err
		}
		res, err := src.summarize([]string{"effort"}, analysis.MainMetrics, where)
		if err != nil {
			return nil, err
		}
		return plots.Effort(res, analysis.MainMetrics, what)
	}
	return nil, fmt.Errorf("unknown figure %q", name)
}

// effortSelection keeps, unless --where already names a model and a
// harness, the model and harness run at the most effort levels.
func effortSelection(rv *runValues) (map[string][]string, string, error) {
	where := map[string][]string{}
	for k, v := range rv.where {
		where[k] = v
	}
	if len(where["model"]) == 1 && len(where["harness"]) == 1 {
		return where, fmt.Sprintf(" (%s, %s)", where["model"][0], where["harness"][0]), nil
	}
	groups, err := analysis.GroupRuns(rv.runs, []string{"model", "harness", "effort"}, rv.where)
	if err != nil {
		return nil, "", err
	}
	levels := map[[2]string]int{}
	var best [2]string
	for _, g := range groups {
		k := [2]string{g.Key["model"], g.Key["harness"]}
		levels[k]++
		if levels[k] > levels[best] || levels[k] == levels[best] && (k[0] < best[0] || k[0] == best[0] && k[1] < best[1]) {
			best = k
		}
	}
	if levels[best] < 2 {
		return nil, "", fmt.Errorf("effort: no model and harness were run at two effort levels or more")
	}
	where["model"], where["harness"] = []string{best[0]}, []string{best[1]}
	return where, fmt.Sprintf(" (%s, %s)", best[0], best[1]), nil
}

// studyRatings are the ratings with a day and a condition.
func studyRatings(ratings []ingest.RatingRow) []analysis.StudyRating {
	var study []analysis.StudyRating
	for _, g := range ratings {
		if g.Condition != "" && g.Day != 0 {
			study = append(study, analysis.StudyRating{Participant: g.Rater, Question: g.Question, Condition: g.Condition, Day: g.Day, Value: g.Value})
		}
	}
	return study
}
