package inspect

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/valyala/fastjson"
)

// scanner walks one JSON document as it is read, so that a sample's
// messages and events are taken one at a time: only one item (a
// message, an event, an attachment, a field of the sample) is ever held.
// It checks the structure between items (brackets, commas, colons) and
// copies each item's bytes; the items themselves are parsed by fastjson.
//
// Inspect writes NaN, Infinity and -Infinity (Python's json does): they
// are values here. Infinity is rewritten in place as "Inf     " (the same
// length), which fastjson reads as a number, as it reads NaN.
type scanner struct {
	r   *bufio.Reader
	off int64 // bytes consumed
	buf []byte
	// maxItem caps the bytes of one item.
	maxItem int64
	// nonFinite: the last item copied holds NaN or ±Infinity outside a
	// string.
	nonFinite bool
	parser    fastjson.Parser
}

// errSyntax is a structural error at an offset.
type syntaxError struct {
	off int64
	msg string
}

func (e *syntaxError) Error() string { return fmt.Sprintf("offset %d: %s", e.off, e.msg) }

func newScanner(r io.Reader, maxItem int64) *scanner {
	return &scanner{r: bufio.NewReaderSize(r, 256<<10), maxItem: maxItem}
}

func (s *scanner) errf(format string, a ...any) error {
	return &syntaxError{off: s.off, msg: fmt.Sprintf(format, a...)}
}

// eofErr turns an end of input inside a document into a syntax error.
func (s *scanner) eofErr(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return s.errf("the JSON ends too early (truncated?)")
	}
	return err
}

// peek returns the next byte that is not white space, without taking it.
func (s *scanner) peek() (byte, error) {
	for {
		c, err := s.r.ReadByte()
		if err != nil {
			return 0, s.eofErr(err)
		}
		switch c {
		case ' ', '\t', '\r', '\n':
			s.off++
			continue
		}
		s.r.UnreadByte()
		return c, nil
	}
}

func (s *scanner) expect(c byte) error {
	d, err := s.peek()
	if err != nil {
		return err
	}
	if d != c {
		return s.errf("expected %q, found %q", c, d)
	}
	s.r.ReadByte()
	s.off++
	return nil
}

// end checks that nothing but white space follows the document.
func (s *scanner) end() error {
	_, err := s.peek()
	if err == nil {
		return s.errf("more follows the JSON document")
	}
	var se *syntaxError
	if errors.As(err, &se) {
		return nil // end of input
	}
	return err
}

// members calls fn for each member of the object that comes next; fn
// must take the member's value (raw, skip, elements or members).
func (s *scanner) members(fn func(key string) error) error {
	if err := s.expect('{'); err != nil {
		return err
	}
	c, err := s.peek()
	if err != nil {
		return err
	}
	if c == '}' {
		s.r.ReadByte()
		s.off++
		return nil
	}
	for {
		if c, err = s.peek(); err != nil {
			return err
		}
		if c != '"' {
			return s.errf("expected a member name, found %q", c)
		}
		raw, err := s.copyValue(64 << 10)
		if err != nil {
			return err
		}
		key, err := unquote(raw)
		if err != nil {
			return s.errf("member name: %v", err)
		}
		if err := s.expect(':'); err != nil {
			return err
		}
		if err := fn(key); err != nil {
			return err
		}
		if done, err := s.after('}', "a member"); done || err != nil {
			return err
		}
	}
}

// after takes the byte after a member or an element: ',' when more
// follow, close after the last (done); what names them in an error.
func (s *scanner) after(close byte, what string) (done bool, err error) {
	c, err := s.peek()
	if err != nil {
		return false, err
	}
	s.r.ReadByte()
	s.off++
	switch c {
	case ',':
		return false, nil
	case close:
		return true, nil
	}
	return false, s.errf("expected ',' or '%c' after %s, found %q", close, what, c)
}

// elements calls fn for each element of the array that comes next (with
// its index); fn must take the element. A null is an empty array.
func (s *scanner) elements(fn func(i int) error) error {
	c, err := s.peek()
	if err != nil {
		return err
	}
	if c == 'n' {
		_, err := s.raw()
		return err
	}
	if err := s.expect('['); err != nil {
		return err
	}
	if c, err = s.peek(); err != nil {
		return err
	}
	if c == ']' {
		s.r.ReadByte()
		s.off++
		return nil
	}
	for i := 0; ; i++ {
		if err := fn(i); err != nil {
			return err
		}
		if done, err := s.after(']', "an element"); done || err != nil {
			return err
		}
	}
}

// isObject says whether the next value is an object.
func (s *scanner) isObject() (bool, error) {
	c, err := s.peek()
	return c == '{', err
}

// raw copies the next value (at most maxItem bytes); the slice is valid
// until the next call.
func (s *scanner) raw() ([]byte, error) { return s.copyValue(s.maxItem) }

// skip passes over the next value, keeping none of it.
func (s *scanner) skip() error {
	_, err := s.walkValue(-1, s.maxItem)
	return err
}

