package inspect

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/valyala/fastjson"
)

// The warehouse keeps a sample's items as the log wrote them: pools once,
// model events with their references, attachments apart. These expand
// one item when a page or a judge needs it whole, as Inspect's readers
// resolve them.

// ResolveAttachments returns raw with every JSON string that is exactly
// "attachment://KEY" replaced by the attachment's text; lookup gives it
// (by the key a monolith sample uses, a content hash, or the index a
// chunked sample uses). A key lookup does not know is an error.
func ResolveAttachments(raw []byte, lookup func(key string) (string, bool)) ([]byte, error) {
	const proto = `"attachment://`
	if !bytes.Contains(raw, []byte(proto)) {
		return raw, nil
	}
	var out []byte
	rest := raw
	for {
		i := bytes.Index(rest, []byte(proto))
		if i < 0 {
			return append(out, rest...), nil
		}
		j := i + len(proto)
		k := j
		for k < len(rest) && (rest[k] >= '0' && rest[k] <= '9' || rest[k] >= 'a' && rest[k] <= 'z' || rest[k] >= 'A' && rest[k] <= 'Z' || rest[k] == '-' || rest[k] == '_') {
			k++
		}
		if k == j || k >= len(rest) || rest[k] != '"' || escapedQuote(rest, i) {
			// Not a whole string of a reference: keep it as it is.
			out = append(out, rest[:j]...)
			rest = rest[j:]
			continue
		}
		text, ok := lookup(string(rest[j:k]))
		if !ok {
			return nil, fmt.Errorf("attachment://%s: no such attachment", rest[j:k])
		}
		q, _ := json.Marshal(text)
		out = append(append(out, rest[:i]...), q...)
		rest = rest[k+1:]
	}
}

// escapedQuote says whether the quote at b[i] is escaped (inside a string).
func escapedQuote(b []byte, i int) bool {
	n := 0
	for i > 0 && b[i-1] == '\\' {
		n++
		i--
	}
	return n%2 == 1
}

// ExpandInputRefs returns a model event with its input_refs replaced by
// the input they name: the messages of the pool in [start, end) ranges,
// in order (pool gives message i as JSON). Other events, and model events
// without references, come back as they are.
func ExpandInputRefs(event []byte, pool func(i int) ([]byte, bool)) ([]byte, error) {
	var p fastjson.Parser
	v, err := p.ParseBytes(event)
	if err != nil {
		return nil, err
	}
	refs := v.Get("input_refs")
	if refs == nil || refs.Type() == fastjson.TypeNull {
		return event, nil
	}
	if _, err := ranges(refs); err != nil {
		return nil, fmt.Errorf("input_refs: %v", err)
	}
	input := []byte{'['}
	n := 0
	for _, r := range refs.GetArray() {
		for i := r.GetInt("0"); i < r.GetInt("1"); i++ {
			m, ok := pool(i)
			if !ok {
				return nil, fmt.Errorf("input_refs: message %d is not in the pool", i)
			}
			if n > 0 {
				input = append(input, ',')
			}
			input = append(input, m...)
			n++
		}
	}
	input = append(input, ']')
	var ap fastjson.Parser
	in, err := ap.ParseBytes(input)
	if err != nil {
		return nil, fmt.Errorf("the pool's messages: %v", err)
	}
	v.Del("input_refs")
	v.Set("input", in)
	return v.MarshalTo(nil), nil
}
