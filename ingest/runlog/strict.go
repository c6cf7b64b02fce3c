package runlog

import (
	"bytes"
	"encoding/binary"
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

// duplicateKey returns the path to a duplicate key, innermost first.
func duplicateKey(v *fastjson.Value) []string {
	var scratch []byte
	numbersOK := true
	return strictWalk(v, &scratch, &numbersOK)
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

// checkParsed is CheckJSON followed by DuplicateKey for a line fastjson
// has parsed as v, with the same verdict and messages, at the cost of one
// walk of v and one scan of the line's bytes where the two ran fastjson's
// validator (a second parse) and then the walk. fastjson's parser is
// lenient in three ways only: number tokens outside JSON's grammar
// (checked here on each number of v), raw control characters in strings,
// and malformed escapes (checked on the bytes: after a successful parse
// every backslash is inside a string). A line that could break one of the
// rules takes the full CheckJSON, which also says where.
func checkParsed(line []byte, v *fastjson.Value, scratch *[]byte) error {
	numbersOK := true
	dup := strictWalk(v, scratch, &numbersOK)
	// The walk stops at a duplicate key, so past one the numbers are
	// unchecked: the full check decides (such a line is refused anyway).
	if dup != nil || !numbersOK || !plainBytes(line) {
		if err := CheckJSON(line); err != nil {
			return err
		}
		if !numbersOK {
			// Not reached while numberToken follows fastjson's validator;
			// kept so that a disagreement refuses rather than admits.
			return &JSONError{Offset: -1, Msg: "not valid JSON (RFC 8259): a number outside JSON's grammar"}
		}
	}
	if dup != nil {
		return dupKeyError{joinPath(dup)}
	}
	return nil
}

// dupKeyError is the path of a key that occurs twice in one object.
type dupKeyError struct{ path string }

func (e dupKeyError) Error() string { return "duplicate key " + e.path }

// strictWalk returns the path to a duplicate key in v, innermost first
// (nil when none; once *scratch holds a number's room it allocates nothing
// unless it finds one), and checks every number token of v against JSON's
// grammar, clearing *numbersOK at the first that breaks it.
func strictWalk(v *fastjson.Value, scratch *[]byte, numbersOK *bool) []string {
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
			switch x.Type() {
			case fastjson.TypeObject, fastjson.TypeArray:
				if p := strictWalk(x, scratch, numbersOK); p != nil {
					found = append(p, string(k))
				}
			case fastjson.TypeNumber:
				checkNumber(x, scratch, numbersOK)
			}
		})
		return found
	case fastjson.TypeArray:
		a, _ := v.Array()
		for i, x := range a {
			switch x.Type() {
			case fastjson.TypeObject, fastjson.TypeArray:
				if p := strictWalk(x, scratch, numbersOK); p != nil {
					return append(p, "["+strconv.Itoa(i)+"]")
				}
			case fastjson.TypeNumber:
				checkNumber(x, scratch, numbersOK)
			}
		}
	case fastjson.TypeNumber:
		checkNumber(v, scratch, numbersOK)
	}
	return nil
}

// checkNumber clears *numbersOK if the number v's token is outside JSON's
// grammar.
func checkNumber(v *fastjson.Value, scratch *[]byte, numbersOK *bool) {
	*scratch = v.MarshalTo((*scratch)[:0])
	if !numberToken(*scratch) {
		*numbersOK = false
	}
}

// numberToken reports whether b is a whole number of JSON's grammar:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func numberToken(b []byte) bool {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
			n++
		}
		return n
	}
	start := i
	if n := digits(); n == 0 || (b[start] == '0' && n > 1) {
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(b)
}

// plainBytes reports whether a parsed line has no byte below 0x20 (none is
// allowed in a string; outside one, tab and carriage return are, but are
// left to the full check) and only well-formed escapes: one of \" \\ \/ \b
// \f \n \r \t, or \u with four hex digits that is no lone UTF-16
// surrogate.
func plainBytes(line []byte) bool {
	if hasControl(line) {
		return false
	}
	for i := bytes.IndexByte(line, '\\'); i >= 0; {
		if i+1 >= len(line) {
			return false
		}
		switch line[i+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			i += 2
		case 'u':
			n, ok := hexEscape(line, i)
			if !ok {
				return false
			}
			switch {
			case n >= 0xD800 && n <= 0xDBFF:
				m, ok := hexEscape(line, i+6)
				if !ok || m < 0xDC00 || m > 0xDFFF {
					return false
				}
				i += 12
			case n >= 0xDC00 && n <= 0xDFFF:
				return false
			default:
				i += 6
			}
		default:
			return false
		}
		j := bytes.IndexByte(line[i:], '\\')
		if j < 0 {
			break
		}
		i += j
	}
	return true
}

// hexEscape is the value of the \uXXXX escape at b[i:], if there is one.
func hexEscape(b []byte, i int) (uint32, bool) {
	if i+6 > len(b) || b[i] != '\\' || b[i+1] != 'u' {
		return 0, false
	}
	var n uint32
	for _, c := range b[i+2 : i+6] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		n = n<<4 | uint32(c)
	}
	return n, true
}

// hasControl reports whether b holds a byte below 0x20, eight bytes at a
// time.
func hasControl(b []byte) bool {
	const highs, spaces = 0x8080808080808080, 0x2020202020202020
	i := 0
	for ; i+8 <= len(b); i += 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		// Nonzero exactly when some byte of w is below 0x20: the
		// subtraction sets a byte's high bit where the byte was below
		// 0x20, or where a borrow reached it from such a byte below.
		if (w-spaces)&^w&highs != 0 {
			return true
		}
	}
	for ; i < len(b); i++ {
		if b[i] < 0x20 {
			return true
		}
	}
	return false
}
