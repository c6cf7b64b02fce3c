package serve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"html/template"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

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
	Num            bool
	Mark           int // 1 bold, 2 underlined (reports.Table.Marks)
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
		if s.onlyInspect(r) {
			http.Redirect(w, r, "/inspect", http.StatusSeeOther)
			return
		}
		fail(w, err)
		return
	}
	s.page(w, "overview", map[string]any{"Title": "gymlens: " + s.opt.Name, "Tables": tables, "Packing": s.packingNote()})
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
	marks := t.Marks()
	for i, row := range t.Rows {
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
			x := cell{Num: true, Text: "–", Mark: marks[i][j]}
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
	var after func(*pageHTML, *RunSummary)
	if rq.Q != "" && len(list.Runs) > 0 {
		ids := make([]string, len(list.Runs))
		for i := range list.Runs {
			ids[i] = list.Runs[i].RunID
		}
		snips, err := s.store.SearchSnippets(r.Context(), rq.Q, ids)
		if err != nil {
			fail(w, err)
			return
		}
		re := matcher(rq.Q)
		after = func(b *pageHTML, r *RunSummary) {
			sn, ok := snips[r.RunID]
			if !ok {
				return
			}
			b.WriteString(`<tr class="snippet"><td colspan="`)
			b.num(int64(5 + len(analysis.MainMetrics)))
			b.WriteString(`"><a href="`)
			b.text(runPath(r.RunID) + "?" + url.Values{"q": {rq.Q}}.Encode() + "#e" + strconv.FormatInt(sn.Seq, 10))
			b.WriteString(`">#`)
			b.num(sn.Seq)
			b.WriteString(`</a> `)
			b.marked(sn.Text, re)
			b.WriteString("</td></tr>\n")
		}
	}
	s.page(w, "runs", map[string]any{"Title": "Runs", "Query": rq, "Where": strings.Join(rq.Where, "; "), "List": list,
		"Sorts": sorts, "Pages": pages, "RunRows": runRowsHTML(list.Runs, analysis.MainMetrics, after), "First": rq.Offset + 1, "Shown": min(list.Total, rq.Offset+len(list.Runs))})
}

// matcher finds a search's text as the warehouse does, in any case (nil
// for no search).
func matcher(q string) *regexp.Regexp {
	if q == "" {
		return nil
	}
	return regexp.MustCompile(`(?i)` + regexp.QuoteMeta(q))
}

// marked writes s escaped, each match of re in a <mark>; it tells whether
// there was one.
func (b *pageHTML) marked(s string, re *regexp.Regexp) bool {
	if re == nil {
		b.text(s)
		return false
	}
	locs := re.FindAllStringIndex(s, -1)
	at := 0
	for _, l := range locs {
		b.text(s[at:l[0]])
		b.WriteString("<mark>")
		b.text(s[l[0]:l[1]])
		b.WriteString("</mark>")
		at = l[1]
	}
	b.text(s[at:])
	return len(locs) > 0
}

// runRowsHTML is the rows of the runs table, written here as the template
// wrote them (pageHTML): fifty rows of a dozen actions each were most of a
// /runs page's time, and in a burst of cold pages /runs cost more than a
// run page (docs/benchmarks.md).
func runRowsHTML(runs []RunSummary, metrics []string, after func(*pageHTML, *RunSummary)) template.HTML {
	var b pageHTML
	b.Grow(len(runs) * (300 + 30*len(metrics)))
	for i := range runs {
		r := &runs[i]
		b.WriteString(`<tr><td><a href="`)
		b.text(runPath(r.RunID))
		b.WriteString(`">`)
		b.text(r.RunID)
		b.WriteString(`</a></td><td>`)
		b.text(r.Config)
		b.WriteString(`</td><td>`)
		b.text(r.Scenario)
		b.WriteString(`</td><td>`)
		b.text(r.Persona)
		b.WriteString(` (`)
		b.text(r.PersonaGroup)
		b.WriteString(`)</td><td class="num">`)
		b.num(int64(r.Rep))
		b.WriteString("</td>\n")
		for _, m := range metrics {
			b.WriteString(`<td class="num">`)
			if v := r.Metrics[m]; v != nil {
				b.text(strconv.FormatFloat(*v, 'f', reports.Decimals(m), 64))
			} else {
				b.WriteString("–")
			}
			b.WriteString(`</td>`)
		}
		b.WriteString("</tr>\n")
		if after != nil {
			after(&b, r)
		}
	}
	return b.html()
}

// runList answers a runs query.
func (s *Server) runList(r *http.Request) (RunQuery, RunList, error) {
	rq, err := parseRunQuery(r.URL.Query())
	if err != nil {
		return rq, RunList{}, err
	}
	ix, err := s.index()
	if err != nil {
		return rq, RunList{}, err
	}
	list, err := selectRuns(ix, rq, func() (map[string]bool, error) { return s.store.SearchRuns(r.Context(), rq.Q) })
	return rq, list, err
}

