package ingest

import (
	"database/sql"
	"fmt"
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
	p, err := w.InspectSample(ctx, rows.InspectSampleKey{EvalID: dedup, SampleID: "0", Epoch: 1})
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
	var lk rows.InspectSampleKey
	for _, s := range all.Samples {
		if s.Config == llama {
			lk = s.InspectSampleKey
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
	var pk rows.InspectSampleKey
	for _, s := range all.Samples {
		if strings.Contains(s.Config, "gpt-4o-mini") {
			pk = s.InspectSampleKey
			break
		}
	}
	if p, err = w.InspectSample(ctx, pk); err != nil || p == nil || len(p.Scores) != 1 || p.Scores[0].Explanation == "" {
		t.Errorf("scores of %v: %+v %v", pk, p, err)
	}
	if p, err := w.InspectSample(ctx, rows.InspectSampleKey{EvalID: "nope", SampleID: "1", Epoch: 1}); p != nil || err != nil {
		t.Errorf("a sample not there: %v %v", p, err)
	}
}

// The JSON columns of the Inspect tables hold the log's JSON as JSON (an
// object as an object), not as a string of its text: DuckDB's JSON
// functions read into them.
func TestInspectJSONColumnsHoldJSON(t *testing.T) {
	w := openTemp(t)
	dir := inspectLogs(t, "log_message_deduplication.eval", "mmlu-summary-choices.eval")
	if _, err := w.Ingest(ctx, []string{dir}, IngestOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ query, want string }{
		{`SELECT string_agg(DISTINCT json_type(data), ',' ORDER BY json_type(data)) FROM inspect_items WHERE kind = 'message'`, "OBJECT"},
		{`SELECT data->>'$.role' FROM inspect_items WHERE kind = 'message' AND idx = 0`, "user"},
		{`SELECT json_type(data) FROM inspect_items WHERE kind = 'attachment'`, "VARCHAR"},
		{`SELECT max(json_extract_string(metadata, '$.subject')) FROM inspect_samples`, "college_physics"},
		{`SELECT input->>'$' FROM inspect_samples WHERE sample_id = '0'`, "Guess the number"},
		{`SELECT string_agg(DISTINCT json_type(raw) || ' ' || (raw->>'$'), ',' ORDER BY json_type(raw) || ' ' || (raw->>'$')) FROM inspect_scores`, "DOUBLE 0.0,VARCHAR I"},
	} {
		var got sql.NullString
		if err := w.DB().QueryRow(c.query).Scan(&got); err != nil || got.String != c.want {
			t.Errorf("%s: %q (%v), want %q", c.query, got.String, err, c.want)
		}
	}
}
