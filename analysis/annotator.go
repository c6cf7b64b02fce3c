package analysis

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// MaxAnnotatorBytes bounds an annotator's name (in UTF-8, after NFC).
const MaxAnnotatorBytes = 64

// AnnotatorName is an annotator's name as stored: name in Unicode's
// normalization form C, so that one name typed composed (é) or decomposed
// (e + ◌́) is one annotator. It refuses a name that is empty, longer than
// MaxAnnotatorBytes, not UTF-8, begins or ends with white space, or holds
// a character that is not a letter, mark, number, punctuation, symbol or
// space separator: control (Cc), format (Cf: zero-width joiners,
// bidirectional overrides, soft hyphens), private-use (Co) and unassigned
// code points, and line and paragraph separators (Zl, Zp).
func AnnotatorName(name string) (string, error) {
	if !utf8.ValidString(name) {
		return "", Optionf("annotator %+q: not UTF-8 text", name)
	}
	if strings.TrimSpace(name) == "" {
		return "", Optionf("annotator: give a name")
	}
	n := norm.NFC.String(name)
	if len(n) > MaxAnnotatorBytes {
		return "", Optionf("annotator %q: at most %d bytes of text (found %d)", n, MaxAnnotatorBytes, len(n))
	}
	first, _ := utf8.DecodeRuneInString(n)
	last, _ := utf8.DecodeLastRuneInString(n)
	if unicode.IsSpace(first) || unicode.IsSpace(last) {
		return "", Optionf("annotator %q: a name without surrounding spaces", n)
	}
	for i, r := range n {
		if !unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Zs) {
			return "", Optionf("annotator %+q: character %U at byte %d is a control, format, private-use or unassigned character or a line separator (not allowed in a name)", n, r, i)
		}
	}
	return n, nil
}