// RunDetail is a run with its tasks, judgments and trajectory.
type RunDetail struct {
	Run          RunSummary          `json:"run"`
	Counterparts []RunSummary        `json:"counterparts"` // the same scenario, persona and repetition, other configurations
	Tasks        []rows.TaskRow      `json:"tasks"`        // active tasks as the metrics read them
	TA           []rows.TAJudgment   `json:"ta"`
	TaskViews    []rows.TaskView     `json:"task_views"` // every task, logged and rescored
	Judgments    []rows.JudgmentView `json:"judgments"`  // with reasons and citations
	Window       [2]*time.Time       `json:"ta_window"`
	Events       []rows.EventRow     `json:"events"`
	Capped       bool                `json:"events_capped"`
	html         []byte              // the run page, once rendered
}

func (s *Server) runDetail(r *http.Request) (*RunDetail, error) {
	return s.detail(r, r.PathValue("id"))
}

// detail reads the run id with its tasks and events; its counterparts are
// the runs of the same scenario, persona and repetition in other
// configurations.
func (s *Server) detail(r *http.Request, id string) (*RunDetail, error) {
	s.cmu.Lock()
	for _, d := range s.recent {
		if d.Run.RunID == id {
			s.cmu.Unlock()
			return d, nil
		}
	}
	s.cmu.Unlock()
	d, err := s.readDetail(r, id)
	if err == nil {
		s.cmu.Lock()
		s.recent = append(s.recent, d)
		if len(s.recent) > maxRecent {
			s.recent = s.recent[1:]
		}
		s.cmu.Unlock()
	}
	return d, err
}

