package ingest

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/valyala/fastjson"

	"github.com/gymlens/gymlens/ingest/inspect"
	"github.com/gymlens/gymlens/ingest/rows"
)

// The viewer's reads of Inspect samples: a list (paged, narrowed by task,
// configuration, epoch, scorer and sample id), the values it is narrowed
// by, and one sample's page with its pools and attachments resolved.
// Every value the viewer gives reaches DuckDB as a bound parameter.

// Caps on what one sample's page reads and shows.
const (
	// MaxInspectItems bounds the items of each kind (message, event,
	// pool message, pool call, attachment) a sample's page reads.
	MaxInspectItems = 5000
	// MaxInspectItemBytes bounds one item read whole; a larger one is
	// named, with its size, in its place.
	MaxInspectItemBytes = 4 << 20
	// MaxInspectKindBytes bounds the bytes of each kind's items a page
	// reads: the items past it are left out, and the page says so.
	MaxInspectKindBytes = 8 << 20
	// MaxInspectShown bounds the text a page shows in all; past it, a
	// text is named by its size.
	MaxInspectShown = 8 << 20
	// MaxInspectText bounds a text a page shows (a message, a tool's
	// result, an event's JSON): the rest is cut and counted.
	MaxInspectText = 64 << 10
	// MaxInspectExpanded bounds the pool messages the page expands into
	// its model calls' inputs in all; past it, an input names its pool
	// ranges, which the page's pool shows once.
	MaxInspectExpanded = 2000
	// MaxInspectList bounds a page of the sample list.
	MaxInspectList = 500
)

// InspectFacets reads the tasks, configurations, score metrics and
// epochs the Inspect samples have, each sorted.
func (w *Warehouse) InspectFacets(ctx context.Context) (*rows.InspectFacets, error) {
	f := &rows.InspectFacets{}
	var err error
	if f.Tasks, err = w.scanStrings(ctx, `SELECT DISTINCT task FROM inspect_evals ORDER BY 1`); err != nil {
		return nil, err
	}
	if f.Configs, err = w.scanStrings(ctx, `SELECT DISTINCT config_id FROM inspect_evals ORDER BY 1`); err != nil {
		return nil, err
	}
	if f.Metrics, err = w.scanStrings(ctx, `SELECT DISTINCT metric FROM inspect_scores ORDER BY 1`); err != nil {
		return nil, err
	}
	err = w.scan(ctx, `SELECT DISTINCT epoch FROM inspect_samples ORDER BY 1`, func(r *sql.Rows) error {
		var e int
		if err := r.Scan(&e); err != nil {
			return err
		}
		f.Epochs = append(f.Epochs, e)
		return nil
	})
	return f, err
}

// inspectSampleWhere is the condition of a sample query, its values
// bound as ?1 to ?5.
const inspectSampleWhere = `FROM inspect_samples s JOIN inspect_evals e ON e.eval_id = s.eval_id
	WHERE (?1 = '' OR e.task = ?1) AND (?2 = '' OR e.config_id = ?2) AND (?3 = '' OR s.sample_id = ?3) AND (?4 = 0 OR s.epoch = ?4)
	AND (?5 = '' OR EXISTS (SELECT 1 FROM inspect_scores c WHERE c.eval_id = s.eval_id AND c.sample_id = s.sample_id AND c.epoch = s.epoch AND c.metric = ?5))`

// inspectSummaryColumns are what a list row reads of a sample, after
// its key.
const inspectSummaryColumns = `e.task, e.config_id, e.model, coalesce(s.input_tokens, -1), coalesce(s.output_tokens, -1), coalesce(s.total_tokens, -1),
	coalesce(s.total_time, 'NaN'::DOUBLE), coalesce(s.working_time, 'NaN'::DOUBLE), s.messages, s.model_events, s.tool_events, s.tool_errors,
	coalesce(s.error, ''), coalesce(s.limit_type, '')`

