package reports

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// A manifest that lists one file twice is refused before any file is
// hashed, naming both places.
func TestVerifyRefusesAFileListedTwice(t *testing.T) {
	dir, _ := tinyReport(t)
	p := filepath.Join(dir, "manifest.json")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	// The first entry of files, given again right after itself.
	loc := regexp.MustCompile(`(?s)"files": \[\s*(\{[^}]*\})`).FindSubmatchIndex(b)
	if loc == nil {
		t.Fatal("no files in the manifest")
	}
	entry := b[loc[2]:loc[3]]
	b = append(b[:loc[3]:loc[3]], append(append([]byte(", "), entry...), b[loc[3]:]...)...)
	if !bytes.Contains(b, append(append(append([]byte{}, entry...), ", "...), entry...)) {
		t.Fatal("the entry was not repeated")
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadManifest(dir); err == nil || !strings.Contains(err.Error(), "files[1].path") || !strings.Contains(err.Error(), "as files[0]") {
		t.Errorf("%v", err)
	}
}
