package serve

import (
	"bytes"
	"flag"
	"fmt"
	"html/template"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/gymlens/gymlens/analysis"
	"github.com/gymlens/gymlens/ingest/rows"
	"github.com/gymlens/gymlens/reports"
)

var update = flag.Bool("update", false, "rewrite the golden pages in testdata/")

// longRun is a run as the sample's runs are, over three days: 120 events
// (messages, notifications, tool calls with arguments and results,
// approvals, a reply that answers another), eight tasks as logged and
// rescored, two judges' judgments with reasons and citations, the TA
// window; payload in the text a page must escape.
func longRun() *RunDetail {
	start := time.Date(2026, 3, 2, 8, 0, 0, 0, time.UTC)
	w0, w1 := start.Add(26*time.Hour), start.Add(30*time.Hour)
	tc := 0.75
	d := &RunDetail{
		Run: RunSummary{RunID: "gpt-5.6-sol_cd_none/travel <b>trip</b>/planner/3", Config: "gpt-5.6-sol · CD · none", Scenario: "travel", Persona: "planner",
			PersonaGroup: "S", Rep: 3, Metrics: map[string]*float64{"TC": &tc}},
		Counterparts: []RunSummary{{RunID: "claude-opus-5_cc_none/travel/planner/3", Config: "claude-opus-5 · CC · none"}},
		Window:       [2]*time.Time{&w0, &w1},
		TA:           []rows.TAJudgment{{Judge: "judge-a", Now: 1, Later: 0, CQ: 0.5, HasCQ: true}},
	}
	actors := []string{"user", "agent", "env", "agent", "agent"}
	kinds := []string{"message", "message", "notification", "tool_call", "approval_request"}
	ok := true
	for i := range 120 {
		at := start.Add(time.Duration(i) * 25 * time.Minute)
		if i >= 40 {
			at = at.Add(14 * time.Hour) // a night
		}
		if i >= 80 {
			at = at.Add(14 * time.Hour)
		}
		e := rows.EventRow{Seq: int64(i + 1), T: at, Actor: actors[i%5], Kind: kinds[i%5], Visible: i%7 != 0,
			Text: fmt.Sprintf("Event %d: please book the <em>11:40</em> train & tell \"Ana\" about it; %s", i, payload)}
		switch i % 5 {
		case 3:
			e.Tool, e.Depth, e.Task, e.OK = "calendar.create", "execute", fmt.Sprintf("t%d", i%8), &ok
			e.Args = fmt.Sprintf(`{"title":"Trip %d","start":"2026-03-0%dT09:00:00Z","attendees":["ana@example.org","<script>x</script>"]}`, i, 2+i/40)
			e.Result = fmt.Sprintf(`{"id":"evt-%d","status":"confirmed","notes":"%s"}`, i, bytes.Repeat([]byte("ok "), 60))
		case 4:
			e.Decision, e.Phase, e.Task = "approve", "decision", fmt.Sprintf("t%d", i%8)
		case 1:
			if i > 2 {
				e.Ref = int64(i - 1)
			}
		}
		d.Events = append(d.Events, e)
	}
	for k := range 8 {
		task := fmt.Sprintf("t%d", k)
		at := start.Add(time.Duration(k) * time.Hour)
		half, one := 0.5, 1.0
		v := rows.TaskView{Task: task, Active: k != 5, Weight: 1, ActivatedAt: &at, FinalSeq: int64(100 + k), LoggedExpected: "prepare", LoggedChosen: "execute",
			Rescored: k%2 == 0, DerivedExpected: "prepare", DerivedChosen: "suggest", Prefer: "derived", Logged: [3]*float64{&half, &one, nil}, Derived: [3]*float64{&one, &half, nil}}
		d.TaskViews = append(d.TaskViews, v)
		if v.Active {
			d.Tasks = append(d.Tasks, rows.TaskRow{Task: task, Weight: 1, Expected: "prepare", Chosen: "suggest", Rules: [3]float64{1, 0.5, 0}, RuleSet: [3]bool{true, true, false},
				TC:  []rows.TCJudgment{{Judge: "judge-a", Correctness: 0.8, Grounding: 0.7, Completeness: 0.9, ArtifactQ: 0.6}},
				TRJ: []rows.TRJJudgment{{Judge: "judge-a", Scores: [5]float64{4, 4, 3, 5, 4}}}})
		}
		for _, judge := range []string{"judge-a", "judge-b <i>"} {
			d.Judgments = append(d.Judgments, rows.JudgmentView{Task: task, Metric: "tc", Judge: judge, Prompt: "tc-v3", Latest: judge == "judge-a",
				Scores:   []rows.NamedScore{{Name: "correctness", Value: 0.8}, {Name: "grounding", Value: 0.7}},
				Reasons:  "The agent booked the train <b>before</b> asking; " + payload,
				Evidence: []rows.Citation{{Seq: int64(4 + k), Quote: "book the <em>11:40</em>"}, {Seq: int64(9 + k)}}})
		}
	}
	return d
}

