package analysis

import (
	"strings"
	"testing"
)

// Names come out NFC; control, format, private-use and unassigned
// characters, line separators, surrounding spaces, long names and bytes
// that are not UTF-8 are refused with the reason.
func TestAnnotatorName(t *testing.T) {
	good := map[string]string{
		"alice":                 "alice",
		"Jose\u0301":            "Jos\u00e9",
		"Jos\u00e9":             "Jos\u00e9",
		"Ana María":             "Ana María",
		"李 雷":                   "李 雷",
		"o'brien-2":             "o'brien-2",
		"\u212b":                "\u00c5", // the angstrom sign is Å
		strings.Repeat("a", 64): strings.Repeat("a", 64),
	}
	for in, want := range good {
		got, err := AnnotatorName(in)
		if err != nil || got != want {
			t.Errorf("%+q: %+q %v, want %+q", in, got, err, want)
		}
	}
	bad := map[string]string{
		"":                      "give a name",
		"   ":                   "give a name",
		" alice":                "surrounding spaces",
		"alice\t":               "surrounding spaces",
		"alice\u3000":           "surrounding spaces",
		"ali\u0007ce":           "U+0007",
		"ali\u200dce":           "U+200D",  // zero-width joiner (Cf)
		"ali\u200bce":           "U+200B",  // zero-width space (Cf)
		"alice\u202e":           "U+202E",  // right-to-left override (Cf)
		"ali\u00adce":           "U+00AD",  // soft hyphen (Cf)
		"\ufeffalice":           "U+FEFF",  // byte-order mark (Cf)
		"ali\ue000ce":           "U+E000",  // private use (Co)
		"ali\U000e0001ce":       "U+E0001", // language tag (Cf)
		"al\u2028ice":           "U+2028",  // line separator (Zl)
		"ali\U0010fffdce":       "U+10FFFD",
		"ali\xffce":             "not UTF-8",
		strings.Repeat("é", 33): "at most 64 bytes",
	}
	for in, want := range bad {
		got, err := AnnotatorName(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%+q: %+q %v, want an error with %q", in, got, err, want)
		}
	}
}
