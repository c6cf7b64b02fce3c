package ingest

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/gymlens/gymlens/ingest/rows"
)

// The viewer's reads of Inspect samples: the list narrowed and paged,
// and a sample's page with its model calls' inputs expanded from the
// message pool, its tool calls and results, its scores with their
// explanations and its attachments resolved.
func TestInspectSampleReads(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: ingests three Inspect logs (about 2 s)")
	}
	w := openTemp(t)
	dir := inspectLogs(t, "log_streaming.eval", "log_message_deduplication.eval", "popularity_cancelled.json")
	if _, err := w.Ingest(ctx, []string{dir}, IngestOptions{}); err != nil {
		t.Fatal(err)
	}
	f, err := w.InspectFacets(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Tasks) != 2 || len(f.Configs) != 3 || strings.Join(f.Metrics, ",") != "inspect.closeness_log,inspect.match" || len(f.Epochs) != 2 {
		t.Errorf("facets %+v", f)
	}
	all, err := w.InspectSamples(ctx, rows.InspectSampleQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if all.Total != 8 || len(all.Samples) != 8 {
		t.Fatalf("%d samples (%d listed), want 8", all.Total, len(all.Samples))
	}
	// popularity × Llama (log_streaming.eval): samples 1 and 2, two epochs.
	llama := ""
	for _, c := range f.Configs {
		if strings.Contains(c, "Llama") {
			llama = c
		}
	}
	l, err := w.InspectSamples(ctx, rows.InspectSampleQuery{Task: "popularity", Config: llama, Metric: "inspect.match", Limit: 3, Offset: 1})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range l.Samples {
		got = append(got, s.SampleID+"/"+strconv.Itoa(s.Epoch))
		if len(s.Scores) != 1 || s.Scores[0].Metric != "inspect.match" || s.TotalTokens <= 0 {
			t.Errorf("sample %s: scores %+v, tokens %d", s.SampleID, s.Scores, s.TotalTokens)
		}
	}
	if l.Total != 4 || strings.Join(got, " ") != "1/2 2/1 2/2" {
		t.Errorf("page 2 of the Llama samples: %d in all, %v", l.Total, got)
	}
	if n, _ := w.InspectSamples(ctx, rows.InspectSampleQuery{Metric: "inspect.nope"}); n.Total != 0 {
		t.Errorf("an unknown metric selects %d samples", n.Total)
	}

	// The deduplicated log: every model call's input comes from the pool.
	dedup := ""
	for _, s := range all.Samples {
		if s.Task != "popularity" {
			dedup = s.EvalID
		}
	}
	p, err := w.InspectSample(ctx, rows.InspectSampleID{EvalID: dedup, SampleID: "0", Epoch: 1})
	if err != nil || p == nil {
		t.Fatal(p, err)
	}
	t.Logf("%q", p.Pool[0].Text)
	if len(p.Pool) != 11 || len(p.Conversation) != 12 {
		t.Errorf("%d pool messages, %d in the conversation", len(p.Pool), len(p.Conversation))
	}
	var inputs []int
	tools := 0
	for _, e := range p.Events {
		switch e.Type {
		case "model":
			inputs = append(inputs, len(e.Input))
			if e.Input[0].Text != "Guess the number" || e.Input[0].Pool != 0 {
				t.Errorf("model call %d: input %+v", e.Index, e.Input[0])
			}
		case "tool":
			tools++
			if e.Function != "bash" || e.Arguments != `{"cmd":"ls"}` || !strings.HasPrefix(e.Result, "bin\nboot") {
				t.Errorf("tool event %+v", e)
			}
		}
	}
	if fmt.Sprint(inputs) != "[1 3 5 7 9 11]" || tools != 5 {
		t.Errorf("model inputs %v, %d tool events", inputs, tools)
	}
	if c := p.Conversation[1]; len(c.ToolCalls) != 1 || c.ToolCalls[0].Function != "bash" || p.Conversation[2].ToolCallID != c.ToolCalls[0].ID {
		t.Errorf("the first tool call and its result: %+v %+v", c, p.Conversation[2])
	}
	// log_streaming.eval: attachments resolved, tokens per call.
	var lk rows.InspectSampleID
	for _, s := range all.Samples {
		if s.Config == llama {
			lk = s.InspectSampleID
			break
		}
	}
	p, err = w.InspectSample(ctx, lk)
	if err != nil || p == nil {
		t.Fatal(p, err)
	}
	if !strings.Contains(p.Conversation[0].Text, "only respond with exactly") || strings.Contains(p.Conversation[0].Text, "attachment://") {
		t.Errorf("system message %q", p.Conversation[0].Text)
	}
	for _, e := range p.Events {
		if e.Type == "model" && (e.InputTokens != 66 || e.OutputTokens != 1 || e.TotalTokens != 67 || strings.Contains(e.Request, "attachment://")) {
			t.Errorf("model call: %+v", e)
		}
	}
	if len(p.Usage) != 1 || p.Usage[0].Total != 67 {
		t.Errorf("usage %+v", p.Usage)
	}
	// popularity_cancelled.json: the score's explanation.
	var pk rows.InspectSampleID
	for _, s := range all.Samples {
		if strings.Contains(s.Config, "gpt-4o-mini") {
			pk = s.InspectSampleID
			break
		}
	}
	if p, err = w.InspectSample(ctx, pk); err != nil || p == nil || len(p.Scores) != 1 || p.Scores[0].Explanation == "" {
		t.Errorf("scores of %v: %+v %v", pk, p, err)
	}
	if p, err := w.InspectSample(ctx, rows.InspectSampleID{EvalID: "nope", SampleID: "1", Epoch: 1}); p != nil || err != nil {
		t.Errorf("a sample not there: %v %v", p, err)
	}
}

