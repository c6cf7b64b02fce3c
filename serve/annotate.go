package serve

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/gymlens/gymlens/analysis"
	"github.com/gymlens/gymlens/ingest/rows"
	"github.com/gymlens/gymlens/reports"
)

// Annotations is where the annotation queues and their answers live
// (ingest.Warehouse is one): the server owns it, writing answers while
// pages go on reading.
type Annotations interface {
	Queues(ctx context.Context) ([]rows.Queue, error)
	// Queue is a queue and its items; an error wrapping rows.ErrNoQueue
	// when there is none of that name.
	Queue(ctx context.Context, name string) (rows.Queue, []rows.QueueItem, error)
	Answers(ctx context.Context, queue string) ([]rows.Answer, error)
	// RatedAnswers are the answers to the items other than practice ones.
	RatedAnswers(ctx context.Context, queue string) ([]rows.Answer, error)
	// SaveAnswers stores one annotator's answers to one item at once, in
	// one transaction, replacing what they answered before.
	SaveAnswers(ctx context.Context, queue, item, annotator string, answers []rows.Answer) error
	CreateQueue(ctx context.Context, q rows.Queue, items []rows.QueueItem) error
	PAREQueueItems(ctx context.Context) ([]rows.QueueItem, error)
	// QueuePage is a page of a queue's annotators, by name, with their
	// answers and the counts over them all (limit 0: the counts only).
	QueuePage(ctx context.Context, queue string, offset, limit int) (rows.QueuePage, error)
}

// AnnotatorsPerPage is how many annotators a page of a queue's status
// lists (?page=N for the others): the page costs the same whatever the
// crowd.
const AnnotatorsPerPage = 100

// SampleSpec is a sample drawn in the page for a new queue (what `gymlens
// annotate sample` takes).
type SampleSpec struct {
	N, Tutorial int
	Unit, By    string
	Where       []string
	Seed        uint64
}

// sample draws a new queue's items as `gymlens annotate sample` draws
// them (reports.DrawSample), with what the user saw of each.
func (s *Server) sample(ctx context.Context, spec SampleSpec) ([]rows.QueueItem, error) {
	where, err := analysis.ParseWhere(spec.Where, nil, "PARE runs")
	if err != nil {
		return nil, err
	}
	chosen, _, history, err := reports.DrawSample(ctx, s.store, reports.Options{Name: s.opt.Name, Keep: reports.KeepTaskNames, Where: where},
		spec.Unit, spec.By, spec.N, spec.Seed, s.opt.Histories)
	if err != nil {
		return nil, err
	}
	return analysis.SampleQueueItems(chosen, history, spec.Tutorial)
}

// who is the annotator a request comes from.
type who struct {
	name  string // "" when not known yet
	fixed bool   // from an annotator's own link: the name cannot be changed, the queue is theirs alone
	queue string // with fixed: the one queue the link opens
}

type whoKey struct{}

func requester(r *http.Request) who {
	w, _ := r.Context().Value(whoKey{}).(who)
	return w
}

// Cookies: the name an annotator gave (no token), and an annotator's own
// link (queue, name and key, with a token).
const (
	nameCookie = "gymlens_annotator"
	linkCookie = "gymlens_annotator_link"
)

// AnnotatorKey is the key of annotator's own link to queue: an HMAC of
// both under the server's token, so that the link opens that queue alone,
// as that annotator, and nothing needs storing.
func AnnotatorKey(token, queue, annotator string) string {
	m := hmac.New(sha256.New, []byte(token))
	m.Write([]byte("gymlens annotate\x00" + queue + "\x00" + annotator))
	return hex.EncodeToString(m.Sum(nil))[:32]
}

// AnnotatorLink is the path of annotator's own link to queue.
func AnnotatorLink(token, queue, annotator string) string {
	q := url.Values{"as": {annotator}, "key": {AnnotatorKey(token, queue, annotator)}}
	return "/annotate/" + url.PathEscape(queue) + "?" + q.Encode()
}

// checkName is an annotator's name as stored (analysis.AnnotatorName:
// NFC, without control or format characters), or why it is refused.
func checkName(name string) (string, error) { return analysis.AnnotatorName(name) }

