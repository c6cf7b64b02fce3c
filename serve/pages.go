package serve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"math"
	"net/http"
	"net/url"
	"strings"

	"github.com/gymlens/gymlens/analysis"
	"github.com/gymlens/gymlens/ingest/rows"
	"github.com/gymlens/gymlens/reports"
)

// overviewTables are the paper tables the overview shows, each cell linked
// to its runs.
var overviewTables = []string{"main", "by-persona", "by-scenario"}

// cell is a table cell of the overview: its text and, for a value, the
// runs behind it.
type cell struct {
	Text, CI, Link string
	Num, Best      bool
}

type overviewTable struct {
	Caption string
	Head    []string
	Rows    [][]cell
	Notes   []string
}

func (s *Server) overview(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	var tables []overviewTable
	var err error
	for _, name := range overviewTables {
		var ts []*reports.Table
		if ts, err = reports.Tables(s.ds, name); err != nil {
			break
		}
		dims, metrics, _ := reports.MetricTableSpec(name)
		for _, t := range ts {
			tables = append(tables, linkTable(t, dims, metrics))
		}
	}
	s.mu.Unlock()
	if err != nil {
		fail(w, err)
		return
	}
	s.page(w, "overview", map[string]any{"Title": "gymlens: " + s.opt.Name, "Tables": tables})
}

// linkTable lays a metric table out with every value linked to the runs
// of its row's group, sorted by the column's metric, highest first.
func linkTable(t *reports.Table, dims, metrics []string) overviewTable {
	o := overviewTable{Caption: t.Caption, Notes: t.Notes}
	o.Head = append(o.Head, t.Keys...)
	for _, c := range t.Columns {
		o.Head = append(o.Head, c.Header)
	}
	keys := make([]string, len(t.Keys))
	for _, row := range t.Rows {
		var cells []cell
		for k, key := range row.Keys {
			if key != "" || k > 0 {
				keys[k] = key
			}
			text := key
			cells = append(cells, cell{Text: text})
		}
		where := url.Values{}
		for k, d := range dims {
			if k < len(keys) {
				where.Add("where", d+"="+keys[k])
			}
		}
		for j, v := range row.Cells {
			c := t.Columns[j]
			x := cell{Num: true, Text: "–"}
			if !math.IsNaN(v.V) {
				x.Text = fmt.Sprintf("%.*f", c.Digits, v.V)
			}
			if v.CI && !math.IsNaN(v.Lo) {
				x.CI = fmt.Sprintf("[%.*f, %.*f]", c.Digits, v.Lo, c.Digits, v.Hi)
			}
			if j < len(metrics) {
				q := url.Values{}
				for _, wv := range where["where"] {
					q.Add("where", wv)
				}
				q.Set("sort", metrics[j])
				q.Set("desc", "1")
				x.Link = "/runs?" + q.Encode()
			} else { // the count of runs: the runs, in order
				x.Link = "/runs?" + where.Encode()
			}
			cells = append(cells, x)
		}
		o.Rows = append(o.Rows, cells)
	}
	return o
}

func (s *Server) runs(w http.ResponseWriter, r *http.Request) {
	rq, list, err := s.runList(r)
	if err != nil {
		fail(w, err)
		return
	}
	var sorts []map[string]string
	for _, m := range analysis.MainMetrics {
		sorts = append(sorts, map[string]string{"Metric": m, "Down": "?" + rq.encode(m, true, 0), "Up": "?" + rq.encode(m, false, 0)})
	}
	pages := map[string]string{}
	if rq.Offset > 0 {
		pages["Prev"] = "?" + rq.encode(rq.Sort, rq.Desc, max(0, rq.Offset-rq.Limit))
	}
	if rq.Offset+rq.Limit < list.Total {
		pages["Next"] = "?" + rq.encode(rq.Sort, rq.Desc, rq.Offset+rq.Limit)
	}
	s.page(w, "runs", map[string]any{"Title": "Runs", "Query": rq, "Where": strings.Join(rq.Where, "; "), "List": list,
		"Sorts": sorts, "Pages": pages, "Metrics": analysis.MainMetrics, "Shown": min(list.Total, rq.Offset+len(list.Runs))})
}

