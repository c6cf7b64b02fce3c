package serve

import (
	"context"
	"encoding/json"
	"html"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gymlens/gymlens/analysis"
	"github.com/gymlens/gymlens/ingest/rows"
)

// payload is trajectory text, a scenario and a model name that would run
// as script if a page rendered them as HTML.
const payload = `<script>alert("x")</script><img src=x onerror=alert(1)>`

// fake is a warehouse of four runs: two configurations × two scenarios,
// one persona; its model, scenario and event text carry the payload.
type fake struct {
	searched []string
	mu       sync.Mutex
	reads    []int         // the runs of each RunPages call
	gate     chan struct{} // when set, RunPages waits for it
	trial    bool          // a second judge, "trial", judged the first run's task
}

func (f *fake) LoadRunsWith(_ context.Context, visit func(int, *rows.RunRow), _ bool) ([]rows.RunRow, error) {
	var out []rows.RunRow
	for i, m := range []string{"Model A", "Model " + payload} {
		for j, sc := range []string{"s1", "s2 " + payload} {
			tc := 0.4 + 0.2*float64(i) + 0.1*float64(j)
			r := rows.RunRow{RunID: m + "/" + sc + "/p/1", ConfigID: rows.ConfigID(m, "CC", "none"), Model: m, Family: "F", Harness: "CC", Effort: "none",
				Scenario: sc, Persona: "p", PersonaGroup: "S", Rep: 1, HasTAWindow: true,
				Tasks: []rows.TaskRow{{Task: "t1", Weight: 1, Rules: [3]float64{tc, 1, 0}, RuleSet: [3]bool{true, true, false}, Expected: "prepare", Chosen: "execute",
					TC:  []rows.TCJudgment{{Judge: "j", Correctness: tc, Grounding: tc, Completeness: tc, ArtifactQ: tc}},
					TRJ: []rows.TRJJudgment{{Judge: "j", Scores: [5]float64{3, 4, 4, 3, 4}}}}},
				TA: []rows.TAJudgment{{Judge: "j", Now: 1, Later: float64(j)}}}
			out = append(out, r)
		}
	}
	if f.trial {
		out[0].Tasks[0].TC = append(out[0].Tasks[0].TC, rows.TCJudgment{Judge: "trial", Correctness: 1, Grounding: 1, Completeness: 1, ArtifactQ: 1})
	}
	for i := range out {
		visit(i, &out[i])
	}
	return out, nil
}
func (f *fake) LoadRatings(context.Context) ([]rows.RatingRow, error) { return nil, nil }
func (f *fake) LoadPARERuns(context.Context) ([]rows.PARERun, error) {
	return []rows.PARERun{{RunID: "trip_" + payload + "_run_1", Source: "pare", Scenario: "trip", ConfigID: bedrockARN + " | gpt-5-mini", Success: 1, Tokens: math.NaN(), LLMCalls: 7,
		Events: []rows.PAREEvent{{T: 1763456425.9, Actor: "agent", Function: "send_message_to_user", Mode: "observe", Turn: 0},
			{T: 1763456429.4, Actor: "user", Function: "accept_proposal", Turn: -1}},
		Decisions: []rows.PAREDecision{{Final: true, ProposalT: 1763456425.9, DecisionT: 1763456429.4}}}}, nil
}

// bedrockARN is a provider's model id as PARE's traces name models.
const bedrockARN = "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-sonnet-4-20250514-v1:0"

