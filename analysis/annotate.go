package analysis

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gymlens/gymlens/ingest/rows"
)

// Choice is one answer a question offers: its value as stored and its
// label as shown.
type Choice struct{ Value, Label string }

// Scale is how a question is asked: its prompt and either the choices it
// offers or a free number.
type Scale struct {
	Question, Prompt string
	Choices          []Choice // nil: any finite number
	Categorical      bool     // the choices are names (PARE's decision), not numbers
}

// trustPrompts ask each trust construct from the user's side (the TR-J
// judge's five constructs, rated 1–5).
var trustPrompts = map[string]string{
	"understandability": "Could the user follow what the assistant did and why?",
	"competence":        "Did the assistant seem able to do this task well?",
	"reliability":       "Could the user count on the assistant to get this right without checking?",
	"attachment":        "Would the user want to keep this assistant for this kind of work?",
	"faith":             "Would the user hand the assistant a new task of this kind unseen?",
}

var (
	fivePoint = []Choice{{"1", "1 · not at all"}, {"2", "2"}, {"3", "3 · in part"}, {"4", "4"}, {"5", "5 · fully"}}
	share     = []Choice{{"0", "0 · not done"}, {"0.25", "0.25"}, {"0.5", "0.5 · half"}, {"0.75", "0.75"}, {"1", "1 · fully done"}}
	yesNo     = []Choice{{"1", "yes"}, {"0", "no"}}
)

// TrustQuestions are the five trust constructs as annotation questions.
var TrustQuestions = []string{"trj.understandability", "trj.competence", "trj.reliability", "trj.attachment", "trj.faith"}

// QuestionScale says how a question is asked. Known questions (those
// QuestionScore compares with a judge, and PARE's decision) have fixed
// choices; any other takes a number.
func QuestionScale(question string) Scale {
	q := strings.ToLower(question)
	s := Scale{Question: question}
	switch {
	case q == rows.PAREQuestion:
		s.Prompt, s.Categorical = "What would you do with the assistant's proposal?", true
		s.Choices = []Choice{{"accept", "accept"}, {"reject", "reject"}, {"gather_context", "gather context first"}}
	case q == "trust" || q == "trj":
		s.Prompt, s.Choices = "Overall, how far could the user trust the assistant after this?", fivePoint
	case strings.HasPrefix(q, "trj."):
		s.Prompt, s.Choices = trustPrompts[q[4:]], fivePoint
		if s.Prompt == "" {
			s.Prompt = "Trust: " + q[4:] + " (1–5)"
		}
	case q == "tc":
		s.Prompt, s.Choices = "How much of the task was done, correctly and grounded in what the user gave?", share
	case strings.HasPrefix(q, "tc."):
		s.Prompt, s.Choices = "Task: "+strings.ReplaceAll(q[3:], "_", " ")+" (0 not at all – 1 fully)", share
	case q == "ta":
		s.Prompt, s.Choices = "Did the assistant act at the right time (neither too early nor too late)?", yesNo
	case q == "ta.now":
		s.Prompt, s.Choices = "Was acting at that moment right?", yesNo
	case q == "ta.later":
		s.Prompt, s.Choices = "Was what it left for later right to leave?", yesNo
	default:
		s.Prompt = question + " (a number)"
	}
	return s
}

// CheckQuestion refuses a question a queue of kind cannot ask.
func CheckQuestion(kind, question string) error {
	if kind == rows.QueuePARE {
		if question != rows.PAREQuestion {
			return Optionf("a PARE queue asks one question, %q, not %q", rows.PAREQuestion, question)
		}
		return nil
	}
	if question == "" || question == rows.PAREQuestion || question == CommentQuestion {
		return Optionf("question %q: a ratings queue asks trust, trj.<construct>, tc, tc.<diagnostic>, ta, ta.now, ta.later or a question of its own", question)
	}
	return nil
}

// SkipAnswer is the answer "skip / cannot judge", which any question
// takes: the annotator is done with the item, and it is no rating nor
// decision.
const SkipAnswer = "skip"

