package ingest

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"strings"

	"github.com/gymlens/gymlens/ingest/inspect"
	"github.com/gymlens/gymlens/ingest/rows"
)

// InspectJudge is the warehouse as the judge sees it when it judges
// Inspect samples (gymlens judge --source inspect): each sample at each
// epoch is a "run" keyed by rows.InspectSampleKey, its records the final
// conversation's messages, tool calls and tool results. Everything else
// (the cache, the judgments, the journal) is the warehouse's own.
type InspectJudge struct {
	*Warehouse
}

// MaxInspectTranscript is the most text of one sample's transcript the
// judge is given (16 MiB, some four million tokens: past any judge's
// context); a longer one is an error naming the sample, never cut short.
const MaxInspectTranscript = 16 << 20

// inspectScanSamples is how many samples' messages one query reads: the
// driver holds a query's whole result.
const inspectScanSamples = 64

// InspectJudge opens the Inspect samples to the judge. A warehouse
// without Inspect samples, or whose run ids could be taken for the keys
// of Inspect samples, is refused.
func (w *Warehouse) InspectJudge(ctx context.Context) (*InspectJudge, error) {
	var samples, clash int64
	if err := w.db.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM inspect_samples), (SELECT count(*) FROM runs WHERE starts_with(run_id, ?))`,
		rows.InspectKeyPrefix).Scan(&samples, &clash); err != nil {
		return nil, fmt.Errorf("reading the warehouse: %w", err)
	}
	if samples == 0 {
		return nil, fmt.Errorf("--source inspect: %s holds no Inspect sample (ingest .eval or .json logs first)", w.Path)
	}
	if clash > 0 {
		return nil, fmt.Errorf("--source inspect: %d runs of %s have ids beginning %q, the prefix of the keys Inspect samples are judged under", clash, w.Path, rows.InspectKeyPrefix)
	}
	return &InspectJudge{w}, nil
}

// inspectKeySQL is rows.InspectSampleKey in SQL, over s (inspect_samples).
const inspectKeySQL = `'` + rows.InspectKeyPrefix + `' || replace(replace(s.eval_id, '%', '%25'), ':', '%3A') || ':' || s.epoch::VARCHAR || ':' || s.sample_id`

// inspectItemJSON is an item's JSON as the log wrote it, as text (the
// items are JSON values: a message an object, an attachment a string).
const inspectItemJSON = `i.data::VARCHAR`

// JudgeHeads lists the samples after key after, at most n (n ≤ 0: all),
// in key order. Each is a run without tasks whose configuration is the
// evaluation's and whose scenario is its task (both only for drawing
// judge --limit's sample, never shown to a judge); its content hash
// changes when the sample is ingested again.
func (j *InspectJudge) JudgeHeads(ctx context.Context, after string, n int) ([]*JudgeRun, error) {
	limit := int64(n)
	if n <= 0 {
		limit = math.MaxInt64
	}
	var out []*JudgeRun
	texts := map[string]string{}
	one := func(s string) string {
		if t, ok := texts[s]; ok {
			return t
		}
		texts[s] = s
		return s
	}
	err := j.scan(ctx, `SELECT key, config_id, task, file_id, messages FROM (SELECT `+inspectKeySQL+` AS key, e.config_id, e.task, s.file_id, s.messages
		FROM inspect_samples s JOIN inspect_evals e USING (eval_id)) WHERE key > ? ORDER BY key LIMIT ?`, func(rs *sql.Rows) error {
		r := &JudgeRun{}
		var file, msgs int64
		if err := rs.Scan(&r.RunID, &r.ConfigID, &r.Scenario, &file, &msgs); err != nil {
			return err
		}
		r.ConfigID, r.Scenario = one(r.ConfigID), one(r.Scenario)
		h := fnv.New64a()
		fmt.Fprintf(h, "%s\x00%d\x00%d", r.RunID, file, msgs)
		r.RunHash = int64(h.Sum64())
		out = append(out, r)
		return nil
	}, after, limit)
	return out, err
}

// ScanJudgeEvents gives each sample with its transcript as records
// (InspectTranscript), in the order given, a batch of samples at a time.
func (j *InspectJudge) ScanJudgeEvents(ctx context.Context, runs []*JudgeRun, fn func(*JudgeRun) error) error {
	for start := 0; start < len(runs); start += inspectScanSamples {
		part := runs[start:min(len(runs), start+inspectScanSamples)]
		keys := make([]string, len(part))
		for i, r := range part {
			keys[i] = r.RunID
		}
		ts, err := j.InspectTranscripts(ctx, keys)
		if err != nil {
			return err
		}
		for i, r := range part {
			r.Events = ts[i]
			err := fn(r)
			r.Events = nil
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// InspectTranscripts reads the transcripts of samples by their keys
// (rows.InspectSampleKey), in that order: the records a judge is shown
// (InspectTranscript). A key of no sample is an error.
func (w *Warehouse) InspectTranscripts(ctx context.Context, keys []string) ([][]JudgeEvent, error) {
	type sample struct {
		model    string
		messages [][]byte
		refs     map[int]int // pool index → place in messages
		attach   map[string]string
		found    bool
	}
	samples := make([]*sample, len(keys))
	at := map[string]int{}
	// The evaluations named: their items lie together (a log is ingested
	// at once), so that DuckDB skips the row groups of the others.
	var evals []string
	for i, k := range keys {
		ev, _, _, ok := rows.ParseInspectSampleKey(k)
		if !ok {
			return nil, fmt.Errorf("%q is not the key of an Inspect sample", k)
		}
		if !slices.Contains(evals, ev) {
			evals = append(evals, ev)
		}
		samples[i] = &sample{refs: map[int]int{}, attach: map[string]string{}}
		at[k] = i
	}
	// The final conversation's messages, their attachments, and the pool
	// messages a chunked sample's conversation refers to; nothing else of
	// the sample (its events, the rest of its pools) is read.
	err := w.scan(ctx, `WITH q AS (SELECT unnest(?::VARCHAR[]) AS key),
		s AS (SELECT `+inspectKeySQL+` AS key, s.eval_id, s.sample_id, s.epoch FROM inspect_samples s WHERE s.eval_id IN (SELECT unnest(?::VARCHAR[]))),
		i AS (SELECT * FROM inspect_items WHERE eval_id IN (SELECT unnest(?::VARCHAR[])) AND kind IN ('message', 'attachment'))
		SELECT s.key, e.model, i.kind, i.idx, coalesce(i.key, ''), `+inspectItemJSON+`
		FROM q JOIN s USING (key) JOIN inspect_evals e USING (eval_id)
		LEFT JOIN i ON i.eval_id = s.eval_id AND i.sample_id = s.sample_id AND i.epoch = s.epoch
		ORDER BY s.key, i.kind, i.idx`, func(rs *sql.Rows) error {
		var key, model string
		var kind, akey, data sql.NullString
		var idx sql.NullInt64
		if err := rs.Scan(&key, &model, &kind, &idx, &akey, &data); err != nil {
			return err
		}
		s := samples[at[key]]
		s.found, s.model = true, model
		switch kind.String {
		case inspect.KindMessage:
			s.messages = append(s.messages, []byte(data.String))
		case inspect.KindAttachment:
			var text string
			if err := json.Unmarshal([]byte(data.String), &text); err != nil {
				return fmt.Errorf("sample %s: attachment %s: %w", key, akey.String, err)
			}
			s.attach[akey.String] = text
		}
		return nil
	}, keys, evals, evals)
	if err != nil {
		return nil, err
	}
	// A chunked sample's conversation holds references into its message
	// pool: those pool messages are read.
	var refKeys []string
	var refIdx []int64
	for i, s := range samples {
		if !s.found {
			return nil, fmt.Errorf("no Inspect sample %s in %s", keys[i], w.Path)
		}
		for m, raw := range s.messages {
			var ref struct {
				Ref *int `json:"message_ref"`
			}
			if json.Unmarshal(raw, &ref) == nil && ref.Ref != nil {
				s.refs[*ref.Ref] = m
				refKeys, refIdx = append(refKeys, keys[i]), append(refIdx, int64(*ref.Ref))
			}
		}
	}
	if len(refKeys) > 0 {
		err := w.scan(ctx, `WITH q AS (SELECT unnest(?::VARCHAR[]) AS key, unnest(?::BIGINT[]) AS idx),
			s AS (SELECT `+inspectKeySQL+` AS key, s.eval_id, s.sample_id, s.epoch FROM inspect_samples s WHERE s.eval_id IN (SELECT unnest(?::VARCHAR[]))),
			i AS (SELECT * FROM inspect_items WHERE eval_id IN (SELECT unnest(?::VARCHAR[])) AND kind = 'pool_message')
			SELECT s.key, i.idx, `+inspectItemJSON+` FROM q JOIN s USING (key)
			JOIN i ON i.eval_id = s.eval_id AND i.sample_id = s.sample_id AND i.epoch = s.epoch AND i.idx = q.idx`,
			func(rs *sql.Rows) error {
				var key, data string
				var idx int
				if err := rs.Scan(&key, &idx, &data); err != nil {
					return err
				}
				s := samples[at[key]]
				s.messages[s.refs[idx]] = []byte(data)
				return nil
			}, refKeys, refIdx, evals, evals)
		if err != nil {
			return nil, err
		}
	}
	out := make([][]JudgeEvent, len(keys))
	for i, s := range samples {
		msgs := make([]json.RawMessage, len(s.messages))
		for m, raw := range s.messages {
			res, err := inspect.ResolveAttachments(raw, func(k string) (string, bool) { t, ok := s.attach[k]; return t, ok })
			if err != nil {
				return nil, fmt.Errorf("sample %s: message %d: %w", keys[i], m, err)
			}
			msgs[m] = res
		}
		if out[i], err = InspectTranscript(msgs, s.model); err != nil {
			return nil, fmt.Errorf("sample %s: %w", keys[i], err)
		}
	}
	return out, nil
}

// inspectMessage is what a judge is shown of an Inspect chat message: its
// role, text, tool calls and the tool's result. Every other field (the
// model that wrote it, its source, ids, metadata) is left out.
type inspectMessage struct {
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	ToolCalls []struct {
		Function  string          `json:"function"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"tool_calls"`
	Function string `json:"function"`
	Error    *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
	MessageRef *int `json:"message_ref"`
}

// InspectTranscript turns a sample's final conversation (its messages as
// JSON, attachments resolved) into the records a judge is shown, seq
// counting from 0 in order:
//
//   - a system message: actor system, kind message;
//   - a user message: actor user, kind message, visible;
//   - an assistant message: its text as actor agent, kind message,
//     visible; then each tool call as actor agent, kind tool_call, with
//     the tool and its arguments (JSON, keys sorted);
//   - a tool message: actor env, kind tool_result, the tool, and the
//     result's text followed by the error, when there is one.
//
// Text is a message's string content, or its text parts joined by
// newlines, other parts shown as [TYPE] (an image: [image]); reasoning
// parts are left out. Every occurrence of the model's name (model, and
// its last part after "/" when that has 4 characters or more) becomes
// "[model]". Records have no time: Inspect's messages have none.
func InspectTranscript(messages []json.RawMessage, model string) ([]JudgeEvent, error) {
	var names []string
	if model != "" {
		names = append(names, model)
		if i := strings.LastIndex(model, "/"); i >= 0 && len(model)-i-1 >= 4 {
			names = append(names, model[i+1:])
		}
	}
	redact := func(s string) string {
		for _, n := range names {
			s = strings.ReplaceAll(s, n, "[model]")
		}
		return s
	}
	var out []JudgeEvent
	size := 0
	add := func(e JudgeEvent) error {
		e.Seq = int64(len(out))
		e.Text, e.Args, e.Result = redact(e.Text), redact(e.Args), redact(e.Result)
		size += len(e.Text) + len(e.Args) + len(e.Result)
		if size > MaxInspectTranscript {
			return fmt.Errorf("the transcript passes %d MiB, the most a judge is given (ingest.MaxInspectTranscript)", MaxInspectTranscript>>20)
		}
		out = append(out, e)
		return nil
	}
	for i, raw := range messages {
		var m inspectMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			return nil, fmt.Errorf("message %d: not a chat message: %w", i, err)
		}
		if m.MessageRef != nil {
			return nil, fmt.Errorf("message %d: refers to message %d of the pool, which the sample does not hold", i, *m.MessageRef)
		}
		text, err := contentText(m.Content)
		if err != nil {
			return nil, fmt.Errorf("message %d: content: %w", i, err)
		}
		var e error
		switch m.Role {
		case "system":
			e = add(JudgeEvent{Actor: "system", Kind: "message", Text: text})
		case "user":
			e = add(JudgeEvent{Actor: "user", Kind: "message", Text: text, Visible: true})
		case "assistant":
			if text != "" || len(m.ToolCalls) == 0 {
				e = add(JudgeEvent{Actor: "agent", Kind: "message", Text: text, Visible: true})
			}
			for k, c := range m.ToolCalls {
				if e != nil {
					break
				}
				args, err := sortedJSON(c.Arguments)
				if err != nil {
					return nil, fmt.Errorf("message %d: tool_calls[%d].arguments: %w", i, k, err)
				}
				e = add(JudgeEvent{Actor: "agent", Kind: "tool_call", Tool: c.Function, Args: args})
			}
		case "tool":
			res := text
			if m.Error != nil {
				res = strings.TrimSpace(res + "\nerror (" + m.Error.Type + "): " + m.Error.Message)
			}
			e = add(JudgeEvent{Actor: "env", Kind: "tool_result", Tool: m.Function, Result: res})
		default:
			return nil, fmt.Errorf("message %d: role: expected system, user, assistant or tool, found %q", i, m.Role)
		}
		if e != nil {
			return nil, e
		}
	}
	return out, nil
}

// contentText is a message's content as text: a string as it is; a list
// of parts, their text joined by newlines, [TYPE] for a part without
// text, reasoning left out.
func contentText(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var parts []map[string]any
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", fmt.Errorf("expected a string or a list of content parts")
	}
	var texts []string
	for _, p := range parts {
		typ, _ := p["type"].(string)
		switch typ {
		case "reasoning":
		case "text":
			t, _ := p["text"].(string)
			texts = append(texts, t)
		default:
			texts = append(texts, "["+typ+"]")
		}
	}
	return strings.Join(texts, "\n"), nil
}

// sortedJSON writes a JSON value again with its keys sorted and no
// spaces ("" for none).
func sortedJSON(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", err
	}
	b, err := json.Marshal(v)
	return string(b), err
}