func scanInspectSummary(r *sql.Rows, s *rows.InspectSampleSummary, more ...any) error {
	return r.Scan(append([]any{&s.EvalID, &s.SampleID, &s.Epoch, &s.Task, &s.Config, &s.Model, &s.InputTokens, &s.OutputTokens, &s.TotalTokens,
		&s.TotalTime, &s.WorkingTime, &s.Messages, &s.ModelEvents, &s.ToolEvents, &s.Tools, &s.Error, &s.Limit}, more...)...)
}

// InspectSamples reads a page of the samples q selects, in the order of
// task, configuration, sample id (numbers as numbers) and epoch, each
// with its scores; Total counts every sample selected.
func (w *Warehouse) InspectSamples(ctx context.Context, q rows.InspectSampleQuery) (*rows.InspectSampleList, error) {
	if q.Limit <= 0 || q.Limit > MaxInspectList {
		q.Limit = MaxInspectList
	}
	args := []any{q.Task, q.Config, q.SampleID, q.Epoch, q.Metric}
	out := &rows.InspectSampleList{Samples: []rows.InspectSampleSummary{}}
	if err := w.db.QueryRowContext(ctx, `SELECT count(*) `+inspectSampleWhere, args...).Scan(&out.Total); err != nil {
		return nil, err
	}
	err := w.scan(ctx, `SELECT s.eval_id, s.sample_id, s.epoch, `+inspectSummaryColumns+` `+inspectSampleWhere+`
		ORDER BY e.task, e.config_id, TRY_CAST(s.sample_id AS BIGINT) NULLS LAST, s.sample_id, s.epoch, s.eval_id LIMIT ?6 OFFSET ?7`, func(r *sql.Rows) error {
		var s rows.InspectSampleSummary
		if err := scanInspectSummary(r, &s); err != nil {
			return err
		}
		out.Samples = append(out.Samples, s)
		return nil
	}, append(args, q.Limit, max(q.Offset, 0))...)
	if err != nil {
		return nil, err
	}
	if len(out.Samples) == 0 {
		return out, nil
	}
	keys := make([]rows.InspectSampleID, len(out.Samples))
	for i, s := range out.Samples {
		keys[i] = s.InspectSampleID
	}
	scores, err := w.inspectScoresOf(ctx, keys)
	if err != nil {
		return nil, err
	}
	for i := range out.Samples {
		out.Samples[i].Scores = scores[out.Samples[i].InspectSampleID]
	}
	return out, nil
}

// inspectScoresOf reads the scores of samples, each sample's by metric.
func (w *Warehouse) inspectScoresOf(ctx context.Context, keys []rows.InspectSampleID) (map[rows.InspectSampleID][]rows.InspectScoreView, error) {
	var cond strings.Builder
	args := make([]any, 0, 3*len(keys))
	for i, k := range keys {
		if i > 0 {
			cond.WriteString(" OR ")
		}
		cond.WriteString("(eval_id = ? AND sample_id = ? AND epoch = ?)")
		args = append(args, k.EvalID, k.SampleID, k.Epoch)
	}
	out := map[rows.InspectSampleID][]rows.InspectScoreView{}
	err := w.scan(ctx, `SELECT eval_id, sample_id, epoch, scorer, coalesce(key, ''), metric, value, coalesce(CAST(raw AS VARCHAR), ''),
		coalesce(answer, ''), coalesce(explanation, '') FROM inspect_scores WHERE `+cond.String()+` ORDER BY eval_id, sample_id, epoch, metric`, func(r *sql.Rows) error {
		var k rows.InspectSampleID
		var s rows.InspectScoreView
		var v sql.NullFloat64
		if err := r.Scan(&k.EvalID, &k.SampleID, &k.Epoch, &s.Scorer, &s.Key, &s.Metric, &v, &s.Raw, &s.Answer, &s.Explanation); err != nil {
			return err
		}
		s.Value, s.Valid = v.Float64, v.Valid
		s.Raw, s.Answer, s.Explanation = capText(s.Raw), capText(s.Answer), capText(s.Explanation)
		out[k] = append(out[k], s)
		return nil
	}, args...)
	return out, err
}