// readDetail reads a run's detail from the dataset and the store.
func (s *Server) readDetail(r *http.Request, id string) (*RunDetail, error) {
	ix, err := s.index()
	if err != nil {
		return nil, err
	}
	var d *RunDetail
	if run, vals, ok := ix.findRun(id); ok {
		d = &RunDetail{Run: summary(run, vals)}
		for _, i := range ix.cells[runCell{run.Scenario, run.Persona, run.Rep}] {
			if o := &ix.v.Runs[i]; o.ConfigID != run.ConfigID {
				d.Counterparts = append(d.Counterparts, summary(o, ix.v.Values[i]))
			}
		}
	}
	if d == nil {
		return nil, fmt.Errorf("no run %q in %s: %w", id, s.opt.Name, errNotFound)
	}
	p, err := s.reads.get(r.Context(), id)
	if err != nil {
		return nil, err
	}
	d.Tasks, d.TA, d.TaskViews, d.Judgments, d.Window = p.Tasks, p.TA, p.TaskViews, p.Judgments, p.Window
	d.Events, d.Capped = p.Events, p.Capped
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
	q := strings.TrimSpace(r.URL.Query().Get("q"))
	if len(q) > maxMarked {
		fail(w, analysis.Optionf("q: %d bytes; a run page marks a text of at most %d", len(q), maxMarked))
		return
	}
	s.cmu.Lock()
	page := d.html
	s.cmu.Unlock()
	if q != "" {
		page = nil // a searched page is its own, and not kept
	}
	if page == nil {
		b, err := s.render("run", runPageData(d, q))
		if err != nil {
			fail(w, err)
			return
		}
		page = b
		if q == "" {
			s.cmu.Lock()
			d.html = b // kept with the run's detail for its next reader
			s.cmu.Unlock()
		}
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(page)
}

// runPageData is what the run template shows of a run: its tasks'
// table, their judgments and its trajectory written here (pageHTML), the
// rest by the template.
func runPageData(d *RunDetail, q string) map[string]any {
	tasks := taskViews(d)
	re := matcher(q)
	data := map[string]any{"Title": "Run " + d.Run.RunID, "D": d, "Trajectory": trajectoryHTML(timeline(d), re), "Metrics": analysis.MainMetrics,
		"TaskRows": taskRowsHTML(tasks), "Judgments": judgmentsHTML(tasks), "Q": q}
	if re != nil {
		var b pageHTML
		n := 0
		for i := range d.Events {
			e := &d.Events[i]
			if !re.MatchString(e.Text) && !re.MatchString(e.Tool) && !re.MatchString(e.Args) && !re.MatchString(e.Result) {
				continue
			}
			if n++; n <= maxMatchLinks {
				b.WriteString(` <a href="#e`)
				b.num(e.Seq)
				b.WriteString(`">#`)
				b.num(e.Seq)
				b.WriteString(`</a>`)
			}
		}
		if n > maxMatchLinks {
			fmt.Fprintf(&b, " and %d more", n-maxMatchLinks)
		}
		data["Matches"], data["NMatches"] = b.html(), n
	}
	return data
}

// maxMarked is the longest text a run page marks (?q=).
const maxMarked = 200

// maxMatchLinks is the most events a searched run page links to above
// its trajectory.
const maxMatchLinks = 100

// pageHTML writes the parts of a run page that repeat for every task,
// judgment and event, as the template wrote them, every warehouse string
// escaped by text. Written here, not by the template: its walk (a
// reflective call or field lookup per action, ten actions an event or a
// judgment) was most of a cold run page's time once its events were
// packed (≈ 5 ms of ≈ 7 ms at --scale 1; docs/benchmarks.md).
type pageHTML struct{ strings.Builder }

func (b *pageHTML) text(s string) { htmlText.WriteString(b, s) }
func (b *pageHTML) num(n int64)   { b.WriteString(strconv.FormatInt(n, 10)) }
func (b *pageHTML) html() template.HTML {
	return template.HTML(b.String()) // every warehouse string in it went through text
}

// depths writes "expected → chosen", flagged when flag.
func (b *pageHTML) depths(expected, chosen string, flag bool) {
	if flag {
		b.WriteString(`<span class="flag">`)
	}
	b.text(expected)
	b.WriteString(" → ")
	b.text(chosen)
	if flag {
		b.WriteString(`</span>`)
	}
}

// taskRowsHTML is the rows of a run page's tasks table.
func taskRowsHTML(tasks []taskView) template.HTML {
	var b pageHTML
	for i := range tasks {
		t := &tasks[i]
		b.WriteString(`<tr`)
		if !t.Active {
			b.WriteString(` class="inactive"`)
		}
		b.WriteString(`><td>`)
		if len(t.Judgments) > 0 {
			b.WriteString(`<a href="#`)
			b.WriteString(taskAnchor(t.Task))
			b.WriteString(`">`)
			b.text(t.Task)
			b.WriteString(`</a>`)
		} else {
			b.text(t.Task)
		}
		b.WriteString(`</td><td>`)
		if t.Active {
			b.WriteString("active")
			if t.ActivatedAt != nil {
				b.WriteString(" from ")
				b.text(t.ActivatedAt.Format("Mon 15:04"))
			}
		} else {
			b.WriteString("not active")
		}
		b.WriteString(`</td><td class="num">`)
		b.text(fmt.Sprintf("%.2f", t.Weight))
		b.WriteString("</td>\n<td>")
		if t.LoggedExpected != "" || t.LoggedChosen != "" {
			b.depths(t.LoggedExpected, t.LoggedChosen, false)
		} else {
			b.WriteString("–")
		}
		b.WriteString(`</td><td>`)
		if t.Rescored {
			b.depths(t.DerivedExpected, t.DerivedChosen, t.DepthsDiffer)
		} else {
			b.WriteString("–")
		}
		b.WriteString("</td>\n<td>")
		if t.Active {
			b.depths(t.Expected, t.Chosen, t.Mismatch)
			if t.Prefer != "" {
				b.WriteString(` <span class="muted">(`)
				b.text(t.Prefer)
				b.WriteString(`)</span>`)
			}
		}
		b.WriteString("</td>\n<td>")
		b.text(t.RulesLogged)
		b.WriteString(`</td><td>`)
		b.text(t.RulesDerived)
		b.WriteString("</td></tr>\n")
	}
	return b.html()
}

// judgmentsHTML is each judged task's judgments on a run page: scores,
// reasons and citations, each citation a link to the record it cites.
func judgmentsHTML(tasks []taskView) template.HTML {
	var b pageHTML
	for i := range tasks {
		t := &tasks[i]
		if len(t.Judgments) == 0 {
			continue
		}
		b.WriteString(`<h3 id="`)
		b.WriteString(taskAnchor(t.Task))
		b.WriteString(`">`)
		if t.Task != "" {
			b.WriteString("Task ")
			b.text(t.Task)
		} else {
			b.WriteString("The run")
		}
		b.WriteString(": judgments</h3>\n")
		for j := range t.Judgments {
			jv := &t.Judgments[j]
			b.WriteString(`<div class="judgment`)
			if !jv.Latest {
				b.WriteString(" superseded")
			}
			b.WriteString(`"><div class="meta">`)
			b.text(jv.Judge)
			b.WriteString(" · ")
			b.text(jv.Metric)
			if jv.Prompt != "" {
				b.WriteString(" · prompt ")
				b.text(jv.Prompt)
			}
			if !jv.Latest {
				b.WriteString(" · superseded by a newer prompt version (not in the metrics)")
			}
			b.WriteString("</div>\n<div>")
			for k, sc := range jv.Scores {
				if k > 0 {
					b.WriteString(" · ")
				}
				b.text(sc.Name)
				b.WriteString(" <strong>")
				b.text(fmt.Sprintf("%.2f", sc.Value))
				b.WriteString("</strong>")
			}
			b.WriteString("</div>\n")
			if jv.Reasons != "" {
				b.WriteString(`<div class="text">`)
				b.text(jv.Reasons)
				b.WriteString(`</div>`)
			}
			b.WriteString("\n")
			if len(jv.Evidence) > 0 {
				b.WriteString(`<ul class="cites">`)
				for _, c := range jv.Evidence {
					b.WriteString(`<li><a href="#e`)
					b.num(c.Seq)
					b.WriteString(`">#`)
					b.num(c.Seq)
					b.WriteString(`</a>`)
					if c.Quote != "" {
						b.WriteString(" “")
						b.text(c.Quote)
						b.WriteString("”")
					}
					b.WriteString(`</li>`)
				}
				b.WriteString(`</ul>`)
			}
			b.WriteString("</div>\n")
		}
	}
	return b.html()
}

// taskAnchor is a task's fragment on its run page (letters and digits
// alone: safe in an id and a URL as it is).
func taskAnchor(task string) string { return fmt.Sprintf("task-%x", fnv64(task)) }

// htmlText escapes text for an HTML text node or a quoted attribute
// value exactly as html/template does for a string (its
// htmlReplacementTable; TestRunPartsAsTheTemplateWroteThem compares the
// two on hostile text).
var htmlText = strings.NewReplacer("\x00", "\uFFFD", `"`, "&#34;", "&", "&amp;", "'", "&#39;", "+", "&#43;", "<", "&lt;", ">", "&gt;")

// trajectoryHTML is a run page's trajectory: the events by day, with the
// pauses between them.
func trajectoryHTML(days []timelineDay, re *regexp.Regexp) template.HTML {
	var b pageHTML
	size := 0 // what the page writes, about: its text and the markup around it
	for _, d := range days {
		for _, it := range d.Items {
			if e := it.E; e != nil {
				size += 260 + len(e.Meta) + len(e.Text) + len(e.Args) + len(e.Result)
			}
		}
	}
	b.Grow(size + size/8) // and some escaping
	for _, d := range days {
		b.WriteString(`<div class="day">`)
		b.text(d.Date)
		b.WriteString("</div>\n")
		for _, it := range d.Items {
			switch e := it.E; {
			case it.Pause != "":
				b.WriteString(`<div class="pause">`)
				b.text(it.Pause)
				b.WriteString(`</div>`)
			case it.Back != "":
				b.WriteString(`<div class="backwards">`)
				b.text(it.Back)
				b.WriteString(`</div>`)
			case e != nil:
				b.WriteString(`<div id="e`)
				b.num(e.Seq)
				b.WriteString(`" class="`)
				b.text(e.Class)
				b.WriteString(`"><div class="meta">`)
				b.text(e.Meta)
				if e.Ref != 0 {
					b.WriteString(` · answers <a href="#e`)
					b.num(e.Ref)
					b.WriteString(`">#`)
					b.num(e.Ref)
					b.WriteString(`</a>`)
				}
				if e.Hidden {
					b.WriteString(` · not shown to the user`)
				}
				b.WriteString("</div>\n")
				if e.Text != "" {
					b.WriteString(`<div class="text">`)
					b.marked(e.Text, re)
					b.WriteString(`</div>`)
				}
				b.WriteString("\n")
				if e.Args != "" {
					b.folded("arguments", e.Args, re)
				}
				b.WriteString("\n")
				if e.Result != "" {
					b.folded("result", e.Result, re)
				}
				b.WriteString(`</div>`)
			}
			b.WriteString("\n")
		}
	}
	return b.html()
}

// folded writes a folded text, open when it holds a match of re.
func (b *pageHTML) folded(summary, s string, re *regexp.Regexp) {
	if re != nil && re.MatchString(s) {
		b.WriteString(`<details open><summary>`)
	} else {
		b.WriteString(`<details><summary>`)
	}
	b.WriteString(summary)
	b.WriteString(`</summary><pre>`)
	b.marked(s, re)
	b.WriteString(`</pre></details>`)
}

func fnv64(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}

// sleepGap is the pause between two events that the timeline shows as
// the user's night (or another long absence).
const sleepGap = 6 * time.Hour

// timelineItem is an event of the timeline, or the pause before it.
type timelineItem struct {
	E     *eventLine
	Pause string // a long pause before the next event, in words
	Back  string // the next event is timed before the one above it
}

// eventLine is an event as the timeline shows it, its heading put
// together here: one escaped value where the template would otherwise
// escape ten (a run page's rendering is most of its cost once its rows
// are read).
type eventLine struct {
	Seq                int64
	Class              string // "event ACTOR", and " in-window" within the TA window
	Meta               string // clock, number, actor, kind, task, tool, depth, decision
	Ref                int64  // the event it answers (0: none)
	Hidden             bool   // the agent's, not shown to the user
	Text, Args, Result string
}

func newEventLine(e *rows.EventRow, inWindow bool) *eventLine {
	l := &eventLine{Seq: e.Seq, Class: "event " + e.Actor, Ref: e.Ref, Hidden: !e.Visible && e.Actor == "agent", Text: e.Text, Args: e.Args, Result: e.Result}
	if inWindow {
		l.Class += " in-window"
	}
	var b strings.Builder
	b.WriteString(e.T.Format("15:04"))
	b.WriteString(" · #")
	b.WriteString(strconv.FormatInt(e.Seq, 10))
	for _, part := range [][2]string{{"", e.Actor}, {"", e.Kind}, {"task ", e.Task}, {"", e.Tool}, {"depth ", e.Depth}, {"", e.Decision}} {
		if part[1] != "" {
			b.WriteString(" · ")
			b.WriteString(part[0])
			b.WriteString(part[1])
		}
	}
	l.Meta = b.String()
	return l
}

type timelineDay struct {
	Date  string
	Items []timelineItem
}

// timeline lays the events out by day, marking the TA window and the
// pauses of six hours or more (the nights of a multi-day scenario).
func timeline(d *RunDetail) []timelineDay {
	var days []timelineDay
	for i := range d.Events {
		e := &d.Events[i]
		if i > 0 {
			prev := d.Events[i-1].T
			if gap := e.T.Sub(prev); gap >= sleepGap {
				days[len(days)-1].Items = append(days[len(days)-1].Items, timelineItem{Pause: fmt.Sprintf("pause: %s → %s (%.0f h)",
					prev.Format("Mon 15:04"), e.T.Format("Mon 15:04"), gap.Hours())})
			} else if gap < 0 {
				days[len(days)-1].Items = append(days[len(days)-1].Items, timelineItem{Back: fmt.Sprintf("#%d at %s is timed %s before #%d (%s); events stay in the log’s order",
					e.Seq, e.T.Format("Mon 15:04"), span(-gap), d.Events[i-1].Seq, prev.Format("Mon 15:04"))})
			}
		}
		date := e.T.Format("Monday 2 January 2006")
		if len(days) == 0 || days[len(days)-1].Date != date {
			days = append(days, timelineDay{Date: date})
		}
		in := d.Window[0] != nil && !e.T.Before(*d.Window[0]) && !e.T.After(*d.Window[1])
		days[len(days)-1].Items = append(days[len(days)-1].Items, timelineItem{E: newEventLine(e, in)})
	}
	return days
}

// span is a duration in words: seconds, minutes or hours.
func span(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%.0f s", d.Seconds())
	case d < time.Hour:
		return fmt.Sprintf("%.0f min", d.Minutes())
	}
	return fmt.Sprintf("%.1f h", d.Hours())
}

