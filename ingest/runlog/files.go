package runlog

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/valyala/fastjson"
	"go.yaml.in/yaml/v3"
)

// Kind is what a file holds: one of the run-log format's own kinds, or a
// kind another format registered (RegisterFormat).
type Kind int

const (
	KindUnknown  Kind = iota
	KindJSONL         // a stream of records, maybe compressed
	KindScenario      // one scenario spec in JSON or YAML
	KindRatings       // human ratings in CSV
	builtinKinds
)

func (k Kind) String() string {
	if k < builtinKinds {
		return [...]string{"unknown", "jsonl", "scenario", "ratings"}[k]
	}
	if i := int(k - builtinKinds); i < len(formats) {
		return formats[i].Name
	}
	return "unknown"
}

// Format is a kind of input file that another package reads (a driver,
// such as ingest/pare): it registers once, and Discover gives its files
// the Kind RegisterFormat returned, as its Detector says.
type Format struct {
	Name string // the kind's name, as Kind.String gives it
	// Describe, when not empty, is how a message listing what gymlens reads
	// names the format's files.
	Describe string
}

// Detector tells a driver's files: for a file whose name ends with one of
// Extensions (lower case, ".json"), Detect returns the Kind it is (a
// registered format's) or KindUnknown; it may peek at the contents.
// Detectors are asked in registration order, before the run-log format's
// own kinds.
type Detector struct {
	Extensions []string
	Detect     func(path string) Kind
	// Large: Detect only peeks at the file and the driver streams it, so
	// it is asked about whole-document files (*.json) past MaxWholeFile
	// too; the other detectors are not.
	Large bool
}

var (
	formats   []Format
	detectors []Detector
)

// RegisterFormat adds a kind of file and returns its Kind; RegisterDetector
// says which files are of it. Call them from package initialisation: the
// registry is not safe for use while Discover runs.
func RegisterFormat(f Format) Kind {
	formats = append(formats, f)
	return builtinKinds + Kind(len(formats)-1)
}

// RegisterDetector adds a detector (see Detector).
func RegisterDetector(d Detector) { detectors = append(detectors, d) }

// File is one input file found by Discover.
type File struct {
	Path string
	Kind Kind
	Size int64
	// leadsWithRuns: the stream's first record is a scenario or a run.
	// Such streams are read first, so that by the time judgments and
	// ratings name a run, its scenario is usually known and references
	// are settled at once instead of being remembered to the end.
	leadsWithRuns bool
}

// leadsWithRuns peeks at the first record of a stream.
func leadsWithRuns(path string) bool {
	r, err := OpenStream(path, nil)
	if err != nil {
		return false
	}
	defer r.Close()
	br := bufio.NewReaderSize(r, 64<<10)
	for range 8 {
		line, err := br.ReadSlice('\n')
		if t := bytes.TrimSpace(line); len(t) > 0 {
			v, perr := fastjson.ParseBytes(t)
			if perr != nil {
				return false
			}
			typ := string(v.GetStringBytes("type"))
			return typ == TypeRun || typ == TypeScenario
		}
		if err != nil {
			return false
		}
	}
	return false
}

// Skipped is a file found in a folder that Discover does not read, with why.
type Skipped struct {
	Path, Reason string
}

// ratingColumns are the columns a ratings CSV may have; others are kept.
var ratingColumns = []string{"rater", "question", "value", "run_id", "task", "item", "day", "condition"}

