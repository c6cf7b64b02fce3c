package runlog

import (
	"encoding/binary"
	"fmt"
	"math"
	"time"

	"github.com/valyala/fastjson"
)

// A typed staging record is a staging row (CSVColumns) in binary, for a
// table function to hand DuckDB as vectors without parsing text: its
// payload's length (a uvarint), then for each column a byte, 0 for NULL
// and 1 for a value, and the value: a string (VARCHAR, JSON's text) as its
// length (uvarint) and bytes, BIGINT and INTEGER as varints, DOUBLE as 8
// bytes (little-endian IEEE 754), BOOLEAN as a byte (1 true), TIMESTAMPTZ
// as microseconds since 1970 UTC (a varint).

// typedRoom is the room left for a record's length before its payload.
const typedRoom = binary.MaxVarintLen64

// beginTyped leaves room for a record's length and returns where it starts.
func beginTyped(dst []byte) ([]byte, int) {
	var room [typedRoom]byte
	return append(dst, room[:]...), len(dst)
}

// endTyped writes the length of the record begun at start and moves its
// payload back over the room left unused.
func endTyped(dst []byte, start int) []byte {
	payload := start + typedRoom
	var l [binary.MaxVarintLen64]byte
	n := binary.PutUvarint(l[:], uint64(len(dst)-payload))
	copy(dst[start:], l[:n])
	copy(dst[start+n:], dst[payload:])
	return dst[:len(dst)-(typedRoom-n)]
}

func typedNull(dst []byte) []byte { return append(dst, 0) }

func typedString(dst []byte, s []byte) []byte {
	dst = append(dst, 1)
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

func typedStr(dst []byte, s string) []byte {
	dst = append(dst, 1)
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

func typedInt(dst []byte, n int64) []byte { return binary.AppendVarint(append(dst, 1), n) }

func typedFloat(dst []byte, f float64) []byte {
	return binary.LittleEndian.AppendUint64(append(dst, 1), math.Float64bits(f))
}

func typedBool(dst []byte, b bool) []byte {
	if b {
		return append(dst, 1, 1)
	}
	return append(dst, 1, 0)
}

// AppendTyped appends the typed staging record of ev, the event DecodeLine
// returned last: the values AppendCSV writes as text. Like AppendCSV it
// must be called before the next DecodeLine.
func (d *Decoder) AppendTyped(dst []byte, ev *Event, fileID, line int) []byte {
	get := func(k string) *fastjson.Value { return d.r.get(k, false) }
	str := func(k string) {
		if v := get(k); v != nil && v.Type() == fastjson.TypeString {
			dst = typedString(dst, v.GetStringBytes())
		} else {
			dst = typedNull(dst)
		}
	}
	var scratch []byte
	raw := func(k string) {
		if v := get(k); v != nil && v.Type() != fastjson.TypeNull {
			scratch = v.MarshalTo(scratch[:0])
			dst = typedString(dst, scratch)
		} else {
			dst = typedNull(dst)
		}
	}
	dst, start := beginTyped(dst)
	dst = typedStr(dst, ev.RunID)
	dst = typedInt(dst, ev.Seq)
	dst = typedInt(dst, ev.T.UnixMicro())
	str("actor")
	str("kind")
	str("task")
	str("text")
	str("tool")
	raw("args")
	raw("result")
	if v := get("ok"); v != nil && v.Type() != fastjson.TypeNull {
		dst = typedBool(dst, v.Type() == fastjson.TypeTrue)
	} else {
		dst = typedNull(dst)
	}
	str("depth")
	raw("actions")
	str("decision")
	if ev.Ref != nil {
		dst = typedInt(dst, *ev.Ref)
	} else {
		dst = typedNull(dst)
	}
	if v := get("visible"); v != nil && v.Type() != fastjson.TypeNull {
		dst = typedBool(dst, v.Type() == fastjson.TypeTrue)
	} else {
		dst = typedBool(dst, ev.Actor == "agent" && (ev.Kind == "message" || ev.Kind == "approval_request"))
	}
	str("phase")
	u := get("usage")
	for _, k := range []string{"input_tokens", "output_tokens", "reasoning_tokens"} {
		v := getIn(u, k)
		if v == nil || v.Type() != fastjson.TypeNumber {
			dst = typedNull(dst)
			continue
		}
		n, err := v.Int64()
		if err != nil {
			f, _ := v.Float64()
			n = int64(math.Trunc(f))
		}
		dst = typedInt(dst, n)
	}
	for _, k := range []string{"latency_ms", "cost_usd"} {
		v := getIn(u, k)
		if v == nil || v.Type() != fastjson.TypeNumber {
			dst = typedNull(dst)
			continue
		}
		f, _ := v.Float64()
		dst = typedFloat(dst, f)
	}
	if ev.Extra != nil {
		dst = typedString(dst, ev.Extra)
	} else {
		dst = typedNull(dst)
	}
	dst = typedInt(dst, int64(fileID))
	dst = typedInt(dst, int64(line))
	return endTyped(dst, start)
}

// AppendTypedValues appends row, typed values in the order of cols (nil
// for NULL; string, int64, int32, float64, bool, time.Time by the
// column's type), as one typed staging record. A value of another type
// than its column's is an error.
func AppendTypedValues(dst []byte, cols []Column, row []any) ([]byte, error) {
	if len(row) != len(cols) {
		return dst, fmt.Errorf("staging row of %d values for %d columns", len(row), len(cols))
	}
	orig := len(dst)
	dst, start := beginTyped(dst)
	for i, v := range row {
		ok := true
		switch x := v.(type) {
		case nil:
			dst = typedNull(dst)
		case string:
			dst = typedStr(dst, x)
			ok = cols[i].Type == "VARCHAR" || cols[i].Type == "JSON"
		case int64:
			dst = typedInt(dst, x)
			ok = cols[i].Type == "BIGINT"
		case int32:
			dst = typedInt(dst, int64(x))
			ok = cols[i].Type == "INTEGER"
		case float64:
			dst = typedFloat(dst, x)
			ok = cols[i].Type == "DOUBLE"
		case bool:
			dst = typedBool(dst, x)
			ok = cols[i].Type == "BOOLEAN"
		case time.Time:
			dst = typedInt(dst, x.UnixMicro())
			ok = cols[i].Type == "TIMESTAMPTZ"
		default:
			ok = false
		}
		if !ok {
			return dst[:orig], fmt.Errorf("staging column %s (%s): a %T", cols[i].Name, cols[i].Type, v)
		}
	}
	return endTyped(dst, start), nil
}
