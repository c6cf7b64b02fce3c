package serve

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/gymlens/gymlens/analysis"
	"github.com/gymlens/gymlens/ingest/rows"
)

// InspectStore is a Store that holds Inspect samples (ingest.Warehouse
// is one): the viewer's Inspect pages read through it.
type InspectStore interface {
	// LoadInspect reads the evaluations and their scores (the overview's
	// means).
	LoadInspect(ctx context.Context) (*rows.InspectData, error)
	InspectFacets(ctx context.Context) (*rows.InspectFacets, error)
	InspectSamples(ctx context.Context, q rows.InspectSampleQuery) (*rows.InspectSampleList, error)
	// InspectSample reads one sample at one epoch (nil: not there).
	InspectSample(ctx context.Context, k rows.InspectSampleID) (*rows.InspectSamplePage, error)
}

// maxInspectList bounds a page of the sample list (ingest's
// MaxInspectList).
const maxInspectList = 500

// maxInspectReads bounds the sample pages (and comparisons) a process
// reads and renders at once: each holds up to ingest.MaxInspectPageBytes
// of a sample's items (two for a comparison) and its text while it is
// built; the next wait for a slot, or for their request to end.
const maxInspectReads = 2

var inspectReads = make(chan struct{}, maxInspectReads)

// inspectSlot waits for a slot to read a sample page in; release gives it
// back.
func inspectSlot(ctx context.Context) (release func(), err error) {
	select {
	case inspectReads <- struct{}{}:
		return func() { <-inspectReads }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// inspectStore is the store's Inspect face, or an error a page shows.
func (s *Server) inspectStore() (InspectStore, error) {
	is, ok := s.store.(InspectStore)
	if !ok {
		return nil, fmt.Errorf("%s holds no Inspect tables: %w", s.opt.Name, errNotFound)
	}
	return is, nil
}

// sampleReader is the store's Inspect face with a slot to read a sample
// page in (inspectSlot); release gives the slot back.
func (s *Server) sampleReader(ctx context.Context) (is InspectStore, release func(), err error) {
	if is, err = s.inspectStore(); err != nil {
		return nil, nil, err
	}
	if release, err = inspectSlot(ctx); err != nil {
		return nil, nil, err
	}
	return is, release, nil
}

// onlyInspect says whether the warehouse holds Inspect samples but no
// runs: its overview is the Inspect one.
func (s *Server) onlyInspect(r *http.Request) bool {
	is, ok := s.store.(InspectStore)
	if !ok {
		return false
	}
	if _, _, err := s.dataset(); err == nil {
		return false // the runs' overview failed otherwise
	}
	f, err := is.InspectFacets(r.Context())
	return err == nil && len(f.Tasks) > 0
}

// inspectMeans are each scorer's means per task and configuration,
// computed once (the samples do not change under the viewer).
func (s *Server) inspectMeans(ctx context.Context, is InspectStore) ([]analysis.InspectMean, error) {
	s.imu.Lock()
	defer s.imu.Unlock()
	if s.imeans != nil {
		return s.imeans, nil
	}
	d, err := is.LoadInspect(ctx)
	if err != nil {
		return nil, err
	}
	ms := []analysis.InspectMean{}
	if len(d.Evals) > 0 {
		if ms, err = analysis.InspectMeans(d, "", s.opt.Bootstrap); err != nil {
			return nil, err
		}
	}
	s.imeans = ms
	return ms, nil
}

// samplesLink is the list of the samples of a task, configuration and
// metric ("" for any).
func samplesLink(task, config, metric string) string {
	v := url.Values{}
	for _, kv := range [][2]string{{"task", task}, {"config", config}, {"metric", metric}} {
		if kv[1] != "" {
			v.Set(kv[0], kv[1])
		}
	}
	if len(v) == 0 {
		return "/inspect/samples"
	}
	return "/inspect/samples?" + v.Encode()
}

// samplePath is the viewer's address of a sample at an epoch.
func samplePath(k rows.InspectSampleID) string {
	return "/inspect/sample?" + url.Values{"eval": {k.EvalID}, "id": {k.SampleID}, "epoch": {strconv.Itoa(k.Epoch)}}.Encode()
}

// compareSamplesPath is the address of two samples side by side.
func compareSamplesPath(a, b rows.InspectSampleID) string {
	return "/inspect/compare?" + url.Values{"eval_a": {a.EvalID}, "id_a": {a.SampleID}, "epoch_a": {strconv.Itoa(a.Epoch)},
		"eval_b": {b.EvalID}, "id_b": {b.SampleID}, "epoch_b": {strconv.Itoa(b.Epoch)}}.Encode()
}

// inspectCell is a cell of the Inspect overview: a scorer's mean with its
// interval and the samples behind it, linked to them.
type inspectCell struct {
	Text, CI, Link string
	N              int
}

type inspectRow struct {
	Config, Link string
	Cells        []inspectCell
}

type inspectTable struct {
	Task, Link string
	Metrics    []string
	Rows       []inspectRow
}

// inspectOverview is /inspect: per task, each configuration's mean of
// each scorer (the epochs averaged within a sample, then the samples),
// every cell linked to the samples behind it.
func (s *Server) inspectOverview(w http.ResponseWriter, r *http.Request) {
	is, err := s.inspectStore()
	if err != nil {
		fail(w, err)
		return
	}
	ms, err := s.inspectMeans(r.Context(), is)
	if err != nil {
		fail(w, err)
		return
	}
	var tables []*inspectTable
	byTask := map[string]*inspectTable{}
	for _, m := range ms {
		t := byTask[m.Task]
		if t == nil {
			t = &inspectTable{Task: m.Task, Link: samplesLink(m.Task, "", "")}
			byTask[m.Task] = t
			tables = append(tables, t)
		}
		if !slices.Contains(t.Metrics, m.Metric) {
			t.Metrics = append(t.Metrics, m.Metric)
		}
	}
	for _, t := range tables {
		slices.Sort(t.Metrics)
	}
	at := map[[2]string]int{}
	for _, m := range ms {
		t := byTask[m.Task]
		i, ok := at[[2]string{m.Task, m.Config}]
		if !ok {
			i = len(t.Rows)
			at[[2]string{m.Task, m.Config}] = i
			row := inspectRow{Config: m.Config, Link: samplesLink(m.Task, m.Config, ""), Cells: make([]inspectCell, len(t.Metrics))}
			for j, metric := range t.Metrics {
				row.Cells[j] = inspectCell{Text: "–", Link: samplesLink(m.Task, m.Config, metric)}
			}
			t.Rows = append(t.Rows, row)
		}
		for j, metric := range t.Metrics {
			if metric != m.Metric {
				continue
			}
			c := &t.Rows[i].Cells[j]
			c.Text, c.N = fmt.Sprintf("%.3f", m.Value), m.Samples
			if !math.IsNaN(m.Lo) {
				c.CI = fmt.Sprintf("[%.3f, %.3f]", m.Lo, m.Hi)
			}
		}
	}
	s.page(w, "inspect-overview", map[string]any{"Title": "Inspect: " + s.opt.Name, "Tables": tables, "Resamples": s.opt.Bootstrap.Resamples,
		"Level": s.opt.Bootstrap.Level})
}

// parseSampleQuery reads a sample list's query: task, config, metric, id
// (a sample id), epoch, limit (at most maxInspectList) and offset.
func parseSampleQuery(v url.Values) (rows.InspectSampleQuery, error) {
	q := rows.InspectSampleQuery{Task: v.Get("task"), Config: v.Get("config"), Metric: v.Get("metric"), SampleID: strings.TrimSpace(v.Get("id")), Limit: 50}
	for _, f := range []struct {
		name string
		into *int
	}{{"epoch", &q.Epoch}, {"limit", &q.Limit}, {"offset", &q.Offset}} {
		if s := v.Get(f.name); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil || n < 0 {
				return q, analysis.Optionf("%s: expected a whole number ≥ 0, found %q", f.name, s)
			}
			*f.into = n
		}
	}
	if q.Limit == 0 {
		q.Limit = 50
	}
	q.Limit = min(q.Limit, maxInspectList)
	return q, nil
}

// encodeSampleQuery is q's query string at another offset.
func encodeSampleQuery(q rows.InspectSampleQuery, offset int) string {
	v := url.Values{}
	for _, kv := range [][2]string{{"task", q.Task}, {"config", q.Config}, {"metric", q.Metric}, {"id", q.SampleID}} {
		if kv[1] != "" {
			v.Set(kv[0], kv[1])
		}
	}
	if q.Epoch > 0 {
		v.Set("epoch", strconv.Itoa(q.Epoch))
	}
	if q.Limit != 50 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	if offset > 0 {
		v.Set("offset", strconv.Itoa(offset))
	}
	return v.Encode()
}

// sampleRow is a sample in the list.
type sampleRow struct {
	rows.InspectSampleSummary
	Link, Tokens, Time, Scores, Value string
}

func sampleSummaryRow(s rows.InspectSampleSummary, metric string) sampleRow {
	row := sampleRow{InspectSampleSummary: s, Link: samplePath(s.InspectSampleID), Tokens: tokens(s.TotalTokens), Time: seconds(s.TotalTime), Value: "–"}
	var parts []string
	for _, sc := range s.Scores {
		parts = append(parts, strings.TrimPrefix(sc.Metric, "inspect.")+" "+scoreText(sc))
		if sc.Metric == metric && sc.Valid {
			row.Value = strconv.FormatFloat(sc.Value, 'g', 6, 64)
		}
	}
	row.Scores = strings.Join(parts, " · ")
	return row
}

// scoreText is a score as a reader knows it: its number, and the value
// as written when that is not the number (a letter grade, say).
func scoreText(sc rows.InspectScoreView) string {
	num := "no number"
	if sc.Valid {
		num = strconv.FormatFloat(sc.Value, 'g', 6, 64)
	}
	raw := strings.Trim(sc.Raw, `"`)
	if raw == "" || raw == num || sc.Valid && strings.TrimSuffix(raw, ".0") == num {
		return num
	}
	return num + " (" + raw + ")"
}

func tokens(n int64) string {
	if n < 0 {
		return "–"
	}
	return strconv.FormatInt(n, 10)
}

func seconds(x float64) string {
	if math.IsNaN(x) {
		return "–"
	}
	switch {
	case x >= 100:
		return fmt.Sprintf("%.0f s", x)
	case x >= 1:
		return fmt.Sprintf("%.3g s", x)
	}
	return fmt.Sprintf("%.3g ms", 1000*x) // three digits: a call of 0.0455 ms and one of 250 ms alike
}

// inspectSamples is /inspect/samples: the samples (one row per sample
// and epoch) narrowed by task, configuration, scorer, epoch and sample
// id, paged.
func (s *Server) inspectSamples(w http.ResponseWriter, r *http.Request) {
	is, err := s.inspectStore()
	if err != nil {
		fail(w, err)
		return
	}
	q, err := parseSampleQuery(r.URL.Query())
	if err != nil {
		fail(w, err)
		return
	}
	facets, err := is.InspectFacets(r.Context())
	if err != nil {
		fail(w, err)
		return
	}
	list, err := is.InspectSamples(r.Context(), q)
	if err != nil {
		fail(w, err)
		return
	}
	out := make([]sampleRow, len(list.Samples))
	for i, sm := range list.Samples {
		out[i] = sampleSummaryRow(sm, q.Metric)
	}
	pages := map[string]string{}
	if q.Offset > 0 {
		pages["Prev"] = "/inspect/samples?" + encodeSampleQuery(q, max(0, q.Offset-q.Limit))
	}
	if q.Offset+q.Limit < list.Total {
		pages["Next"] = "/inspect/samples?" + encodeSampleQuery(q, q.Offset+q.Limit)
	}
	s.page(w, "inspect-samples", map[string]any{"Title": "Inspect samples", "Q": q, "F": facets, "Samples": out, "Total": list.Total,
		"First": q.Offset + 1, "Shown": q.Offset + len(out), "Pages": pages})
}

// sampleKey reads a sample's key from the query, its names suffixed.
func sampleKey(v url.Values, suffix string) (rows.InspectSampleID, error) {
	k := rows.InspectSampleID{EvalID: v.Get("eval" + suffix), SampleID: v.Get("id" + suffix)}
	e := v.Get("epoch" + suffix)
	n, err := strconv.Atoi(e)
	if k.EvalID == "" || k.SampleID == "" || err != nil || n < 1 {
		return k, analysis.Optionf("give a sample: eval%s=EVAL_ID&id%s=SAMPLE_ID&epoch%s=N (N ≥ 1); found eval%s=%q id%s=%q epoch%s=%q",
			suffix, suffix, suffix, suffix, k.EvalID, suffix, k.SampleID, suffix, e)
	}
	k.Epoch = n
	return k, nil
}

// readSample reads a sample's page, or a not-found error naming it.
func (s *Server) readSample(ctx context.Context, is InspectStore, k rows.InspectSampleID) (*rows.InspectSamplePage, error) {
	p, err := is.InspectSample(ctx, k)
	if err != nil {
		return nil, err
	}
	if p == nil {
		return nil, fmt.Errorf("no Inspect sample %q at epoch %d of eval %q in %s: %w", k.SampleID, k.Epoch, k.EvalID, s.opt.Name, errNotFound)
	}
	return p, nil
}

// modelCall is a model event in the sample page's table of calls.
type modelCall struct {
	Index                          int
	Model, In, Out, Total, Seconds string
}

// inspectSample is /inspect/sample: one sample at one epoch.
func (s *Server) inspectSample(w http.ResponseWriter, r *http.Request) {
	is, release, err := s.sampleReader(r.Context())
	if err != nil {
		fail(w, err)
		return
	}
	defer release()
	k, err := sampleKey(r.URL.Query(), "")
	if err != nil {
		fail(w, err)
		return
	}
	p, err := s.readSample(r.Context(), is, k)
	if err != nil {
		fail(w, err)
		return
	}
	// The same sample and epoch of the task in other configurations.
	others, err := is.InspectSamples(r.Context(), rows.InspectSampleQuery{Task: p.Task, SampleID: p.SampleID, Epoch: p.Epoch, Limit: 50})
	if err != nil {
		fail(w, err)
		return
	}
	type other struct{ Config, Link, Compare string }
	var os []other
	for _, o := range others.Samples {
		if o.InspectSampleID != k {
			os = append(os, other{Config: o.Config, Link: samplePath(o.InspectSampleID), Compare: compareSamplesPath(k, o.InspectSampleID)})
		}
	}
	var calls []modelCall
	for _, e := range p.Events {
		if e.Type == "model" {
			calls = append(calls, modelCall{Index: e.Index, Model: e.Model, In: tokens(e.InputTokens), Out: tokens(e.OutputTokens), Total: tokens(e.TotalTokens),
				Seconds: seconds(e.Seconds)})
		}
	}
	s.page(w, "inspect-sample", map[string]any{"Title": "Sample " + p.SampleID + " · epoch " + strconv.Itoa(p.Epoch) + " · " + p.Task, "P": p,
		"Row": sampleSummaryRow(p.InspectSampleSummary, ""), "Calls": calls, "Others": os, "Working": seconds(p.WorkingTime),
		"FileName": filepath.Base(p.File)})
}

// scorePair is a scorer's score of both samples.
type scorePair struct {
	Metric, A, B, Diff string
	ExplA, ExplB       string
}

// inspectCompare is /inspect/compare: two samples side by side (the same
// sample under two configurations, say): their scores, costs and
// transcripts.
func (s *Server) inspectCompare(w http.ResponseWriter, r *http.Request) {
	is, release, err := s.sampleReader(r.Context())
	if err != nil {
		fail(w, err)
		return
	}
	defer release()
	ka, err := sampleKey(r.URL.Query(), "_a")
	if err != nil {
		fail(w, err)
		return
	}
	kb, err := sampleKey(r.URL.Query(), "_b")
	if err != nil {
		fail(w, err)
		return
	}
	a, err := s.readSample(r.Context(), is, ka)
	if err != nil {
		fail(w, err)
		return
	}
	b, err := s.readSample(r.Context(), is, kb)
	if err != nil {
		fail(w, err)
		return
	}
	var scores []scorePair
	at := map[string]int{}
	for side, p := range []*rows.InspectSamplePage{a, b} {
		for _, sc := range p.Scores {
			i, ok := at[sc.Metric]
			if !ok {
				i = len(scores)
				at[sc.Metric] = i
				scores = append(scores, scorePair{Metric: sc.Metric, A: "–", B: "–", Diff: "–"})
			}
			if side == 0 {
				scores[i].A, scores[i].ExplA = scoreText(sc), sc.Explanation
			} else {
				scores[i].B, scores[i].ExplB = scoreText(sc), sc.Explanation
			}
		}
	}
	for i := range scores {
		x, okA := scoreOf(a, scores[i].Metric)
		y, okB := scoreOf(b, scores[i].Metric)
		if okA && okB {
			scores[i].Diff = strconv.FormatFloat(y-x, 'g', 6, 64)
			if y-x > 0 {
				scores[i].Diff = "+" + scores[i].Diff
			}
		}
	}
	n := max(len(a.Conversation), len(b.Conversation))
	type turn struct {
		N    int
		A, B *rows.InspectMessage
	}
	turns := make([]turn, n)
	for i := range turns {
		turns[i].N = i
		if i < len(a.Conversation) {
			turns[i].A = &a.Conversation[i]
		}
		if i < len(b.Conversation) {
			turns[i].B = &b.Conversation[i]
		}
	}
	s.page(w, "inspect-compare", map[string]any{"Title": "Two Inspect samples side by side", "A": a, "B": b, "RowA": sampleSummaryRow(a.InspectSampleSummary, ""),
		"RowB": sampleSummaryRow(b.InspectSampleSummary, ""), "Scores": scores, "Turns": turns, "LinkA": samplePath(ka), "LinkB": samplePath(kb)})
}

func scoreOf(p *rows.InspectSamplePage, metric string) (float64, bool) {
	for _, sc := range p.Scores {
		if sc.Metric == metric && sc.Valid {
			return sc.Value, true
		}
	}
	return 0, false
}

const inspectTemplates = `
{{define "inspect-overview"}}{{template "head" .}}
<h1>Inspect evaluations</h1>
<p class="note">Each scorer’s mean per configuration on each task: each sample’s epochs averaged, then the samples; in brackets the {{.Level}} cluster-bootstrap interval over samples ({{.Resamples}} resamples); n: the samples scored. Every value links to the samples behind it, a configuration to all of its samples on the task.</p>
{{if not .Tables}}<p class="note">No Inspect sample is scored in this warehouse.</p>{{end}}
{{range .Tables}}<h2><a href="{{.Link}}">{{.Task}}</a></h2><div class="wrap"><table class="overview inspect">
<thead><tr><th>configuration</th>{{range .Metrics}}<th class="num">{{.}}</th>{{end}}</tr></thead><tbody>
{{range .Rows}}<tr><td><a href="{{.Link}}">{{.Config}}</a></td>{{range .Cells}}<td class="num"><a href="{{.Link}}">{{.Text}}</a>{{if .CI}} <span class="ci">{{.CI}}</span>{{end}}{{if .N}} <span class="ci">n={{.N}}</span>{{end}}</td>{{end}}</tr>
{{end}}</tbody></table></div>
{{end}}{{template "foot" .}}{{end}}

{{define "inspect-samples"}}{{template "head" .}}
<h1>Inspect samples</h1>
<form class="filter" method="get" action="/inspect/samples">
<label>task<select name="task"><option value="">any</option>{{range .F.Tasks}}<option{{if eq . $.Q.Task}} selected{{end}}>{{.}}</option>{{end}}</select></label>
<label>configuration<select name="config"><option value="">any</option>{{range .F.Configs}}<option{{if eq . $.Q.Config}} selected{{end}}>{{.}}</option>{{end}}</select></label>
<label>scorer<select name="metric"><option value="">any</option>{{range .F.Metrics}}<option{{if eq . $.Q.Metric}} selected{{end}}>{{.}}</option>{{end}}</select></label>
<label>epoch<select name="epoch"><option value="">any</option>{{range .F.Epochs}}<option{{if eq . $.Q.Epoch}} selected{{end}}>{{.}}</option>{{end}}</select></label>
<label>sample id<input name="id" value="{{.Q.SampleID}}" size="12"></label>
<button type="submit">Show</button></form>
<p class="note">{{.Total}} samples × epochs{{with .Q.Task}} of task {{.}}{{end}}{{with .Q.Config}} under {{.}}{{end}}{{with .Q.Metric}} scored by {{.}}{{end}}{{if .Q.Epoch}} at epoch {{.Q.Epoch}}{{end}}{{with .Q.SampleID}} with id {{.}}{{end}}; {{if .Samples}}showing {{.First}}–{{.Shown}}{{else}}none shown{{end}}.</p>
<div class="wrap"><table class="samples"><thead><tr><th>sample</th><th class="num">epoch</th><th>task</th><th>configuration</th>{{if .Q.Metric}}<th class="num">{{.Q.Metric}}</th>{{end}}<th>scores</th><th class="num">tokens</th><th class="num">time</th><th class="num">messages</th><th class="num">model calls</th><th class="num">tool calls</th><th class="num">tool errors</th><th>error or limit</th></tr></thead><tbody>
{{range .Samples}}<tr><td><a href="{{.Link}}">{{.SampleID}}</a></td><td class="num">{{.Epoch}}</td><td>{{.Task}}</td><td>{{.Config}}</td>{{if $.Q.Metric}}<td class="num">{{.Value}}</td>{{end}}<td>{{.Scores}}</td><td class="num">{{.Tokens}}</td><td class="num">{{.Time}}</td><td class="num">{{.Messages}}</td><td class="num">{{.ModelEvents}}</td><td class="num">{{.ToolEvents}}</td><td class="num">{{.Tools}}</td><td>{{.Error}}{{if .Limit}} limit: {{.Limit}}{{end}}</td></tr>
{{end}}</tbody></table></div>
<p>{{with .Pages.Prev}}<a href="{{.}}">previous</a> {{end}}{{with .Pages.Next}}<a href="{{.}}">next</a>{{end}}</p>
{{template "foot" .}}{{end}}

{{define "inspect-message"}}<div class="event {{.Role}}"><div class="meta">{{if ge .Pool 0}}<a href="#pool-{{.Pool}}">pool #{{.Pool}}</a> · {{end}}{{.Role}}{{if .Function}} · {{.Function}}{{end}}{{if .ToolCallID}} · answers call {{.ToolCallID}}{{end}}</div>
{{if .Text}}<div class="text">{{.Text}}</div>{{end}}{{if .Error}}<div class="flag">tool error: {{.Error}}</div>{{end}}
{{range .ToolCalls}}<div class="toolcall"><span class="meta">tool call {{.ID}}:</span> <strong>{{.Function}}</strong><pre>{{.Arguments}}</pre></div>{{end}}</div>
{{end}}

{{define "inspect-sample"}}{{template "head" .}}
{{$p := .P}}<h1>Sample {{$p.SampleID}} · epoch {{$p.Epoch}}</h1>
<p>task <a href="{{samplesLink $p.Task "" ""}}">{{$p.Task}}</a> · <a href="{{samplesLink $p.Task $p.Config ""}}">{{$p.Config}}</a> · eval {{$p.EvalID}} · {{$p.Status}}{{with $p.File}} · <span class="muted" title="{{.}}">{{$.FileName}}</span>{{end}}</p>
{{if $p.Error}}<p class="flag">error: {{$p.Error}}</p>{{end}}{{if $p.Limit}}<p class="flag">stopped by a limit: {{$p.Limit}}</p>{{end}}
<div class="wrap"><table><thead><tr><th class="num">input tokens</th><th class="num">output tokens</th><th class="num">total tokens</th><th class="num">time</th><th class="num">working time</th><th class="num">messages</th><th class="num">model calls</th><th class="num">tool calls</th><th class="num">tool errors</th></tr></thead><tbody>
<tr><td class="num">{{tokens $p.InputTokens}}</td><td class="num">{{tokens $p.OutputTokens}}</td><td class="num">{{tokens $p.TotalTokens}}</td><td class="num">{{.Row.Time}}</td><td class="num">{{.Working}}</td><td class="num">{{$p.Messages}}</td><td class="num">{{$p.ModelEvents}}</td><td class="num">{{$p.ToolEvents}}</td><td class="num">{{$p.Tools}}</td></tr>
</tbody></table></div>
{{range $p.Capped}}<p class="note flag">Capped: {{.}}.</p>{{end}}
<h2>Scores</h2>
{{if $p.Scores}}<div class="wrap"><table><thead><tr><th>scorer</th><th class="num">value</th><th>as written</th><th>answer</th><th>explanation</th></tr></thead><tbody>
{{range $p.Scores}}<tr><td>{{.Metric}}</td><td class="num">{{if .Valid}}{{.Value}}{{else}}no number{{end}}</td><td><code>{{.Raw}}</code></td><td>{{.Answer}}</td><td class="text">{{.Explanation}}</td></tr>
{{end}}</tbody></table></div>{{else}}<p class="note">Not scored.</p>{{end}}
<h2>Input and target</h2>
<details open><summary>input</summary><pre>{{$p.Input}}</pre></details>
{{if $p.Target}}<details open><summary>target</summary><pre>{{$p.Target}}</pre></details>{{end}}
<h2>Transcript</h2>
<p class="note">The final conversation, in order: each tool call is followed by the tool’s result, which names the call it answers.{{if not $p.Conversation}} This sample has no conversation in the warehouse.{{end}}</p>
{{range $p.Conversation}}{{template "inspect-message" .}}{{end}}
<h2>Model calls</h2>
{{if .Calls}}<div class="wrap"><table><thead><tr><th>event</th><th>model</th><th class="num">input tokens</th><th class="num">output tokens</th><th class="num">total tokens</th><th class="num">time</th></tr></thead><tbody>
{{range .Calls}}<tr><td><a href="#ev-{{.Index}}">#{{.Index}}</a></td><td>{{.Model}}</td><td class="num">{{.In}}</td><td class="num">{{.Out}}</td><td class="num">{{.Total}}</td><td class="num">{{.Seconds}}</td></tr>
{{end}}</tbody></table></div>{{else}}<p class="note">No model event.</p>{{end}}
{{if $p.Usage}}<h3>Tokens per model</h3><div class="wrap"><table><thead><tr><th>model</th><th class="num">input</th><th class="num">output</th><th class="num">total</th><th class="num">cache read</th><th class="num">cache write</th><th class="num">reasoning</th></tr></thead><tbody>
{{range $p.Usage}}<tr><td>{{.Model}}</td><td class="num">{{tokens .Input}}</td><td class="num">{{tokens .Output}}</td><td class="num">{{tokens .Total}}</td><td class="num">{{tokens .CacheRead}}</td><td class="num">{{tokens .CacheWrite}}</td><td class="num">{{tokens .Reasoning}}</td></tr>
{{end}}</tbody></table></div>{{end}}
<h2>Events</h2>
{{range $p.Events}}{{if eq .Type "span_end"}}{{else if eq .Type "span_begin"}}<div class="pause" id="ev-{{.Index}}">#{{.Index}} {{.Span}}</div>
{{else}}<div class="event {{.Type}}" id="ev-{{.Index}}"><div class="meta">#{{.Index}} · {{.Type}}{{with .Timestamp}} · {{.}}{{end}}{{with .Model}} · {{.}}{{end}}{{with .Function}} · {{.}}{{end}}</div>
{{if eq .Type "model"}}<div>tokens {{tokens .InputTokens}} in, {{tokens .OutputTokens}} out, {{tokens .TotalTokens}} in all · {{seconds .Seconds}}</div>
<details><summary>input: {{len .Input}} messages{{with .InputRefs}} (pool {{.}}){{end}}</summary>{{range .Input}}{{template "inspect-message" .}}{{end}}</details>
{{with .Output}}<div class="output">{{template "inspect-message" .}}</div>{{end}}
{{with .Request}}<details><summary>request to the provider</summary><pre>{{.}}</pre></details>{{end}}{{with .Response}}<details><summary>response</summary><pre>{{.}}</pre></details>{{end}}
{{else if eq .Type "tool"}}<details open><summary>arguments</summary><pre>{{.Arguments}}</pre></details>{{if .Result}}<details open><summary>result</summary><pre>{{.Result}}</pre></details>{{end}}{{if .ToolError}}<div class="flag">error: {{.ToolError}}</div>{{end}}
{{else if eq .Type "score"}}<div>score <strong>{{.Score}}</strong>{{with .Answer}} · answer {{.}}{{end}}</div>{{with .Explanation}}<div class="text">{{.}}</div>{{end}}
{{end}}{{with .Error}}<div class="flag">{{.}}</div>{{end}}{{with .JSON}}<details><summary>as logged</summary><pre>{{.}}</pre></details>{{end}}</div>
{{end}}{{end}}
{{if $p.Pool}}<h2>Message pool</h2><p class="note">The messages the model calls’ inputs refer to, each once.</p>
{{range $p.Pool}}<div id="pool-{{.Pool}}">{{template "inspect-message" .}}</div>{{end}}{{end}}
{{if $p.Calls}}<h2>Call pool</h2>{{range $i, $c := $p.Calls}}<details id="call-{{$i}}"><summary>call pool #{{$i}}</summary><pre>{{$c}}</pre></details>{{end}}{{end}}
{{if $p.Metadata}}<h2>Metadata</h2><pre class="context">{{$p.Metadata}}</pre>{{end}}
{{if .Others}}<h2>The same sample and epoch in other configurations</h2><ul>
{{range .Others}}<li><a href="{{.Link}}">{{.Config}}</a> · <a href="{{.Compare}}">compare side by side</a></li>
{{end}}</ul>{{end}}
{{template "foot" .}}{{end}}

{{define "inspect-compare"}}{{template "head" .}}
<h1>Two Inspect samples side by side</h1>
<div class="wrap"><table><thead><tr><th></th><th>A</th><th>B</th><th class="num">B − A</th></tr></thead><tbody>
<tr><td>sample</td><td><a href="{{.LinkA}}">{{.A.SampleID}} · epoch {{.A.Epoch}}</a></td><td><a href="{{.LinkB}}">{{.B.SampleID}} · epoch {{.B.Epoch}}</a></td><td></td></tr>
<tr><td>task</td><td>{{.A.Task}}</td><td>{{.B.Task}}</td><td></td></tr>
<tr><td>configuration</td><td>{{.A.Config}}</td><td>{{.B.Config}}</td><td></td></tr>
{{range .Scores}}<tr><td>{{.Metric}}</td><td class="num">{{.A}}</td><td class="num">{{.B}}</td><td class="num">{{.Diff}}</td></tr>
{{if or .ExplA .ExplB}}<tr><td class="muted">explanation</td><td class="text">{{.ExplA}}</td><td class="text">{{.ExplB}}</td><td></td></tr>{{end}}{{end}}
<tr><td>tokens</td><td class="num">{{.RowA.Tokens}}</td><td class="num">{{.RowB.Tokens}}</td><td></td></tr>
<tr><td>time</td><td class="num">{{.RowA.Time}}</td><td class="num">{{.RowB.Time}}</td><td></td></tr>
<tr><td>messages · model calls · tool calls</td><td class="num">{{.A.Messages}} · {{.A.ModelEvents}} · {{.A.ToolEvents}}</td><td class="num">{{.B.Messages}} · {{.B.ModelEvents}} · {{.B.ToolEvents}}</td><td></td></tr>
</tbody></table></div>
{{range .A.Capped}}<p class="note flag">A capped: {{.}}.</p>{{end}}{{range .B.Capped}}<p class="note flag">B capped: {{.}}.</p>{{end}}
<h2>Transcripts</h2>
<div class="wrap"><table class="side"><thead><tr><th class="num">#</th><th>A</th><th>B</th></tr></thead><tbody>
{{range .Turns}}<tr><td class="num">{{.N}}</td><td>{{with .A}}{{template "inspect-message" .}}{{end}}</td><td>{{with .B}}{{template "inspect-message" .}}{{end}}</td></tr>
{{end}}</tbody></table></div>
{{template "foot" .}}{{end}}
`