// A sample's page is bounded: each text cut at MaxInspectText, the page's
// text at its budget (then texts named by their size), the pool messages
// expanded into model inputs at theirs (then the pool's ranges named), and
// an item too large to read named in its place; references resolved: the
// pool's messages, a chunked sample's message_ref, the call pool under the
// request's call_key, attachments (an unknown key kept as written).
func TestInspectPageBuilderCaps(t *testing.T) {
	big := strings.Repeat("x", 100<<10)
	b := &pageBuilder{items: &sampleItems{attachments: map[string]string{"k1": "the attached text"},
		pool:  []string{`{"role": "user", "content": "attachment://k1"}`, `{"role": "assistant", "content": "pooled"}`},
		calls: []string{`{"role": "user", "content": "C0"}`}}, budget: 3, left: 100 << 10}
	m := b.message(`{"role": "user", "content": [{"type": "text", "text": "see attachment://zz"}, {"type": "image", "image": "attachment://k1"}]}`)
	if m.Text != "see attachment://zz\n[image]" {
		t.Errorf("content parts: %q", m.Text)
	}
	if m := b.message(`{"message_ref": 1}`); m.Text != "pooled" || m.Pool != 1 || m.Role != "assistant" {
		t.Errorf("message_ref: %+v", m)
	}
	e := b.event(0, `{"event": "model", "model": "m", "input": [], "input_refs": [[0, 2]], "call": {"request": {"model": "m"}, "call_refs": [[0, 1]], "call_key": "messages"}}`)
	if len(e.Input) != 2 || e.Input[0].Text != "the attached text" || e.Input[1].Pool != 1 || e.Request != `{"model":"m","messages":[{"role":"user","content":"C0"}]}` {
		t.Errorf("model event: %+v", e)
	}
	e = b.event(1, `{"event": "model", "model": "m", "input_refs": [[0, 2]]}`)
	if len(e.Input) != 0 || e.InputRefs != "0–1" {
		t.Errorf("past the expansion budget: %+v", e)
	}
	m = b.message(`{"role": "tool", "content": "` + big + `"}`)
	if want := fmt.Sprintf("… [%d more bytes not shown]", 100<<10-MaxInspectText); len(m.Text) != MaxInspectText+len(want) || !strings.HasSuffix(m.Text, want) {
		t.Errorf("a long text: %d bytes ending %q", len(m.Text), m.Text[len(m.Text)-40:])
	}
	b.message(`{"role": "tool", "content": "` + big + `"}`) // the page's text is spent
	if m = b.message(`{"role": "tool", "content": "after"}`); m.Text != "[5 bytes not shown: a page shows 8 MiB of text at most]" {
		t.Errorf("past the page's text: %q", m.Text)
	}
	named := strconv.Quote("[message 3: 5000000 bytes, more than the viewer reads (4 MiB)]")
	if m = b.message(named); !strings.Contains(m.Text, "bytes not shown") {
		t.Errorf("a named item past the page's text: %q", m.Text)
	}
	b.done()
	if strings.Join(b.notes, "\n") != "model calls past 2000 expanded pool messages name their input's ranges of the pool (shown below) instead\n2 texts past the page's 8 MiB of text are named by their size only" {
		t.Errorf("notes %q", b.notes)
	}
	c := &pageBuilder{items: &sampleItems{}, left: 1 << 20}
	if m := c.message(named); m.Text != "[message 3: 5000000 bytes, more than the viewer reads (4 MiB)]" {
		t.Errorf("a named item: %+v", m)
	}
	if e := c.event(0, named); e.Type != "?" || !strings.Contains(e.JSON, "more than the viewer reads") {
		t.Errorf("a named event: %+v", e)
	}
}