func (f *fake) PARETexts(_ context.Context, id string) (*rows.PARETexts, error) {
	return &rows.PARETexts{Events: []rows.PAREEventText{{Text: "Shall I move the meeting? " + payload, Args: `{"content":"Shall I move the meeting?"}`}, {Result: "ok " + payload}},
		Proposals: []string{"Shall I move the meeting? " + payload}}, nil
}
func (f *fake) LoadPAREResults(context.Context) ([]rows.PAREResultRow, error) { return nil, nil }
func (f *fake) LoadPAREReports(context.Context) ([]rows.PAREReportRow, error) { return nil, nil }
func (f *fake) LoadPARESamples(context.Context) ([]rows.PARESampleRow, int, error) {
	return nil, 0, nil
}
func (f *fake) DecisionTable(context.Context) ([]string, [][]any, error) { return nil, nil, nil }
func (f *fake) Query(context.Context, string, ...any) ([]string, [][]any, error) {
	return nil, nil, nil
}
func (f *fake) QueryFunc(context.Context, string, func([]string) error, func([]any) error, ...any) error {
	return nil
}
func (f *fake) RunPages(ctx context.Context, ids []string) (map[string]*rows.RunPage, error) {
	f.mu.Lock()
	f.reads = append(f.reads, len(ids))
	gate := f.gate
	f.mu.Unlock()
	if gate != nil {
		<-gate
	}
	out := map[string]*rows.RunPage{}
	for _, id := range ids {
		out[id], _ = f.runPage(ctx, id)
	}
	return out, nil
}

func (f *fake) runPage(ctx context.Context, id string) (*rows.RunPage, error) {
	t := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	r := rows.RunRow{RunID: id}
	f.LoadRunTasks(ctx, &r)
	p := &rows.RunPage{Tasks: r.Tasks, TA: r.TA, Events: []rows.EventRow{
		{Seq: 1, T: t, Actor: "env", Kind: "notification", Task: "t1", Text: "Hello " + payload, Visible: true},
		{Seq: 2, T: t.Add(time.Minute), Actor: "agent", Kind: "tool_call", Task: "t1", Tool: "search", Depth: "read", Args: `{"q":"` + payload + `"}`},
		{Seq: 3, T: t.Add(26 * time.Hour), Actor: "user", Kind: "message", Text: "next day", Visible: true},
	}}
	start, end := t.Add(-time.Hour), t.Add(30*time.Minute)
	p.Window = [2]*time.Time{&start, &end}
	half, one := 0.5, 1.0
	p.TaskViews = []rows.TaskView{
		{Task: "t1", Active: true, Weight: 1, LoggedExpected: "prepare", LoggedChosen: "execute", Rescored: true, DerivedExpected: "prepare",
			DerivedChosen: "suggest", Prefer: "logged", Logged: [3]*float64{&half, &one, nil}, Derived: [3]*float64{&one, &one, nil}},
		{Task: "t2 " + payload, Weight: 1},
	}
	for _, x := range r.Tasks {
		for _, j := range x.TC {
			p.Judgments = append(p.Judgments, rows.JudgmentView{Task: x.Task, Metric: "tc", Judge: j.Judge, Prompt: "tc/v1", Latest: true,
				Scores:  []rows.NamedScore{{Name: "correctness", Value: j.Correctness}},
				Reasons: "Because " + payload, Evidence: []rows.Citation{{Seq: 1, Quote: payload}}})
		}
	}
	p.Judgments = append(p.Judgments, rows.JudgmentView{Task: "t1", Metric: "tc", Judge: "j", Prompt: "tc/v0", Latest: false,
		Scores: []rows.NamedScore{{Name: "correctness", Value: 0.1}}})
	return p, nil
}
func (f *fake) LoadRunTasks(ctx context.Context, r *rows.RunRow) error {
	runs, _ := f.LoadRunsWith(ctx, func(int, *rows.RunRow) {}, false)
	for _, x := range runs {
		if x.RunID == r.RunID {
			r.Tasks, r.TA = x.Tasks, x.TA
		}
	}
	return nil
}
func (f *fake) SearchSnippets(_ context.Context, q string, ids []string) (map[string]rows.Snippet, error) {
	out := map[string]rows.Snippet{}
	for _, id := range ids {
		if id == "Model A/s1/p/1" {
			out[id] = rows.Snippet{Seq: 1, Text: "Hello " + payload}
		}
	}
	return out, nil
}
func (f *fake) SearchRuns(_ context.Context, q string) (map[string]bool, error) {
	f.searched = append(f.searched, q)
	return map[string]bool{"Model A/s1/p/1": true}, nil
}