// renderRun renders a run's page as the handler does.
func renderRun(s *Server, d *RunDetail) ([]byte, error) {
	return s.render("run", runPageData(d, ""))
}

// A run's page is pinned byte for byte (testdata/run-page.html; go test
// ./serve -run RunPageGolden -update rewrites it): how it is rendered may
// change, what a reader sees may not, unnoticed.
func TestRunPageGolden(t *testing.T) {
	s, _ := newServer(t, "")
	got, err := renderRun(s, longRun())
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "run-page.html")
	if *update {
		os.MkdirAll("testdata", 0o755)
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		i := 0
		for i < min(len(got), len(want)) && got[i] == want[i] {
			i++
		}
		t.Errorf("the run page differs from %s at byte %d: got %q, want %q", path, i, got[max(0, i-80):min(len(got), i+80)], want[max(0, i-80):min(len(want), i+80)])
	}
	if bytes.Contains(got, []byte("<script>")) || bytes.Contains(got, []byte("<em>")) {
		t.Error("trajectory text rendered as HTML")
	}
}

// BenchmarkRenderRunPage is the rendering of a 120-event run's page, the
// part of a run page's cost that is the viewer's own.
func BenchmarkRenderRunPage(b *testing.B) {
	opt := analysis.DefaultBootstrap
	opt.Resamples = 100
	s := &Server{opt: Options{Name: "bench.duckdb", Bootstrap: opt}}
	d := longRun()
	for b.Loop() {
		if _, err := renderRun(s, d); err != nil {
			b.Fatal(err)
		}
	}
}

// referenceParts are the run template's task rows, judgments and
// trajectory as the template wrote them before they were written in Go
// (pageHTML): the reference the Go must equal, byte for byte.
const referenceParts = `{{define "rows"}}{{range .}}<tr{{if not .Active}} class="inactive"{{end}}><td>{{if .Judgments}}<a href="#{{anchor .Task}}">{{.Task}}</a>{{else}}{{.Task}}{{end}}</td><td>{{if .Active}}active{{if .ActivatedAt}} from {{.ActivatedAt.Format "Mon 15:04"}}{{end}}{{else}}not active{{end}}</td><td class="num">{{printf "%.2f" .Weight}}</td>
<td>{{if or .LoggedExpected .LoggedChosen}}{{.LoggedExpected}} → {{.LoggedChosen}}{{else}}–{{end}}</td><td>{{if .Rescored}}{{if .DepthsDiffer}}<span class="flag">{{.DerivedExpected}} → {{.DerivedChosen}}</span>{{else}}{{.DerivedExpected}} → {{.DerivedChosen}}{{end}}{{else}}–{{end}}</td>
<td>{{if .Active}}{{if .Mismatch}}<span class="flag">{{.Expected}} → {{.Chosen}}</span>{{else}}{{.Expected}} → {{.Chosen}}{{end}}{{if .Prefer}} <span class="muted">({{.Prefer}})</span>{{end}}{{end}}</td>
<td>{{.RulesLogged}}</td><td>{{.RulesDerived}}</td></tr>
{{end}}{{end}}{{define "judgments"}}{{range .}}{{if .Judgments}}<h3 id="{{anchor .Task}}">{{if .Task}}Task {{.Task}}{{else}}The run{{end}}: judgments</h3>
{{range .Judgments}}<div class="judgment{{if not .Latest}} superseded{{end}}"><div class="meta">{{.Judge}} · {{.Metric}}{{if .Prompt}} · prompt {{.Prompt}}{{end}}{{if not .Latest}} · superseded by a newer prompt version (not in the metrics){{end}}</div>
<div>{{range $i, $s := .Scores}}{{if $i}} · {{end}}{{$s.Name}} <strong>{{printf "%.2f" $s.Value}}</strong>{{end}}</div>
{{if .Reasons}}<div class="text">{{.Reasons}}</div>{{end}}
{{if .Evidence}}<ul class="cites">{{range .Evidence}}<li><a href="#e{{.Seq}}">#{{.Seq}}</a>{{if .Quote}} “{{.Quote}}”{{end}}</li>{{end}}</ul>{{end}}</div>
{{end}}{{end}}{{end}}{{end}}{{define "days"}}{{range .}}<div class="day">{{.Date}}</div>
{{range .Items}}{{if .Pause}}<div class="pause">{{.Pause}}</div>{{else if .Back}}<div class="backwards">{{.Back}}</div>{{else}}{{with .E}}<div id="e{{.Seq}}" class="{{.Class}}"><div class="meta">{{.Meta}}{{if .Ref}} · answers <a href="#e{{.Ref}}">#{{.Ref}}</a>{{end}}{{if .Hidden}} · not shown to the user{{end}}</div>
{{if .Text}}<div class="text">{{.Text}}</div>{{end}}
{{if .Args}}<details><summary>arguments</summary><pre>{{.Args}}</pre></details>{{end}}
{{if .Result}}<details><summary>result</summary><pre>{{.Result}}</pre></details>{{end}}</div>{{end}}{{end}}
{{end}}{{end}}{{end}}`