// InspectSample reads what the viewer shows of one sample at one epoch
// (rows.InspectSamplePage): nil when the warehouse does not hold it.
// Its final conversation, events and pools are read in their order, at
// most MaxInspectItems and MaxInspectKindBytes of each kind, and shown
// until MaxInspectShown bytes of text are;
// "attachment://KEY" strings are replaced by their text, a chunked
// sample's message references by the pool's messages, and each model
// call's input references by the pool's messages (MaxInspectExpanded in
// all) and call references by the call pool's entries.
func (w *Warehouse) InspectSample(ctx context.Context, k rows.InspectSampleID) (*rows.InspectSamplePage, error) {
	p := &rows.InspectSamplePage{}
	var input, target, metadata sql.NullString
	found := false
	err := w.scan(ctx, `SELECT s.eval_id, s.sample_id, s.epoch, `+inspectSummaryColumns+`, e.harness, e.effort, e.status, coalesce(f.path, ''),
		CAST(s.input AS VARCHAR), CAST(s.target AS VARCHAR), CAST(s.metadata AS VARCHAR), s.attachments
		FROM inspect_samples s JOIN inspect_evals e ON e.eval_id = s.eval_id LEFT JOIN ingested_files f ON f.file_id = s.file_id
		WHERE s.eval_id = ? AND s.sample_id = ? AND s.epoch = ?`, func(r *sql.Rows) error {
		found = true
		return scanInspectSummary(r, &p.InspectSampleSummary, &p.Harness, &p.Effort, &p.Status, &p.File, &input, &target, &metadata, &p.Attachments)
	}, k.EvalID, k.SampleID, k.Epoch)
	if err != nil || !found {
		return nil, err
	}
	scores, err := w.inspectScoresOf(ctx, []rows.InspectSampleID{k})
	if err != nil {
		return nil, err
	}
	p.Scores = scores[k]
	err = w.scan(ctx, `SELECT model, coalesce(input_tokens, -1), coalesce(output_tokens, -1), coalesce(total_tokens, -1), coalesce(cache_read, -1),
		coalesce(cache_write, -1), coalesce(reasoning, -1) FROM inspect_usage WHERE eval_id = ? AND sample_id = ? AND epoch = ? ORDER BY model`, func(r *sql.Rows) error {
		var u rows.InspectUsage
		if err := r.Scan(&u.Model, &u.Input, &u.Output, &u.Total, &u.CacheRead, &u.CacheWrite, &u.Reasoning); err != nil {
			return err
		}
		p.Usage = append(p.Usage, u)
		return nil
	}, k.EvalID, k.SampleID, k.Epoch)
	if err != nil {
		return nil, err
	}
	it, err := w.inspectItems(ctx, k)
	if err != nil {
		return nil, err
	}
	p.Capped = it.capped
	b := &pageBuilder{items: it, budget: MaxInspectExpanded, left: MaxInspectShown}
	p.Input, p.Target, p.Metadata = b.jsonText(input.String), b.jsonText(target.String), b.jsonText(metadata.String)
	b.fill(p)
	b.done()
	p.Capped = append(p.Capped, b.notes...)
	return p, nil
}

// sampleItems are a sample's items as read, by kind, in order; cut
// names the kinds read only in part.
type sampleItems struct {
	attachments                   map[string]string
	pool, calls, messages, events []string
	capped                        []string
}