func newServer(t *testing.T, token string) (*Server, *fake) {
	t.Helper()
	f := &fake{}
	opt := analysis.DefaultBootstrap
	opt.Resamples = 100
	s, err := New(context.Background(), f, Options{Name: "test.duckdb", Token: token, Bootstrap: opt, AllowedHosts: []string{"example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	return s, f
}

func get(t *testing.T, h http.Handler, target string, header ...string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest("GET", target, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// Every page escapes what comes from the warehouse, carries a CSP that
// allows no script, and links overview cells to their runs.
func TestPagesEscapeAndLink(t *testing.T) {
	s, f := newServer(t, "")
	runID := "Model " + payload + "/s2 " + payload + "/p/1"
	for _, target := range []string{"/", "/runs", "/runs?sort=TC&desc=1", runPath(runID), "/runs?q=" + url.QueryEscape(payload)} {
		rec := get(t, s, target)
		body := rec.Body.String()
		if rec.Code != 200 {
			t.Fatalf("%s: %d %s", target, rec.Code, body)
		}
		if strings.Contains(body, "<script") || strings.Contains(body, "<img") || strings.Contains(body, "onerror=alert") && !strings.Contains(body, "&lt;img") {
			t.Errorf("%s: the payload is rendered as HTML", target)
		}
		if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "script-src") {
			t.Errorf("%s: CSP %q", target, csp)
		}
		if rec.Header().Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: no nosniff", target)
		}
	}
	if len(f.searched) != 1 || f.searched[0] != payload {
		t.Errorf("searches %q", f.searched)
	}
	// The overview's first TC cell leads to the runs of its configuration,
	// highest TC first.
	body := get(t, s, "/").Body.String()
	i := strings.Index(body, `<a href="/runs?`)
	if i < 0 {
		t.Fatalf("no link in the overview:\n%s", body)
	}
	href := html.UnescapeString(body[i+9 : i+9+strings.Index(body[i+9:], `"`)])
	u, _ := url.Parse(href)
	if u.Query().Get("sort") != "TC" || u.Query().Get("desc") != "1" || len(u.Query()["where"]) != 3 {
		t.Errorf("first cell links to %s", href)
	}
	var list RunList
	json.Unmarshal(get(t, s, "/api/runs?"+u.RawQuery).Body.Bytes(), &list)
	model := strings.TrimPrefix(u.Query()["where"][0], "model=")
	if list.Total != 2 || len(list.Runs) != 2 || *list.Runs[0].Metrics["TC"] < *list.Runs[1].Metrics["TC"] ||
		list.Runs[0].Model != model || list.Runs[1].Model != model {
		t.Errorf("the cell's runs: %+v", list)
	}
}

// The run page shows the trajectory by day, the tasks with a depth
// disagreement flagged, and the same as JSON; a run not there is 404.
func TestRunPage(t *testing.T) {
	s, _ := newServer(t, "")
	id := "Model A/s1/p/1"
	body := get(t, s, runPath(id)).Body.String()
	for _, want := range []string{"Monday 2 March 2026", "Tuesday 3 March 2026", "tool_call", "depth read", `<span class="flag">prepare → execute</span>`,
		"correctness <strong>40.00</strong>", "now 1, later 0", `<span class="flag">prepare → suggest</span>`, "evidence 50.00, outputs 100.00",
		`<a href="#e1">#1</a> “&lt;script&gt;`, "Because &lt;script&gt;", "superseded by a newer prompt version", `id="e1" class="event env in-window"`,
		`id="e3" class="event user"`, "pause: Mon 09:01 → Tue 11:00 (26 h)", "not active", "t2 &lt;script&gt;"} {
		if !strings.Contains(body, want) {
			t.Errorf("run page lacks %q", want)
		}
	}
	var d RunDetail
	if err := json.Unmarshal(get(t, s, "/api/runs/"+url.PathEscape(id)).Body.Bytes(), &d); err != nil || d.Run.RunID != id || len(d.Events) != 3 || len(d.Tasks) != 1 {
		t.Errorf("api run: %v %+v", err, d)
	}
	if rec := get(t, s, runPath("nope")); rec.Code != 404 {
		t.Errorf("missing run: %d", rec.Code)
	}
}

// Run pages asked for while a read is under way are read together, in
// one read of the store, and each gets its own run.
func TestRunPagesAreReadTogether(t *testing.T) {
	s, f := newServer(t, "")
	s.reads.readers = 1
	f.gate = make(chan struct{})
	runs, _ := f.LoadRunsWith(context.Background(), func(int, *rows.RunRow) {}, false)
	var wg sync.WaitGroup
	bodies := make([]string, 40)
	for i := range bodies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rec := get(t, s, runPath(runs[i%len(runs)].RunID))
			if rec.Code != 200 {
				t.Errorf("%d %s", rec.Code, rec.Body.String())
			}
			bodies[i] = rec.Body.String()
		}()
		if i == 0 {
			for len(reads(f)) == 0 { // the first read has begun; the rest wait
				time.Sleep(time.Millisecond)
			}
		}
	}
	time.Sleep(50 * time.Millisecond)
	close(f.gate)
	wg.Wait()
	if got := reads(f); len(got) != 2 || got[0] != 1 || got[1] != len(runs)-1 && got[1] != len(runs) {
		t.Errorf("reads of the store: %v, want one of the first run, then one of the %d runs asked for meanwhile", got, len(runs))
	}
	for i, b := range bodies {
		if !strings.Contains(b, "<h1>"+html.EscapeString(runs[i%len(runs)].RunID)+"</h1>") {
			t.Errorf("request %d got another run's page", i)
		}
	}
}

func reads(f *fake) []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]int(nil), f.reads...)
}

