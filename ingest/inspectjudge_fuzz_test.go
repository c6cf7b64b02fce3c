package ingest_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/gymlens/gymlens/ingest"
)

// Any message either renders, records numbered in order and the model's
// name nowhere in them, or is an error; never a panic.
func FuzzInspectTranscript(f *testing.F) {
	f.Add(`{"role":"user","content":"I am gpt-4o"}`, "openai/gpt-4o")
	f.Add(`{"role":"assistant","content":[{"type":"text","text":"a"},{"type":"reasoning","reasoning":"b"}],"tool_calls":[{"function":"f","arguments":{"x":[1,2]}}]}`, "m")
	f.Add(`{"role":"tool","content":null,"function":"f","error":{"type":"t","message":"gpt-4o failed"}}`, "gpt-4o")
	f.Add(`{"message_ref":3}`, "")
	f.Fuzz(func(t *testing.T, msg, model string) {
		evs, err := ingest.InspectTranscript([]json.RawMessage{json.RawMessage(msg)}, model)
		if err != nil {
			return
		}
		for i, e := range evs {
			if e.Seq != int64(i) {
				t.Fatalf("record %d has seq %d", i, e.Seq)
			}
			if model != "" && !strings.Contains("[model]", model) && !strings.Contains(model, "[model]") {
				for _, s := range []string{e.Text, e.Args, e.Result} {
					if strings.Contains(s, model) {
						t.Fatalf("%q holds the model %q", s, model)
					}
				}
			}
		}
	})
}