// taskView is a task on the run page: as logged and as rescored, with
// its judgments.
type taskView struct {
	rows.TaskView
	Expected, Chosen   string // what the metrics use
	DepthsDiffer       bool   // the rescoring disagrees with the log
	Mismatch           bool   // the chosen depth is not the expected one
	RulesLogged, Rules string
	RulesDerived       string
	Judgments          []rows.JudgmentView
}

func taskViews(d *RunDetail) []taskView {
	byTask := map[string][]rows.JudgmentView{}
	for _, j := range d.Judgments {
		if j.Metric == "tc" { // TC's parts on TC's scale, 0–100
			sc := make([]rows.NamedScore, len(j.Scores))
			for k, x := range j.Scores {
				sc[k] = rows.NamedScore{Name: x.Name, Value: 100 * x.Value}
			}
			j.Scores = sc
		}
		byTask[j.Task] = append(byTask[j.Task], j)
	}
	use := map[string]rows.TaskRow{}
	for _, t := range d.Tasks {
		use[t.Task] = t
	}
	rules := func(r [3]*float64) string {
		var parts []string
		for i, n := range []string{"evidence", "outputs", "constraints"} {
			if r[i] != nil {
				parts = append(parts, fmt.Sprintf("%s %.2f", n, 100**r[i]))
			}
		}
		return strings.Join(parts, ", ")
	}
	var out []taskView
	for _, v := range d.TaskViews {
		tv := taskView{TaskView: v, Expected: v.LoggedExpected, Chosen: v.LoggedChosen, RulesLogged: rules(v.Logged), Judgments: byTask[v.Task]}
		if t, ok := use[v.Task]; ok {
			tv.Expected, tv.Chosen = t.Expected, t.Chosen
			var eff [3]*float64
			for i := range 3 {
				if t.RuleSet[i] {
					x := t.Rules[i]
					eff[i] = &x
				}
			}
			tv.Rules = rules(eff)
		}
		if v.Rescored {
			tv.RulesDerived = rules(v.Derived)
			tv.DepthsDiffer = v.DerivedExpected != v.LoggedExpected && v.LoggedExpected != "" || v.DerivedChosen != v.LoggedChosen && v.LoggedChosen != ""
		}
		tv.Mismatch = tv.Expected != "" && tv.Chosen != "" && tv.Expected != tv.Chosen
		out = append(out, tv)
	}
	return out
}

