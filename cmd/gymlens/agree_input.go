package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/gymlens/gymlens/analysis"
	"github.com/gymlens/gymlens/analysis/stat"
	"github.com/gymlens/gymlens/ingest/runlog"
	"github.com/gymlens/gymlens/reports"
)

func agreeInput(e *env, cmd *cli.Command, format string) error {
	level := cmd.String("level")
	if err := stat.CheckLevel(level); err != nil {
		return usagef("--%v", err)
	}
	opt, err := bootstrapOptions(cmd)
	if err != nil {
		return err
	}
	var cats []string
	if c := cmd.String("categories"); c != "" {
		cats = strings.Split(c, ",")
	}
	lr, err := runlog.ReadLongRatings(cmd.String("input"), cats)
	if err != nil {
		return err
	}
	var figs []analysis.RatingFigures
	for _, q := range lr.Questions {
		if q.Labels != nil && !q.Ordered && level != analysis.Nominal {
			e := *q.FirstText
			e.Expected += fmt.Sprintf(" (--level %s; text categories need --level nominal, or their order in --categories %s)",
				level, strings.Join(q.Labels, ","))
			return &e
		}
		a, b := q.Pairs()
		set := analysis.RatingSet{Question: q.Name, Units: q.Units(), Items: len(q.Items), Raters: len(q.Raters), A: a, B: b,
			Unordered: q.Labels != nil && !q.Ordered}
		figs = append(figs, analysis.RatingAgreement(set, level, opt))
	}
	return reports.WriteRatingAgreement(writer(e, cmd, format), figs, level, opt)
}