// Discover expands paths (files and folders, walked recursively) into the
// files to read, in a stable order: scenario specs first, then record
// streams, then ratings, each sorted by path. A file named on the command
// line that is not in a known format is an error; one found in a folder is
// reported in skipped. A folder with no known files is an error.
func Discover(paths []string) (files []File, skipped []Skipped, err error) {
	seen := map[string]bool{}
	add := func(path string, size int64, explicit bool) error {
		abs, _ := filepath.Abs(path)
		if seen[abs] {
			return nil
		}
		seen[abs] = true
		kind, why := classify(path)
		if kind == KindUnknown {
			if explicit {
				return &Error{File: path, Msg: "not a file gymlens reads: " + why}
			}
			skipped = append(skipped, Skipped{Path: path, Reason: why})
			return nil
		}
		files = append(files, File{Path: path, Kind: kind, Size: size})
		return nil
	}
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, nil, &Error{File: p, Msg: "cannot read: " + errors.Unwrap(err).Error()}
		}
		if !st.IsDir() {
			if !st.Mode().IsRegular() {
				return nil, nil, &Error{File: p, Msg: "not a regular file (" + fileType(st.Mode()) + "): gymlens reads files and folders"}
			}
			if err := add(p, st.Size(), true); err != nil {
				return nil, nil, err
			}
			continue
		}
		before := len(files)
		if err := walk(p, p, map[string]bool{}, func(path string, size int64) error { return add(path, size, false) },
			func(path, why string) { skipped = append(skipped, Skipped{Path: path, Reason: why}) }); err != nil {
			return nil, nil, err
		}
		if len(files) == before {
			return nil, nil, &Error{File: p, Msg: "folder holds no file gymlens reads (" + readable() + ")"}
		}
	}
	for i := range files {
		if files[i].Kind == KindJSONL {
			files[i].leadsWithRuns = leadsWithRuns(files[i].Path)
		}
	}
	slices.SortStableFunc(files, func(a, b File) int {
		if a.Kind != b.Kind {
			return kindOrder(a.Kind) - kindOrder(b.Kind)
		}
		if a.leadsWithRuns != b.leadsWithRuns {
			if a.leadsWithRuns {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Path, b.Path)
	})
	return files, skipped, nil
}

// walk visits the files below dir in name order, following symbolic links
// to files and folders (a folder reached again through a link is visited
// once: no loop); names starting with a dot are passed over. A broken
// link or anything that is not a regular file (a FIFO, a socket, a
// device) is reported through skip, never read: reading a FIFO blocks.
func walk(root, dir string, visited map[string]bool, file func(path string, size int64) error, skip func(path, why string)) error {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return &Error{File: dir, Msg: "cannot read: " + unwrapPathError(err)}
	}
	if visited[real] {
		skip(dir, "a link to a folder already read (a loop)")
		return nil
	}
	visited[real] = true
	entries, err := os.ReadDir(dir)
	if err != nil {
		return &Error{File: dir, Msg: "cannot read: " + unwrapPathError(err)}
	}
	for _, d := range entries {
		path := filepath.Join(dir, d.Name())
		if strings.HasPrefix(d.Name(), ".") {
			continue
		}
		st, err := os.Stat(path) // follows links
		if err != nil {
			skip(path, "a broken symbolic link: "+unwrapPathError(err))
			continue
		}
		switch {
		case st.IsDir():
			if err := walk(root, path, visited, file, skip); err != nil {
				return err
			}
		case st.Mode().IsRegular():
			if err := file(path, st.Size()); err != nil {
				return err
			}
		default:
			skip(path, "not a regular file ("+fileType(st.Mode())+")")
		}
	}
	return nil
}

func kindOrder(k Kind) int {
	switch k {
	case KindScenario:
		return 0
	case KindJSONL:
		return 1
	}
	return 2
}

func classify(path string) (Kind, string) {
	name := strings.ToLower(filepath.Base(path))
	whole := strings.HasSuffix(name, ".json") || strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".yml")
	tooLarge := ""
	if whole {
		if st, err := os.Stat(path); err == nil && st.Size() > MaxWholeFile {
			tooLarge = fmt.Sprintf("%d MB: gymlens reads scenario specs, traces and result files whole and takes at most %d MB; split it (record streams, *.jsonl, have no limit)",
				st.Size()>>20, MaxWholeFile>>20)
		}
	}
	for _, d := range detectors {
		if tooLarge != "" && !d.Large {
			continue
		}
		for _, ext := range d.Extensions {
			if strings.HasSuffix(name, ext) {
				if k := d.Detect(path); k != KindUnknown {
					return k, ""
				}
				break
			}
		}
	}
	if tooLarge != "" {
		return KindUnknown, tooLarge
	}
	switch {
	case strings.HasSuffix(name, ".jsonl"), strings.HasSuffix(name, ".jsonl.gz"), strings.HasSuffix(name, ".jsonl.zst"):
		return KindJSONL, ""
	case whole:
		if isScenarioFile(path) {
			return KindScenario, ""
		}
		return KindUnknown, `its top level has no "type": "scenario"`
	case strings.HasSuffix(name, ".csv"):
		if isRatingsCSV(path) {
			return KindRatings, ""
		}
		return KindUnknown, "its header does not name rater, question and value"
	}
	return KindUnknown, "unknown file extension"
}

