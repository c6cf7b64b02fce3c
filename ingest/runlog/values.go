package runlog

import (
	"math"

	"github.com/valyala/fastjson"
)

// AppendEventValues appends the staging row of ev, the event DecodeLine
// returned last, as typed values in the order of CSVColumns[TypeEvent]:
// nil for NULL, string for VARCHAR and JSON (the JSON text), int64, float64,
// bool, time.Time (UTC) and int32 (file_id, src_line). They are the values
// AppendCSV writes as text. Like AppendCSV it must be called before the
// next DecodeLine.
func (d *Decoder) AppendEventValues(dst []any, ev *Event, fileID, line int) []any {
	get := func(k string) *fastjson.Value { return d.r.get(k, false) }
	str := func(k string) {
		v := get(k)
		if v == nil || v.Type() != fastjson.TypeString {
			dst = append(dst, nil)
			return
		}
		dst = append(dst, string(v.GetStringBytes()))
	}
	raw := func(k string) {
		v := get(k)
		if v == nil || v.Type() == fastjson.TypeNull {
			dst = append(dst, nil)
			return
		}
		dst = append(dst, string(v.MarshalTo(nil)))
	}
	boolean := func(v *fastjson.Value) {
		if v == nil || v.Type() == fastjson.TypeNull {
			dst = append(dst, nil)
			return
		}
		dst = append(dst, v.Type() == fastjson.TypeTrue)
	}
	dst = append(dst, ev.RunID, ev.Seq, ev.T.UTC())
	str("actor")
	str("kind")
	str("task")
	str("text")
	str("tool")
	raw("args")
	raw("result")
	boolean(get("ok"))
	str("depth")
	raw("actions")
	str("decision")
	if ev.Ref != nil {
		dst = append(dst, *ev.Ref)
	} else {
		dst = append(dst, nil)
	}
	if v := get("visible"); v != nil && v.Type() != fastjson.TypeNull {
		dst = append(dst, v.Type() == fastjson.TypeTrue)
	} else {
		dst = append(dst, ev.Actor == "agent" && (ev.Kind == "message" || ev.Kind == "approval_request"))
	}
	str("phase")
	u := get("usage")
	for _, k := range []string{"input_tokens", "output_tokens", "reasoning_tokens"} {
		v := getIn(u, k)
		switch {
		case v == nil || v.Type() != fastjson.TypeNumber:
			dst = append(dst, nil)
		default:
			n, err := v.Int64()
			if err != nil {
				f, _ := v.Float64()
				n = int64(math.Trunc(f))
			}
			dst = append(dst, n)
		}
	}
	for _, k := range []string{"latency_ms", "cost_usd"} {
		v := getIn(u, k)
		if v == nil || v.Type() != fastjson.TypeNumber {
			dst = append(dst, nil)
			continue
		}
		f, _ := v.Float64()
		dst = append(dst, f)
	}
	if ev.Extra != nil {
		dst = append(dst, string(ev.Extra))
	} else {
		dst = append(dst, nil)
	}
	return append(dst, int32(fileID), int32(line))
}