// inspectItems reads a sample's items: attachments first (the others
// refer to them), then the pools, the final conversation and the events.
func (w *Warehouse) inspectItems(ctx context.Context, k rows.InspectSampleID) (*sampleItems, error) {
	it := &sampleItems{attachments: map[string]string{}}
	read, total := map[string]int{}, map[string]int{}
	// First where each kind's first MaxInspectItems items end, then their
	// sizes (no item's text is moved by either: a window over the texts
	// took seconds on a sample of 200 MB): each kind is read up to the
	// item after which it holds MaxInspectKindBytes (an item counted at
	// most at MaxInspectItemBytes, which is all of it that is read).
	upto := map[string]int{}
	err := w.scan(ctx, `SELECT kind, max(idx), any_value(total) FROM (SELECT kind, idx, count(*) OVER (PARTITION BY kind) AS total FROM inspect_items
		WHERE eval_id = ? AND sample_id = ? AND epoch = ? QUALIFY row_number() OVER (PARTITION BY kind ORDER BY idx) <= ?) GROUP BY kind`, func(r *sql.Rows) error {
		var kind string
		var idx, all int
		if err := r.Scan(&kind, &idx, &all); err != nil {
			return err
		}
		upto[kind], total[kind] = idx, all
		return nil
	}, k.EvalID, k.SampleID, k.Epoch, MaxInspectItems)
	if err != nil || len(upto) == 0 {
		return it, err
	}
	prefixes := func(ends map[string]int) (string, []any) {
		var cond strings.Builder
		var args []any
		for _, kind := range slices.Sorted(maps.Keys(ends)) {
			if cond.Len() > 0 {
				cond.WriteString(" OR ")
			}
			cond.WriteString("(kind = ? AND idx <= ?)")
			args = append(args, kind, ends[kind])
		}
		return "(" + cond.String() + ")", args
	}
	last, bytes := map[string]int{}, map[string]int64{}
	cond, cargs := prefixes(upto)
	err = w.scan(ctx, `SELECT kind, idx, strlen(CAST(data AS VARCHAR)) FROM inspect_items WHERE eval_id = ? AND sample_id = ? AND epoch = ? AND `+cond+`
		ORDER BY kind, idx`, func(r *sql.Rows) error {
		var kind string
		var idx int
		var n int64
		if err := r.Scan(&kind, &idx, &n); err != nil {
			return err
		}
		if bytes[kind] < MaxInspectKindBytes {
			last[kind], read[kind] = idx, read[kind]+1
			bytes[kind] += min(n, MaxInspectItemBytes)
		}
		return nil
	}, append([]any{k.EvalID, k.SampleID, k.Epoch}, cargs...)...)
	if err != nil {
		return nil, err
	}
	cond, cargs = prefixes(last)
	args := append([]any{MaxInspectItemBytes, k.EvalID, k.SampleID, k.Epoch}, cargs...)
	err = w.scan(ctx, `SELECT kind, idx, coalesce(key, ''), strlen(CAST(data AS VARCHAR)) AS n, CASE WHEN strlen(CAST(data AS VARCHAR)) <= ? THEN CAST(data AS VARCHAR) END
		FROM inspect_items WHERE eval_id = ? AND sample_id = ? AND epoch = ? AND `+cond+`
		ORDER BY CASE kind WHEN 'attachment' THEN 0 WHEN 'pool_message' THEN 1 WHEN 'pool_call' THEN 2 WHEN 'message' THEN 3 ELSE 4 END, idx`, func(r *sql.Rows) error {
		var kind, key string
		var idx int
		var n int64
		var data sql.NullString
		if err := r.Scan(&kind, &idx, &key, &n, &data); err != nil {
			return err
		}
		raw := data.String
		if !data.Valid {
			raw = strconv.Quote(fmt.Sprintf("[%s %d: %d bytes, more than the viewer reads (%d MiB)]", kind, idx, n, MaxInspectItemBytes>>20))
		}
		switch kind {
		case inspect.KindAttachment:
			var s string
			if v, err := fastjson.Parse(raw); err == nil && v.Type() == fastjson.TypeString {
				s = string(v.GetStringBytes())
			} else {
				s = raw
			}
			it.attachments[key] = s
		case inspect.KindPoolMessage:
			it.pool = append(it.pool, raw)
		case inspect.KindPoolCall:
			it.calls = append(it.calls, raw)
		case inspect.KindMessage:
			it.messages = append(it.messages, raw)
		default:
			it.events = append(it.events, raw)
		}
		return nil
	}, args...)
	if err != nil {
		return nil, err
	}
	for _, kind := range []string{inspect.KindMessage, inspect.KindEvent, inspect.KindPoolMessage, inspect.KindPoolCall, inspect.KindAttachment} {
		if read[kind] < total[kind] {
			it.capped = append(it.capped, fmt.Sprintf("the first %d of %d %s items are read (%d a kind, or %d MiB, at most)",
				read[kind], total[kind], strings.ReplaceAll(kind, "_", " "), MaxInspectItems, MaxInspectKindBytes>>20))
		}
	}
	return it, nil
}