// Once the page's text is spent it shows no more items, and says how
// many of each kind it left out.
func TestInspectPageStopsWhenTextIsSpent(t *testing.T) {
	long := `{"role": "user", "content": "` + strings.Repeat("z", 60<<10) + `"}`
	b := &pageBuilder{items: &sampleItems{messages: []string{long, long, long}, events: []string{`{"event": "info", "data": 1}`},
		pool: []string{long}}, budget: 10, left: 100 << 10}
	p := &rows.InspectSamplePage{}
	b.fill(p)
	if len(p.Conversation) != 2 || len(p.Events) != 0 || len(p.Pool) != 0 {
		t.Errorf("%d messages, %d events, %d pool messages shown", len(p.Conversation), len(p.Events), len(p.Pool))
	}
	if want := "2 of the 3 messages read are shown: the page's 8 MiB of text is spent"; len(b.notes) != 3 || b.notes[0] != want {
		t.Errorf("notes %q", b.notes)
	}
}

// An item larger than MaxInspectItemBytes is not read whole: the page
// names it with its size.
func TestInspectSampleItemTooLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: ingests a log of 4 MiB (about 2 s)")
	}
	w := openTemp(t)
	dir := inspectLogs(t)
	b, err := os.ReadFile(filepath.Join("inspect", "testdata", "popularity_cancelled.json"))
	if err != nil {
		t.Fatal(err)
	}
	huge := strings.Repeat("y", MaxInspectItemBytes+1)
	os.WriteFile(filepath.Join(dir, "big.json"), []byte(strings.Replace(string(b), `"content": "Yes"`, `"content": "`+huge+`"`, 1)), 0o644)
	if _, err := w.Ingest(ctx, []string{dir}, IngestOptions{}); err != nil {
		t.Fatal(err)
	}
	l, err := w.InspectSamples(ctx, rows.InspectSampleQuery{SampleID: "1"})
	if err != nil || l.Total != 1 {
		t.Fatal(l, err)
	}
	p, err := w.InspectSample(ctx, l.Samples[0].InspectSampleID)
	if err != nil {
		t.Fatal(err)
	}
	var said []string
	for _, m := range p.Conversation {
		said = append(said, m.Text)
	}
	if len(said) != 3 || !regexp.MustCompile(`^\[message 2: 4194\d{3} bytes, more than the viewer reads \(4 MiB\)\]$`).MatchString(said[2]) {
		t.Errorf("the conversation: %.200q", said)
	}
}