func (s *scanner) copyValue(limit int64) ([]byte, error) {
	s.buf = s.buf[:0]
	if _, err := s.walkValue(0, limit); err != nil {
		return nil, err
	}
	if s.nonFinite {
		rewriteInfinity(s.buf)
	}
	return s.buf, nil
}

// walkValue takes one value, appending its bytes to s.buf unless keep is
// -1, and returns its length. It follows strings and nesting only; the
// value's own syntax is checked when it is parsed.
func (s *scanner) walkValue(keep int, limit int64) (int64, error) {
	if _, err := s.peek(); err != nil {
		return 0, err
	}
	start := s.off
	s.nonFinite = false
	depth, inStr, esc, scalar := 0, false, false, false
	first := true
	for {
		if _, err := s.r.Peek(1); err != nil {
			if errors.Is(err, io.EOF) && scalar && depth == 0 {
				return s.off - start, nil // a scalar at the very end
			}
			return 0, s.eofErr(err)
		}
		chunk, _ := s.r.Peek(s.r.Buffered())
		i := 0
		done := false
		for ; i < len(chunk); i++ {
			c := chunk[i]
			if first {
				first = false
				switch {
				case c == '{' || c == '[':
					depth = 1
				case c == '"':
					inStr = true
				case c == '-' || c >= '0' && c <= '9' || c == 't' || c == 'f' || c == 'n':
					scalar = true
				case c == 'N' || c == 'I':
					scalar, s.nonFinite = true, true
				default:
					return 0, s.errf("expected a value, found %q", c)
				}
				continue
			}
			if inStr {
				if !esc && c != '"' && c != '\\' {
					// Jump to the next quote or backslash (IndexByte is
					// vectorised; strings are most of a log's bytes).
					rest := chunk[i:]
					q := bytes.IndexByte(rest, '"')
					if q < 0 {
						q = len(rest)
					}
					if b := bytes.IndexByte(rest[:q], '\\'); b >= 0 {
						q = b
					}
					i += q - 1
					continue
				}
				switch {
				case esc:
					esc = false
				case c == '\\':
					esc = true
				case c == '"':
					inStr = false
					if depth == 0 {
						i++
						done = true
					}
				}
				if done {
					break
				}
				continue
			}
			if scalar && depth == 0 {
				switch c {
				case ',', '}', ']', ' ', '\t', '\r', '\n', ':':
					done = true
				case 'N', 'I':
					s.nonFinite = true
				}
				if done {
					break
				}
				continue
			}
			switch c {
			case '"':
				inStr = true
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					i++
					done = true
				}
			case 'N', 'I':
				s.nonFinite = true
			}
			if done {
				break
			}
		}
		if keep >= 0 {
			s.buf = append(s.buf, chunk[:i]...)
		}
		s.r.Discard(i)
		s.off += int64(i)
		if s.off-start > limit {
			return 0, &syntaxError{off: start, msg: fmt.Sprintf("one value is larger than the cap of %d MiB on a single item", limit>>20)}
		}
		if done {
			return s.off - start, nil
		}
	}
}

// quoted follows JSON text byte by byte: next reports whether a byte is
// part of a string, its quotes included.
type quoted struct{ in, esc bool }

func (q *quoted) next(c byte) bool {
	switch {
	case q.esc:
		q.esc = false
	case q.in && c == '\\':
		q.esc = true
	case c == '"':
		q.in = !q.in
	default:
		return q.in
	}
	return true
}

// rewriteInfinity rewrites Infinity outside strings as "Inf     ", which
// fastjson reads as a number.
func rewriteInfinity(b []byte) {
	var q quoted
	for i := 0; i < len(b); i++ {
		if !q.next(b[i]) && b[i] == 'I' && bytes.HasPrefix(b[i:], []byte("Infinity")) {
			copy(b[i:], "Inf     ")
			i += 7
		}
	}
}

// storable is b as JSON a database takes: NaN and infinities outside
// strings become the strings "NaN", "Infinity" and "-Infinity" (b is
// fastjson-readable, with Infinity already rewritten).
func storable(b []byte, nonFinite bool) []byte {
	if !nonFinite {
		return b
	}
	out := make([]byte, 0, len(b)+16)
	var q quoted
	for i := 0; i < len(b); i++ {
		c := b[i]
		if !q.next(c) {
			switch {
			case bytes.HasPrefix(b[i:], []byte("NaN")):
				out = append(out, `"NaN"`...)
				i += 2
				continue
			case bytes.HasPrefix(b[i:], []byte("-Inf     ")):
				out = append(out, `"-Infinity"`...)
				i += 8
				continue
			case bytes.HasPrefix(b[i:], []byte("Inf     ")):
				out = append(out, `"Infinity"`...)
				i += 7
				continue
			}
		}
		out = append(out, c)
	}
	return out
}

// unquote reads a JSON string (a member name).
func unquote(raw []byte) (string, error) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", fmt.Errorf("not a string")
	}
	body := raw[1 : len(raw)-1]
	if bytes.IndexByte(body, '\\') < 0 {
		return string(body), nil
	}
	v, err := parseOne(raw)
	if err != nil {
		return "", err
	}
	b, err := v.StringBytes()
	if err != nil {
		return "", err
	}
	return strings.Clone(string(b)), nil
}
