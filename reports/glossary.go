package reports

import (
	"bytes"
	"context"
	"fmt"
	"html"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/gymlens/gymlens/analysis"
	"github.com/gymlens/gymlens/ingest/rows"
)

// GlossaryEntry explains one code the tables and figures use.
type GlossaryEntry struct {
	Kind, Code, Meaning string
}

// metricGlossary explains the metrics and TA's parts (docs/glossary.md
// gives their formulas).
var metricGlossary = []GlossaryEntry{
	{"metric", "TC", "Task Capability, 0–100: per active task the mean of its components — evidence, outputs and constraints (rule-based, where the task has such checks), semantics and completion (judged: see TC's parts) — weighted over the run's tasks, then averaged over runs."},
	{"TC part", "evidence", "rule-based: the share of the task's evidence checks (tool calls the task needs, with their arguments) that its credited calls meet (0–100 in the tables)."},
	{"TC part", "outputs", "rule-based: the share of the task's output checks (tool calls that deliver, with their arguments) that its credited calls meet."},
	{"TC part", "constraints", "rule-based: the share of the task's constraint checks (text it must or must not contain) that are met."},
	{"TC part", "semantics", "judged: the mean of the judges' correctness and grounding."},
	{"TC part", "completion", "judged: the mean of the judges' completeness and artifact_quality."},
	{"TC part", "correctness", "a judge's score, 0–1 in its answer (0–100 in the tables): the deliverable is right; with grounding it makes semantics."},
	{"TC part", "grounding", "a judge's score: the deliverable rests on what the trajectory shows (its cited events); with correctness it makes semantics."},
	{"TC part", "completeness", "a judge's score: the task is done whole; with artifact_quality it makes completion."},
	{"TC part", "artifact_quality", "a judge's score: the quality of what the agent produced; with completeness it makes completion."},
	{"metric", "TA", "Temporal Allocation, %: the share of runs whose judges found both now and later in the scenario's decision window (averaged over judges)."},
	{"metric", "TR-D", "Trust, depth, %: the share of active tasks the agent took to the depth the persona expects (read, prepare, suggest or execute); no LLM."},
	{"metric", "TR-J", "Trust, judged, 1–5: the judges' mean of five trust constructs (understandability, technical competence, reliability, personal attachment, faith) at each task's final turn."},
	{"TA part", "now", "the urgent task was taken up immediately."},
	{"TA part", "later", "the competing task was explicitly deferred."},
	{"TA part", "CQ", "continuation quality, 0, ½ or 1: how well the deferred task was taken up again (reported beside TA, not in it)."},
}

// Glossary explains every code a report on these runs shows: the metrics
// and TA's parts; the harnesses (by the code the run logs give them, with
// the models run on each: the logs carry no longer name); the persona
// groups, with the personas and labels the scenario specs give them; the
// reasoning efforts; and the human study's conditions.
func Glossary(personas []rows.Persona, runs []rows.RunRow, ratings []rows.RatingRow) []GlossaryEntry {
	out := append([]GlossaryEntry(nil), metricGlossary...)
	models := map[string][]string{}
	efforts := map[string]bool{}
	for _, r := range runs {
		if !slices.Contains(models[r.Harness], r.Model) {
			models[r.Harness] = append(models[r.Harness], r.Model)
		}
		efforts[r.Effort] = true
	}
	for _, h := range sortedKeys(models) {
		ms := models[h]
		sort.Strings(ms)
		out = append(out, GlossaryEntry{"harness", h, "the agent harness the configuration ran in, by the code the run logs give it; models run on it: " + strings.Join(ms, ", ") + "."})
	}
	type group struct{ names, labels []string }
	groups := map[string]*group{}
	for _, p := range personas {
		g := groups[p.Group]
		if g == nil {
			g = &group{}
			groups[p.Group] = g
		}
		if !slices.Contains(g.names, p.Name) {
			g.names = append(g.names, p.Name)
		}
		if p.Label != "" && !slices.Contains(g.labels, p.Label) {
			g.labels = append(g.labels, p.Label)
		}
	}
	for _, code := range sortedKeys(groups) {
		g := groups[code]
		sort.Strings(g.names)
		m := "persona group of " + strings.Join(g.names, ", ")
		if len(g.labels) > 0 {
			shown := g.labels
			if len(shown) > 2 {
				shown = shown[:2]
			}
			m += " (the scenario specs: “" + strings.Join(shown, "”; “") + "”"
			if n := len(g.labels) - len(shown); n > 0 {
				m += fmt.Sprintf(" and %d more", n)
			}
			m += ")"
		}
		out = append(out, GlossaryEntry{"persona group", code, m + "."})
	}
	effs := sortedKeys(efforts)
	sort.SliceStable(effs, func(a, b int) bool { return analysis.EffortRank(effs[a]) < analysis.EffortRank(effs[b]) })
	for _, e := range effs {
		m := "the reasoning effort asked of the model"
		if e == "none" {
			m = "no reasoning effort set (the model's default)"
		}
		out = append(out, GlossaryEntry{"effort", e, m + "."})
	}
	conds := map[string]bool{}
	for _, r := range ratings {
		if r.Condition != "" {
			conds[r.Condition] = true
		}
	}
	for _, c := range sortedKeys(conds) {
		out = append(out, GlossaryEntry{"study condition", c, conditionMeaning(c)})
	}
	return out
}