// readable lists what Discover reads, for a message.
func readable() string {
	s := "*.jsonl, *.jsonl.gz, *.jsonl.zst, scenario *.json/*.yaml/*.yml, ratings *.csv"
	for _, f := range formats {
		if f.Describe != "" {
			s += ", " + f.Describe
		}
	}
	return s
}

func isScenarioFile(path string) bool {
	b, err := ReadWhole(path)
	if err != nil {
		return true // let the reader report the error
	}
	var top struct {
		Type string `yaml:"type"`
	}
	if yaml.Unmarshal(b, &top) != nil {
		// Not parseable: a file named *.yaml that cannot be read at all is
		// reported when read, not skipped.
		return true
	}
	return top.Type == TypeScenario
}

func isRatingsCSV(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return true
	}
	defer f.Close()
	head, err := CSVHeader(f)
	if err != nil {
		return true
	}
	for _, c := range []string{"rater", "question", "value"} {
		if !slices.Contains(head, c) {
			return false
		}
	}
	return true
}

// MaxCSVColumns bounds the columns of a ratings CSV (it has eight of its
// own; the rest are kept as JSON).
const MaxCSVColumns = 1024

// unneutralise takes off the apostrophe that reports.SpreadsheetSafe puts
// before a cell a spreadsheet would run as a formula, so that an
// annotation sheet ingests with the values it was made from.
func unneutralise(s string) string {
	if len(s) > 1 && s[0] == '\'' && strings.IndexByte("=+-@\t\r", s[1]) >= 0 {
		return s[1:]
	}
	return s
}

// CSVHeader reads the first record of a CSV file, without a BOM, its names
// trimmed.
func CSVHeader(r io.Reader) ([]string, error) {
	head, err := csv.NewReader(SkipBOM(r)).Read()
	for i := range head {
		head[i] = strings.TrimSpace(head[i])
	}
	return head, err
}

// CheckHeader refuses a CSV header that names a column twice (one of the
// two would be dropped).
func CheckHeader(path string, head []string) *Error {
	seen := map[string]int{}
	for i, h := range head {
		if h == "" {
			continue
		}
		if j, dup := seen[h]; dup {
			return &Error{File: path, Line: 1, Field: h, Msg: fmt.Sprintf("the header names this column twice (columns %d and %d)", j+1, i+1)}
		}
		seen[h] = i
	}
	return nil
}

// countingReader counts the bytes read from the underlying file; the
// count is read by another goroutine (progress), hence atomic.
type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// OpenStream opens a record stream, decompressing .gz and .zst. read, when
// not nil, counts the compressed bytes read from disk.
func OpenStream(path string, read *atomic.Int64) (io.ReadCloser, error) {
	f, err := OpenRegular(path)
	if err != nil {
		return nil, err
	}
	var r io.Reader = f
	if read != nil {
		r = countingReader{r: f, n: read}
	}
	name := strings.ToLower(path)
	switch {
	case strings.HasSuffix(name, ".gz"):
		gz, err := gzip.NewReader(bufio.NewReaderSize(r, 256<<10))
		if err != nil {
			f.Close()
			return nil, &Error{File: path, Msg: "not a valid gzip file: " + err.Error()}
		}
		return struct {
			io.Reader
			io.Closer
		}{SkipBOM(gz), f}, nil
	case strings.HasSuffix(name, ".zst"):
		zr, err := zstd.NewReader(bufio.NewReaderSize(r, 256<<10), zstd.WithDecoderConcurrency(1))
		if err != nil {
			f.Close()
			return nil, &Error{File: path, Msg: "not a valid zstd file: " + err.Error()}
		}
		return struct {
			io.Reader
			io.Closer
		}{SkipBOM(zr), closerFunc(func() error { zr.Close(); return f.Close() })}, nil
	}
	return struct {
		io.Reader
		io.Closer
	}{SkipBOM(r), f}, nil
}

type closerFunc func() error

func (c closerFunc) Close() error { return c() }

