package serve

import (
	stdjson "encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/valyala/fastjson"

	"github.com/gymlens/gymlens/analysis"
	"github.com/gymlens/gymlens/ingest/runlog"
)

// The answers API decodes as strictly as ingest: invalid UTF-8, a key
// given twice, data after the value and a content type other than JSON
// are refused, each with the place of the fault; nothing is stored.
func TestAnswersStrictDecoding(t *testing.T) {
	s, n := annotated(t, "", false)
	item := jsonString(n.items["q1"][1].Item)
	good := fmt.Sprintf(`{"item": %s, "annotator": "alice", "answers": {"tc": 1}}`, item)
	cases := []struct {
		name, ct, body string
		code           int
		msg            string
	}{
		{"invalid UTF-8", "application/json", fmt.Sprintf(`{"item": %s, "annotator": "al`+"\xff"+`ice", "answers": {"tc": 1}}`, item), 400, "byte offset"},
		{"invalid UTF-8 in a key", "application/json", fmt.Sprintf(`{"item": %s, "annotator": "alice", "answers": {"t`+"\xc3"+`c": 1}}`, item), 400, "invalid UTF-8"},
		{"a key twice", "application/json", fmt.Sprintf(`{"item": %s, "annotator": "alice", "annotator": "bob", "answers": {"tc": 1}}`, item), 400, "duplicate"},
		{"a question twice", "application/json", fmt.Sprintf(`{"item": %s, "annotator": "alice", "answers": {"tc": 1, "tc": 0}}`, item), 400, "duplicate"},
		{"trailing data", "application/json", good + ` {"item": "x"}`, 400, "after the value"},
		{"trailing garbage", "application/json", good + `x`, 400, "byte offset"},
		{"a lone surrogate", "application/json", fmt.Sprintf(`{"item": %s, "annotator": "al\ud800ice", "answers": {"tc": 1}}`, item), 400, "byte offset"},
		{"a number outside JSON", "application/json", fmt.Sprintf(`{"item": %s, "annotator": "alice", "answers": {"tc": 01}}`, item), 400, "byte offset"},
		{"no content type", "", good, 415, "application/json"},
		{"text", "text/plain", good, 415, "application/json"},
		{"a look-alike type", "application/jsonp", good, 415, "application/json"},
		{"another charset", "application/json; charset=latin1", good, 415, "utf-8"},
		{"a form", form, good, 415, "application/json"},
	}
	for _, c := range cases {
		rec := post(t, s, "/api/annotate/q1/answers", c.ct, c.body)
		if rec.Code != c.code || !strings.Contains(rec.Body.String(), c.msg) {
			t.Errorf("%s: %d %q, want %d with %q", c.name, rec.Code, rec.Body.String(), c.code, c.msg)
		}
	}
	if n.saves != 0 {
		t.Errorf("refused bodies were stored: %v", n.answers["q1"])
	}
	for _, ct := range []string{"application/json", "application/json; charset=utf-8", "Application/JSON; charset=UTF-8"} {
		if rec := post(t, s, "/api/annotate/q1/answers", ct, good); rec.Code != 200 {
			t.Errorf("%s: %d %s", ct, rec.Code, rec.Body.String())
		}
	}
}

// The offset in the message is where the fault is.
func TestAnswersErrorOffset(t *testing.T) {
	body := []byte(`{"item": "a", "item": "b"}`)
	_, err := decodeAnswers(body)
	if err == nil || !strings.Contains(err.Error(), "byte offset 14") {
		t.Errorf("duplicate key at 14: %v", err)
	}
	body = []byte(`{"item": "a` + "\xff" + `"}`)
	if _, err = decodeAnswers(body); err == nil || !strings.Contains(err.Error(), "byte offset 11") {
		t.Errorf("invalid UTF-8 at 11: %v", err)
	}
}

