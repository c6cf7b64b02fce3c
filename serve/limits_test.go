package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/gymlens/gymlens/ingest/rows"
)

// An item with k = 2 answered by two annotators refuses a third with 409
// and the reason, by the API and by the form; an annotator revising their
// answer is not a third; a queue made to allow over-assignment takes the
// third; a queue at its most annotators refuses a new name with 409.
func TestAnswersBeyondK(t *testing.T) {
	s, n := annotated(t, "", false)
	item := n.items["q1"][1].Item
	send := func(queue, who string) (int, string) {
		rec := post(t, s, "/api/annotate/"+queue+"/answers", "application/json", fmt.Sprintf(`{"item": %s, "annotator": %q, "answers": {"tc": 1}}`, jsonString(item), who))
		return rec.Code, rec.Body.String()
	}
	for _, who := range []string{"alice", "bob"} {
		if code, body := send("q1", who); code != 200 {
			t.Fatalf("%s: %d %s", who, code, body)
		}
	}
	if code, body := send("q1", "carol"); code != 409 || !strings.Contains(body, "k = 2") {
		t.Errorf("a third annotator by the API: %d %s", code, body)
	}
	rec := post(t, s, "/annotate/q1/items/2", form, "q:trj.competence=4&q:tc=0.5", "Cookie", nameCookie+"=carol")
	if rec.Code != 409 || !strings.Contains(rec.Body.String(), "k = 2") {
		t.Errorf("a third annotator by the form: %d %s", rec.Code, rec.Body.String())
	}
	if code, body := send("q1", "alice"); code != 200 {
		t.Errorf("alice revising: %d %s", code, body)
	}
	items := n.items["q1"]
	n.CreateQueue(context.Background(), rows.Queue{Name: "over", Kind: rows.QueueRatings, K: 2, Questions: []string{"tc"}, OverAssign: true, MaxAnnotators: 3}, items)
	for _, who := range []string{"alice", "bob", "carol"} {
		if code, body := send("over", who); code != 200 {
			t.Errorf("over-assignment, %s: %d %s", who, code, body)
		}
	}
	if code, body := send("over", "dave"); code != 409 || !strings.Contains(body, "at most 3 annotators") {
		t.Errorf("a fourth name in a queue of at most 3: %d %s", code, body)
	}
}

// The status lists the annotators a page at a time, with the count of
// them all and links between the pages; a page past the last is 404.
func TestStatusPaged(t *testing.T) {
	s, n := annotated(t, "", false)
	q := n.queues["q1"]
	q.OverAssign = true
	n.queues["q1"] = q
	item := n.items["q1"][1].Item
	for i := range 250 {
		n.SaveAnswers(context.Background(), "q1", item, fmt.Sprintf("ann%03d", i), []rows.Answer{{Question: "tc", Value: 1}, {Question: "trj.competence", Value: 4}})
	}
	page := get(t, s, "/annotate/q1/status").Body.String()
	for _, want := range []string{"250 of the 1000 the queue takes; page 1 of 3", `href="/annotate/q1/status?page=2">next`, "<td>ann099</td>"} {
		if !strings.Contains(page, want) {
			t.Errorf("page 1 lacks %q", want)
		}
	}
	if strings.Contains(page, "ann100") || strings.Count(page, "<td>ann") != AnnotatorsPerPage {
		t.Errorf("page 1 lists %d annotators", strings.Count(page, "<td>ann"))
	}
	page = get(t, s, "/annotate/q1/status?page=3").Body.String()
	if strings.Count(page, "<td>ann") != 50 || !strings.Contains(page, "<td>ann249</td>") || !strings.Contains(page, `href="/annotate/q1/status?page=2">previous`) {
		t.Errorf("page 3:\n%s", page)
	}
	var st QueueStatus
	rec := get(t, s, "/api/annotate/q1/status?page=2")
	if err := json.Unmarshal(rec.Body.Bytes(), &st); err != nil || st.AnnotatorsTotal != 250 || st.Pages != 3 || len(st.Annotators) != 100 || st.Annotators[0].Annotator != "ann100" || st.Annotators[0].Done != 1 || st.Complete != 1 {
		t.Errorf("JSON page 2: %v %+v", err, st)
	}
	for target, code := range map[string]int{"/annotate/q1/status?page=4": 404, "/annotate/q1/status?page=0": 400, "/api/annotate/q1/status?page=x": 400} {
		if rec := get(t, s, target); rec.Code != code {
			t.Errorf("%s: %d, want %d", target, rec.Code, code)
		}
	}
}

// The page's form makes a queue with the limits it is given; a cap below
// k is refused.
func TestMakeQueueWithLimits(t *testing.T) {
	s, n := annotated(t, "", false)
	rec := post(t, s, "/annotate", form, "name=p1&k=2&source=pare&max_annotators=5&over_assign=1")
	if rec.Code != 303 {
		t.Fatalf("%d %s", rec.Code, rec.Body.String())
	}
	if q := n.queues["p1"]; q.MaxAnnotators != 5 || !q.OverAssign {
		t.Errorf("stored: %+v", q)
	}
	post(t, s, "/annotate", form, "name=p2&k=2&source=pare")
	if q := n.queues["p2"]; q.MaxAnnotators != rows.DefaultMaxAnnotators || q.OverAssign {
		t.Errorf("stored without limits: %+v", q)
	}
	if rec = post(t, s, "/annotate", form, "name=p3&k=3&source=pare&max_annotators=2"); rec.Code != 400 || !strings.Contains(rec.Body.String(), "max-annotators 2") {
		t.Errorf("a cap below k: %d %s", rec.Code, rec.Body.String())
	}
}