// sideBySide is one day, or one task, of a comparison: A's and B's.
type sideBySide struct {
	Key  string
	A, B []rows.EventRow
}

// taskPair is a task of either run, with both runs' scores.
type taskPair struct {
	Task             string
	A, B             *rows.TaskRow
	TCA, TCB, TCDiff string
}

func (s *Server) compare(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("a") == "" || q.Get("b") == "" {
		fail(w, analysis.Optionf("compare: give two runs, ?a=RUN_ID&b=RUN_ID"))
		return
	}
	a, err := s.detail(r, q.Get("a"))
	if err != nil {
		fail(w, err)
		return
	}
	b, err := s.detail(r, q.Get("b"))
	if err != nil {
		fail(w, err)
		return
	}
	type metricRow struct{ Metric, A, B, Diff string }
	var ms []metricRow
	for _, m := range analysis.MainMetrics {
		x, y, d := a.Run.Metrics[m], b.Run.Metrics[m], reports.Decimals(m)
		row := metricRow{Metric: m, A: formatValue(x, d), B: formatValue(y, d), Diff: "–"}
		if x != nil && y != nil {
			row.Diff = fmt.Sprintf("%+.*f", d, *y-*x)
		}
		ms = append(ms, row)
	}
	// Tasks by id, in A's order then B's own.
	var tasks []taskPair
	at := map[string]int{}
	add := func(t *rows.TaskRow, side int) {
		i, ok := at[t.Task]
		if !ok {
			i = len(tasks)
			at[t.Task] = i
			tasks = append(tasks, taskPair{Task: t.Task})
		}
		if side == 0 {
			tasks[i].A = t
		} else {
			tasks[i].B = t
		}
	}
	for i := range a.Tasks {
		add(&a.Tasks[i], 0)
	}
	for i := range b.Tasks {
		add(&b.Tasks[i], 1)
	}
	for i := range tasks {
		ta, tb := taskTC(tasks[i].A), taskTC(tasks[i].B)
		tasks[i].TCA, tasks[i].TCB, tasks[i].TCDiff = formatValue(ta, 2), formatValue(tb, 2), "–"
		if ta != nil && tb != nil {
			tasks[i].TCDiff = fmt.Sprintf("%+.2f", *tb-*ta)
		}
	}
	// Trajectories by day, side by side.
	var days []sideBySide
	idx := map[string]int{}
	for side, d := range []*RunDetail{a, b} {
		for _, e := range d.Events {
			k := e.T.Format("Monday 2 January 2006")
			i, ok := idx[k]
			if !ok {
				i = len(days)
				idx[k] = i
				days = append(days, sideBySide{Key: k})
			}
			if side == 0 {
				days[i].A = append(days[i].A, e)
			} else {
				days[i].B = append(days[i].B, e)
			}
		}
	}
	sort.SliceStable(days, func(i, j int) bool { return dayOf(days[i]) < dayOf(days[j]) })
	s.page(w, "compare", map[string]any{"Title": "Compare", "A": a, "B": b, "Metrics": ms, "Tasks": tasks, "Days": days})
}

