package runlog

import (
	"fmt"
	"strings"
)

// Error is one problem found in the input. It names where the problem is
// (file, line, column when known), which field, what was expected and what
// was found, so that a user can fix the file without guessing.
type Error struct {
	File     string
	Line     int // 1-based; 0 when the problem concerns the whole file or input
	Column   int // 1-based byte column; 0 when unknown
	Field    string
	Expected string
	Found    string
	Msg      string // used instead of Expected/Found when set
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
		if e.Column > 0 {
			fmt.Fprintf(&b, ":%d", e.Column)
		}
	}
	b.WriteString(": ")
	if e.Field != "" {
		fmt.Fprintf(&b, "field %q: ", e.Field)
	}
	if e.Msg != "" {
		b.WriteString(e.Msg)
	} else {
		fmt.Fprintf(&b, "expected %s, found %s", e.Expected, e.Found)
	}
	return b.String()
}

// fieldError is what a decoder returns before it knows the file and line.
type fieldError struct {
	field    string
	expected string
	found    string
	msg      string
}

func (e *fieldError) Error() string {
	if e.msg != "" {
		return fmt.Sprintf("field %q: %s", e.field, e.msg)
	}
	return fmt.Sprintf("field %q: expected %s, found %s", e.field, e.expected, e.found)
}

// Locate turns a decoding error into an Error at file:line. line is the raw
// line, used to find the column of the offending field.
func Locate(err error, file string, lineNo int, line []byte) *Error {
	switch e := err.(type) {
	case *Error:
		if e.File == "" {
			e.File = file
		}
		if e.Line == 0 {
			e.Line = lineNo
		}
		return e
	case *fieldError:
		return &Error{File: file, Line: lineNo, Column: columnOf(line, e.field), Field: e.field, Expected: e.expected, Found: e.found, Msg: e.msg}
	default:
		return &Error{File: file, Line: lineNo, Msg: err.Error()}
	}
}

// columnOf finds the 1-based byte column of the last path element of field
// as a JSON key in line, or 0. It is a best effort: the key text may occur
// in an earlier string value, but that is rare in practice.
func columnOf(line []byte, field string) int {
	if field == "" || len(line) == 0 {
		return 0
	}
	key := field
	if i := strings.LastIndexAny(field, ".["); i >= 0 {
		key = strings.TrimSuffix(field[i+1:], "]")
	}
	if key == "" {
		return 0
	}
	i := strings.Index(string(line), `"`+key+`"`)
	if i < 0 {
		return 0
	}
	return i + 1
}

// ErrorList collects errors up to a limit and counts the rest.
type ErrorList struct {
	Max     int
	Errors  []*Error
	Dropped int
}

// Add records e; it reports whether the list is now full.
func (l *ErrorList) Add(e *Error) bool {
	if l.Max <= 0 || len(l.Errors) < l.Max {
		l.Errors = append(l.Errors, e)
	} else {
		l.Dropped++
	}
	return l.Full()
}

// Full reports whether no more errors will be kept.
func (l *ErrorList) Full() bool { return l.Max > 0 && len(l.Errors) >= l.Max }

// Len is the number of errors seen (kept and dropped).
func (l *ErrorList) Len() int { return len(l.Errors) + l.Dropped }

func (l *ErrorList) Error() string {
	var b strings.Builder
	for i, e := range l.Errors {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.Error())
	}
	if l.Dropped > 0 {
		fmt.Fprintf(&b, "\n… and %d more errors not shown (raise --max-errors to see them)", l.Dropped)
	}
	return b.String()
}