// ReadScenarioFile reads a hand-written scenario spec in JSON or YAML.
// Errors name the line of the offending field.
func ReadScenarioFile(path string) (*Scenario, []byte, error) {
	b, err := ReadWhole(path)
	if err != nil {
		return nil, nil, err
	}
	if len(b) > MaxScenarioFile {
		// Parsed into a YAML tree, a spec takes many times its size.
		return nil, nil, &Error{File: path, Msg: fmt.Sprintf("%d MB: a scenario spec may hold at most %d MB (specs are kilobytes; is this a scenario?)", len(b)>>20, MaxScenarioFile>>20)}
	}
	if strings.HasSuffix(strings.ToLower(path), ".json") {
		if err := CheckJSON(b); err != nil {
			return nil, nil, At(path, b, err)
		}
	}
	if !utf8.Valid(b) {
		off := 0
		for off < len(b) {
			r, n := utf8.DecodeRune(b[off:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			off += n
		}
		line, col := Position(b, off)
		return nil, nil, &Error{File: path, Line: line, Column: col, Msg: fmt.Sprintf("invalid UTF-8: expected text encoded as UTF-8, found byte 0x%x", b[off])}
	}
	var root yaml.Node
	if err := yaml.Unmarshal(b, &root); err != nil {
		line := 0
		var te *yaml.TypeError
		if !errors.As(err, &te) {
			fmt.Sscanf(strings.TrimPrefix(err.Error(), "yaml: "), "line %d:", &line)
		}
		return nil, nil, &Error{File: path, Line: line, Msg: "not valid YAML or JSON: " + err.Error()}
	}
	if len(root.Content) == 0 {
		return nil, nil, &Error{File: path, Msg: "empty scenario file"}
	}
	lines := map[string]int{}
	budget := maxYAMLValues
	js, err := yamlToJSON(root.Content[0], "", lines, nil, &budget)
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			e.File = path
			return nil, nil, e
		}
		return nil, nil, &Error{File: path, Msg: err.Error()}
	}
	v, err := fastjson.ParseBytes(js)
	if err != nil {
		return nil, nil, &Error{File: path, Msg: "cannot convert the YAML to JSON (a gymlens bug: please report it): " + shorten(err.Error(), 160)}
	}
	rec, err := DecodeValue(v)
	if err != nil {
		e := Locate(err, path, 0, nil)
		e.Line = lineOfPath(lines, e.Field)
		return nil, nil, e
	}
	s, ok := rec.(*Scenario)
	if !ok {
		return nil, nil, &Error{File: path, Field: "type", Expected: `"scenario"`, Found: strconv.Quote(rec.RecordType())}
	}
	s.IDLine = lines["scenario"]
	return s, js, nil
}

func lineOfPath(lines map[string]int, field string) int {
	for f := field; f != ""; {
		if l, ok := lines[f]; ok {
			return l
		}
		i := strings.LastIndexAny(f, ".[")
		if i < 0 {
			break
		}
		f = f[:i]
	}
	return lines[""]
}

// yamlToJSON converts a YAML node to JSON, recording the line of each path.
// MaxScenarioFile bounds a scenario spec file.
const MaxScenarioFile = 16 << 20

// maxYAMLValues bounds the values a scenario spec may expand to: a few
// kilobytes of nested aliases (a "billion laughs") would otherwise expand
// to gigabytes.
const maxYAMLValues = 200_000

func yamlToJSON(n *yaml.Node, path string, lines map[string]int, out []byte, budget *int) ([]byte, error) {
	if *budget--; *budget < 0 {
		return nil, &Error{Line: n.Line, Field: path, Msg: fmt.Sprintf("the YAML expands to more than %d values through its aliases (*name): an alias bomb? Write the values out, or use fewer aliases", maxYAMLValues)}
	}
	lines[path] = n.Line
	switch n.Kind {
	case yaml.AliasNode:
		return yamlToJSON(n.Alias, path, lines, out, budget)
	case yaml.MappingNode:
		out = append(out, '{')
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode {
				return nil, &Error{Line: k.Line, Field: path, Msg: "a key must be a plain string"}
			}
			if i > 0 {
				out = append(out, ',')
			}
			out = strconv.AppendQuote(out, k.Value)
			out = append(out, ':')
			p := k.Value
			if path != "" {
				p = path + "." + k.Value
			}
			var err error
			if out, err = yamlToJSON(n.Content[i+1], p, lines, out, budget); err != nil {
				return nil, err
			}
			lines[p] = k.Line
		}
		return append(out, '}'), nil
	case yaml.SequenceNode:
		out = append(out, '[')
		for i, c := range n.Content {
			if i > 0 {
				out = append(out, ',')
			}
			var err error
			if out, err = yamlToJSON(c, fmt.Sprintf("%s[%d]", path, i), lines, out, budget); err != nil {
				return nil, err
			}
		}
		return append(out, ']'), nil
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!null":
			return append(out, "null"...), nil
		case "!!bool":
			var b bool
			if err := n.Decode(&b); err != nil {
				return nil, &Error{Line: n.Line, Field: path, Msg: err.Error()}
			}
			return strconv.AppendBool(out, b), nil
		case "!!int", "!!float":
			var f float64
			if err := n.Decode(&f); err != nil {
				return nil, &Error{Line: n.Line, Field: path, Msg: err.Error()}
			}
			if n.ShortTag() == "!!int" {
				var i int64
				if err := n.Decode(&i); err == nil {
					return strconv.AppendInt(out, i, 10), nil
				}
			}
			if math.IsInf(f, 0) || math.IsNaN(f) {
				return nil, &Error{Line: n.Line, Field: path, Expected: "a finite number", Found: n.Value}
			}
			return strconv.AppendFloat(out, f, 'g', -1, 64), nil
		default:
			return strconv.AppendQuote(out, n.Value), nil
		}
	}
	return append(out, "null"...), nil
}