// annotatorAccess lets an annotator's own link in, to its queue only:
// from ?as=&key= (which sets a cookie and redirects without them) or the
// cookie. It says whether the request is answered (redirect) or may go on,
// with whom.
func (s *Server) annotatorAccess(w http.ResponseWriter, r *http.Request) (*http.Request, bool, bool) {
	queue, ok := annotateQueue(r.URL.Path)
	if !ok {
		return r, false, false
	}
	valid := func(name, key string) bool {
		n, err := checkName(name)
		return err == nil && n == name && subtle.ConstantTimeCompare([]byte(key), []byte(AnnotatorKey(s.opt.Token, queue, name))) == 1
	}
	q := r.URL.Query()
	if as, key := q.Get("as"), q.Get("key"); as != "" && key != "" && r.Method == http.MethodGet {
		if !valid(as, key) {
			return r, false, false
		}
		http.SetCookie(w, &http.Cookie{Name: linkCookie, Value: url.Values{"q": {queue}, "as": {as}, "key": {key}}.Encode(),
			Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
		q.Del("as")
		q.Del("key")
		u := *r.URL
		u.RawQuery = q.Encode()
		http.Redirect(w, r, u.RequestURI(), http.StatusSeeOther)
		return r, true, true
	}
	c, err := r.Cookie(linkCookie)
	if err != nil {
		return r, false, false
	}
	v, err := url.ParseQuery(c.Value)
	if err != nil || v.Get("q") != queue || !valid(v.Get("as"), v.Get("key")) {
		return r, false, false
	}
	if strings.HasSuffix(r.URL.Path, "/status") {
		return r, false, false // the status shows everyone's work: the token's holder's
	}
	ctx := context.WithValue(r.Context(), whoKey{}, who{name: v.Get("as"), fixed: true, queue: queue})
	return r.WithContext(ctx), false, true
}

// annotateQueue is the queue a path of an annotator's pages names:
// /annotate/{queue}[/items/{n}] and /api/annotate/{queue}/answers.
func annotateQueue(path string) (string, bool) {
	var rest string
	switch {
	case strings.HasPrefix(path, "/annotate/"):
		rest = strings.TrimPrefix(path, "/annotate/")
	case strings.HasPrefix(path, "/api/annotate/") && strings.HasSuffix(path, "/answers"):
		rest = strings.TrimSuffix(strings.TrimPrefix(path, "/api/annotate/"), "/answers")
	default:
		return "", false
	}
	queue, tail, _ := strings.Cut(rest, "/")
	if queue == "" || (tail != "" && tail != "status" && !strings.HasPrefix(tail, "items/")) {
		return "", false
	}
	return queue, true
}

// annotatorOf is the annotator of a request: fixed by their link, or the
// name they gave (cookie), or "".
func annotatorOf(r *http.Request) who {
	w := requester(r)
	if w.fixed {
		return w
	}
	if c, err := r.Cookie(nameCookie); err == nil {
		if name, err := url.QueryUnescape(c.Value); err == nil {
			if n, err := checkName(name); err == nil {
				w.name = n
			}
		}
	}
	return w
}

// writable refuses a write to a viewer opened read-only.
func (s *Server) writable(w http.ResponseWriter) bool {
	if s.opt.ReadOnly || s.notes == nil {
		http.Error(w, "this viewer was started read-only (gymlens serve --read-only): it stores no answers", http.StatusConflict)
		return false
	}
	return true
}

// queueOnly reads a queue and its items, without their answers.
func (s *Server) queueOnly(r *http.Request, name string) (rows.Queue, []rows.QueueItem, error) {
	if s.notes == nil {
		return rows.Queue{}, nil, fmt.Errorf("this store holds no annotation queues: %w", errNotFound)
	}
	q, items, err := s.notes.Queue(r.Context(), name)
	if err != nil {
		if errors.Is(err, rows.ErrNoQueue) {
			return q, nil, fmt.Errorf("%w: %w", err, errNotFound)
		}
		return q, nil, err
	}
	return q, items, nil
}

// queueState reads a queue with its answers.
func (s *Server) queueState(r *http.Request, name string) (*analysis.QueueState, error) {
	q, items, err := s.queueOnly(r, name)
	if err != nil {
		return nil, err
	}
	answers, err := s.notes.Answers(r.Context(), name)
	if err != nil {
		return nil, err
	}
	return analysis.NewQueueState(q, items, answers), nil
}

// queueRow is a queue in the list of queues.
type queueRow struct {
	rows.Queue
	Link, Status string
	analysis.Progress
}

func (s *Server) annotateIndex(w http.ResponseWriter, r *http.Request) {
	var list []queueRow
	if s.notes != nil {
		qs, err := s.notes.Queues(r.Context())
		if err != nil {
			fail(w, err)
			return
		}
		for _, q := range qs {
			_, items, err := s.queueOnly(r, q.Name)
			if err != nil {
				fail(w, err)
				return
			}
			pg, err := s.notes.QueuePage(r.Context(), q.Name, 0, 0)
			if err != nil {
				fail(w, err)
				return
			}
			base := "/annotate/" + url.PathEscape(q.Name)
			row := queueRow{Queue: q, Link: base, Status: base + "/status", Progress: analysis.Progress{Complete: pg.Complete}}
			for _, it := range items {
				if it.Tutorial {
					row.Tutorial++
				} else {
					row.Items++
				}
			}
			list = append(list, row)
		}
	}
	s.page(w, "annotate-index", map[string]any{"Title": "Annotation queues", "Queues": list, "CanMake": s.notes != nil && !s.opt.ReadOnly,
		"CanSample": s.opt.Histories != nil, "Dimensions": analysis.Dimensions, "Error": r.URL.Query().Get("error"), "MaxAnnotators": rows.DefaultMaxAnnotators})
}

// makeQueue makes a queue from the page's form: a sample of the runs (or
// their tasks), or the PARE samples ingested.
func (s *Server) makeQueue(w http.ResponseWriter, r *http.Request) {
	if !s.writable(w) {
		return
	}
	if err := r.ParseForm(); err != nil {
		fail(w, analysis.Optionf("the form: %v", err))
		return
	}
	f := r.PostForm
	k, err := strconv.Atoi(strings.TrimSpace(f.Get("k")))
	if err != nil {
		fail(w, analysis.Optionf("k: expected a whole number, found %q", f.Get("k")))
		return
	}
	most, err := strconv.Atoi(strings.TrimSpace(orDefault(f.Get("max_annotators"), strconv.Itoa(rows.DefaultMaxAnnotators))))
	if err != nil {
		fail(w, analysis.Optionf("max_annotators: expected a whole number, found %q", f.Get("max_annotators")))
		return
	}
	q := rows.Queue{Name: strings.TrimSpace(f.Get("name")), K: k, MaxAnnotators: most, OverAssign: f.Get("over_assign") != ""}
	var items []rows.QueueItem
	switch f.Get("source") {
	case "pare":
		q.Kind, q.Questions, q.Source = rows.QueuePARE, []string{rows.PAREQuestion}, "the PARE samples ingested"
	case "sample":
		if s.opt.Histories == nil {
			fail(w, analysis.Optionf("this viewer cannot draw samples"))
			return
		}
		var spec SampleSpec
		spec.Unit, spec.By = f.Get("unit"), f.Get("by")
		for _, part := range strings.Split(f.Get("where"), ";") {
			if part = strings.TrimSpace(part); part != "" {
				spec.Where = append(spec.Where, part)
			}
		}
		if spec.N, err = strconv.Atoi(strings.TrimSpace(f.Get("n"))); err != nil {
			fail(w, analysis.Optionf("n: expected a whole number, found %q", f.Get("n")))
			return
		}
		if spec.Tutorial, err = strconv.Atoi(strings.TrimSpace(orDefault(f.Get("tutorial"), "0"))); err != nil {
			fail(w, analysis.Optionf("tutorial: expected a whole number, found %q", f.Get("tutorial")))
			return
		}
		if spec.Seed, err = strconv.ParseUint(strings.TrimSpace(orDefault(f.Get("seed"), "1")), 10, 64); err != nil {
			fail(w, analysis.Optionf("seed: expected a whole number, found %q", f.Get("seed")))
			return
		}
		q.Kind = rows.QueueRatings
		for _, x := range strings.Split(f.Get("questions"), ",") {
			if x = strings.TrimSpace(x); x != "" {
				q.Questions = append(q.Questions, x)
			}
		}
		q.Source = fmt.Sprintf("sample of %d %ss (by %q, where %q, seed %d), made in the viewer", spec.N, spec.Unit, spec.By, strings.Join(spec.Where, "; "), spec.Seed)
		if err = analysis.CheckQueue(q, []rows.QueueItem{{}}); err == nil {
			items, err = s.sample(r.Context(), spec)
		}
	default:
		err = analysis.Optionf("source: expected sample or pare, found %q", f.Get("source"))
	}
	if err == nil {
		_, err = reports.MakeQueue(r.Context(), s.notes, s.opt.Name, q, items)
	}
	if err != nil {
		fail(w, err)
		return
	}
	http.Redirect(w, r, "/annotate/"+url.PathEscape(q.Name)+"/status", http.StatusSeeOther)
}

func orDefault(s, d string) string {
	if strings.TrimSpace(s) == "" {
		return d
	}
	return s
}

// setName takes the name an annotator gives (no token: anyone on this
// machine may annotate under the name they give).
func (s *Server) setName(w http.ResponseWriter, r *http.Request, queue string) bool {
	name := r.URL.Query().Get("annotator")
	if !r.URL.Query().Has("annotator") || requester(r).fixed {
		return false
	}
	if name == "" { // "not you?": forget the name
		http.SetCookie(w, &http.Cookie{Name: nameCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode})
		http.Redirect(w, r, "/annotate/"+url.PathEscape(queue)+"?ask=1", http.StatusSeeOther)
		return true
	}
	name, err := checkName(name)
	if err != nil {
		fail(w, err)
		return true
	}
	http.SetCookie(w, &http.Cookie{Name: nameCookie, Value: url.QueryEscape(name), Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, "/annotate/"+url.PathEscape(queue), http.StatusSeeOther)
	return true
}

// queueHome sends an annotator to the item they should do next, asks a
// name of one not known, and thanks one who is done.
func (s *Server) queueHome(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("queue")
	if s.setName(w, r, name) {
		return
	}
	st, err := s.queueState(r, name)
	if err != nil {
		fail(w, err)
		return
	}
	a := annotatorOf(r)
	data := map[string]any{"Title": "Annotate: " + name, "Queue": st.Queue, "Annotator": a.name, "Fixed": a.fixed, "Base": "/annotate/" + url.PathEscape(name)}
	if a.name == "" || (r.URL.Query().Has("ask") && !a.fixed) {
		s.page(w, "annotate-name", data)
		return
	}
	if next := st.Next(a.name); next >= 0 {
		http.Redirect(w, r, fmt.Sprintf("/annotate/%s/items/%d", url.PathEscape(name), st.Items[next].Pos+1), http.StatusSeeOther)
		return
	}
	var done []map[string]any
	tutorials := 0
	for _, it := range st.Items {
		if it.Tutorial {
			tutorials++
		}
	}
	for _, it := range st.Items {
		if st.Done(it.Item, a.name) {
			label := strconv.Itoa(it.Pos + 1 - tutorials) // as the item pages count
			if it.Tutorial {
				label = fmt.Sprintf("practice %d", it.Pos+1)
			}
			done = append(done, map[string]any{"N": it.Pos + 1, "Label": label})
		}
	}
	data["Done"] = done
	s.page(w, "annotate-done", data)
}

// questionView is a question as the item's form asks it.
type questionView struct {
	analysis.Scale
	Given, Key string
	Match      bool
}

// queueItem reads the queue and the item a request names, answering the
// error when there is none.
func (s *Server) queueItem(w http.ResponseWriter, r *http.Request) (*analysis.QueueState, rows.QueueItem, bool) {
	st, err := s.queueState(r, r.PathValue("queue"))
	if err != nil {
		fail(w, err)
		return nil, rows.QueueItem{}, false
	}
	it, err := itemAt(st, r.PathValue("n"))
	if err != nil {
		fail(w, err)
		return nil, rows.QueueItem{}, false
	}
	return st, it, true
}

// itemAt finds an item by its place (1-based, as in the address).
func itemAt(st *analysis.QueueState, n string) (rows.QueueItem, error) {
	i, err := strconv.Atoi(n)
	if err != nil || i < 1 {
		return rows.QueueItem{}, analysis.Optionf("item %q: expected a place from 1", n)
	}
	for _, it := range st.Items {
		if it.Pos+1 == i {
			return it, nil
		}
	}
	return rows.QueueItem{}, fmt.Errorf("queue %q has %d items, not an item %d: %w", st.Queue.Name, len(st.Items), i, errNotFound)
}

// item shows one item: what a rater needs (what the user saw, the task)
// and nothing that anchors them (no model, harness, run id or judge
// score), the questions with this annotator's answers so far and, once a
// tutorial item is answered, its key.
func (s *Server) item(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("queue")
	st, it, ok := s.queueItem(w, r)
	if !ok {
		return
	}
	a := annotatorOf(r)
	base := "/annotate/" + url.PathEscape(name)
	if a.name == "" {
		http.Redirect(w, r, base, http.StatusSeeOther)
		return
	}
	given := st.Given(it.Item, a.name)
	done := st.Done(it.Item, a.name)
	var qs []questionView
	for _, q := range st.Queue.Questions {
		v := questionView{Scale: analysis.QuestionScale(q)}
		if g, ok := given[q]; ok {
			v.Given = analysis.AnswerText(g)
		}
		if it.Tutorial && done {
			v.Key = it.Key[q]
			v.Match = v.Key != "" && sameText(q, v.Given, v.Key)
		}
		qs = append(qs, v)
	}
	tutorials := 0
	for _, x := range st.Items {
		if x.Tutorial {
			tutorials++
		}
	}
	// Counted as the CLI and the status page count: practice items
	// apart (they come first), the others from 1.
	place := fmt.Sprintf("practice item %d of %d", it.Pos+1, tutorials)
	if !it.Tutorial {
		place = fmt.Sprintf("item %d of %d", it.Pos+1-tutorials, len(st.Items)-tutorials)
	}
	skipped := len(given) > 0
	for q, g := range given {
		if q != analysis.CommentQuestion && !analysis.IsSkip(g) {
			skipped = false
		}
	}
	data := map[string]any{"Title": fmt.Sprintf("%s: %s", name, place), "Queue": st.Queue, "Item": it, "Place": place, "ShowsKey": it.Tutorial && len(it.Key) > 0,
		"Comment": given[analysis.CommentQuestion].Choice, "Skipped": skipped, "MaxComment": analysis.MaxComment,
		"Tutorials": tutorials, "Questions": qs, "Annotator": a.name, "Fixed": a.fixed, "Base": base,
		"Action": fmt.Sprintf("%s/items/%d", base, it.Pos+1), "Done": done, "Saved": r.URL.Query().Get("saved") != ""}
	s.page(w, "annotate-item", data)
}

func sameText(q, a, b string) bool {
	x, err1 := analysis.ParseAnswer(q, a)
	y, err2 := analysis.ParseAnswer(q, b)
	return err1 == nil && err2 == nil && x.Choice == y.Choice && x.Value == y.Value
}

// answerForm stores the item form's answers, then goes to the tutorial
// item's key, or the next item.
func (s *Server) answerForm(w http.ResponseWriter, r *http.Request) {
	if !s.writable(w) {
		return
	}
	name := r.PathValue("queue")
	st, it, ok := s.queueItem(w, r)
	if !ok {
		return
	}
	if err := r.ParseForm(); err != nil {
		fail(w, analysis.Optionf("the form: %v", err))
		return
	}
	a := annotatorOf(r)
	if a.name == "" {
		fail(w, analysis.Optionf("annotator: give a name first (open %s)", "/annotate/"+url.PathEscape(name)))
		return
	}
	given := map[string]string{}
	skip := r.PostForm.Get("skip") == "1"
	for _, q := range st.Queue.Questions {
		if v := r.PostForm.Get("q:" + q); skip {
			given[q] = analysis.SkipAnswer
		} else if v != "" {
			given[q] = v
		}
	}
	if c := strings.TrimSpace(r.PostForm.Get("comment")); c != "" {
		given[analysis.CommentQuestion] = c
	}
	if err := s.save(r.Context(), st, it, a.name, given); err != nil {
		failAnswer(w, err)
		return
	}
	base := "/annotate/" + url.PathEscape(name)
	if it.Tutorial && len(it.Key) > 0 { // to its key
		http.Redirect(w, r, fmt.Sprintf("%s/items/%d?saved=1", base, it.Pos+1), http.StatusSeeOther)
		return
	}
	http.Redirect(w, r, base, http.StatusSeeOther)
}

// save checks an annotator's answers to an item and stores them.
func (s *Server) save(ctx context.Context, st *analysis.QueueState, it rows.QueueItem, annotator string, given map[string]string) error {
	annotator, err := checkName(annotator)
	if err != nil {
		return err
	}
	if len(given) == 0 {
		return analysis.Optionf("answers: none given (questions: %s)", strings.Join(st.Queue.Questions, ", "))
	}
	var answers []rows.Answer
	for _, q := range append(slices.Clip(st.Queue.Questions), analysis.CommentQuestion) {
		v, ok := given[q]
		if !ok {
			continue
		}
		ans, err := analysis.ParseAnswer(q, v)
		if err != nil {
			return err
		}
		answers = append(answers, ans)
	}
	for q := range given {
		if !contains(st.Queue.Questions, q) && q != analysis.CommentQuestion {
			return analysis.Optionf("answers: queue %q asks no question %q (it asks %s)", st.Queue.Name, q, strings.Join(st.Queue.Questions, ", "))
		}
	}
	return s.notes.SaveAnswers(ctx, st.Queue.Name, it.Item, annotator, answers)
}

// failAnswer answers an error of storing answers: 409 for an answer the
// queue has no room for (the item has its k annotators, or the queue its
// most), fail's code otherwise.
func failAnswer(w http.ResponseWriter, err error) {
	if errors.Is(err, rows.ErrFull) {
		http.Error(w, err.Error(), http.StatusConflict)
		return
	}
	fail(w, err)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// AnswersRequest is the body of POST /api/annotate/{queue}/answers.
type AnswersRequest struct {
	Item      string                    `json:"item"`
	Annotator string                    `json:"annotator"`
	Answers   map[string]jsontext.Value `json:"answers"`
}

// maxAnswerBody bounds a request body of answers.
const maxAnswerBody = 64 << 10

// decodeAnswers reads a body of answers as strictly as ingest reads a run
// log: JSON by RFC 8259 in UTF-8, no key twice in an object, no field the
// request does not have, nothing after the value. An error names the
// byte offset of the fault.
func decodeAnswers(body []byte) (AnswersRequest, error) {
	var req AnswersRequest
	err := json.Unmarshal(body, &req, json.RejectUnknownMembers(true))
	if err == nil {
		return req, nil
	}
	const want = ` (expected {"item": …, "annotator": …, "answers": {question: value}})`
	var se *jsontext.SyntacticError
	var me *json.SemanticError
	switch {
	case errors.As(err, &se):
		return req, analysis.Optionf("the body at byte offset %d: %s%s", se.ByteOffset, syntaxWhy(se), want)
	case errors.As(err, &me):
		why := "a value of the wrong type"
		if errors.Is(me.Err, json.ErrUnknownName) {
			why = "unknown field"
		} else if me.JSONKind != 0 {
			why = "a JSON " + me.JSONKind.String() + " where " + me.GoType.String() + " is expected"
		}
		return req, analysis.Optionf("the body at byte offset %d (%s): %s%s", me.ByteOffset, me.JSONPointer, why, want)
	}
	return req, analysis.Optionf("the body: %v%s", err, want)
}

// syntaxWhy says what a syntax error is, in the words of the request.
func syntaxWhy(se *jsontext.SyntacticError) string {
	switch {
	case errors.Is(se.Err, jsontext.ErrDuplicateName):
		return fmt.Sprintf("duplicate key: %s is given twice in one object", se.JSONPointer)
	case strings.Contains(se.Err.Error(), "invalid UTF-8"): // jsontext exports no error for it
		return "invalid UTF-8"
	case errors.Is(se.Err, io.ErrUnexpectedEOF):
		return "the body ends inside the value"
	}
	msg := se.Err.Error()
	if strings.Contains(msg, "after top-level value") {
		return "data after the value (" + msg + ")"
	}
	return msg
}

// jsonBody refuses a Content-Type other than application/json (with a
// charset, UTF-8 only).
func jsonBody(r *http.Request) error {
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		return fmt.Errorf("answers are JSON: send Content-Type: application/json (found %q)", r.Header.Get("Content-Type"))
	}
	for k, v := range params {
		if k != "charset" || !strings.EqualFold(v, "utf-8") {
			return fmt.Errorf("answers are JSON in UTF-8: Content-Type: application/json takes charset=utf-8 or none (found %q)", r.Header.Get("Content-Type"))
		}
	}
	return nil
}

func (s *Server) apiAnswers(w http.ResponseWriter, r *http.Request) {
	if !s.writable(w) {
		return
	}
	if err := jsonBody(r); err != nil {
		http.Error(w, err.Error(), http.StatusUnsupportedMediaType)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxAnswerBody))
	if err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			http.Error(w, fmt.Sprintf("the body: more than %d bytes of answers", maxAnswerBody), http.StatusRequestEntityTooLarge)
			return
		}
		fail(w, analysis.Optionf("the body: %v", err))
		return
	}
	req, err := decodeAnswers(body)
	if err != nil {
		fail(w, err)
		return
	}
	name := r.PathValue("queue")
	q, items, err := s.queueOnly(r, name) // not the answers: the warehouse checks k as it stores
	if err != nil {
		fail(w, err)
		return
	}
	st := analysis.NewQueueState(q, items, nil)
	if a := requester(r); a.fixed {
		if req.Annotator != "" {
			if n, err := checkName(req.Annotator); err != nil || n != a.name {
				http.Error(w, "this link answers as "+a.name+" only", http.StatusForbidden)
				return
			}
		}
		req.Annotator = a.name
	}
	var it *rows.QueueItem
	for i := range st.Items {
		if st.Items[i].Item == req.Item {
			it = &st.Items[i]
		}
	}
	if it == nil {
		fail(w, fmt.Errorf("queue %q has no item %q: %w", name, req.Item, errNotFound))
		return
	}
	given := map[string]string{}
	for q, raw := range req.Answers {
		switch raw.Kind() {
		case '"':
			var v string
			if err := json.Unmarshal(raw, &v); err != nil {
				fail(w, analysis.Optionf("answers.%s: %v", q, err))
				return
			}
			given[q] = v
		case '0':
			given[q] = string(raw) // a number as written: ParseAnswer reads it
		default:
			fail(w, analysis.Optionf("answers.%s: expected a number or a string, found %s", q, raw))
			return
		}
	}
	annotator, _ := checkName(req.Annotator)
	if err := s.save(r.Context(), st, *it, req.Annotator, given); err != nil {
		failAnswer(w, err)
		return
	}
	writeJSON(w, map[string]any{"queue": name, "item": req.Item, "annotator": annotator, "saved": len(given)})
}