// pageBuilder turns a sample's items into the page's views.
type pageBuilder struct {
	items  *sampleItems
	budget int // pool messages still to be expanded into model inputs
	left   int // bytes of text the page may still show
	cut    int // texts not shown, past the page's text
	notes  []string
}

// text is s as the page shows it: cut at MaxInspectText, and named by
// its size alone once the page has shown its MaxInspectShown bytes.
func (b *pageBuilder) text(s string) string {
	if s == "" {
		return s
	}
	if b.left <= 0 {
		b.cut++
		return fmt.Sprintf("[%d bytes not shown: a page shows %d MiB of text at most]", len(s), MaxInspectShown>>20)
	}
	s = capText(s)
	b.left -= len(s)
	return s
}

// fill adds the page's items: the transcript first, then the events,
// then the pools, each until the page's text is spent.
func (b *pageBuilder) fill(p *rows.InspectSamplePage) {
	for _, raw := range b.items.messages {
		if b.left <= 0 {
			break
		}
		p.Conversation = append(p.Conversation, b.message(raw))
	}
	b.shown("messages", len(p.Conversation), len(b.items.messages))
	for i, raw := range b.items.events {
		if b.left <= 0 {
			break
		}
		p.Events = append(p.Events, b.event(i, raw))
	}
	b.shown("events", len(p.Events), len(b.items.events))
	for i, raw := range b.items.pool {
		if b.left <= 0 {
			break
		}
		m := b.message(raw)
		m.Pool = i
		p.Pool = append(p.Pool, m)
	}
	b.shown("pool messages", len(p.Pool), len(b.items.pool))
	for _, raw := range b.items.calls {
		if b.left <= 0 {
			break
		}
		p.Calls = append(p.Calls, b.jsonText(raw))
	}
	b.shown("pool calls", len(p.Calls), len(b.items.calls))
}

// shown notes the items of a kind left out once the page's text was
// spent.
func (b *pageBuilder) shown(what string, n, of int) {
	if n < of {
		b.notes = append(b.notes, fmt.Sprintf("%d of the %d %s read are shown: the page's %d MiB of text is spent", n, of, what, MaxInspectShown>>20))
	}
}

// done adds the notes of what was not shown.
func (b *pageBuilder) done() {
	if b.cut > 0 {
		b.notes = append(b.notes, fmt.Sprintf("%d texts past the page's %d MiB of text are named by their size only", b.cut, MaxInspectShown>>20))
	}
}

// resolve replaces the attachments of raw; a reference to an attachment
// the sample lacks stays as written.
func (b *pageBuilder) resolve(raw string) string {
	out, err := inspect.ResolveAttachments([]byte(raw), func(key string) (string, bool) {
		s, ok := b.items.attachments[key]
		if !ok {
			return "attachment://" + key, true // shown as written
		}
		return s, true
	})
	if err != nil {
		return raw
	}
	return string(out)
}

// jsonText is a JSON value as a page shows it: attachments resolved, a
// string as its text, anything else as JSON, cut at MaxInspectText.
func (b *pageBuilder) jsonText(raw string) string {
	if raw == "" || raw == "null" {
		return ""
	}
	raw = b.resolve(raw)
	var p fastjson.Parser
	if v, err := p.Parse(raw); err == nil && v.Type() == fastjson.TypeString {
		return b.text(string(v.GetStringBytes()))
	}
	return b.text(raw)
}

// valueText is a parsed JSON value as text: a string as itself, null as
// "", anything else as JSON.
func valueText(v *fastjson.Value) string {
	if v == nil || v.Type() == fastjson.TypeNull {
		return ""
	}
	if v.Type() == fastjson.TypeString {
		return string(v.GetStringBytes())
	}
	return string(v.MarshalTo(nil))
}