// Annotator names are NFC: the same name typed composed or decomposed is
// one annotator; control and format characters (a zero-width joiner, a
// bidirectional override, a soft hyphen) are refused.
func TestAnnotatorNamesNormalized(t *testing.T) {
	s, n := annotated(t, "", false)
	item := jsonString(n.items["q1"][1].Item)
	send := func(name string) (int, string) {
		rec := post(t, s, "/api/annotate/q1/answers", "application/json", fmt.Sprintf(`{"item": %s, "annotator": %s, "answers": {"tc": 1}}`, item, jsonString(name)))
		return rec.Code, rec.Body.String()
	}
	if code, body := send("Jos\u00e9"); code != 200 {
		t.Fatalf("composed: %d %s", code, body)
	}
	if code, body := send("Jose\u0301"); code != 200 {
		t.Fatalf("decomposed: %d %s", code, body)
	}
	names := map[string]bool{}
	for _, a := range n.answers["q1"] {
		names[a.Annotator] = true
	}
	if len(names) != 1 || !names["Jos\u00e9"] {
		t.Errorf("José twice spelled is %d annotators: %v", len(names), names)
	}
	for _, bad := range []string{"ali\u200dce", "alice\u202e", "ali\u00adce", "ali\u0000ce", "al\u2028ice", "ali\ue000ce", " alice", "alice\u00a0", ""} {
		if code, body := send(bad); code != 400 {
			t.Errorf("%+q: %d %s", bad, code, body)
		}
	}
	// The form's name and the status page's link take the same rules.
	rec := get(t, s, "/annotate/q1?annotator=Jose%CC%81")
	if c := rec.Header().Get("Set-Cookie"); rec.Code != 303 || !strings.HasPrefix(c, nameCookie+"=Jos%C3%A9") {
		t.Errorf("the form's name is not NFC: %d %q", rec.Code, c)
	}
	if rec = get(t, s, "/annotate/q1?annotator=ali%E2%80%8Dce"); rec.Code != 400 {
		t.Errorf("a zero-width joiner in the form's name: %d", rec.Code)
	}
	if rec = get(t, s, "/annotate/q1/status?link=ali%E2%80%8Dce"); rec.Code != 400 {
		t.Errorf("a zero-width joiner in a link's name: %d", rec.Code)
	}
}

// FuzzAnswersDecode: the decoder never panics; what it admits is UTF-8,
// JSON by RFC 8259 (as ingest's run-log check has it) with no key twice
// and nothing after the value; what it refuses is a request error that
// names the byte offset.
func FuzzAnswersDecode(f *testing.F) {
	for _, seed := range []string{
		`{"item": "r1#t1", "annotator": "alice", "answers": {"tc": 1, "trust": "4"}}`,
		`{"item": "r1", "annotator": "Jose\u0301", "answers": {}}`,
		`{"item": "a", "item": "b"}`,
		`{"item": "a", "answers": {"tc": 1, "tc": 2}}`,
		`{"item": "a"} {"item": "b"}`,
		`{"item": "a"}x`,
		"{\"item\": \"a\xff\"}",
		`{"item": "\ud800"}`,
		`{"answers": {"tc": 01}}`,
		`{"answers": {"tc": [1, {"a": 1, "a": 2}]}}`,
		`{"extra": 1}`,
		`[]`, `null`, ``, ` `, `{`, `{"item": 1}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := decodeAnswers(body)
		if err != nil {
			var oe *analysis.OptionError
			if !errors.As(err, &oe) || !strings.Contains(err.Error(), "byte offset") {
				t.Fatalf("%q: %v is not a request error naming the offset", body, err)
			}
			return
		}
		if !utf8.Valid(body) {
			t.Fatalf("%q: admitted, not UTF-8", body)
		}
		if err := runlog.CheckJSON(body); err != nil {
			t.Fatalf("%q: admitted, not RFC 8259: %v", body, err)
		}
		v, err := fastjson.ParseBytes(body)
		if err != nil {
			t.Fatalf("%q: admitted, not one value: %v", body, err)
		}
		if k := runlog.DuplicateKey(v); k != "" {
			t.Fatalf("%q: admitted with %s twice", body, k)
		}
		for q, raw := range req.Answers {
			if !utf8.ValidString(q) || !stdjson.Valid(raw) {
				t.Fatalf("%q: answer %q = %q", body, q, raw)
			}
		}
	})
}