// PARE runs are listed apart, each with its events and decision points.
func TestPARERuns(t *testing.T) {
	s, _ := newServer(t, "")
	list := get(t, s, "/pare").Body.String()
	link := "/pare/" + url.PathEscape("trip_"+payload+"_run_1")
	if !strings.Contains(list, html.EscapeString(link)) || !strings.Contains(list, "1 of 1 runs") {
		t.Fatalf("PARE list:\n%s", list)
	}
	if body := get(t, s, "/pare?q=nothing").Body.String(); !strings.Contains(body, "0 of 1 runs") {
		t.Error("the search does not filter")
	}
	page := get(t, s, link).Body.String()
	for _, want := range []string{"send_message_to_user", "accept_proposal", "7 LLM calls"} {
		if !strings.Contains(page, want) {
			t.Errorf("PARE run page lacks %q:\n%s", want, page)
		}
	}
	if strings.Contains(page, "<script>") {
		t.Error("the run id reached the page unescaped")
	}
	if rec := get(t, s, "/pare/nope"); rec.Code != 404 {
		t.Errorf("missing PARE run: %d", rec.Code)
	}
}

// A PARE run's page gives times as dates (UTC) and from the run's start,
// never as Unix seconds; shows the texts the trace holds (messages,
// arguments, results, the proposals), escaped; and names configurations
// by a short name (a provider's ARN cut to its model), the full id on
// hover, in the list and on the page.
func TestPARERunPageReads(t *testing.T) {
	s, _ := newServer(t, "")
	list := get(t, s, "/pare").Body.String()
	page := get(t, s, "/pare/"+url.PathEscape("trip_"+payload+"_run_1")).Body.String()
	for name, body := range map[string]string{"list": list, "page": page} {
		if strings.Count(body, bedrockARN) != strings.Count(body, `title="`+bedrockARN) {
			t.Errorf("%s: the ARN is shown as a name", name)
		}
		if !strings.Contains(body, `title="`+bedrockARN+` | gpt-5-mini"`) || !strings.Contains(body, ">claude-sonnet-4-20250514-v1:0 | gpt-5-mini<") {
			t.Errorf("%s: no short configuration name with the full id on hover", name)
		}
	}
	for _, want := range []string{"2025-11-18 09:00:25.9 UTC", "&#43;3.5 s", "Shall I move the meeting? &lt;script&gt;", "ok &lt;script&gt;", "<summary>arguments</summary>"} {
		if !strings.Contains(page, want) {
			t.Errorf("PARE run page lacks %q", want)
		}
	}
	if strings.Contains(page, "1763456425") || strings.Contains(page, "<script>") {
		t.Error("PARE run page shows Unix seconds, or an unescaped text")
	}
	if strings.Count(page, "Shall I move the meeting? &lt;script&gt;") != 2 {
		t.Error("the proposal's text is not with its decision point")
	}
}