// pageContentText is a message's or a tool result's content as text: a
// string as itself; a list of parts, their text joined, other parts
// named in brackets.
func pageContentText(v *fastjson.Value) string {
	if v == nil || v.Type() != fastjson.TypeArray {
		return valueText(v)
	}
	var parts []string
	for _, c := range v.GetArray() {
		switch t := string(c.GetStringBytes("type")); t {
		case "text":
			parts = append(parts, string(c.GetStringBytes("text")))
		case "reasoning":
			parts = append(parts, "[reasoning] "+string(c.GetStringBytes("reasoning")))
		case "":
			parts = append(parts, valueText(c))
		default:
			parts = append(parts, "["+t+"]")
		}
	}
	return strings.Join(parts, "\n")
}

// errorText is an Inspect error ({type, message} or a string) as text.
func errorText(v *fastjson.Value) string {
	if v == nil || v.Type() == fastjson.TypeNull {
		return ""
	}
	if v.Type() == fastjson.TypeObject {
		t, m := string(v.GetStringBytes("type")), string(v.GetStringBytes("message"))
		if t != "" && m != "" {
			return t + ": " + m
		}
		return t + m
	}
	return valueText(v)
}

// message reads a chat message (a chunked sample's {"message_ref": N}
// is the pool's message N).
func (b *pageBuilder) message(raw string) rows.InspectMessage {
	var p fastjson.Parser
	v, err := p.Parse(b.resolve(raw))
	if err != nil {
		return rows.InspectMessage{Text: b.text(raw), Pool: -1}
	}
	if v.Type() == fastjson.TypeString { // an item past MaxInspectItemBytes, named
		return rows.InspectMessage{Text: b.text(string(v.GetStringBytes())), Pool: -1}
	}
	if ref := v.Get("message_ref"); ref != nil && v.Get("role") == nil {
		i := ref.GetInt()
		if i >= 0 && i < len(b.items.pool) {
			m := b.message(b.items.pool[i])
			m.Pool = i
			return m
		}
		return rows.InspectMessage{Text: fmt.Sprintf("[message %d of the pool, past what was read]", i), Pool: -1}
	}
	return b.messageOf(v)
}

func (b *pageBuilder) messageOf(v *fastjson.Value) rows.InspectMessage {
	m := rows.InspectMessage{Role: string(v.GetStringBytes("role")), Text: b.text(pageContentText(v.Get("content"))), Pool: -1,
		ToolCallID: string(v.GetStringBytes("tool_call_id")), Function: string(v.GetStringBytes("function")), Error: b.text(errorText(v.Get("error")))}
	for _, c := range v.GetArray("tool_calls") {
		m.ToolCalls = append(m.ToolCalls, rows.InspectToolCall{ID: string(c.GetStringBytes("id")), Function: string(c.GetStringBytes("function")),
			Arguments: b.text(valueText(c.Get("arguments")))})
	}
	return m
}

// event reads an event of the transcript.
func (b *pageBuilder) event(i int, raw string) rows.InspectEventView {
	e := rows.InspectEventView{Index: i, InputTokens: -1, OutputTokens: -1, TotalTokens: -1, Seconds: math.NaN()}
	resolved := b.resolve(raw)
	var p fastjson.Parser
	v, err := p.Parse(resolved)
	if err != nil {
		e.Type, e.JSON = "?", b.text(raw)
		return e
	}
	if v.Type() == fastjson.TypeString { // an item past MaxInspectItemBytes, named
		e.Type, e.JSON = "?", b.text(string(v.GetStringBytes()))
		return e
	}
	e.Type = string(v.GetStringBytes("event"))
	e.Timestamp = string(v.GetStringBytes("timestamp"))
	switch e.Type {
	case "model":
		b.modelEvent(&e, v, raw)
	case "tool":
		e.Function = string(v.GetStringBytes("function"))
		e.Arguments = b.text(valueText(v.Get("arguments")))
		e.Result = b.text(pageContentText(v.Get("result")))
		e.ToolError = b.text(errorText(v.Get("error")))
	case "score":
		e.Score = b.text(valueText(v.Get("score", "value")))
		e.Answer = b.text(valueText(v.Get("score", "answer")))
		e.Explanation = b.text(valueText(v.Get("score", "explanation")))
	case "error":
		e.Error = b.text(errorText(v.Get("error")))
	case "span_begin":
		e.Span = strings.TrimSpace(string(v.GetStringBytes("type")) + " " + string(v.GetStringBytes("name")))
	case "span_end":
	default:
		e.JSON = b.text(resolved)
	}
	return e
}