// CommentQuestion is where an annotator's free-text comment on an item is
// stored, as an answer whose choice is the text (no queue asks it as a
// question); MaxComment is the most characters it takes.
const (
	CommentQuestion = "comment"
	MaxComment      = 2000
)

// IsSkip tells whether a is the answer "skip / cannot judge".
func IsSkip(a rows.Answer) bool { return a.Choice == SkipAnswer && a.Question != CommentQuestion }

// ParseAnswer reads an answer to question as given (a form field or a
// JSON value as text): one of the question's choices, or a finite number
// when it has none; SkipAnswer to any question; the comment's text, of at
// most MaxComment characters, to CommentQuestion.
func ParseAnswer(question, text string) (rows.Answer, error) {
	s := QuestionScale(question)
	a := rows.Answer{Question: question, Value: math.NaN()}
	if question == CommentQuestion {
		if n := utf8.RuneCountInString(text); n > MaxComment {
			return a, Optionf("comment: %d characters, at most %d", n, MaxComment)
		}
		a.Choice = strings.TrimSpace(text)
		return a, nil
	}
	text = strings.TrimSpace(text)
	if text == SkipAnswer {
		a.Choice = text
		return a, nil
	}
	if s.Categorical {
		for _, c := range s.Choices {
			if text == c.Value {
				a.Choice = text
				return a, nil
			}
		}
		return a, Optionf("%s: expected one of %s, found %q", question, choiceList(s), text)
	}
	v, err := strconv.ParseFloat(text, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return a, Optionf("%s: expected a number, found %q", question, text)
	}
	if s.Choices != nil && !slices.ContainsFunc(s.Choices, func(c Choice) bool { f, _ := strconv.ParseFloat(c.Value, 64); return f == v }) {
		return a, Optionf("%s: expected one of %s, found %q", question, choiceList(s), text)
	}
	a.Value = v
	return a, nil
}

func choiceList(s Scale) string {
	var vs []string
	for _, c := range s.Choices {
		vs = append(vs, c.Value)
	}
	return strings.Join(vs, ", ")
}

// AnswerText is an answer as text (its choice, or its value).
func AnswerText(a rows.Answer) string {
	if a.Choice != "" {
		return a.Choice
	}
	return strconv.FormatFloat(a.Value, 'g', -1, 64)
}

// QueueState is what a queue's answers say: who answered what.
type QueueState struct {
	Queue rows.Queue
	Items []rows.QueueItem
	// By item, annotator and question, the answer given.
	answers map[string]map[string]map[string]rows.Answer
}

// NewQueueState gathers a queue's answers.
func NewQueueState(q rows.Queue, items []rows.QueueItem, answers []rows.Answer) *QueueState {
	s := &QueueState{Queue: q, Items: items, answers: map[string]map[string]map[string]rows.Answer{}}
	for _, a := range answers {
		byA := s.answers[a.Item]
		if byA == nil {
			byA = map[string]map[string]rows.Answer{}
			s.answers[a.Item] = byA
		}
		if byA[a.Annotator] == nil {
			byA[a.Annotator] = map[string]rows.Answer{}
		}
		byA[a.Annotator][a.Question] = a
	}
	return s
}

// Given is what annotator answered on item (question → answer).
func (s *QueueState) Given(item, annotator string) map[string]rows.Answer {
	return s.answers[item][annotator]
}

// Done says whether annotator answered every question of item.
func (s *QueueState) Done(item, annotator string) bool {
	g := s.answers[item][annotator]
	for _, q := range s.Queue.Questions {
		if _, ok := g[q]; !ok {
			return false
		}
	}
	return len(s.Queue.Questions) > 0
}

// DoneBy counts the annotators of item who answered every question.
func (s *QueueState) DoneBy(item string) int {
	n := 0
	for a := range s.answers[item] {
		if s.Done(item, a) {
			n++
		}
	}
	return n
}