// Bad queries are 400 with the reason; writes are refused.
func TestBadRequests(t *testing.T) {
	s, _ := newServer(t, "")
	for _, target := range []string{"/runs?sort=bogus", "/runs?limit=-1", "/runs?where=colour=red", "/api/metrics?by=colour"} {
		if rec := get(t, s, target); rec.Code != 400 {
			t.Errorf("%s: %d %s", target, rec.Code, rec.Body.String())
		}
	}
	req := httptest.NewRequest("POST", "/runs", strings.NewReader("x"))
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	if rec.Code != 405 {
		t.Errorf("POST: %d", rec.Code)
	}
}

// With a token every request needs it: a link with ?token= sets a cookie
// and drops the token from the address; a Bearer header works too.
func TestToken(t *testing.T) {
	s, _ := newServer(t, testToken)
	if rec := get(t, s, "/runs"); rec.Code != 401 {
		t.Errorf("no token: %d", rec.Code)
	}
	if rec := get(t, s, "/runs?token=wrong"); rec.Code != 401 {
		t.Errorf("wrong token: %d", rec.Code)
	}
	rec := get(t, s, "/runs?token="+testToken+"&sort=TC")
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/runs?sort=TC" {
		t.Fatalf("token link: %d %q", rec.Code, rec.Header().Get("Location"))
	}
	c := rec.Result().Cookies()
	if len(c) != 1 || !c[0].HttpOnly || c[0].SameSite != http.SameSiteStrictMode {
		t.Fatalf("cookie %+v", c)
	}
	if rec := get(t, s, "/runs?sort=TC", "Cookie", c[0].Name+"="+c[0].Value); rec.Code != 200 {
		t.Errorf("with the cookie: %d", rec.Code)
	}
	if rec := get(t, s, "/api/runs", "Authorization", "Bearer "+testToken); rec.Code != 200 {
		t.Errorf("with the header: %d", rec.Code)
	}
}

func TestCheckAddr(t *testing.T) {
	for addr, ok := range map[string]bool{"127.0.0.1:8077": true, "[::1]:80": true, "localhost:1": true, "0.0.0.0:8077": false, "192.168.1.5:80": false, ":8077": false, "nonsense": false} {
		if err := CheckAddr(addr, ""); (err == nil) != ok {
			t.Errorf("%s without a token: %v", addr, err)
		}
	}
	if err := CheckAddr("0.0.0.0:8077", "t"); err != nil {
		t.Errorf("with a token: %v", err)
	}
}

