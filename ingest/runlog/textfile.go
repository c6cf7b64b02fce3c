package runlog

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
)

// bom is the UTF-8 byte order mark, which Excel and some Windows tools
// write at the start of CSV and JSON files.
var bom = []byte("\ufeff")

// StripBOM is b without a leading UTF-8 byte order mark.
func StripBOM(b []byte) []byte { return bytes.TrimPrefix(b, bom) }

// SkipBOM reads r without a leading UTF-8 byte order mark.
func SkipBOM(r io.Reader) io.Reader {
	br := bufio.NewReaderSize(r, 64<<10)
	if b, err := br.Peek(3); err == nil && bytes.Equal(b, bom) {
		br.Discard(3)
	}
	return br
}

// MaxWholeFile bounds the files gymlens reads whole rather than as a
// stream — scenario specs, and the files of formats read whole (traces, result files) —
// so that memory stays bounded: a larger one is refused with a message.
// Record streams (JSONL) and CSV files have no such limit.
const MaxWholeFile = 256 << 20

// ReadWhole reads a file that is read whole, without a BOM, refusing one
// over MaxWholeFile or one that is not a regular file.
func ReadWhole(path string) ([]byte, error) {
	f, err := OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, &Error{File: path, Msg: "cannot read: " + err.Error()}
	}
	if st.Size() > MaxWholeFile {
		return nil, &Error{File: path, Msg: fmt.Sprintf("%d MB: gymlens reads a file of this kind whole and takes at most %d MB; split it (record streams, *.jsonl, have no limit)",
			st.Size()>>20, MaxWholeFile>>20)}
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxWholeFile+1))
	if err != nil {
		return nil, &Error{File: path, Msg: "cannot read: " + err.Error()}
	}
	return StripBOM(b), nil
}

// OpenRegular opens a regular file (following symbolic links); anything
// else — a FIFO, a device, a socket — is refused, since reading it could
// hang or never end.
func OpenRegular(path string) (*os.File, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, &Error{File: path, Msg: "cannot read: " + unwrapPathError(err)}
	}
	if !st.Mode().IsRegular() {
		return nil, &Error{File: path, Msg: "not a regular file (" + fileType(st.Mode()) + "): gymlens reads files and folders"}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, &Error{File: path, Msg: "cannot read: " + unwrapPathError(err)}
	}
	return f, nil
}

func fileType(m os.FileMode) string {
	switch {
	case m&os.ModeNamedPipe != 0:
		return "a named pipe"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeDevice != 0:
		return "a device"
	case m.IsDir():
		return "a folder"
	}
	return "not a plain file"
}

func unwrapPathError(err error) string {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err.Error()
	}
	return err.Error()
}
