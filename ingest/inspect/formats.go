package inspect

import (
	"bytes"
	"os"

	"github.com/gymlens/gymlens/ingest/runlog"
)

// KindLog is an Inspect log, .eval or .json, registered with the run-log
// reader's discovery.
var KindLog = runlog.RegisterFormat(runlog.Format{Name: "inspect_log", Describe: "Inspect AI logs *.eval and *.json"})

func init() {
	runlog.RegisterDetector(runlog.Detector{Extensions: []string{".eval"}, Large: true, Detect: func(path string) runlog.Kind {
		if isZip(path) {
			return KindLog
		}
		return runlog.KindUnknown
	}})
	runlog.RegisterDetector(runlog.Detector{Extensions: []string{".json"}, Large: true, Detect: func(path string) runlog.Kind {
		if isJSONLog(path) {
			return KindLog
		}
		return runlog.KindUnknown
	}})
}

// isZip says whether a file starts with a zip entry's header, as every
// .eval does.
func isZip(path string) bool {
	head := peekFile(path, 4)
	return bytes.Equal(head, []byte("PK\x03\x04"))
}

// isJSONLog says whether a .json file is an Inspect log: an object whose
// first member is "version" and which has an "eval" section near its
// start (Inspect writes version, status, eval, plan, … in that order).
func isJSONLog(path string) bool {
	head := bytes.TrimLeft(peekFile(path, 8192), " \t\r\n")
	if len(head) == 0 || head[0] != '{' {
		return false
	}
	rest := bytes.TrimLeft(head[1:], " \t\r\n")
	return bytes.HasPrefix(rest, []byte(`"version"`)) && bytes.Contains(head, []byte(`"eval"`))
}

func peekFile(path string, n int) []byte {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	b := make([]byte, n)
	k, _ := f.Read(b)
	return b[:k]
}