// ReadRatingsCSV reads a ratings CSV and calls fn with each rating and its
// line. Errors name the line and the column.
// A row that does not validate is passed to fn with rowErr set and g nil;
// a malformed CSV file stops the read with an error.
// row is the staging CSV row of the rating (see CSVColumns).
func ReadRatingsCSV(path string, fileID int, fn func(line int, g *Rating, raw, row []byte, rowErr *Error) error) error {
	f, err := OpenRegular(path)
	if err != nil {
		return err
	}
	defer f.Close()
	cr := csv.NewReader(SkipBOM(f))
	cr.ReuseRecord = true
	head, err := cr.Read()
	if err == io.EOF {
		return nil
	}
	if err != nil {
		return csvError(path, err)
	}
	var dec Decoder
	var rowBuf []byte
	head = slices.Clone(head)
	for i := range head {
		head[i] = strings.TrimSpace(strings.TrimPrefix(head[i], "\ufeff"))
	}
	if len(head) > MaxCSVColumns {
		return &Error{File: path, Line: 1, Msg: fmt.Sprintf("%d columns: a ratings CSV may have at most %d", len(head), MaxCSVColumns)}
	}
	if e := CheckHeader(path, head); e != nil {
		return e
	}
	for _, c := range []string{"rater", "question", "value"} {
		if !slices.Contains(head, c) {
			return &Error{File: path, Line: 1, Field: c, Msg: "required column is missing from the header"}
		}
	}
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return csvError(path, err)
		}
		line, _ := cr.FieldPos(0)
		for i, v := range rec {
			if len(v) > DefaultMaxLine {
				_, col := cr.FieldPos(i)
				return &Error{File: path, Line: line, Column: col, Field: head[i], Msg: fmt.Sprintf("a cell longer than the %d MiB limit", DefaultMaxLine>>20)}
			}
		}
		var rowErr *Error
		obj := []byte(`{"type":"rating"`)
		for i, c := range head {
			v := unneutralise(rec[i])
			if v == "" {
				continue
			}
			obj = append(obj, ',')
			obj = strconv.AppendQuote(obj, c)
			obj = append(obj, ':')
			if c == "value" || c == "day" {
				if !IsJSONNumber(v) {
					want := "a number (JSON's grammar)"
					if c == "day" {
						want = "an integer"
					}
					_, col := cr.FieldPos(i)
					rowErr = &Error{File: path, Line: line, Column: col, Field: c, Expected: want, Found: strconv.Quote(v)}
					break
				}
				obj = append(obj, v...)
			} else {
				obj = strconv.AppendQuote(obj, v)
			}
		}
		obj = append(obj, '}')
		var g *Rating
		var row []byte
		if rowErr == nil {
			r, err := dec.DecodeLine(obj)
			if err != nil {
				rowErr = Locate(err, path, line, nil)
				if i := slices.Index(head, rowErr.Field); i >= 0 {
					_, rowErr.Column = cr.FieldPos(i)
				}
			} else {
				g = r.(*Rating)
				row = dec.AppendCSV(rowBuf[:0], g, fileID, line)
				rowBuf = row
			}
		}
		if err := fn(line, g, obj, row, rowErr); err != nil {
			return err
		}
	}
}

func csvError(path string, err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return &Error{File: path, Line: pe.Line, Column: pe.Column, Msg: "malformed CSV: " + pe.Err.Error()}
	}
	return &Error{File: path, Msg: "cannot read: " + err.Error()}
}
