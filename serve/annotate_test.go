package serve

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gymlens/gymlens/analysis"
	"github.com/gymlens/gymlens/ingest/rows"
)

// notes is the fake warehouse with annotation queues held in memory, as
// ingest.Warehouse keeps them: answers replaced per (item, annotator,
// question).
type notes struct {
	fake
	mu      sync.Mutex
	queues  map[string]rows.Queue
	items   map[string][]rows.QueueItem
	answers map[string][]rows.Answer
	saves   int
}

func newNotes() *notes {
	return &notes{queues: map[string]rows.Queue{}, items: map[string][]rows.QueueItem{}, answers: map[string][]rows.Answer{}}
}

func (n *notes) Queues(context.Context) ([]rows.Queue, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []rows.Queue
	for _, q := range n.queues {
		out = append(out, q)
	}
	slices.SortFunc(out, func(a, b rows.Queue) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

func (n *notes) Queue(_ context.Context, name string) (rows.Queue, []rows.QueueItem, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	q, ok := n.queues[name]
	if !ok {
		return q, nil, fmt.Errorf("queue %q: %w", name, rows.ErrNoQueue)
	}
	return q, slices.Clone(n.items[name]), nil
}

func (n *notes) Answers(_ context.Context, queue string) ([]rows.Answer, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Clone(n.answers[queue]), nil
}

func (n *notes) RatedAnswers(_ context.Context, queue string) ([]rows.Answer, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	practice := map[string]bool{}
	for _, it := range n.items[queue] {
		practice[it.Item] = it.Tutorial
	}
	return slices.DeleteFunc(slices.Clone(n.answers[queue]), func(a rows.Answer) bool { return practice[a.Item] }), nil
}

func (n *notes) SaveAnswers(_ context.Context, queue, item, annotator string, answers []rows.Answer) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	// The limits, as the warehouse holds them.
	q := n.queues[queue]
	inQueue, onItem := map[string]bool{}, map[string]bool{}
	for _, a := range n.answers[queue] {
		inQueue[a.Annotator] = true
		if a.Item == item {
			onItem[a.Annotator] = true
		}
	}
	tutorial := false
	for _, it := range n.items[queue] {
		tutorial = tutorial || it.Item == item && it.Tutorial
	}
	if !inQueue[annotator] && len(inQueue) >= cmp.Or(q.MaxAnnotators, rows.DefaultMaxAnnotators) {
		return fmt.Errorf("queue %q takes answers from at most %d annotators: %w", queue, q.MaxAnnotators, rows.ErrFull)
	}
	if !onItem[annotator] && !tutorial && !q.OverAssign && len(onItem) >= q.K {
		return fmt.Errorf("queue %q, item %q has answers from its k = %d annotators: %w", queue, item, q.K, rows.ErrFull)
	}
	n.saves++
	for _, a := range answers {
		a.Item, a.Annotator = item, annotator
		n.answers[queue] = slices.DeleteFunc(n.answers[queue], func(x rows.Answer) bool {
			return x.Item == item && x.Annotator == annotator && x.Question == a.Question
		})
		n.answers[queue] = append(n.answers[queue], a)
	}
	return nil
}

func (n *notes) CreateQueue(_ context.Context, q rows.Queue, items []rows.QueueItem) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if _, ok := n.queues[q.Name]; ok {
		return fmt.Errorf("queue %q exists", q.Name)
	}
	q.MaxAnnotators = cmp.Or(q.MaxAnnotators, rows.DefaultMaxAnnotators)
	n.queues[q.Name], n.items[q.Name] = q, items
	return nil
}

func (n *notes) QueuePage(_ context.Context, queue string, offset, limit int) (rows.QueuePage, error) {
	n.mu.Lock()
	q, items, answers := n.queues[queue], n.items[queue], slices.Clone(n.answers[queue])
	n.mu.Unlock()
	st := analysis.NewQueueState(q, items, answers)
	all := st.Progress()
	p := rows.QueuePage{Annotators: len(all.Annotators), Complete: all.Complete}
	for _, a := range all.Annotators[min(offset, len(all.Annotators)):min(offset+limit, len(all.Annotators))] {
		p.Names = append(p.Names, a.Annotator)
	}
	for _, a := range answers {
		if slices.Contains(p.Names, a.Annotator) {
			p.Answers = append(p.Answers, a)
		}
	}
	return p, nil
}