// QueueStatus is the status of a queue: its progress and the agreement so
// far (as on /annotate/{queue}/status and under /api/).
type QueueStatus struct {
	Queue    string `json:"queue"`
	Kind     string `json:"kind"`
	K        int    `json:"k"`
	Items    int    `json:"items"`
	Tutorial int    `json:"tutorial_items"`
	Complete int    `json:"complete"`
	// The queue's limits: the annotators it takes, and whether an item
	// takes more than K.
	MaxAnnotators int  `json:"max_annotators"`
	OverAssign    bool `json:"over_assign"`
	// Annotators is page Page (from 1) of Pages, AnnotatorsPerPage
	// annotators a page by name, of AnnotatorsTotal.
	AnnotatorsTotal int                          `json:"annotators_total"`
	Page            int                          `json:"page"`
	Pages           int                          `json:"pages"`
	Annotators      []analysis.AnnotatorProgress `json:"annotators"`
	// Among the annotators; and the annotators against the judges (a
	// ratings queue) or PARE's simulated user (a PARE queue).
	Among   []Figure `json:"among_annotators"`
	Against []Figure `json:"against"`
	Versus  string   `json:"versus"` // what Against compares with
	Notes   []string `json:"notes,omitempty"`
}

// Figure is one agreement statistic; Value, Lo and Hi are null when it
// cannot be had (Note says why).
type Figure struct {
	Question string   `json:"question"`
	Stat     string   `json:"stat"`
	N        int      `json:"n"`
	Value    *float64 `json:"value"`
	Lo       *float64 `json:"lo,omitempty"`
	Hi       *float64 `json:"hi,omitempty"`
	Note     string   `json:"note,omitempty"`
}

