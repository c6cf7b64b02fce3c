package inspect

import (
	"encoding/json"
	"strings"
	"testing"
)

// The items of log_message_deduplication.eval, expanded: each model
// event's input, rebuilt from the pool, is a prefix of the final
// conversation the sample stores apart (Inspect's
// test_message_deduplication resolves the same references), and the
// attachment references resolve.
func TestExpandReferences(t *testing.T) {
	var pool, events, final [][]byte
	att := map[string]string{}
	r := &itemSink{fn: func(it *Item) {
		raw := append([]byte(nil), it.Raw...)
		switch it.Kind {
		case KindPoolMessage:
			pool = append(pool, raw)
		case KindEvent:
			events = append(events, raw)
		case KindMessage:
			final = append(final, raw)
		case KindAttachment:
			var s string
			json.Unmarshal(raw, &s)
			att[it.Key] = s
		}
	}}
	if err := ReadFile("testdata/log_message_deduplication.eval", r); err != nil {
		t.Fatal(err)
	}
	get := func(i int) ([]byte, bool) {
		if i < 0 || i >= len(pool) {
			return nil, false
		}
		return pool[i], true
	}
	expanded := 0
	for _, e := range events {
		var ev struct {
			Event string          `json:"event"`
			Refs  json.RawMessage `json:"input_refs"`
		}
		json.Unmarshal(e, &ev)
		if ev.Event != "model" || ev.Refs == nil {
			continue
		}
		out, err := ExpandInputRefs(e, get)
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			Input []map[string]any `json:"input"`
		}
		json.Unmarshal(out, &got)
		if len(got.Input) == 0 || len(got.Input) > len(final) || strings.Contains(string(out), "input_refs") {
			t.Fatalf("expanded input of %d messages (%d in the conversation): %.200s", len(got.Input), len(final), out)
		}
		for i := range got.Input {
			var m map[string]any
			json.Unmarshal(final[i], &m)
			if m["role"] != got.Input[i]["role"] || m["id"] != got.Input[i]["id"] {
				t.Errorf("message %d: %v against %v", i, got.Input[i]["id"], m["id"])
			}
		}
		expanded++
	}
	if expanded == 0 {
		t.Fatal("no model event with input_refs")
	}
	if _, err := ExpandInputRefs([]byte(`{"event": "model", "input_refs": [[0, 99]]}`), get); err == nil || !strings.Contains(err.Error(), "not in the pool") {
		t.Errorf("a reference past the pool: %v", err)
	}
	// Attachments.
	lookup := func(k string) (string, bool) { s, ok := att[k]; return s, ok }
	resolved := 0
	for _, e := range append(events, pool...) {
		if !strings.Contains(string(e), "attachment://") {
			continue
		}
		out, err := ResolveAttachments(e, lookup)
		if err != nil {
			t.Fatal(err)
		}
		if !json.Valid(out) || strings.Contains(string(out), `"attachment://`) {
			t.Errorf("not resolved: %.200s", out)
		}
		resolved++
	}
	if resolved == 0 {
		t.Error("no attachment reference resolved")
	}
	if _, err := ResolveAttachments([]byte(`{"text": "attachment://nope"}`), lookup); err == nil {
		t.Error("an unknown attachment resolved")
	}
}

type itemSink struct {
	recorder
	fn func(*Item)
}

func (s *itemSink) Item(_ *Sample, it *Item) error { s.fn(it); return nil }
