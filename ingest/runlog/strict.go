package runlog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/valyala/fastjson"
)

// CheckJSON holds raw to RFC 8259 where the parser gymlens uses is lenient:
// numbers in JSON's grammar (not 00.5 or .5), no raw control characters
// in strings, no lone UTF-16 surrogate in a \u escape. It returns nil or
// an error saying what is wrong.
func CheckJSON(raw []byte) error {
	if err := fastjson.ValidateBytes(raw); err != nil {
		e := &JSONError{Offset: -1, Msg: "not valid JSON (RFC 8259): " + shorten(err.Error(), 160)}
		// encoding/json says where (fastjson only shows what is left).
		var se *json.SyntaxError
		var v any
		if jerr := json.Unmarshal(raw, &v); errors.As(jerr, &se) {
			e.Offset = int(se.Offset) - 1
			e.Msg = "not valid JSON (RFC 8259): " + se.Error()
		}
		return e
	}
	if bytes.Contains(raw, []byte(`\u`)) {
		if at := loneSurrogate(raw); at >= 0 {
			return &JSONError{Offset: at, Msg: fmt.Sprintf("not valid JSON (RFC 8259): a lone UTF-16 surrogate %s", raw[at:at+6])}
		}
	}
	return nil
}

// JSONError is JSON that breaks RFC 8259, at byte Offset (-1: unknown).
type JSONError struct {
	Offset int
	Msg    string
}

func (e *JSONError) Error() string { return e.Msg }

// Position is the 1-based line and column of byte offset in b.
func Position(b []byte, offset int) (line, col int) {
	offset = max(0, min(offset, len(b)))
	line = 1 + bytes.Count(b[:offset], []byte("\n"))
	return line, offset - bytes.LastIndexByte(b[:offset], '\n')
}

// At locates a CheckJSON error of a file's bytes b as file:line:column.
func At(path string, b []byte, err error) *Error {
	var je *JSONError
	if errors.As(err, &je) && je.Offset >= 0 {
		line, col := Position(b, je.Offset)
		return &Error{File: path, Line: line, Column: col, Msg: je.Msg}
	}
	return &Error{File: path, Msg: err.Error()}
}

// DuplicateKey is the path of the first key that occurs twice in one
// object of v ("" when none): JSON readers disagree on which one wins, so
// gymlens refuses both.
func DuplicateKey(v *fastjson.Value) string {
	if p := duplicateKey(v); p != nil {
		return joinPath(p)
	}
	return ""
}

// duplicateKey returns the path to a duplicate key, innermost first; it
// allocates nothing unless it finds one.
func duplicateKey(v *fastjson.Value) []string {
	switch v.Type() {
	case fastjson.TypeObject:
		o, _ := v.Object()
		var small [16][]byte
		keys := small[:0]
		var found []string
		o.Visit(func(k []byte, x *fastjson.Value) {
			if found != nil {
				return
			}
			for _, seen := range keys {
				if bytes.Equal(seen, k) {
					found = []string{string(k)}
					return
				}
			}
			keys = append(keys, k)
			if t := x.Type(); t == fastjson.TypeObject || t == fastjson.TypeArray {
				if p := duplicateKey(x); p != nil {
					found = append(p, string(k))
				}
			}
		})
		return found
	case fastjson.TypeArray:
		a, _ := v.Array()
		for i, x := range a {
			if t := x.Type(); t == fastjson.TypeObject || t == fastjson.TypeArray {
				if p := duplicateKey(x); p != nil {
					return append(p, "["+strconv.Itoa(i)+"]")
				}
			}
		}
	}
	return nil
}

func joinPath(rev []string) string {
	var b []byte
	for i := len(rev) - 1; i >= 0; i-- {
		if len(b) > 0 && !strings.HasPrefix(rev[i], "[") {
			b = append(b, '.')
		}
		b = append(b, rev[i]...)
	}
	return string(b)
}

// loneSurrogate is the offset of a \uD800–\uDFFF escape that is not half
// of a surrogate pair, or -1. A backslash escaped by another is no escape.
func loneSurrogate(raw []byte) int {
	hex4 := func(i int) (uint64, bool) {
		if i+6 > len(raw) || raw[i] != '\\' || raw[i+1] != 'u' {
			return 0, false
		}
		n, err := strconv.ParseUint(string(raw[i+2:i+6]), 16, 16)
		return n, err == nil
	}
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		if i+1 < len(raw) && raw[i+1] != 'u' {
			i++ // an escaped character, perhaps a backslash
			continue
		}
		n, ok := hex4(i)
		if !ok {
			continue
		}
		switch {
		case n >= 0xD800 && n <= 0xDBFF:
			if m, ok := hex4(i + 6); ok && m >= 0xDC00 && m <= 0xDFFF {
				i += 11
				continue
			}
			return i
		case n >= 0xDC00 && n <= 0xDFFF:
			return i
		}
		i += 5
	}
	return -1
}