// dayOf is the first event's time of a day's comparison, for ordering.
func dayOf(d sideBySide) int64 {
	if len(d.A) > 0 {
		return d.A[0].T.Unix()
	}
	if len(d.B) > 0 {
		return d.B[0].T.Unix()
	}
	return 0
}

// taskTC is a task's TC as the run's value is made of (the mean of its
// rule components and its judged semantics and completion), nil without
// any.
func taskTC(t *rows.TaskRow) *float64 {
	if t == nil {
		return nil
	}
	v := analysis.TaskTC(t, "")
	return value(100 * v) // on TC's scale, 0–100, as the metrics
}

func formatValue(p *float64, digits int) string {
	if p == nil {
		return "–"
	}
	return fmt.Sprintf("%.*f", digits, *p)
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
	b, err := s.render(name, data)
	if err != nil {
		fail(w, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(b)
}

func (s *Server) render(name string, data map[string]any) ([]byte, error) {
	data["Warehouse"] = s.opt.Name
	var b bytes.Buffer
	// Room for the parts written in Go and the template's own text: a run
	// page grew its buffer a dozen times.
	size := 16 << 10
	for _, v := range data {
		if h, ok := v.(template.HTML); ok {
			size += len(h)
		}
	}
	b.Grow(size)
	if err := pages.ExecuteTemplate(&b, name, data); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
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
	"clock":  func(e rows.EventRow) string { return e.T.Format("15:04") },
	"anchor": taskAnchor,
	"fig": func(p *float64) string {
		if p == nil {
			return "–"
		}
		return fmt.Sprintf("%.3f", *p)
	},
	"samplesLink": samplesLink,
	"tokens":      tokens,
	"seconds":     seconds,
	"checked":     func(given, value string) bool { return given != "" && (given == value || sameText("", given, value)) },
}).Parse(pageTemplates + annotateTemplates + pareTemplates + inspectTemplates))