// From a run, one click compares it with the same scenario, persona and
// repetition in another configuration: metrics with B − A, tasks aligned,
// trajectories by day; the payload stays text.
func TestCompare(t *testing.T) {
	s, _ := newServer(t, "")
	body := get(t, s, runPath("Model A/s1/p/1")).Body.String()
	i := strings.Index(body, `<a href="/compare?`)
	if i < 0 {
		t.Fatalf("no compare link on the run page:\n%s", body)
	}
	href := html.UnescapeString(body[i+9 : i+9+strings.Index(body[i+9:], `"`)])
	u, _ := url.Parse(href)
	if u.Query().Get("a") != "Model A/s1/p/1" || u.Query().Get("b") != "Model "+payload+"/s1/p/1" {
		t.Fatalf("compare link %s", href)
	}
	rec := get(t, s, href)
	page := rec.Body.String()
	if rec.Code != 200 || strings.Contains(page, "<script") {
		t.Fatalf("compare: %d", rec.Code)
	}
	// TC: A's task has evidence 0.4, outputs 1 and judged 0.4 and 0.4, so
	// 100 × 0.55; B's 0.6, 1, 0.6, 0.6: 70.00; B − A = +15.00.
	page = html.UnescapeString(page)
	// The task table on the same 0–100 scale as the metrics.
	if _, tasks, _ := strings.Cut(page, "<h2>Tasks</h2>"); !strings.Contains(tasks, `<td class="num">55.00</td><td class="num">70.00</td><td class="num">+15.00</td>`) {
		t.Error("compare's task table is not on TC's 0–100 scale")
	}
	for _, want := range []string{"Two runs side by side", "B − A", "55.00", "70.00", "+15.00", "Monday 2 March 2026", "Tuesday 3 March 2026", "t1", "prepare → "} {
		if !strings.Contains(page, want) {
			t.Errorf("compare lacks %q", want)
		}
	}
	for target, code := range map[string]int{"/compare?a=Model+A%2Fs1%2Fp%2F1": 400, "/compare?a=nope&b=Model+A%2Fs1%2Fp%2F1": 404} {
		if rec := get(t, s, target); rec.Code != code {
			t.Errorf("%s: %d, want %d", target, rec.Code, code)
		}
	}
}

