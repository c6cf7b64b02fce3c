package judge

import (
	"encoding/json"
	"reflect"
	"testing"
)

// A batch line spliced from the template is, as JSON, the line the SDK's
// own marshalling of the request makes, whatever the messages hold.
func TestBatchLineIsTheRequest(t *testing.T) {
	for _, metric := range []string{TC, TA, TRJ} {
		tmpl, err := bodyTemplate("org/model", Builtin(metric), ClientOptions{Seed: 7})
		if err != nil {
			t.Fatal(err)
		}
		for _, msg := range [][2]string{{"plain", "text"}, {"quotes \" and \\ and\nlines\t", "<script>&amp; ½ ✓ \u2028 \x01"}, {"", ""}} {
			req := Request{System: msg[0], User: msg[1], SchemaName: metric + "_answer", Schema: Schema(metric)}
			want, _ := json.Marshal(batchLine{CustomID: "j|" + metric + "|h", Method: "POST", URL: "/v1/chat/completions", Body: chatParams("org/model", req, ClientOptions{Seed: 7})})
			got := tmpl.line(nil, "j|"+metric+"|h", msg[0], msg[1])
			var a, b any
			if err := json.Unmarshal(got, &a); err != nil {
				t.Fatalf("%s: not JSON: %v\n%s", metric, err, got)
			}
			json.Unmarshal(want, &b)
			if !reflect.DeepEqual(a, b) {
				t.Errorf("%s %q:\n%s\nwant\n%s", metric, msg, got, want)
			}
		}
	}
}