// conditionMeaning spells a study condition out, one letter per
// checkpoint phase: A an appropriate agent action, M a misaligned one.
func conditionMeaning(c string) string {
	var phases []string
	for _, l := range c {
		switch l {
		case 'A':
			phases = append(phases, "appropriate")
		case 'M':
			phases = append(phases, "misaligned")
		default:
			return "a condition of the human study, as the ratings name it."
		}
	}
	return "the agent's action in each checkpoint phase of the human study: " + strings.Join(phases, ", ") + "."
}

func sortedKeys[T any](m map[string]T) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// GlossaryStore gives the personas of the scenario specs (the warehouse
// is one).
type GlossaryStore interface {
	Personas(ctx context.Context) ([]rows.Persona, error)
}

// AddGlossary fills the report's glossary from the dataset's runs and
// ratings and the store's personas.
func (r *Report) AddGlossary(ctx context.Context, s GlossaryStore, ds *Dataset) error {
	g, err := DatasetGlossary(ctx, s, ds)
	r.Glossary = g
	return err
}

// DatasetGlossary is the Glossary of the dataset's selected runs, its
// ratings and the store's personas.
func DatasetGlossary(ctx context.Context, s GlossaryStore, ds *Dataset) ([]GlossaryEntry, error) {
	ps, err := s.Personas(ctx)
	if err != nil {
		return nil, err
	}
	runs, err := ds.Selected()
	if err != nil {
		return nil, err
	}
	// The ratings that name a study condition: all the glossary reads.
	ratings, err := ds.RatingsWhere(func(g *rows.RatingRow) bool { return g.Condition != "" })
	if err != nil {
		return nil, err
	}
	return Glossary(ps, runs, ratings), nil
}

// WriteDatasetGlossary writes the dataset's glossary (DatasetGlossary)
// to out as text, under the heading "codes:".
func WriteDatasetGlossary(ctx context.Context, out io.Writer, s GlossaryStore, ds *Dataset) error {
	g, err := DatasetGlossary(ctx, s, ds)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	WriteGlossary(&b, "table", g)
	_, err = fmt.Fprint(out, "\ncodes:\n"+b.String())
	return err
}

// WriteGlossary writes the glossary as text (a line per code), Markdown
// or an HTML definition list.
func WriteGlossary(b *bytes.Buffer, format string, g []GlossaryEntry) {
	switch format {
	case "html":
		b.WriteString("<dl class=\"glossary\">\n")
		for _, e := range g {
			fmt.Fprintf(b, "<dt><code>%s</code> <span class=\"note\">%s</span></dt><dd>%s</dd>\n", html.EscapeString(e.Code), html.EscapeString(e.Kind), html.EscapeString(e.Meaning))
		}
		b.WriteString("</dl>\n")
	case "md":
		for _, e := range g {
			fmt.Fprintf(b, "- `%s` (%s): %s\n", e.Code, e.Kind, mdEscaper.Replace(e.Meaning))
		}
	default:
		w := 0
		for _, e := range g {
			w = max(w, len([]rune(e.Code)))
		}
		for _, e := range g {
			fmt.Fprintf(b, "  %-*s  %s\n", w, e.Code, e.Meaning)
		}
	}
}
