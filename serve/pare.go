package serve

import (
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strings"

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
}

func pareSummary(p *rows.PARERun) pareRow {
	row := pareRow{PARERun: *p, Link: "/pare/" + url.PathEscape(p.RunID), Success: "–", Tokens: "–", Proposals: len(p.Decisions)}
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
		if runs[i].RunID == id {
			s.page(w, "pare-run", map[string]any{"Title": "PARE run " + id, "R": pareSummary(&runs[i]), "Decisions": runs[i].Decisions, "Events": runs[i].Events})
			return
		}
	}
	fail(w, fmt.Errorf("no PARE or Meta-ARE run %q in %s: %w", id, s.opt.Name, errNotFound))
}

const pareTemplates = `
{{define "pare-runs"}}{{template "head" .}}
<h1>PARE and Meta-ARE runs</h1>
<form class="filter" method="get" action="/pare"><label>search ids, scenarios, configurations<input name="q" value="{{.Q}}" size="30"></label><button type="submit">Show</button></form>
<p class="note">{{len .Runs}} of {{.Total}} runs.</p>
{{if .Runs}}<div class="wrap"><table><thead><tr><th>run</th><th>source</th><th>configuration</th><th>scenario</th><th>capability</th><th class="num">success</th><th class="num">decision points</th><th class="num">accepted</th><th class="num">LLM calls</th><th class="num">tokens</th><th>skipped</th></tr></thead><tbody>
{{range .Runs}}<tr><td><a href="{{.Link}}">{{.RunID}}</a></td><td>{{.Source}}</td><td>{{.ConfigID}}</td><td>{{.Scenario}}</td><td>{{.Capability}}</td><td class="num">{{.Success}}</td><td class="num">{{.Proposals}}</td><td class="num">{{.Accepted}}</td><td class="num">{{.LLMCalls}}</td><td class="num">{{.Tokens}}</td><td>{{.Skip}}</td></tr>
{{end}}</tbody></table></div>{{end}}
{{template "foot" .}}{{end}}

{{define "pare-run"}}{{template "head" .}}
{{$r := .R}}<h1>{{$r.RunID}}</h1>
<p>{{$r.Source}} · {{$r.ConfigID}} · scenario {{$r.Scenario}}{{if $r.Capability}} · {{$r.Capability}}{{end}} · success {{$r.Success}} · {{$r.LLMCalls}} LLM calls{{if $r.ToolNoise}} · tool noise{{end}}{{if $r.EnvNoise}} · environment noise{{end}}</p>
<h2>Decision points</h2>
{{if .Decisions}}<div class="wrap"><table><thead><tr><th>#</th><th class="num">proposed at (s)</th><th class="num">decided at (s)</th><th>finally accepted</th></tr></thead><tbody>
{{range $i, $d := .Decisions}}<tr><td>{{$i}}</td><td class="num">{{printf "%.1f" .ProposalT}}</td><td class="num">{{printf "%.1f" .DecisionT}}</td><td>{{if .Final}}yes{{else}}no{{end}}</td></tr>
{{end}}</tbody></table></div>{{else}}<p class="note">No decision point: no proposal was pending when the user acted.</p>{{end}}
<h2>Events</h2>
<div class="wrap"><table><thead><tr><th class="num">t (s)</th><th>actor</th><th>function</th><th>operation</th><th>mode</th><th class="num">turn</th></tr></thead><tbody>
{{range .Events}}<tr><td class="num">{{printf "%.1f" .T}}</td><td>{{.Actor}}</td><td>{{.Function}}</td><td>{{.Operation}}</td><td>{{.Mode}}</td><td class="num">{{if ge .Turn 0}}{{.Turn}}{{end}}</td></tr>
{{end}}</tbody></table></div>
{{template "foot" .}}{{end}}
`