// Next is the place (in Items) of the item annotator should see next:
// the first tutorial item they have not done, then the first other item
// they have not done that fewer than K annotators have; -1 when none is
// left for them.
func (s *QueueState) Next(annotator string) int {
	for i, it := range s.Items {
		if it.Tutorial && !s.Done(it.Item, annotator) {
			return i
		}
	}
	for i, it := range s.Items {
		if !it.Tutorial && !s.Done(it.Item, annotator) && s.DoneBy(it.Item) < s.Queue.K {
			return i
		}
	}
	return -1
}

// AnnotatorProgress is one annotator's work on a queue.
type AnnotatorProgress struct {
	Annotator string `json:"annotator"`
	Done      int    `json:"done"`     // items other than tutorial ones with every question answered
	Tutorial  int    `json:"tutorial"` // tutorial items done
	// KeyAgree and KeyAnswers: answers to tutorial items that match their
	// key, of those with a key.
	KeyAgree   int `json:"key_agree"`
	KeyAnswers int `json:"key_answers"`
}

// Progress is a queue's progress: items, those with K annotators, and
// each annotator's work, by name.
type Progress struct {
	Items, Tutorial, Complete int
	Annotators                []AnnotatorProgress
}

// Progress counts the queue's progress.
func (s *QueueState) Progress() Progress {
	var p Progress
	by := map[string]*AnnotatorProgress{}
	get := func(a string) *AnnotatorProgress {
		if by[a] == nil {
			by[a] = &AnnotatorProgress{Annotator: a}
		}
		return by[a]
	}
	for _, it := range s.Items {
		if it.Tutorial {
			p.Tutorial++
		} else {
			p.Items++
			if s.DoneBy(it.Item) >= s.Queue.K {
				p.Complete++
			}
		}
		for a, g := range s.answers[it.Item] {
			ap := get(a)
			if s.Done(it.Item, a) {
				if it.Tutorial {
					ap.Tutorial++
				} else {
					ap.Done++
				}
			}
			for q, key := range it.Key {
				if x, ok := g[q]; ok {
					ap.KeyAnswers++
					if sameAnswer(q, AnswerText(x), key) {
						ap.KeyAgree++
					}
				}
			}
		}
	}
	for _, a := range sortedKeys(by) {
		p.Annotators = append(p.Annotators, *by[a])
	}
	return p
}

// sameAnswer says whether two answers to question are the same (numbers
// compared as numbers).
func sameAnswer(question, a, b string) bool {
	x, errX := ParseAnswer(question, a)
	y, errY := ParseAnswer(question, b)
	if errX != nil || errY != nil {
		return strings.TrimSpace(a) == strings.TrimSpace(b)
	}
	return x.Choice == y.Choice && (x.Value == y.Value || math.IsNaN(x.Value) && math.IsNaN(y.Value))
}

// Ratings are the answers to the queue's items other than tutorial ones,
// as human ratings (what `agree --human` reads from the warehouse).
func (s *QueueState) Ratings() []rows.RatingRow {
	var out []rows.RatingRow
	for _, it := range s.Items {
		if it.Tutorial {
			continue
		}
		for _, a := range sortedKeys(s.answers[it.Item]) {
			g := s.answers[it.Item][a]
			for _, q := range sortedKeys(g) {
				if math.IsNaN(g[q].Value) {
					continue
				}
				out = append(out, rows.RatingRow{Rater: a, Question: q, Value: g[q].Value, RunID: it.RunID, Task: it.Task,
					File: "annotate:" + s.Queue.Name, Line: it.Pos + 1})
			}
		}
	}
	return out
}

// PARESamples are the PARE queue's items other than tutorial ones with
// their decisions, the simulated user's decision taken from simulated
// (sample id → decision; samples not in it are left out).
func (s *QueueState) PARESamples(simulated map[string]rows.PARESampleRow) []rows.PARESampleRow {
	var out []rows.PARESampleRow
	for _, it := range s.Items {
		sim, ok := simulated[it.Sample]
		if it.Tutorial || !ok {
			continue
		}
		row := rows.PARESampleRow{SampleID: it.Sample, Simulated: sim.Simulated, Correct: sim.Correct, Humans: map[string]string{}}
		for a, g := range s.answers[it.Item] {
			if x, ok := g[rows.PAREQuestion]; ok && x.Choice != "" && !IsSkip(x) {
				row.Humans[a] = x.Choice
			}
		}
		out = append(out, row)
	}
	return out
}