// modelEvent reads a model call: its input (from the pool when it
// refers to it), output, tokens, time and provider call.
func (b *pageBuilder) modelEvent(e *rows.InspectEventView, v *fastjson.Value, raw string) {
	e.Model = string(v.GetStringBytes("model"))
	e.Error = b.text(errorText(v.Get("error")))
	if refs := v.Get("input_refs"); refs != nil && refs.Type() == fastjson.TypeArray {
		var names []string
		n := 0
		for _, r := range refs.GetArray() {
			lo, hi := r.GetInt("0"), r.GetInt("1")
			names = append(names, fmt.Sprintf("%d–%d", lo, hi-1))
			n += max(hi-lo, 0)
		}
		e.InputRefs = strings.Join(names, ", ")
		if n > b.budget {
			if b.budget >= 0 {
				b.notes = append(b.notes, fmt.Sprintf("model calls past %d expanded pool messages name their input's ranges of the pool (shown below) instead", MaxInspectExpanded))
				b.budget = -1
			}
		} else {
			b.budget -= n
			for _, r := range refs.GetArray() {
				for i := r.GetInt("0"); i < r.GetInt("1"); i++ {
					if i >= 0 && i < len(b.items.pool) {
						m := b.message(b.items.pool[i])
						m.Pool = i
						e.Input = append(e.Input, m)
					}
				}
			}
		}
	} else {
		for _, m := range v.GetArray("input") {
			e.Input = append(e.Input, b.messageOf(m))
		}
	}
	if ch := v.GetArray("output", "choices"); len(ch) > 0 {
		m := b.messageOf(ch[0].Get("message"))
		e.Output = &m
	}
	if u := v.Get("output", "usage"); u != nil {
		for _, f := range []struct {
			name string
			into *int64
		}{{"input_tokens", &e.InputTokens}, {"output_tokens", &e.OutputTokens}, {"total_tokens", &e.TotalTokens}} {
			if x := u.Get(f.name); x != nil {
				if n, err := x.Int64(); err == nil {
					*f.into = n
				}
			}
		}
	}
	for _, path := range [][]string{{"output", "time"}, {"working_time"}} {
		if x := v.Get(path...); x != nil && x.Type() == fastjson.TypeNumber {
			e.Seconds = x.GetFloat64()
			break
		}
	}
	if call := v.Get("call"); call != nil && call.Type() == fastjson.TypeObject {
		req := call.Get("request")
		if refs := call.Get("call_refs"); refs != nil && refs.Type() == fastjson.TypeArray && req != nil && req.Type() == fastjson.TypeObject {
			key := string(call.GetStringBytes("call_key"))
			if key == "" {
				key = "messages"
			}
			list := []byte{'['}
			n := 0
			for _, r := range refs.GetArray() {
				for i := r.GetInt("0"); i < r.GetInt("1"); i++ {
					if i < 0 || i >= len(b.items.calls) {
						continue
					}
					if n > 0 {
						list = append(list, ',')
					}
					list = append(list, b.resolve(b.items.calls[i])...)
					n++
				}
			}
			list = append(list, ']')
			var lp fastjson.Parser
			if lv, err := lp.ParseBytes(list); err == nil {
				req.Set(key, lv)
			}
		}
		if req != nil {
			e.Request = b.text(string(req.MarshalTo(nil)))
		}
		if res := call.Get("response"); res != nil && res.Type() != fastjson.TypeNull {
			e.Response = b.text(string(res.MarshalTo(nil)))
		}
	}
}

// capText cuts s at MaxInspectText bytes (on a character's boundary),
// saying how much was cut.
func capText(s string) string {
	if len(s) <= MaxInspectText {
		return s
	}
	cut := MaxInspectText
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("… [%d more bytes not shown]", len(s)-cut)
}
