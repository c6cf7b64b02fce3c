package serve

import (
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gymlens/gymlens/ingest/rows"
)

// pareRuns reads the PARE and Meta-ARE runs once (their traces are few:
// each run a file PARE exported).
func (s *Server) pareRuns(r *http.Request) ([]rows.PARERun, error) {
	s.pmu.Lock()
	defer s.pmu.Unlock()
	if s.pare == nil {
		runs, err := s.store.LoadPARERuns(r.Context())
		if err != nil {
			return nil, err
		}
		if runs == nil {
			runs = []rows.PARERun{}
		}
		s.pare = runs
	}
	return s.pare, nil
}

// pareRow is a PARE run in the list.
type pareRow struct {
	rows.PARERun
	Link, Success, Tokens string
	Proposals, Accepted   int
	Name, Config          string // the run id and configuration with short model names (shortModels)
	Short                 string // the run id without its models
}

func pareSummary(p *rows.PARERun) pareRow {
	row := pareRow{PARERun: *p, Link: "/pare/" + url.PathEscape(p.RunID), Success: "–", Tokens: "–", Proposals: len(p.Decisions),
		Name: shortModels(p.RunID), Config: shortModels(p.ConfigID)}
	if short, _, ok := strings.Cut(p.RunID, " | "); ok && short != "" {
		row.Short = short // the list's column: the configuration has its own
	} else {
		row.Short = row.Name
	}
	if !math.IsNaN(p.Success) {
		row.Success = fmt.Sprintf("%.0f", p.Success)
	}
	if !math.IsNaN(p.Tokens) {
		row.Tokens = fmt.Sprintf("%.0f", p.Tokens)
	}
	for _, d := range p.Decisions {
		if d.Final {
			row.Accepted++
		}
	}
	return row
}

// maxModelName is the longest model name a PARE page shows in full; a
// longer one is cut, with "…" (the full id is on hover).
const maxModelName = 36

// shortModels shortens each model id of a " | "-separated name (a PARE
// configuration or run id): a provider's id (an AWS Bedrock ARN with its
// account, a region and vendor prefix: "arn:…/us.anthropic.claude-x") to
// the model's own name (claude-x), cut at maxModelName runes.
func shortModels(name string) string {
	parts := strings.Split(name, " | ")
	for i, p := range parts {
		if strings.HasPrefix(p, "arn:") || strings.Count(p, "/") > 0 {
			p = p[strings.LastIndex(p, "/")+1:]
		}
		for _, region := range []string{"us.", "eu.", "apac.", "global."} {
			p = strings.TrimPrefix(p, region)
		}
		// A vendor prefix ("anthropic.", "meta.") has letters only.
		if dot := strings.Index(p, "."); dot > 0 && strings.IndexFunc(p[:dot], func(r rune) bool { return r < 'a' || r > 'z' }) < 0 && dot+1 < len(p) {
			p = p[dot+1:]
		}
		if r := []rune(p); len(r) > maxModelName {
			p = string(r[:maxModelName-1]) + "…"
		}
		parts[i] = p
	}
	return strings.Join(parts, " | ")
}

// pareTime is a PARE time (Unix seconds) as a date in UTC, to the tenth
// of a second.
func pareTime(t float64) string {
	if math.IsNaN(t) || math.IsInf(t, 0) {
		return "–"
	}
	return time.UnixMilli(int64(math.Round(t*1000))).UTC().Format("2006-01-02 15:04:05.0") + " UTC"
}

// sinceStart is t's distance from the run's start, in seconds.
func sinceStart(t, start float64) string {
	if math.IsNaN(t) || math.IsNaN(start) {
		return ""
	}
	return fmt.Sprintf("%+.1f s", t-start)
}

// pareEventView is a PARE event as its page shows it.
type pareEventView struct {
	rows.PAREEvent
	rows.PAREEventText
	At, Since string
}

// pareDecisionView is a decision point as its page shows it.
type pareDecisionView struct {
	rows.PAREDecision
	Proposal                                 string
	ProposedAt, ProposedSince, DecidedAt, In string
}

// pareList is /pare: the PARE and Meta-ARE runs, filtered by a search of
// their ids, scenarios and configurations (?q=).
func (s *Server) pareList(w http.ResponseWriter, r *http.Request) {
	runs, err := s.pareRuns(r)
	if err != nil {
		fail(w, err)
		return
	}
	q := strings.ToLower(strings.TrimSpace(r.URL.Query().Get("q")))
	var list []pareRow
	for i := range runs {
		p := &runs[i]
		if q != "" && !strings.Contains(strings.ToLower(p.RunID+" "+p.Scenario+" "+p.ConfigID+" "+p.Capability), q) {
			continue
		}
		list = append(list, pareSummary(p))
	}
	s.page(w, "pare-runs", map[string]any{"Title": "PARE and Meta-ARE runs", "Runs": list, "Q": r.URL.Query().Get("q"), "Total": len(runs)})
}

