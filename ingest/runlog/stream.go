package runlog

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"

	"github.com/zeebo/xxh3"
)

// DefaultMaxLine bounds one record's line: a longer line is an error, and
// memory stays bounded whatever the input holds.
const DefaultMaxLine = 16 << 20

// Item is one decoded line of a JSON Lines stream.
type Item struct {
	Line int    // 1-based line number
	Rec  Record // nil when Err is set
	Err  error  // a decoding error, already located at the line
	Hash uint64 // xxh3 of the raw line
	Raw  []byte // the raw line; valid only during the callback
	// Row is the staging CSV row of a bulk record (see CSVColumns), when
	// StreamOptions.Rows is set; valid only during the callback.
	Row []byte
}

// StreamOptions tunes DecodeStream.
type StreamOptions struct {
	File    string // used in error messages
	MaxLine int    // 0 means DefaultMaxLine
	Workers int    // 0 means GOMAXPROCS
	// OnBytes, when set, is called with the number of input bytes consumed.
	OnBytes func(n int)
	// Rows asks for the staging CSV row of each bulk record, ending with
	// FileID and the line number.
	Rows   bool
	FileID int
	// TypedEvents makes an event's Row its typed staging record
	// (AppendTyped) instead of its CSV row.
	TypedEvents bool
}

type chunk struct {
	buf   []byte
	rows  []byte
	ends  []int // end offset in rows of each line's row
	lines []Item
	done  chan struct{}
}

const chunkBytes = 256 << 10

// DecodeStream reads JSON Lines from r, decodes and validates the lines on
// several goroutines, and calls fn with the items of each chunk in input
// order. Blank lines are passed over. It returns the first error of the
// reader (an I/O or decompression error, with the line where it happened)
// or of fn; decoding errors go to fn as items.
func DecodeStream(ctx context.Context, r io.Reader, opt StreamOptions, fn func([]Item) error) error {
	if opt.MaxLine <= 0 {
		opt.MaxLine = DefaultMaxLine
	}
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	work := make(chan *chunk, workers*2)
	order := make(chan *chunk, workers*2)
	free := make(chan *chunk, workers*2+2)
	var readErr error
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var d Decoder
			for c := range work {
				c.rows = c.rows[:0]
				c.ends = c.ends[:0]
				for i := range c.lines {
					it := &c.lines[i]
					if it.Err == nil {
						it.Hash = xxh3.Hash(it.Raw)
						rec, err := d.DecodeLine(it.Raw)
						if err != nil {
							it.Err = Locate(err, opt.File, it.Line, it.Raw)
						} else {
							it.Rec = rec
							if ev, ok := rec.(*Event); ok && opt.Rows && opt.TypedEvents {
								c.rows = d.AppendTyped(c.rows, ev, opt.FileID, it.Line)
							} else if opt.Rows && Bulk(rec.RecordType()) {
								c.rows = d.AppendCSV(c.rows, rec, opt.FileID, it.Line)
							}
						}
					}
					c.ends = append(c.ends, len(c.rows))
				}
				start := 0
				for i := range c.lines {
					c.lines[i].Row = c.rows[start:c.ends[i]]
					start = c.ends[i]
				}
				close(c.done)
			}
		}()
	}

	go func() {
		defer close(work)
		defer close(order)
		readErr = readChunks(ctx, r, opt, free, func(c *chunk) bool {
			select {
			case work <- c:
			case <-ctx.Done():
				return false
			}
			select {
			case order <- c:
				return true
			case <-ctx.Done():
				return false
			}
		})
	}()

	var fnErr error
	for c := range order {
		select {
		case <-c.done:
		case <-ctx.Done():
		}
		if fnErr == nil && ctx.Err() == nil {
			if err := fn(c.lines); err != nil {
				fnErr = err
				cancel()
			}
		}
		select {
		case free <- c:
		default:
		}
	}
	wg.Wait()
	if fnErr != nil {
		return fnErr
	}
	if readErr != nil {
		return readErr
	}
	return ctx.Err()
}

// readChunks splits r into chunks of whole lines.
func readChunks(ctx context.Context, r io.Reader, opt StreamOptions, free chan *chunk, emit func(*chunk) bool) error {
	br := bufio.NewReaderSize(r, 256<<10)
	lineNo := 0
	var c *chunk
	newChunk := func() {
		select {
		case c = <-free:
			c.buf = c.buf[:0]
			c.lines = c.lines[:0]
		default:
			c = &chunk{buf: make([]byte, 0, chunkBytes+64<<10)}
		}
		c.done = make(chan struct{})
	}
	newChunk()
	flush := func() bool {
		if len(c.lines) == 0 {
			return true
		}
		// Raw slices point into buf; fix them now that buf no longer grows.
		off := 0
		for i := range c.lines {
			if c.lines[i].Err == nil {
				n := len(c.lines[i].Raw)
				c.lines[i].Raw = c.buf[off : off+n]
				off += n
			}
		}
		if !emit(c) {
			return false
		}
		newChunk()
		return true
	}
	for {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		line, err := br.ReadSlice('\n')
		tooLong := false
		if errors.Is(err, bufio.ErrBufferFull) {
			// A long line: gather it, up to the limit.
			long := append([]byte(nil), line...)
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = br.ReadSlice('\n')
				if len(long)+len(line) > opt.MaxLine {
					tooLong = true
				} else {
					long = append(long, line...)
				}
			}
			line = long
		}
		if len(line) > 0 {
			lineNo++
			if opt.OnBytes != nil {
				opt.OnBytes(len(line))
			}
			atEOF := err == io.EOF
			if err != nil && err != io.EOF {
				return &Error{File: opt.File, Line: lineNo, Msg: "cannot read: " + err.Error()}
			}
			body := bytes.TrimRight(line, "\r\n")
			if tooLong {
				c.lines = append(c.lines, Item{Line: lineNo, Err: &Error{File: opt.File, Line: lineNo,
					Msg: fmt.Sprintf("line longer than the %d MiB limit for one record", opt.MaxLine>>20)}})
			} else if len(bytes.TrimSpace(body)) > 0 {
				if atEOF && line[len(line)-1] != '\n' && !jsonLooksComplete(body) {
					c.lines = append(c.lines, Item{Line: lineNo, Err: &Error{File: opt.File, Line: lineNo,
						Msg: "truncated last line: the file ends in the middle of a record (no closing brace, no newline)"}})
				} else {
					start := len(c.buf)
					c.buf = append(c.buf, body...)
					c.lines = append(c.lines, Item{Line: lineNo, Raw: c.buf[start:len(c.buf):len(c.buf)]})
				}
			}
			if len(c.buf) >= chunkBytes || len(c.lines) >= 2048 {
				if !flush() {
					return ctx.Err()
				}
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return &Error{File: opt.File, Line: lineNo + 1, Msg: "cannot read: " + err.Error()}
		}
	}
	flush()
	return nil
}

// jsonLooksComplete is a cheap test for a last line cut short: a complete
// object ends with '}'.
func jsonLooksComplete(b []byte) bool {
	b = bytes.TrimSpace(b)
	return len(b) > 0 && b[len(b)-1] == '}'
}