func (n *notes) PAREQueueItems(context.Context) ([]rows.QueueItem, error) {
	return []rows.QueueItem{{Item: "tut", Sample: "tut", Tutorial: true, Context: "practice proposal", Key: map[string]string{"decision": "accept"}},
		{Item: "s1", Sample: "s1", Context: "Shall I book " + payload + "?"}, {Item: "s2", Sample: "s2", Context: "Shall I pay?"}}, nil
}

func (n *notes) LoadPARESamples(context.Context) ([]rows.PARESampleRow, int, error) {
	return []rows.PARESampleRow{{SampleID: "s1", Simulated: "accept"}, {SampleID: "s2", Simulated: "reject"}, {SampleID: "tut", Simulated: "accept", Correct: "accept"}}, 0, nil
}

// annotated is a server over the four fake runs with a ratings queue of
// their tasks (the first a practice item with a key) and k = 2.
func annotated(t *testing.T, token string, readOnly bool) (*Server, *notes) {
	t.Helper()
	n := newNotes()
	runs, _ := n.LoadRunsWith(context.Background(), func(int, *rows.RunRow) {}, false)
	var items []rows.QueueItem
	for i, r := range runs {
		it := rows.QueueItem{Item: rows.ItemID(r.RunID, "t1"), Pos: i, RunID: r.RunID, Task: "t1", Context: "the user saw " + payload}
		if i == 0 {
			it.Tutorial, it.Key = true, map[string]string{"trj.competence": "4", "tc": "0.75"}
		}
		items = append(items, it)
	}
	n.CreateQueue(context.Background(), rows.Queue{Name: "q1", Kind: rows.QueueRatings, K: 2, Questions: []string{"trj.competence", "tc"}}, items)
	opt := analysis.DefaultBootstrap
	opt.Resamples = 200
	s, err := New(context.Background(), n, Options{Name: "test.duckdb", Token: token, Bootstrap: opt, ReadOnly: readOnly, AllowedHosts: []string{"example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	return s, n
}

func post(t *testing.T, h http.Handler, target, contentType, body string, header ...string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest("POST", target, strings.NewReader(body))
	req.Header.Set("Content-Type", contentType)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

const form = "application/x-www-form-urlencoded"

func jsonString(s string) string { b, _ := json.Marshal(s); return string(b) }

// An annotator names themselves, gets the practice item first, sees its
// key once answered, then the other items; an item shows what a rater
// needs and nothing that anchors them; an edit replaces the answer.
func TestAnnotateFlow(t *testing.T) {
	s, n := annotated(t, "", false)
	rec := get(t, s, "/annotate/q1")
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), `name="annotator"`) {
		t.Fatalf("no name asked: %d %s", rec.Code, rec.Body.String())
	}
	rec = get(t, s, "/annotate/q1?annotator=alice")
	cookie := rec.Header().Get("Set-Cookie")
	if rec.Code != 303 || !strings.HasPrefix(cookie, nameCookie+"=alice") {
		t.Fatalf("name: %d %q", rec.Code, cookie)
	}
	alice := []string{"Cookie", nameCookie + "=alice"}
	if rec = get(t, s, "/annotate/q1", alice...); rec.Code != 303 || rec.Header().Get("Location") != "/annotate/q1/items/1" {
		t.Fatalf("first item: %d %s", rec.Code, rec.Header().Get("Location"))
	}
	page := get(t, s, "/annotate/q1/items/1", alice...).Body.String()
	for _, want := range []string{"practice item", "the user saw &lt;script&gt;", `name="q:trj.competence" value="5"`, `name="q:tc" value="0.25"`} {
		if !strings.Contains(page, want) {
			t.Errorf("item page lacks %q", want)
		}
	}
	// Nothing that anchors: no run id, model, harness or judge score.
	for _, not := range []string{"Model A", "CC", "<script>", "j:", "Reference answer"} {
		if strings.Contains(page, not) {
			t.Errorf("item page shows %q", not)
		}
	}
	rec = post(t, s, "/annotate/q1/items/1", form, "q:trj.competence=4&q:tc=0.5", alice...)
	if rec.Code != 303 || rec.Header().Get("Location") != "/annotate/q1/items/1?saved=1" {
		t.Fatalf("save: %d %s %s", rec.Code, rec.Header().Get("Location"), rec.Body.String())
	}
	page = get(t, s, "/annotate/q1/items/1?saved=1", alice...).Body.String()
	if !strings.Contains(page, "Reference answer: 4 — the same as yours") || !strings.Contains(page, "Reference answer: 0.75 — yours: 0.5") {
		t.Errorf("the key is not shown after the practice item:\n%s", page)
	}
	if !strings.Contains(page, `value="4" checked`) {
		t.Error("the answer given is not checked")
	}
	if rec = get(t, s, "/annotate/q1", alice...); rec.Header().Get("Location") != "/annotate/q1/items/2" {
		t.Fatalf("after practice: %s", rec.Header().Get("Location"))
	}
	post(t, s, "/annotate/q1/items/2", form, "q:trj.competence=3&q:tc=0.5", alice...)
	post(t, s, "/annotate/q1/items/2", form, "q:trj.competence=5&q:tc=1", alice...) // an edit
	post(t, s, "/annotate/q1/items/2", form, "q:trj.competence=5&q:tc=1", alice...) // the same again
	var mine []string
	for _, a := range n.answers["q1"] {
		if a.Item == n.items["q1"][1].Item {
			mine = append(mine, a.Question+"="+analysis.AnswerText(a))
		}
	}
	slices.Sort(mine)
	if strings.Join(mine, " ") != "tc=1 trj.competence=5" {
		t.Errorf("item 2 answers after an edit and a repeat: %v", mine)
	}
	// Bob takes item 2 too; then item 2 has k = 2 and carol skips it.
	bob := []string{"Cookie", nameCookie + "=bob"}
	post(t, s, "/annotate/q1/items/1", form, "q:trj.competence=4&q:tc=0.75", bob...)
	post(t, s, "/annotate/q1/items/2", form, "q:trj.competence=4&q:tc=0.75", bob...)
	post(t, s, "/annotate/q1/items/1", form, "q:trj.competence=4&q:tc=0.75", "Cookie", nameCookie+"=carol")
	if loc := get(t, s, "/annotate/q1", "Cookie", nameCookie+"=carol").Header().Get("Location"); loc != "/annotate/q1/items/3" {
		t.Errorf("carol is sent to %s, not item 3 (item 2 has its 2 annotators)", loc)
	}
	st := get(t, s, "/api/annotate/q1/status").Body.String()
	for _, want := range []string{`"complete": 1`, `"annotator": "alice"`, `"key_agree": 1`, `"key_answers": 2`, `"tutorial_items": 1`} {
		if !strings.Contains(st, want) {
			t.Errorf("status lacks %s:\n%s", want, st)
		}
	}
	// The status page names its statistics in words, and says what n
	// counts in each table.
	page = get(t, s, "/annotate/q1/status").Body.String()
	for _, raw := range []string{">mean_a<", ">mean_b<", ">mae<", ">delta<", ">pearson<"} {
		if strings.Contains(page, raw) {
			t.Errorf("the status page shows the raw name %s", raw)
		}
	}
	for _, want := range []string{"mean of the annotators", "n: the items two annotators or more answered", "n: the items both"} {
		if !strings.Contains(page, want) {
			t.Errorf("the status page lacks %q", want)
		}
	}
}

// Answers that do not fit the question, or questions and items the queue
// does not have, are refused with the reason; nothing is stored.
func TestAnswerErrors(t *testing.T) {
	s, n := annotated(t, "", false)
	item := n.items["q1"][1].Item
	body := func(ans string) string {
		return fmt.Sprintf(`{"item": %s, "annotator": "alice", "answers": %s}`, jsonString(item), ans)
	}
	cases := []struct {
		ct, body string
		code     int
		msg      string
	}{
		{"text/plain", body(`{"tc": 1}`), 415, "application/json"},
		{"application/json", body(`{"tc": 0.3}`), 400, "expected one of 0, 0.25, 0.5, 0.75, 1"},
		{"application/json", body(`{"trj.competence": 6}`), 400, "trj.competence"},
		{"application/json", body(`{"colour": 1}`), 400, `no question "colour"`},
		{"application/json", body(`{}`), 400, "none given"},
		{"application/json", body(`{"tc": [1]}`), 400, "expected a number or a string"},
		{"application/json", `{"item": "nope", "annotator": "alice", "answers": {"tc": 1}}`, 404, `no item "nope"`},
		{"application/json", `{"item": "x", "annotator": "alice", "answers": {"tc": 1}, "extra": 1}`, 400, "unknown field"},
		{"application/json", fmt.Sprintf(`{"item": %s, "annotator": "", "answers": {"tc": 1}}`, jsonString(item)), 400, "give a name"},
		{"application/json", fmt.Sprintf(`{"item": %s, "annotator": "a\u0007", "answers": {"tc": 1}}`, jsonString(item)), 400, "a control"},
	}
	for _, c := range cases {
		rec := post(t, s, "/api/annotate/q1/answers", c.ct, c.body)
		if rec.Code != c.code || !strings.Contains(rec.Body.String(), c.msg) {
			t.Errorf("%s: %d %q, want %d with %q", c.body, rec.Code, rec.Body.String(), c.code, c.msg)
		}
	}
	if rec := post(t, s, "/api/annotate/nope/answers", "application/json", body(`{"tc": 1}`)); rec.Code != 404 {
		t.Errorf("unknown queue: %d", rec.Code)
	}
	if len(n.answers["q1"]) != 0 || n.saves != 0 {
		t.Errorf("refused answers were stored: %v", n.answers["q1"])
	}
	rec := post(t, s, "/api/annotate/q1/answers", "application/json", body(`{"tc": 1, "trj.competence": "4"}`))
	if rec.Code != 200 || len(n.answers["q1"]) != 2 {
		t.Fatalf("good answers: %d %s", rec.Code, rec.Body.String())
	}
}

// A POST from another site is refused (the browser says so in
// Sec-Fetch-Site or Origin); one from the page itself goes through.
func TestCrossOrigin(t *testing.T) {
	s, n := annotated(t, "", false)
	alice := []string{"Cookie", nameCookie + "=alice"}
	for _, h := range [][]string{{"Sec-Fetch-Site", "cross-site"}, {"Origin", "http://evil.example"}} {
		rec := post(t, s, "/annotate/q1/items/2", form, "q:trj.competence=4&q:tc=0.5", append(alice, h...)...)
		if rec.Code != 403 {
			t.Errorf("%v: %d", h, rec.Code)
		}
	}
	if len(n.answers["q1"]) != 0 {
		t.Fatal("a cross-site POST stored answers")
	}
	rec := post(t, s, "/annotate/q1/items/2", form, "q:trj.competence=4&q:tc=0.5", append(alice, "Sec-Fetch-Site", "same-origin", "Origin", "http://example.com")...)
	if rec.Code != 303 || len(n.answers["q1"]) != 2 {
		t.Errorf("same-origin POST: %d %s", rec.Code, rec.Body.String())
	}
}

// With a token: POSTs need it; an annotator's own link opens that queue
// alone, as that annotator, and neither the runs nor the status.
func TestAnnotatorLinks(t *testing.T) {
	s, n := annotated(t, testToken, false)
	item := n.items["q1"][1].Item
	if rec := post(t, s, "/api/annotate/q1/answers", "application/json", `{"item": `+jsonString(item)+`, "annotator": "x", "answers": {"tc": 1}}`); rec.Code != 401 {
		t.Errorf("POST without the token: %d", rec.Code)
	}
	link := AnnotatorLink(testToken, "q1", "alice")
	u, _ := url.Parse(link)
	bad := u.Query()
	bad.Set("key", strings.Repeat("0", 32))
	if rec := get(t, s, u.Path+"?"+bad.Encode()); rec.Code != 401 {
		t.Errorf("a wrong key: %d", rec.Code)
	}
	rec := get(t, s, link)
	if rec.Code != 303 || rec.Header().Get("Location") != "/annotate/q1" {
		t.Fatalf("the link: %d %s", rec.Code, rec.Header().Get("Location"))
	}
	c := rec.Result().Cookies()[0]
	as := []string{"Cookie", c.Name + "=" + c.Value}
	if rec := get(t, s, "/annotate/q1", as...); rec.Code != 303 || rec.Header().Get("Location") != "/annotate/q1/items/1" {
		t.Errorf("with the link's cookie: %d %s", rec.Code, rec.Header().Get("Location"))
	}
	for _, target := range []string{"/", "/runs", "/annotate/q1/status", "/api/annotate/q1/items", "/api/runs"} {
		if rec := get(t, s, target, as...); rec.Code != 401 {
			t.Errorf("an annotator's link opens %s: %d", target, rec.Code)
		}
	}
	// The link answers as alice only, and gives no name change.
	if rec := post(t, s, "/api/annotate/q1/answers", "application/json", `{"item": `+jsonString(item)+`, "annotator": "bob", "answers": {"tc": 1}}`, as...); rec.Code != 403 {
		t.Errorf("answering as another: %d", rec.Code)
	}
	if rec := post(t, s, "/api/annotate/q1/answers", "application/json", `{"item": `+jsonString(item)+`, "answers": {"tc": 1}}`, as...); rec.Code != 200 {
		t.Errorf("answering as alice: %d %s", rec.Code, rec.Body.String())
	}
	if got := n.answers["q1"]; len(got) != 1 || got[0].Annotator != "alice" {
		t.Errorf("stored: %+v", got)
	}
	// The token's holder sees the status and makes links there.
	page := get(t, s, "/annotate/q1/status?link=bob", "Authorization", "Bearer "+testToken).Body.String()
	if !strings.Contains(page, "key="+AnnotatorKey(testToken, "q1", "bob")) {
		t.Errorf("the status page makes no link for bob:\n%s", page)
	}
	if AnnotatorKey(testToken, "q1", "bob") == AnnotatorKey(testToken, "q2", "bob") || AnnotatorKey(testToken, "q1", "bob") == AnnotatorKey("other", "q1", "bob") {
		t.Error("keys do not depend on the queue and token")
	}
}

// A read-only viewer stores nothing and says why.
func TestReadOnlyViewer(t *testing.T) {
	s, n := annotated(t, "", true)
	rec := post(t, s, "/annotate/q1/items/2", form, "q:trj.competence=4&q:tc=0.5", "Cookie", nameCookie+"=alice")
	if rec.Code != 409 || !strings.Contains(rec.Body.String(), "read-only") || len(n.answers["q1"]) != 0 {
		t.Errorf("%d %s", rec.Code, rec.Body.String())
	}
}

// A PARE queue made in the page asks accept / reject / gather context;
// its status compares the annotators with the simulated user.
func TestPAREQueue(t *testing.T) {
	s, n := annotated(t, "", false)
	rec := post(t, s, "/annotate", form, "name=pq&k=2&source=pare")
	if rec.Code != 303 || rec.Header().Get("Location") != "/annotate/pq/status" {
		t.Fatalf("make: %d %s", rec.Code, rec.Body.String())
	}
	if rec := post(t, s, "/annotate", form, "name=a/b&k=2&source=pare"); rec.Code != 400 {
		t.Errorf("a name with a slash: %d", rec.Code)
	}
	if rec := post(t, s, "/annotate", form, "name=pq2&k=0&source=pare"); rec.Code != 400 {
		t.Errorf("k = 0: %d", rec.Code)
	}
	page := get(t, s, "/annotate/pq/items/2", "Cookie", nameCookie+"=alice").Body.String()
	if !strings.Contains(page, `value="gather_context"`) || !strings.Contains(page, "Shall I book &lt;script&gt;") {
		t.Errorf("PARE item page:\n%s", page)
	}
	for _, who := range []string{"alice", "bob"} {
		for item, d := range map[string]string{"s1": "accept", "s2": "reject", "tut": "reject"} {
			rec := post(t, s, "/api/annotate/pq/answers", "application/json", fmt.Sprintf(`{"item": %q, "annotator": %q, "answers": {"decision": %q}}`, item, who, d))
			if rec.Code != 200 {
				t.Fatalf("%d %s", rec.Code, rec.Body.String())
			}
		}
	}
	if len(n.answers["pq"]) != 6 {
		t.Fatalf("answers: %d", len(n.answers["pq"]))
	}
	st, err := s.status(httptest.NewRequest("GET", "/", nil), "pq", 1)
	if err != nil {
		t.Fatal(err)
	}
	// Two samples (the practice one left out), both agreeing with the
	// simulated user: accuracy 100 %; the annotators agree fully.
	if st.Complete != 2 || st.Against[0].Value == nil || *st.Against[0].Value != 100 || st.Among[0].Value == nil || math.Abs(*st.Among[0].Value-1) > 1e-12 {
		t.Errorf("status: %+v among %v against %v", st, *st.Among[0].Value, *st.Against[0].Value)
	}
	if st.Annotators[0].KeyAnswers != 1 || st.Annotators[0].KeyAgree != 0 {
		t.Errorf("practice against its key: %+v", st.Annotators[0])
	}
}

// An item page counts as the CLI and the status page do: practice items
// apart ("practice item 1 of 1"), the others from 1 ("item 1 of 3"); a
// practice item with a key says its button shows the key, and one
// without a key goes on like any other.
func TestAnnotateCountsAndPracticeGoesOn(t *testing.T) {
	s, n := annotated(t, "", false)
	alice := []string{"Cookie", nameCookie + "=alice"}
	page := get(t, s, "/annotate/q1/items/1", alice...).Body.String()
	if !strings.Contains(page, "q1 · practice item 1 of 1") || !strings.Contains(page, "Save and see the reference answer") {
		t.Errorf("practice item page: %.400s", page[strings.Index(page, "<h1>"):])
	}
	page = get(t, s, "/annotate/q1/items/2", alice...).Body.String()
	if !strings.Contains(page, "q1 · item 1 of 3") || !strings.Contains(page, "Save and go on") {
		t.Errorf("item page: %.400s", page[strings.Index(page, "<h1>"):])
	}
	status := get(t, s, "/annotate/q1/status").Body.String()
	if !strings.Contains(status, "3 items (and 1 practice)") {
		t.Error("the status page counts otherwise")
	}
	// A practice item without a key: saved, the annotator goes on.
	n.mu.Lock()
	n.items["q1"][0].Key = nil
	n.mu.Unlock()
	s2, err := New(context.Background(), n, Options{Name: "test.duckdb", Bootstrap: s.opt.Bootstrap, AllowedHosts: []string{"example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	if page := get(t, s2, "/annotate/q1/items/1", alice...).Body.String(); !strings.Contains(page, "Save and go on") {
		t.Error("a practice item without a key does not say it goes on")
	}
	if rec := post(t, s2, "/annotate/q1/items/1", form, "q:trj.competence=4&q:tc=0.5", alice...); rec.Code != 303 || rec.Header().Get("Location") != "/annotate/q1" {
		t.Errorf("a practice item without a key: %d to %s", rec.Code, rec.Header().Get("Location"))
	}
}

// An annotator may add a comment to an item and may skip it ("cannot
// judge"): both are stored as the annotator's answers (a skip to every
// question), count as done, are not ratings (nor PARE decisions), and the
// export writes them.
func TestAnnotateSkipAndComment(t *testing.T) {
	s, n := annotated(t, "", false)
	alice := []string{"Cookie", nameCookie + "=alice"}
	page := get(t, s, "/annotate/q1/items/2", alice...).Body.String()
	if !strings.Contains(page, `<textarea name="comment"`) || !strings.Contains(page, `name="skip" value="1" formnovalidate`) {
		t.Fatalf("the item page has no comment or skip: %s", page[strings.Index(page, "<form"):])
	}
	if rec := post(t, s, "/annotate/q1/items/2", form, "skip=1&comment="+url.QueryEscape("no deliverable <b>shown</b>"), alice...); rec.Code != 303 {
		t.Fatalf("skip: %d %s", rec.Code, rec.Body.String())
	}
	if rec := post(t, s, "/annotate/q1/items/3", form, "q:trj.competence=4&q:tc=0.5&comment=fine", alice...); rec.Code != 303 {
		t.Fatalf("answer with a comment: %d %s", rec.Code, rec.Body.String())
	}
	n.mu.Lock()
	got := map[string]string{}
	for _, a := range n.answers["q1"] {
		got[a.Item[len(a.Item)-8:]+" "+a.Question] = analysis.AnswerText(a)
	}
	q := n.queues["q1"]
	items, answers := n.items["q1"], slices.Clone(n.answers["q1"])
	n.mu.Unlock()
	if len(got) != 6 {
		t.Errorf("answers stored: %v", got)
	}
	st := analysis.NewQueueState(q, items, answers)
	if !st.Done(items[1].Item, "alice") {
		t.Error("a skipped item is not done")
	}
	for _, r := range st.Ratings() {
		if r.Question == analysis.CommentQuestion || math.IsNaN(r.Value) {
			t.Errorf("a comment or a skip became a rating: %+v", r)
		}
	}
	if len(st.Ratings()) != 2 {
		t.Errorf("ratings: %+v", st.Ratings())
	}
	page = get(t, s, "/annotate/q1/items/2", alice...).Body.String()
	if !strings.Contains(page, "no deliverable &lt;b&gt;shown&lt;/b&gt;</textarea>") || !strings.Contains(page, "You skipped this item") {
		t.Error("the item page does not show the comment and the skip given")
	}
	// A comment longer than the limit is refused.
	long := strings.Repeat("x", analysis.MaxComment+1)
	if rec := post(t, s, "/annotate/q1/items/3", form, "q:trj.competence=4&q:tc=0.5&comment="+long, alice...); rec.Code != 400 {
		t.Errorf("a long comment: %d", rec.Code)
	}
}