func finite(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// status computes a queue's progress and its live agreement: among the
// annotators (Krippendorff's α, Fleiss' κ) and against the judges (a
// ratings queue, as `agree --human`) or PARE's simulated user (a PARE
// queue, as `agree --pare`).
//
// The annotators are listed a page at a time (page from 1), read and
// counted by the warehouse; the agreement reads the answers, which a queue
// without over-assignment bounds by its items times k, and leaves out the
// pairwise κ, whose pairs grow with the square of an item's annotators.
func (s *Server) status(r *http.Request, name string, page int) (*QueueStatus, error) {
	if page < 1 {
		return nil, analysis.Optionf("page %d: expected a page from 1", page)
	}
	q, items, err := s.queueOnly(r, name)
	if err != nil {
		return nil, err
	}
	pg, err := s.notes.QueuePage(r.Context(), name, (page-1)*AnnotatorsPerPage, AnnotatorsPerPage)
	if err != nil {
		return nil, err
	}
	p := analysis.NewQueueState(q, items, pg.Answers).Progress()
	out := &QueueStatus{Queue: name, Kind: q.Kind, K: q.K, Items: p.Items, Tutorial: p.Tutorial, Complete: pg.Complete,
		MaxAnnotators: q.MaxAnnotators, OverAssign: q.OverAssign, AnnotatorsTotal: pg.Annotators, Page: page,
		Pages: max(1, (pg.Annotators+AnnotatorsPerPage-1)/AnnotatorsPerPage), Annotators: p.Annotators, Among: []Figure{}, Against: []Figure{}}
	if out.Annotators == nil {
		out.Annotators = []analysis.AnnotatorProgress{}
	}
	if page > out.Pages {
		return nil, fmt.Errorf("queue %q has %d pages of annotators, not a page %d: %w", name, out.Pages, page, errNotFound)
	}
	rated, err := s.notes.RatedAnswers(r.Context(), name) // practice answers, one per annotator, count in no agreement
	if err != nil {
		return nil, err
	}
	st := analysis.NewQueueState(q, items, rated)
	switch st.Queue.Kind {
	case rows.QueuePARE:
		out.Versus = "PARE's simulated user (against the annotators' majority)"
		samples, _, err := s.store.LoadPARESamples(r.Context())
		if err != nil {
			return nil, err
		}
		sim := map[string]rows.PARESampleRow{}
		for _, x := range samples {
			sim[x.SampleID] = x
		}
		pa := analysis.PAREAgreement(st.PARESamples(sim), rows.PAREDecisions)
		q := rows.PAREQuestion
		out.Among = append(out.Among, Figure{Question: q, Stat: "Krippendorff's α (nominal)", N: pa.Annotated, Value: finite(pa.Alpha), Note: pa.AlphaWhy},
			Figure{Question: q, Stat: "Fleiss' κ", N: pa.Annotated, Value: finite(pa.Fleiss), Note: pa.FleissWhy})
		out.Against = append(out.Against, Figure{Question: q, Stat: "accuracy (%)", N: pa.Compared, Value: finite(pa.Accuracy)},
			Figure{Question: q, Stat: "Cohen's κ", N: pa.Compared, Value: finite(pa.Kappa), Note: pa.KappaWhy})
		if pa.Ties > 0 {
			out.Notes = append(out.Notes, fmt.Sprintf("%d samples with tied decisions left out of the comparison", pa.Ties))
		}
	default:
		out.Versus = "the judges (their average; against the annotators' mean)"
		ratings := st.Ratings()
		if len(ratings) == 0 {
			out.Notes = append(out.Notes, "no answers yet")
			break
		}
		runs, err := s.queueRuns(r.Context(), st)
		if err != nil {
			return nil, err
		}
		h, err := analysis.CompareHumans(runs, ratings, analysis.HumanOptions{Reliability: true, NoPairs: true, Bootstrap: s.opt.Bootstrap})
		if err != nil {
			if !errors.Is(err, analysis.ErrNoData) {
				return nil, err
			}
			out.Notes = append(out.Notes, err.Error())
			break
		}
		seen := map[string]bool{}
		for _, x := range h.Reliability {
			out.Among = append(out.Among,
				Figure{Question: x.Question, Stat: "Krippendorff's α (" + x.Level + ")", N: x.Items, Value: finite(x.Alpha.Value), Lo: finite(x.Alpha.Lo), Hi: finite(x.Alpha.Hi), Note: x.Note})
			if !seen[x.Question] { // Fleiss' κ and the agreement do not depend on the level
				seen[x.Question] = true
				out.Among = append(out.Among, Figure{Question: x.Question, Stat: "Fleiss' κ", N: x.Items, Value: finite(x.Fleiss)},
					Figure{Question: x.Question, Stat: "agreement (%)", N: x.Items, Value: finite(x.Percent)})
			}
		}
		for _, x := range h.VsHumans {
			stat := x.Stat
			if w, ok := statWords[stat]; ok {
				stat = w
			}
			out.Against = append(out.Against, Figure{Question: x.Score, Stat: stat, N: x.N, Value: finite(x.Value), Lo: finite(x.Lo), Hi: finite(x.Hi)})
		}
		out.Notes = append(out.Notes, h.Notes...)
	}
	return out, nil
}

// statWords name the judge-against-annotators statistics (A the judges'
// average, B the annotators' mean) on the status page.
var statWords = map[string]string{
	analysis.StatMeanA: "mean of the judges", analysis.StatMeanB: "mean of the annotators", analysis.StatDelta: "difference (annotators − judges)",
	analysis.StatMAE: "mean absolute difference", analysis.StatPearson: "Pearson r", analysis.StatSpearman: "Spearman ρ",
	analysis.StatKendall: "Kendall τ-b", analysis.StatWeightedKappa: "quadratic-weighted κ", analysis.StatConfigPearson: "Pearson r of the configurations' means",
	analysis.StatConfigSpearman: "Spearman ρ of the configurations' means", analysis.StatRateA: "judges' rate (%)", analysis.StatRateB: "annotators' rate (%)",
	analysis.StatAgreement: "agreement (%)", analysis.StatKappa: "Cohen's κ",
}

// queueRuns are the runs of a queue's items with their tasks and
// judgments.
func (s *Server) queueRuns(ctx context.Context, st *analysis.QueueState) ([]rows.RunRow, error) {
	ix, err := s.index()
	if err != nil {
		return nil, err
	}
	// The items' runs in the warehouse's order, each once.
	var places []int
	for _, it := range st.Items {
		if i, ok := ix.byID[it.RunID]; ok {
			places = append(places, i)
		}
	}
	slices.Sort(places)
	places = slices.Compact(places)
	runs := make([]rows.RunRow, 0, len(places))
	for _, i := range places {
		runs = append(runs, ix.v.Runs[i])
	}
	for i := range runs {
		runs[i].Tasks, runs[i].TA = nil, nil
		if err := s.store.LoadRunTasks(ctx, &runs[i]); err != nil {
			return nil, err
		}
	}
	return runs, nil
}

// maxStatusPage bounds ?page=: past it the page's first annotator
// would lie beyond any queue (rows.DefaultMaxAnnotators raised a
// thousandfold), and its offset could overflow.
const maxStatusPage = 1 << 20

// statusPageOf is the page of annotators a request asks (?page=N, from 1).
func statusPageOf(r *http.Request) (int, error) {
	v := r.URL.Query().Get("page")
	if v == "" {
		return 1, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > maxStatusPage {
		return 0, analysis.Optionf("page %q: expected a page from 1 to %d", v, maxStatusPage)
	}
	return n, nil
}

func (s *Server) statusPage(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("queue")
	page, err := statusPageOf(r)
	if err != nil {
		fail(w, err)
		return
	}
	st, err := s.status(r, name, page)
	if err != nil {
		fail(w, err)
		return
	}
	base := "/annotate/" + url.PathEscape(name)
	data := map[string]any{"Title": "Status: " + name, "S": st, "Base": base, "Token": s.opt.Token != ""}
	if page > 1 {
		data["Prev"] = fmt.Sprintf("%s/status?page=%d", base, page-1)
	}
	if page < st.Pages {
		data["Next"] = fmt.Sprintf("%s/status?page=%d", base, page+1)
	}
	if n := r.URL.Query().Get("link"); n != "" {
		n, err := checkName(n)
		if err != nil {
			fail(w, err)
			return
		}
		if s.opt.Token != "" {
			data["Link"] = AnnotatorLink(s.opt.Token, name, n)
		} else {
			data["Link"] = base + "?" + url.Values{"annotator": {n}}.Encode()
		}
		data["LinkFor"] = n
	}
	s.page(w, "annotate-status", data)
}

// apiItems lists a queue's items with their ids, places and runs (for
// the token's holder: annotators' own links do not open it, since run ids
// name models).
func (s *Server) apiItems(w http.ResponseWriter, r *http.Request) {
	st, err := s.queueState(r, r.PathValue("queue"))
	if err != nil {
		fail(w, err)
		return
	}
	type item struct {
		Item     string `json:"item"`
		Place    int    `json:"place"`
		RunID    string `json:"run_id,omitempty"`
		Task     string `json:"task,omitempty"`
		Sample   string `json:"sample_id,omitempty"`
		Tutorial bool   `json:"tutorial"`
		Done     int    `json:"annotators_done"`
	}
	out := []item{}
	for _, it := range st.Items {
		out = append(out, item{Item: it.Item, Place: it.Pos + 1, RunID: it.RunID, Task: it.Task, Sample: it.Sample, Tutorial: it.Tutorial, Done: st.DoneBy(it.Item)})
	}
	writeJSON(w, map[string]any{"queue": st.Queue.Name, "kind": st.Queue.Kind, "k": st.Queue.K, "questions": st.Queue.Questions, "items": out})
}

func (s *Server) apiStatus(w http.ResponseWriter, r *http.Request) {
	page, err := statusPageOf(r)
	if err != nil {
		fail(w, err)
		return
	}
	st, err := s.status(r, r.PathValue("queue"), page)
	if err != nil {
		fail(w, err)
		return
	}
	writeJSON(w, st)
}