// CheckQueue refuses a queue that cannot be annotated: no name, a name
// that does not fit in a path segment, an unknown kind, k < 1, a cap on
// the annotators below k (MaxAnnotators 0 is the default cap), no
// questions or a question the kind cannot ask, or no items.
func CheckQueue(q rows.Queue, items []rows.QueueItem) error {
	if q.Name == "" || strings.ContainsAny(q.Name, "/?#%\\") || strings.TrimSpace(q.Name) != q.Name {
		return Optionf("queue name %q: give a name without /, ?, #, %%, \\ or surrounding spaces", q.Name)
	}
	if q.Kind != rows.QueueRatings && q.Kind != rows.QueuePARE {
		return Optionf("queue %q: kind %q is neither %s nor %s", q.Name, q.Kind, rows.QueueRatings, rows.QueuePARE)
	}
	if q.K < 1 {
		return Optionf("queue %q: k, the annotators each item needs, must be 1 or more (found %d)", q.Name, q.K)
	}
	if q.MaxAnnotators < 0 || q.MaxAnnotators > 0 && q.MaxAnnotators < q.K {
		return Optionf("queue %q: --max-annotators %d: expected a number of annotators the queue takes, from k (%d) up (0: the default, %d)", q.Name, q.MaxAnnotators, q.K, rows.DefaultMaxAnnotators)
	}
	if len(q.Questions) == 0 {
		return Optionf("queue %q: no questions", q.Name)
	}
	for _, x := range q.Questions {
		if err := CheckQuestion(q.Kind, x); err != nil {
			return Optionf("queue %q: %v", q.Name, err)
		}
	}
	if len(items) == 0 {
		return Optionf("queue %q: no items", q.Name)
	}
	places := make([]bool, len(items))
	for _, it := range items {
		if it.Pos < 0 || it.Pos >= len(items) || places[it.Pos] {
			return Optionf("queue %q, item %s: place %d is not one of 0…%d, once each (OrderQueue numbers them)", q.Name, it.Item, it.Pos, len(items)-1)
		}
		places[it.Pos] = true
		for qq, v := range it.Key {
			if _, err := ParseAnswer(qq, v); err != nil {
				return Optionf("queue %q, item %s: answer key: %v", q.Name, it.Item, err)
			}
		}
	}
	return nil
}

// OrderQueue puts tutorial items first (keeping the order within each
// part) and numbers the items' places.
func OrderQueue(items []rows.QueueItem) {
	slices.SortStableFunc(items, func(a, b rows.QueueItem) int {
		switch {
		case a.Tutorial == b.Tutorial:
			return 0
		case a.Tutorial:
			return -1
		}
		return 1
	})
	for i := range items {
		items[i].Pos = i
	}
}

// SampleQueueItems turns a drawn sample into queue items: the first
// tutorial of them become tutorial items (without a key: practice).
func SampleQueueItems(sample []SampleItem, history map[[2]string]string, tutorial int) ([]rows.QueueItem, error) {
	if tutorial < 0 || tutorial >= len(sample) {
		return nil, Optionf("--tutorial %d: expected a number from 0 to %d (the items less one)", tutorial, len(sample)-1)
	}
	items := make([]rows.QueueItem, len(sample))
	for i, it := range sample {
		items[i] = rows.QueueItem{Item: rows.ItemID(it.Run.RunID, it.Task), RunID: it.Run.RunID, Task: it.Task,
			Tutorial: i < tutorial, Context: history[[2]string{it.Run.RunID, it.Task}]}
	}
	OrderQueue(items)
	return items, nil
}