// The task rows, judgments and trajectory written in Go are what the
// template wrote, for random runs whose every string is hostile: markup,
// quotes, '+', NUL, bytes that are not UTF-8, the noncharacters
// html/template treats apart, and empty strings where the template tests
// for them.
func TestRunPartsAsTheTemplateWroteThem(t *testing.T) {
	ref := template.Must(template.New("").Funcs(template.FuncMap{"anchor": taskAnchor}).Parse(referenceParts))
	texts := []string{"", "plain", payload, `a+b="c" & 'd'`, "nul\x00here", "bad \xff\xfe utf-8", "\ufdd0\uffff\ufffd", "→ “curly” · ü", "line\nbreak\ttab", "-->"}
	rng := rand.New(rand.NewPCG(3, 5))
	str := func() string { return texts[rng.IntN(len(texts))] }
	for round := range 300 {
		start := time.Date(2026, 3, 2, 8, 0, 0, 0, time.UTC)
		d := &RunDetail{}
		if rng.IntN(2) == 0 {
			w0, w1 := start.Add(2*time.Hour), start.Add(30*time.Hour)
			d.Window = [2]*time.Time{&w0, &w1}
		}
		for k := range rng.IntN(6) {
			at := start.Add(time.Duration(k) * time.Hour)
			v := rows.TaskView{Task: str(), Active: rng.IntN(3) > 0, Weight: []float64{1, 0.5, math.Inf(1), math.NaN(), -2}[rng.IntN(5)],
				LoggedExpected: str(), LoggedChosen: str(), Rescored: rng.IntN(2) == 0, DerivedExpected: str(), DerivedChosen: str(), Prefer: str()}
			if rng.IntN(2) == 0 {
				v.ActivatedAt = &at
			}
			if rng.IntN(2) == 0 {
				half := []float64{0.5, 1, math.NaN()}[rng.IntN(3)]
				v.Logged[rng.IntN(3)] = &half
			}
			d.TaskViews = append(d.TaskViews, v)
			if v.Active {
				d.Tasks = append(d.Tasks, rows.TaskRow{Task: v.Task, Weight: v.Weight, Expected: str(), Chosen: str()})
			}
			for range rng.IntN(3) {
				j := rows.JudgmentView{Task: v.Task, Metric: str(), Judge: str(), Prompt: str(), Latest: rng.IntN(2) == 0, Reasons: str()}
				for range rng.IntN(3) {
					j.Scores = append(j.Scores, rows.NamedScore{Name: str(), Value: []float64{0.8, math.Inf(-1), math.NaN(), 12345.678}[rng.IntN(4)]})
				}
				for range rng.IntN(3) {
					j.Evidence = append(j.Evidence, rows.Citation{Seq: int64(rng.IntN(40) - 5), Quote: str()})
				}
				d.Judgments = append(d.Judgments, j)
			}
		}
		for k := range rng.IntN(30) {
			ok := rng.IntN(2) == 0
			e := rows.EventRow{Seq: int64(k + 1), T: start.Add(time.Duration(rng.IntN(4000)) * time.Minute), Actor: str(), Kind: str(), Task: str(),
				Text: str(), Tool: str(), Depth: str(), Args: str(), Result: str(), Decision: str(), Ref: int64(rng.IntN(5) - 1), Visible: rng.IntN(3) > 0}
			if rng.IntN(2) == 0 {
				e.OK = &ok
			}
			d.Events = append(d.Events, e)
		}
		slices.SortStableFunc(d.Events, func(a, b rows.EventRow) int { return a.T.Compare(b.T) })
		tasks := taskViews(d)
		for _, part := range []struct {
			name string
			got  template.HTML
			data any
		}{{"rows", taskRowsHTML(tasks), tasks}, {"judgments", judgmentsHTML(tasks), tasks}, {"days", trajectoryHTML(timeline(d), nil), timeline(d)}} {
			var want bytes.Buffer
			if err := ref.ExecuteTemplate(&want, part.name, part.data); err != nil {
				t.Fatal(err)
			}
			if string(part.got) != want.String() {
				g, w := string(part.got), want.String()
				i := 0
				for i < min(len(g), len(w)) && g[i] == w[i] {
					i++
				}
				t.Fatalf("round %d, %s: differs at byte %d: got %q, want %q", round, part.name, i, g[max(0, i-60):min(len(g), i+60)], w[max(0, i-60):min(len(w), i+60)])
			}
		}
	}
}