// runList answers a runs query.
func (s *Server) runList(r *http.Request) (RunQuery, RunList, error) {
	rq, err := parseRunQuery(r.URL.Query())
	if err != nil {
		return rq, RunList{}, err
	}
	var matches map[string]bool
	if rq.Q != "" {
		if matches, err = s.store.SearchRuns(r.Context(), rq.Q); err != nil {
			return rq, RunList{}, err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	v, err := s.ds.Values()
	if err != nil {
		return rq, RunList{}, err
	}
	list, err := selectRuns(v, rq, matches)
	return rq, list, err
}

// RunDetail is a run with its tasks, judgments and trajectory.
type RunDetail struct {
	Run    RunSummary        `json:"run"`
	Tasks  []rows.TaskRow    `json:"tasks"`
	TA     []rows.TAJudgment `json:"ta"`
	Events []rows.EventRow   `json:"events"`
	Capped bool              `json:"events_capped"`
}

func (s *Server) runDetail(r *http.Request) (*RunDetail, error) {
	id := r.PathValue("id")
	s.mu.Lock()
	v, err := s.ds.Values()
	var d *RunDetail
	if err == nil {
		if run, vals, ok := findRun(v, id); ok {
			d = &RunDetail{Run: summary(run, vals), Tasks: run.Tasks, TA: run.TA}
		}
	}
	s.mu.Unlock()
	if err != nil {
		return nil, err
	}
	if d == nil {
		return nil, fmt.Errorf("no run %q in %s: %w", id, s.opt.Name, errNotFound)
	}
	events, _, err := s.store.RunEvents(r.Context(), id)
	if err != nil {
		return nil, err
	}
	d.Events, d.Capped = events, len(events) >= maxEvents
	return d, nil
}

// maxEvents mirrors ingest.MaxRunEvents without importing it.
const maxEvents = 20000

func (s *Server) run(w http.ResponseWriter, r *http.Request) {
	d, err := s.runDetail(r)
	if err != nil {
		fail(w, err)
		return
	}
	type day struct {
		Date   string
		Events []rows.EventRow
	}
	var days []day
	for _, e := range d.Events {
		date := e.T.Format("Monday 2 January 2006")
		if len(days) == 0 || days[len(days)-1].Date != date {
			days = append(days, day{Date: date})
		}
		days[len(days)-1].Events = append(days[len(days)-1].Events, e)
	}
	s.page(w, "run", map[string]any{"Title": "Run " + d.Run.RunID, "D": d, "Days": days, "Metrics": analysis.MainMetrics})
}

func (s *Server) apiRuns(w http.ResponseWriter, r *http.Request) {
	_, list, err := s.runList(r)
	if err != nil {
		fail(w, err)
		return
	}
	writeJSON(w, list)
}

func (s *Server) apiRun(w http.ResponseWriter, r *http.Request) {
	d, err := s.runDetail(r)
	if err != nil {
		fail(w, err)
		return
	}
	writeJSON(w, d)
}

// apiMetrics is `gymlens metrics --format json --by BY` (docs/json.md).
func (s *Server) apiMetrics(w http.ResponseWriter, r *http.Request) {
	by := reports.SplitList(r.URL.Query().Get("by"))
	if _, ok := r.URL.Query()["by"]; !ok {
		by = []string{"config"}
	}
	s.mu.Lock()
	res, err := s.ds.Metrics(by)
	s.mu.Unlock()
	if err != nil {
		fail(w, err)
		return
	}
	var b bytes.Buffer
	if err := reports.NewWriter(&b, "json", true).Result(reports.MetricsOutput("json", by, res)); err != nil {
		fail(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(b.Bytes())
}

func writeJSON(w http.ResponseWriter, v any) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		fail(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(append(b, '\n'))
}

// page renders a page; html/template escapes every value.
func (s *Server) page(w http.ResponseWriter, name string, data map[string]any) {
	data["Warehouse"] = s.opt.Name
	var b bytes.Buffer
	if err := pages.ExecuteTemplate(&b, name, data); err != nil {
		fail(w, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(b.Bytes())
}

var pages = template.Must(template.New("").Funcs(template.FuncMap{
	"runPath": runPath,
	"num": func(p *float64, digits int) string {
		if p == nil {
			return "–"
		}
		return fmt.Sprintf("%.*f", digits, *p)
	},
	"digits": reports.Decimals,
	"metric": func(m map[string]*float64, k string) *float64 { return m[k] },
	"judged": func(t rows.TaskRow) string {
		var parts []string
		for _, j := range t.TC {
			parts = append(parts, fmt.Sprintf("%s: correctness %.2f, grounding %.2f, completeness %.2f, artifact %.2f", j.Judge, j.Correctness, j.Grounding, j.Completeness, j.ArtifactQ))
		}
		return strings.Join(parts, "; ")
	},
	"trust": func(t rows.TaskRow) string {
		var parts []string
		for _, j := range t.TRJ {
			parts = append(parts, fmt.Sprintf("%s: %.0f %.0f %.0f %.0f %.0f", j.Judge, j.Scores[0], j.Scores[1], j.Scores[2], j.Scores[3], j.Scores[4]))
		}
		return strings.Join(parts, "; ")
	},
	"rules": func(t rows.TaskRow) string {
		var parts []string
		for i, n := range []string{"evidence", "outputs", "constraints"} {
			if t.RuleSet[i] {
				parts = append(parts, fmt.Sprintf("%s %.2f", n, t.Rules[i]))
			}
		}
		return strings.Join(parts, ", ")
	},
	"clock": func(e rows.EventRow) string { return e.T.Format("15:04") },
}).Parse(pageTemplates))

const pageTemplates = `
{{define "head"}}<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title><link rel="stylesheet" href="/assets/style.css"></head>
<body><header><nav><a href="/">Overview</a><a href="/runs">Runs</a><span class="muted">{{.Warehouse}}</span></nav></header>
{{end}}
{{define "foot"}}</body></html>{{end}}

{{define "overview"}}{{template "head" .}}
<h1>Overview</h1>
<p class="note">Every value links to the runs behind it, sorted by that metric, highest first; a count links to the runs in order.</p>
{{range .Tables}}<h2>{{.Caption}}</h2><div class="wrap"><table class="overview">
<thead><tr>{{range .Head}}<th>{{.}}</th>{{end}}</tr></thead><tbody>
{{range .Rows}}<tr>{{range .}}{{if .Num}}<td class="num"><a href="{{.Link}}">{{.Text}}</a>{{if .CI}} <span class="ci">{{.CI}}</span>{{end}}</td>{{else}}<td>{{.Text}}</td>{{end}}{{end}}</tr>
{{end}}</tbody></table></div>
{{range .Notes}}<p class="note">{{.}}</p>{{end}}
{{end}}{{template "foot" .}}{{end}}

{{define "runs"}}{{template "head" .}}
<h1>Runs</h1>
<form class="filter" method="get" action="/runs">
<label>where: DIM=VALUE, several separated by “;” (harness=CC; persona_group=E)<input name="where" value="{{.Where}}" size="48"></label>
<label>search the trajectories<input name="q" value="{{.Query.Q}}" size="30"></label>
<button type="submit">Show</button></form>
<p class="note">{{.List.Total}} runs{{if .Query.Where}} where {{range .Query.Where}}{{.}} {{end}}{{end}}{{if .Query.Q}} whose trajectory holds “{{.Query.Q}}”{{end}}; showing {{.List.Offset}}–{{.Shown}}{{if .Query.Sort}}, by {{.Query.Sort}}{{if .Query.Desc}} (highest first){{end}}{{end}}.</p>
<div class="wrap"><table><thead><tr><th>run</th><th>configuration</th><th>scenario</th><th>persona</th><th>rep</th>
{{range .Sorts}}<th class="num">{{.Metric}} <a href="{{.Down}}" title="highest first">↓</a><a href="{{.Up}}" title="lowest first">↑</a></th>{{end}}</tr></thead><tbody>
{{$metrics := .Metrics}}{{range .List.Runs}}{{$r := .}}<tr><td><a href="{{runPath .RunID}}">{{.RunID}}</a></td><td>{{.Config}}</td><td>{{.Scenario}}</td><td>{{.Persona}} ({{.PersonaGroup}})</td><td class="num">{{.Rep}}</td>
{{range $metrics}}<td class="num">{{num (metric $r.Metrics .) (digits .)}}</td>{{end}}</tr>
{{end}}</tbody></table></div>
<p>{{with .Pages.Prev}}<a href="{{.}}">previous</a> {{end}}{{with .Pages.Next}}<a href="{{.}}">next</a>{{end}}</p>
{{template "foot" .}}{{end}}

{{define "run"}}{{template "head" .}}
{{$d := .D}}<h1>{{$d.Run.RunID}}</h1>
<p>{{$d.Run.Config}} · scenario {{$d.Run.Scenario}} · persona {{$d.Run.Persona}} ({{$d.Run.PersonaGroup}}) · repetition {{$d.Run.Rep}}</p>
<p>{{range .Metrics}}{{.}} <strong>{{num (metric $d.Run.Metrics .) (digits .)}}</strong> · {{end}}</p>
<h2>Tasks (active)</h2>
<div class="wrap"><table><thead><tr><th>task</th><th class="num">weight</th><th>expected depth</th><th>chosen depth</th><th>rules</th><th>TC judgments</th><th>trust (five constructs)</th></tr></thead><tbody>
{{range $d.Tasks}}<tr><td>{{.Task}}</td><td class="num">{{printf "%.2f" .Weight}}</td><td>{{.Expected}}</td><td>{{if ne .Expected .Chosen}}<span class="flag">{{.Chosen}}</span>{{else}}{{.Chosen}}{{end}}</td><td>{{rules .}}</td><td>{{judged .}}</td><td>{{trust .}}</td></tr>
{{end}}</tbody></table></div>
{{if $d.TA}}<h2>Temporal allocation</h2><ul>{{range $d.TA}}<li>{{.Judge}}: now {{.Now}}, later {{.Later}}{{if .HasCQ}}, CQ {{.CQ}}{{end}}</li>{{end}}</ul>{{end}}
<h2>Trajectory</h2>
{{if $d.Capped}}<p class="note">The first {{len $d.Events}} events are shown.</p>{{end}}
{{range .Days}}<div class="day">{{.Date}}</div>
{{range .Events}}<div class="event {{.Actor}}"><div class="meta">{{clock .}} · #{{.Seq}} · {{.Actor}} · {{.Kind}}{{if .Task}} · task {{.Task}}{{end}}{{if .Tool}} · {{.Tool}}{{end}}{{if .Depth}} · depth {{.Depth}}{{end}}{{if .Decision}} · {{.Decision}}{{end}}{{if .Ref}} · answers #{{.Ref}}{{end}}{{if not .Visible}} · not shown to the user{{end}}</div>
{{if .Text}}<div class="text">{{.Text}}</div>{{end}}
{{if .Args}}<details><summary>arguments</summary><pre>{{.Args}}</pre></details>{{end}}
{{if .Result}}<details><summary>result</summary><pre>{{.Result}}</pre></details>{{end}}</div>
{{end}}{{end}}
{{template "foot" .}}{{end}}
`