// pareRun is /pare/{id}: a PARE run's events in time order with its
// decision points (a proposal and the user's answer to it) marked.
func (s *Server) pareRun(w http.ResponseWriter, r *http.Request) {
	runs, err := s.pareRuns(r)
	if err != nil {
		fail(w, err)
		return
	}
	id := r.PathValue("id")
	for i := range runs {
		p := &runs[i]
		if p.RunID != id {
			continue
		}
		texts, err := s.store.PARETexts(r.Context(), id)
		if err != nil {
			fail(w, err)
			return
		}
		start := math.NaN()
		if len(p.Events) > 0 {
			start = p.Events[0].T
		}
		events := make([]pareEventView, len(p.Events))
		for j, e := range p.Events {
			events[j] = pareEventView{PAREEvent: e, At: pareTime(e.T), Since: sinceStart(e.T, start)}
			if j < len(texts.Events) {
				events[j].PAREEventText = texts.Events[j]
			}
		}
		decisions := make([]pareDecisionView, len(p.Decisions))
		for j, d := range p.Decisions {
			decisions[j] = pareDecisionView{PAREDecision: d, ProposedAt: pareTime(d.ProposalT), ProposedSince: sinceStart(d.ProposalT, start),
				DecidedAt: pareTime(d.DecisionT)}
			if !math.IsNaN(d.ProposalT) && !math.IsNaN(d.DecisionT) {
				decisions[j].In = fmt.Sprintf("%.1f s", d.DecisionT-d.ProposalT)
			}
			if j < len(texts.Proposals) {
				decisions[j].Proposal = texts.Proposals[j]
			}
		}
		s.page(w, "pare-run", map[string]any{"Title": "PARE run " + shortModels(id), "R": pareSummary(p), "Decisions": decisions, "Events": events,
			"Start": pareTime(start)})
		return
	}
	fail(w, fmt.Errorf("no PARE or Meta-ARE run %q in %s: %w", id, s.opt.Name, errNotFound))
}

const pareTemplates = `
{{define "pare-runs"}}{{template "head" .}}
<h1>PARE and Meta-ARE runs</h1>
<form class="filter" method="get" action="/pare"><label>search ids, scenarios, configurations<input name="q" value="{{.Q}}" size="30"></label><button type="submit">Show</button></form>
<p class="note">{{len .Runs}} of {{.Total}} runs.</p>
{{if .Runs}}<div class="wrap"><table class="pare"><thead><tr><th>run</th><th>source</th><th>configuration</th><th>scenario</th><th>capability</th><th class="num">success</th><th class="num">decision points</th><th class="num">accepted</th><th class="num">LLM calls</th><th class="num">tokens</th><th>skipped</th></tr></thead><tbody>
{{range .Runs}}<tr><td><a href="{{.Link}}" title="{{.RunID}}">{{.Short}}</a></td><td>{{.Source}}</td><td title="{{.ConfigID}}">{{.Config}}</td><td>{{.Scenario}}</td><td>{{.Capability}}</td><td class="num">{{.Success}}</td><td class="num">{{.Proposals}}</td><td class="num">{{.Accepted}}</td><td class="num">{{.LLMCalls}}</td><td class="num">{{.Tokens}}</td><td>{{.Skip}}</td></tr>
{{end}}</tbody></table></div>{{end}}
{{template "foot" .}}{{end}}

{{define "pare-run"}}{{template "head" .}}
{{$r := .R}}<h1 title="{{$r.RunID}}">{{$r.Name}}</h1>
<p>{{$r.Source}} · <span title="{{$r.ConfigID}}">{{$r.Config}}</span> · scenario {{$r.Scenario}}{{if $r.Capability}} · {{$r.Capability}}{{end}} · success {{$r.Success}} · {{$r.LLMCalls}} LLM calls{{if $r.ToolNoise}} · tool noise{{end}}{{if $r.EnvNoise}} · environment noise{{end}}</p>
<p class="note">Times in UTC; “from start” counts from the run’s first event ({{.Start}}).</p>
<h2>Decision points</h2>
{{if .Decisions}}<div class="wrap"><table><thead><tr><th>#</th><th>proposed at</th><th class="num">from start</th><th>proposal</th><th>decided at</th><th class="num">after</th><th>finally accepted</th></tr></thead><tbody>
{{range $i, $d := .Decisions}}<tr><td>{{$i}}</td><td>{{.ProposedAt}}</td><td class="num">{{.ProposedSince}}</td><td class="text">{{.Proposal}}</td><td>{{.DecidedAt}}</td><td class="num">{{.In}}</td><td>{{if .Final}}yes{{else}}no{{end}}</td></tr>
{{end}}</tbody></table></div>{{else}}<p class="note">No decision point: no proposal was pending when the user acted.</p>{{end}}
<h2>Events</h2>
<div class="wrap"><table><thead><tr><th>at</th><th class="num">from start</th><th>actor</th><th>function</th><th>operation</th><th>mode</th><th class="num">turn</th><th>says</th></tr></thead><tbody>
{{range .Events}}<tr><td>{{.At}}</td><td class="num">{{.Since}}</td><td>{{.Actor}}</td><td>{{.Function}}</td><td>{{.Operation}}</td><td>{{.Mode}}</td><td class="num">{{if ge .Turn 0}}{{.Turn}}{{end}}</td>
<td>{{if .Text}}<div class="text">{{.Text}}</div>{{end}}{{if and .Args (ne .Args "{}")}}<details><summary>arguments</summary><pre>{{.Args}}</pre></details>{{end}}{{if .Result}}<details><summary>result</summary><pre>{{.Result}}</pre></details>{{end}}</td></tr>
{{end}}</tbody></table></div>
{{template "foot" .}}{{end}}
`