const pageTemplates = `
{{define "head"}}<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title><link rel="stylesheet" href="/assets/style.css"></head>
<body><header><nav><a href="/">Overview</a><a href="/runs">Runs</a><a href="/pare">PARE</a><a href="/inspect">Inspect</a><a href="/annotate">Annotate</a><span class="muted">{{.Warehouse}}</span></nav></header>
{{end}}
{{define "foot"}}</body></html>{{end}}

{{define "overview"}}{{template "head" .}}
<h1>Overview</h1>
<p class="note">Every value links to the runs behind it, sorted by that metric, highest first; a count links to the runs in order.</p>
{{with .Packing}}<p class="note">{{.}}</p>{{end}}
{{range .Tables}}<h2>{{.Caption}}</h2><div class="wrap"><table class="overview">
<thead><tr>{{range .Head}}<th>{{.}}</th>{{end}}</tr></thead><tbody>
{{range .Rows}}<tr>{{range .}}{{if .Num}}<td class="num">{{if eq .Mark 1}}<strong><a href="{{.Link}}">{{.Text}}</a></strong>{{else if eq .Mark 2}}<u><a href="{{.Link}}">{{.Text}}</a></u>{{else}}<a href="{{.Link}}">{{.Text}}</a>{{end}}{{if .CI}} <span class="ci">{{.CI}}</span>{{end}}</td>{{else}}<td>{{.Text}}</td>{{end}}{{end}}</tr>
{{end}}</tbody></table></div>
{{range .Notes}}<p class="note">{{.}}</p>{{end}}
{{end}}{{template "foot" .}}{{end}}

{{define "runs"}}{{template "head" .}}
<h1>Runs</h1>
<form class="filter" method="get" action="/runs">
<label>where: DIM=VALUE, several separated by “;” (harness=CC; persona_group=E)<input name="where" value="{{.Where}}" size="48"></label>
<label>search the trajectories<input name="q" value="{{.Query.Q}}" size="30"></label>
<button type="submit">Show</button></form>
<p class="note">{{.List.Total}} runs{{if .Query.Where}} where {{range .Query.Where}}{{.}} {{end}}{{end}}{{if .Query.Q}} whose trajectory holds “{{.Query.Q}}”{{end}}; {{if .List.Runs}}showing {{.First}}–{{.Shown}}{{else}}none shown{{end}}{{if .Query.Sort}}, by {{.Query.Sort}}{{if .Query.Desc}} (highest first){{end}}{{end}}.</p>
<div class="wrap"><table><thead><tr><th>run</th><th>configuration</th><th>scenario</th><th>persona</th><th>rep</th>
{{range .Sorts}}<th class="num">{{.Metric}} <a href="{{.Down}}" title="highest first">↓</a><a href="{{.Up}}" title="lowest first">↑</a></th>{{end}}</tr></thead><tbody>
{{.RunRows}}</tbody></table></div>
<p>{{with .Pages.Prev}}<a href="{{.}}">previous</a> {{end}}{{with .Pages.Next}}<a href="{{.}}">next</a>{{end}}</p>
{{template "foot" .}}{{end}}

{{define "run"}}{{template "head" .}}
{{$d := .D}}<h1>{{$d.Run.RunID}}</h1>
<p>{{$d.Run.Config}} · scenario {{$d.Run.Scenario}} · persona {{$d.Run.Persona}} ({{$d.Run.PersonaGroup}}) · repetition {{$d.Run.Rep}}</p>
<p>{{range .Metrics}}{{.}} <strong>{{num (metric $d.Run.Metrics .) (digits .)}}</strong> · {{end}}</p>
<h2>Tasks</h2>
<p class="note">TC and its parts (rule components, the judges' scores) are on TC’s scale, 0–100. Depths and rule components as logged and, where <code>gymlens score</code> rescored the run, as derived from the trajectory; the metrics use the effective ones (“the metrics use”). <span class="flag">Flagged</span>: the chosen depth is not the expected one, or the rescoring disagrees with the log.</p>
<div class="wrap"><table><thead><tr><th>task</th><th>active</th><th class="num">weight</th><th>expected → chosen (logged)</th><th>rescored</th><th>the metrics use</th><th>rules (logged)</th><th>rules (rescored)</th></tr></thead><tbody>
{{.TaskRows}}</tbody></table></div>
{{.Judgments}}
{{if $d.TA}}<h2>Temporal allocation</h2><ul>{{range $d.TA}}<li>{{.Judge}}: now {{.Now}}, later {{.Later}}{{if .HasCQ}}, CQ {{.CQ}}{{end}}</li>{{end}}</ul>{{end}}
{{with index $d.Window 0}}<p class="note">The scenario’s TA window: <span class="window">{{.Format "Mon 2 Jan 15:04"}} – {{(index $d.Window 1).Format "Mon 2 Jan 15:04"}}</span>; its events are shaded.</p>{{end}}
<h2>Trajectory</h2>
{{if .Q}}<p class="note">“{{.Q}}” (any case) is marked in {{.NMatches}} events:{{.Matches}}</p>
{{end}}{{if $d.Capped}}<p class="note">The first {{len $d.Events}} events are shown.</p>{{end}}
{{.Trajectory}}
{{if $d.Counterparts}}<h2>The same scenario, persona and repetition in other configurations</h2>
<details class="counterparts"><summary>{{len $d.Counterparts}} runs</summary><ul>
{{range $d.Counterparts}}<li><a href="{{runPath .RunID}}">{{.Config}}</a> · <a href="/compare?a={{$d.Run.RunID}}&amp;b={{.RunID}}">compare side by side</a></li>
{{end}}</ul></details>{{end}}
{{template "foot" .}}{{end}}

{{define "events"}}{{range .}}<div class="event {{.Actor}}"><div class="meta">{{clock .}} · #{{.Seq}} · {{.Actor}} · {{.Kind}}{{if .Task}} · task {{.Task}}{{end}}{{if .Tool}} · {{.Tool}}{{end}}{{if .Depth}} · depth {{.Depth}}{{end}}{{if .Decision}} · {{.Decision}}{{end}}</div>
{{if .Text}}<div class="text">{{.Text}}</div>{{end}}{{if .Args}}<details><summary>arguments</summary><pre>{{.Args}}</pre></details>{{end}}{{if .Result}}<details><summary>result</summary><pre>{{.Result}}</pre></details>{{end}}</div>
{{end}}{{end}}

{{define "compare"}}{{template "head" .}}
<h1>Two runs side by side</h1>
<div class="wrap"><table><thead><tr><th></th><th>A</th><th>B</th><th class="num">B − A</th></tr></thead><tbody>
<tr><td>run</td><td><a href="{{runPath .A.Run.RunID}}">{{.A.Run.RunID}}</a></td><td><a href="{{runPath .B.Run.RunID}}">{{.B.Run.RunID}}</a></td><td></td></tr>
<tr><td>configuration</td><td>{{.A.Run.Config}}</td><td>{{.B.Run.Config}}</td><td></td></tr>
<tr><td>scenario · persona · rep</td><td>{{.A.Run.Scenario}} · {{.A.Run.Persona}} · {{.A.Run.Rep}}</td><td>{{.B.Run.Scenario}} · {{.B.Run.Persona}} · {{.B.Run.Rep}}</td><td></td></tr>
{{range .Metrics}}<tr><td>{{.Metric}}</td><td class="num">{{.A}}</td><td class="num">{{.B}}</td><td class="num">{{.Diff}}</td></tr>{{end}}
</tbody></table></div>
<h2>Tasks</h2>
<div class="wrap"><table><thead><tr><th>task</th><th>A: expected → chosen</th><th>B: expected → chosen</th><th class="num">TC A (0–100)</th><th class="num">TC B (0–100)</th><th class="num">B − A</th></tr></thead><tbody>
{{range .Tasks}}<tr><td>{{.Task}}</td><td>{{with .A}}{{.Expected}} → {{if ne .Expected .Chosen}}<span class="flag">{{.Chosen}}</span>{{else}}{{.Chosen}}{{end}}{{else}}not active{{end}}</td>
<td>{{with .B}}{{.Expected}} → {{if ne .Expected .Chosen}}<span class="flag">{{.Chosen}}</span>{{else}}{{.Chosen}}{{end}}{{else}}not active{{end}}</td>
<td class="num">{{.TCA}}</td><td class="num">{{.TCB}}</td><td class="num">{{.TCDiff}}</td></tr>
{{end}}</tbody></table></div>
<h2>Trajectories by day</h2>
{{range .Days}}<div class="day">{{.Key}}</div>
<div class="wrap"><table class="side"><thead><tr><th>A</th><th>B</th></tr></thead><tbody><tr><td>{{template "events" .A}}</td><td>{{template "events" .B}}</td></tr></tbody></table></div>
{{end}}
{{template "foot" .}}{{end}}
`