// A judge that judged some of the items the overview averages is named
// under its tables, with its share.
func TestOverviewNamesAPartialJudge(t *testing.T) {
	f := &fake{trial: true}
	opt := analysis.DefaultBootstrap
	opt.Resamples = 100
	s, err := New(context.Background(), f, Options{Name: "test.duckdb", Bootstrap: opt, AllowedHosts: []string{"example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	body := html.UnescapeString(get(t, s, "/").Body.String())
	if !strings.Contains(body, "judge trial judged 1 of the 4 TC items judged (25%)") {
		t.Errorf("the overview does not name judge trial:\n%s", body)
	}
	if body := html.UnescapeString(get(t, newServerHandler(t), "/").Body.String()); strings.Contains(body, "items judged") {
		t.Errorf("a note with one judge judging every item")
	}
}

func newServerHandler(t *testing.T) http.Handler {
	s, _ := newServer(t, "")
	return s
}

// A run page reads from the run itself: its metrics, tasks and trajectory
// come first, the same cell's runs in other configurations after them,
// folded; an event timed before the one above it carries a note there;
// only the agent's events can be "not shown to the user" (a user's own
// message is not shown to the user by definition, and says nothing).
func TestRunPageReadingOrder(t *testing.T) {
	s, _ := newServer(t, "")
	d := longRun()
	d.Events[10].T = d.Events[9].T.Add(-3 * time.Minute)
	b, err := renderRun(s, d)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	tasks, traj, other := strings.Index(page, "<h2>Tasks"), strings.Index(page, "<h2>Trajectory"), strings.Index(page, "in other configurations")
	if !(tasks >= 0 && traj > tasks && other > traj) {
		t.Errorf("run page order: tasks at %d, trajectory at %d, other configurations at %d", tasks, traj, other)
	}
	if rest := page[max(other, 0):]; !(strings.Index(rest, `<details class="counterparts">`) >= 0 && strings.Index(rest, `<details class="counterparts">`) < strings.Index(rest, "compare side by side")) {
		t.Error("the other configurations' runs are not folded")
	}
	if !strings.Contains(page, `<div class="backwards">#11 at Mon 11:42 is timed 3 min before #10 (Mon 11:45); events stay in the log’s order</div>`) {
		t.Errorf("no note where time runs backwards")
	}
	meta := func(seq string) string {
		at := strings.Index(page, `<div id="e`+seq+`" `)
		if at < 0 {
			t.Fatalf("no event %s", seq)
		}
		return page[at : at+strings.Index(page[at:], "</div>")]
	}
	if m := meta("1"); strings.Contains(m, "not shown") { // the user's message, visible false
		t.Errorf("a user's message: %s", m)
	}
	if m := meta("22"); !strings.Contains(m, "not shown to the user") { // an agent's message, visible false
		t.Errorf("an agent's hidden message: %s", m)
	}
}

// Model ids are shortened to the model's own name, and only ids a
// provider wraps: a plain name, dotted version numbers included, stays.
func TestShortModels(t *testing.T) {
	for in, want := range map[string]string{
		bedrockARN + " | gpt-5-mini":               "claude-sonnet-4-20250514-v1:0 | gpt-5-mini",
		"gpt-4.1 | qwen.qwen3-32b-v1:0":            "gpt-4.1 | qwen3-32b-v1:0",
		"meta-llama/Llama-3.3-70B-Instruct":        "Llama-3.3-70B-Instruct",
		"trip_run_1 | eu.amazon.nova-pro-v1:0 | x": "trip_run_1 | nova-pro-v1:0 | x",
		strings.Repeat("m", 50):                    strings.Repeat("m", 35) + "…",
		"claude-opus-5":                            "claude-opus-5",
	} {
		if got := shortModels(in); got != want {
			t.Errorf("shortModels(%q) = %q, want %q", in, got, want)
		}
	}
}

// The overview marks what its notes say it marks: each column's best
// value in bold and the second underlined, in every table.
func TestOverviewMarksWhatItSays(t *testing.T) {
	s, _ := newServer(t, "")
	body := get(t, s, "/").Body.String()
	tables := strings.Split(body, "<h2>")[1:]
	if len(tables) == 0 {
		t.Fatal("no table in the overview")
	}
	underlined := false
	for _, tb := range tables {
		if !strings.Contains(tb, "in bold, second underlined") {
			continue
		}
		if !strings.Contains(tb, `<td class="num"><strong><a`) {
			t.Errorf("the table %.60q says it marks the best, and marks none", tb)
		}
		underlined = underlined || strings.Contains(tb, `<td class="num"><u><a`)
	}
	if !underlined {
		t.Error("no second-best value underlined")
	}
	if !strings.Contains(body, "in bold, second underlined") {
		t.Error("no note says what is marked")
	}
}

// A search shows, under each run found, the text that matched with the
// match marked, linking to the event on the run's page; the run's page,
// asked with the search, marks every match, opens the folded arguments
// that hold one, and lists the events that do, each a link to it.
func TestSearchSnippetsAndHighlights(t *testing.T) {
	s, _ := newServer(t, "")
	list := get(t, s, "/runs?q=hello").Body.String()
	link := html.EscapeString(runPath("Model A/s1/p/1") + "?q=hello#e1")
	if !strings.Contains(list, `<mark>Hello</mark> &lt;script&gt;`) || !strings.Contains(list, `href="`+link+`"`) {
		t.Errorf("no snippet in the list:\n%s", list)
	}
	page := get(t, s, runPath("Model A/s1/p/1")+"?q=SCRIPT").Body.String()
	if n := strings.Count(page, "<mark>script</mark>"); n < 3 {
		t.Errorf("%d matches marked on the run page", n)
	}
	if !strings.Contains(page, `<a href="#e1">#1</a>`) || !strings.Contains(page, `<details open><summary>arguments</summary>`) {
		t.Error("the run page neither lists the matching events nor opens the arguments that match")
	}
	if strings.Contains(page, "<script>") {
		t.Error("a marked text reached the page unescaped")
	}
	// Without a search, nothing is marked (and the cached page is not the searched one).
	if page := get(t, s, runPath("Model A/s1/p/1")).Body.String(); strings.Contains(page, "<mark>") {
		t.Error("a run page without a search marks text")
	}
}