// referenceRunRows is the runs table's rows as the template wrote them
// before they were written in Go (runRowsHTML).
const referenceRunRows = `{{$metrics := .Metrics}}{{range .Runs}}{{$r := .}}<tr><td><a href="{{runPath .RunID}}">{{.RunID}}</a></td><td>{{.Config}}</td><td>{{.Scenario}}</td><td>{{.Persona}} ({{.PersonaGroup}})</td><td class="num">{{.Rep}}</td>
{{range $metrics}}<td class="num">{{num (metric $r.Metrics .) (digits .)}}</td>{{end}}</tr>
{{end}}`

// The runs table's rows written in Go are what the template wrote, for
// random lists whose every string is hostile (run ids included: they are
// links) and whose values are missing, NaN, infinite or negative zero.
func TestRunRowsAsTheTemplateWroteThem(t *testing.T) {
	ref := template.Must(template.New("").Funcs(template.FuncMap{
		"runPath": runPath,
		"num": func(p *float64, digits int) string {
			if p == nil {
				return "–"
			}
			return fmt.Sprintf("%.*f", digits, *p)
		},
		"digits": reports.Decimals,
		"metric": func(m map[string]*float64, k string) *float64 { return m[k] },
	}).Parse(referenceRunRows))
	texts := []string{"", "plain", payload, `a+b="c" & 'd'`, "nul\x00here", "bad \xff\xfe utf-8", "\ufdd0\uffff\ufffd", "→ “curly” · ü", "line\nbreak\ttab",
		"javascript:alert(1)", "a/b?c=d#e%zz", "-->"}
	rng := rand.New(rand.NewPCG(5, 8))
	str := func() string { return texts[rng.IntN(len(texts))] }
	for round := range 300 {
		var runs []RunSummary
		for range rng.IntN(60) {
			r := RunSummary{RunID: str(), Config: str(), Scenario: str(), Persona: str(), PersonaGroup: str(), Rep: rng.IntN(5) - 1, Metrics: map[string]*float64{}}
			for _, m := range analysis.MainMetrics {
				if k := rng.IntN(7); k > 0 {
					v := []float64{0, 87.03125, math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1), 3.98e-7}[k-1]
					r.Metrics[m] = &v
				}
			}
			runs = append(runs, r)
		}
		var want bytes.Buffer
		if err := ref.Execute(&want, map[string]any{"Runs": runs, "Metrics": analysis.MainMetrics}); err != nil {
			t.Fatal(err)
		}
		if got := string(runRowsHTML(runs, analysis.MainMetrics, nil)); got != want.String() {
			w := want.String()
			i := 0
			for i < min(len(got), len(w)) && got[i] == w[i] {
				i++
			}
			t.Fatalf("round %d: differs at byte %d: got %q, want %q", round, i, got[max(0, i-60):min(len(got), i+60)], w[max(0, i-60):min(len(w), i+60)])
		}
	}
}

// BenchmarkRunRows is the runs table's 50 rows of a /runs page, written by
// the template as before (template) and in Go (go).
func BenchmarkRunRows(b *testing.B) {
	var runs []RunSummary
	for i := range 50 {
		v := 87.03125 - float64(i)
		runs = append(runs, RunSummary{RunID: fmt.Sprintf("gpt-5.6-sol_cd_none/travel_trip/planner/%d", i), Config: "GPT 5.6 Sol | CD | none", Scenario: "travel_trip",
			Persona: "planner", PersonaGroup: "S", Rep: 1 + i%3, Metrics: map[string]*float64{"TC": &v, "TA": &v, "TR-D": &v, "TR-J": &v}})
	}
	ref := template.Must(template.New("").Funcs(template.FuncMap{
		"runPath": runPath,
		"num":     func(p *float64, digits int) string { return fmt.Sprintf("%.*f", digits, *p) },
		"digits":  reports.Decimals,
		"metric":  func(m map[string]*float64, k string) *float64 { return m[k] },
	}).Parse(referenceRunRows))
	b.Run("template", func(b *testing.B) {
		for b.Loop() {
			var out bytes.Buffer
			if err := ref.Execute(&out, map[string]any{"Runs": runs, "Metrics": analysis.MainMetrics}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("go", func(b *testing.B) {
		for b.Loop() {
			runRowsHTML(runs, analysis.MainMetrics, nil)
		}
	})
}
