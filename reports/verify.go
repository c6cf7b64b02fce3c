package reports

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/gymlens/gymlens/analysis"
	"github.com/gymlens/gymlens/ingest/rows"
)

// Problem is one way a report folder is not what its manifest and its
// inputs say it should be: the file (relative to the report, or an
// input's path relative to the input root) and what is wrong.
type Problem struct {
	File string `json:"file"`
	What string `json:"what"`
}

func (p Problem) String() string { return p.File + ": " + p.What }

// MaxManifestBytes is the largest manifest.json verify reads; a larger
// one is refused by its size before anything of it is read. A manifest
// takes some 380 bytes per input beyond its fixed part: the sample's
// (116 inputs, 117 outputs) has 78 KB at any --scale, and 16 MiB holds
// some 44,000 inputs (a PARE corpus has one trace file per run;
// docs/outputs.md has the measurements).
const MaxManifestBytes = 16 << 20

// MaxManifestValues is the most JSON values (objects, arrays, keys,
// strings, numbers, literals) a manifest.json may hold, counted before it
// is decoded: a manifest gymlens writes has one in some 24 bytes (44,000
// inputs in 16 MiB have 670,000), while a million empty objects fit in
// 3 MB and decode to several hundred MB.
const MaxManifestValues = 1 << 20

// The first maxNamed entries a folder must not hold are named; the rest
// are counted.
const maxNamed = 20

// CheckTree refuses a report folder that holds anything but folders and
// regular files: a symbolic link (to a file or a folder, inside or out)
// is never followed, and a named pipe, socket or device never opened
// (opening a pipe waits for a writer). The error names each by its path
// relative to dir. dir itself may be a link: the user named it.
func CheckTree(dir string) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("%w (is %s a report folder written by gymlens report?)", err, dir)
	}
	defer root.Close()
	var named []string
	n := 0
	err = fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() || d.Type().IsRegular():
			return nil
		}
		if n++; n <= maxNamed {
			named = append(named, "  "+p+": "+notAFile(d.Type()))
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	if n == 0 {
		return nil
	}
	if n > maxNamed {
		named = append(named, fmt.Sprintf("  and %d more", n-maxNamed))
	}
	return fmt.Errorf("%s: a report folder holds folders and regular files only; refused, nothing read:\n%s", dir, strings.Join(named, "\n"))
}

// notAFile says what a non-regular file of type t is.
func notAFile(t fs.FileMode) string {
	switch {
	case t&fs.ModeSymlink != 0:
		return "a symbolic link (never followed in a report folder)"
	case t&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case t&fs.ModeSocket != 0:
		return "a socket"
	case t&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a regular file"
}

// openRegular opens name, a slash path under root, for reading when it
// is a regular file and not a link: os.Root keeps every step inside the
// folder, and the file opened must be the one Lstat saw (a link or a pipe
// swapped in between is refused; O_NONBLOCK keeps a pipe's open from
// waiting).
func openRegular(root *os.Root, name string) (*os.File, fs.FileInfo, error) {
	st, err := root.Lstat(name)
	if err != nil {
		return nil, nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, nil, errors.New(notAFile(st.Mode().Type()))
	}
	f, err := root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	if got, err := f.Stat(); err != nil || !os.SameFile(st, got) {
		f.Close()
		return nil, nil, errors.New("replaced while verify opened it")
	}
	return f, st, nil
}

// ReadManifest reads DIR/manifest.json, a regular file (not a link) of at
// most MaxManifestBytes. An error names the file and, for malformed JSON,
// the line.
func ReadManifest(dir string) (*Manifest, error) {
	name := filepath.Join(dir, "manifest.json")
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("%w (is %s a report folder written by gymlens report?)", err, dir)
	}
	defer root.Close()
	f, st, err := openRegular(root, "manifest.json")
	if err != nil {
		return nil, fmt.Errorf("%s: %w (is %s a report folder written by gymlens report?)", name, err, dir)
	}
	defer f.Close()
	tooLarge := fmt.Errorf("%s: %d bytes, larger than the %d MiB a manifest may be: not one gymlens report writes", name, st.Size(), MaxManifestBytes>>20)
	if st.Size() > MaxManifestBytes {
		return nil, tooLarge
	}
	var buf bytes.Buffer
	buf.Grow(int(st.Size()) + bytes.MinRead)
	if _, err := buf.ReadFrom(io.LimitReader(f, MaxManifestBytes+1)); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if buf.Len() > MaxManifestBytes {
		return nil, tooLarge
	}
	b := buf.Bytes()
	if i := valuesPast(b, MaxManifestValues); i >= 0 {
		return nil, fmt.Errorf("%s: more than %d JSON values (from line %d on), more than a manifest may hold: not one gymlens report writes", name, MaxManifestValues, lineAt(b, int64(i)))
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			return nil, fmt.Errorf("%s:%d: not valid JSON: %v", name, lineAt(b, se.Offset), err)
		case errors.As(err, &te):
			return nil, fmt.Errorf("%s:%d: field %s: expected %s, found %s", name, lineAt(b, te.Offset), te.Field, te.Type, te.Value)
		}
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	switch {
	case m.ManifestVersion < 2:
		return nil, fmt.Errorf("%s: field manifest_version: found %d; a report written before manifest version 2 records no output hashes or options: write it again with gymlens report", name, m.ManifestVersion)
	case m.ManifestVersion > ManifestVersion:
		return nil, fmt.Errorf("%s: field manifest_version: found %d, this gymlens reads up to %d: use a newer gymlens", name, m.ManifestVersion, ManifestVersion)
	case len(m.Files) == 0:
		return nil, fmt.Errorf("%s: field files: empty: the manifest lists no output", name)
	}
	listed := make(map[string]int, len(m.Files))
	for i, f := range m.Files {
		if !fs.ValidPath(f.Path) || f.Path == "manifest.json" {
			return nil, fmt.Errorf("%s: field files[%d].path: %q is not a file inside the report", name, i, f.Path)
		}
		// A file listed twice would be hashed twice: a manifest of one
		// large file listed over and over costs time without bound.
		if j, ok := listed[f.Path]; ok {
			return nil, fmt.Errorf("%s: field files[%d].path: %q is listed already, as files[%d]: not a manifest gymlens report writes", name, i, f.Path, j)
		}
		listed[f.Path] = i
	}
	for i, in := range m.Inputs {
		if !fs.ValidPath(in.Path) {
			return nil, fmt.Errorf("%s: field inputs[%d].path: %q is not a path relative to the input root", name, i, in.Path)
		}
	}
	for field, v := range map[string]string{"warehouse": m.Warehouse, "input_root": m.InputRoot} {
		if v != "" && (!fs.ValidPath(v) || strings.Contains(v, "/") || v == ".") {
			return nil, fmt.Errorf("%s: field %s: %q is not a file or folder name", name, field, v)
		}
	}
	// The rebuild passes args to gymlens report: each must set one of the
	// report's recorded options, never where it writes or what it reads
	// (a report handed over is not trusted to name those).
	for i, a := range m.Steps.Report.Args {
		k, _, ok := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		_, known := m.Steps.Report.Options[k]
		if !strings.HasPrefix(a, "--") || !ok || !known || slices.Contains([]string{"out", "db", "format", "memory-limit", "quiet", "help"}, k) {
			return nil, fmt.Errorf("%s: field steps.report.args[%d]: %q is not --OPTION=VALUE of a recorded report option", name, i, a)
		}
	}
	return &m, nil
}

// valuesPast returns the offset in the JSON text b of the value (object,
// array, key, string, number or literal) that makes more than max, or -1.
// It only counts where each starts, in one pass (json.Decoder.Token
// decodes each: seconds for a million); malformed JSON is left to the
// decoder, which says where.
func valuesPast(b []byte, max int) int {
	n := 0
	inString, escaped, inScalar := false, false, false
	for i, c := range b {
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"', '{', '[':
			n++
			inString, inScalar = c == '"', false
		case ',', ':', ']', '}', ' ', '\t', '\n', '\r':
			inScalar = false
		default:
			if !inScalar {
				n++
				inScalar = true
			}
		}
		if n > max {
			return i
		}
	}
	return -1
}

func lineAt(b []byte, off int64) int {
	off = min(max(off, 0), int64(len(b)))
	return 1 + bytes.Count(b[:off], []byte("\n"))
}

// CheckFolder checks that every file the manifest lists is in dir with
// its size and SHA-256 (hashed as it is read), and that dir holds no
// other file. A listed file that is a link or not a regular file is
// named and not read.
func CheckFolder(dir string, m *Manifest) []Problem {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return []Problem{{".", err.Error()}}
	}
	defer root.Close()
	var out []Problem
	listed := map[string]bool{"manifest.json": true}
	for _, f := range m.Files {
		listed[f.Path] = true
		if p := checkFile(root, f); p != "" {
			out = append(out, Problem{f.Path, p})
		}
	}
	return append(out, unlisted(root, listed, "in the folder, not listed in the manifest")...)
}

// checkFile says how the file f names under root differs from f ("": it
// does not).
func checkFile(root *os.Root, f OutputFile) string {
	r, st, err := openRegular(root, f.Path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "listed in the manifest, not in the folder (removed?)"
	case err != nil:
		return err.Error()
	}
	defer r.Close()
	if st.Size() != int64(f.Size) {
		return fmt.Sprintf("changed since the report was written: %d bytes, the manifest says %d", st.Size(), f.Size)
	}
	h := sha256.New()
	if _, err := io.Copy(h, r); err != nil {
		return err.Error()
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != f.SHA256 {
		return fmt.Sprintf("changed since the report was written: SHA-256 %s, the manifest says %s", short(got), short(f.SHA256))
	}
	return ""
}

// unlisted names each file under root (by its slash path) that known
// lacks, and each folder it could not read.
func unlisted(root *os.Root, known map[string]bool, what string) []Problem {
	var out []Problem
	fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			out = append(out, Problem{p, err.Error()})
		case !d.IsDir() && !known[p]:
			out = append(out, Problem{p, what})
		}
		return nil
	})
	return out
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12] + "…"
	}
	return h
}

// CheckInputs compares the manifest's inputs with those a warehouse
// holds (have, by the paths they were read from). An input is matched by
// its path's end: the manifest's path relative to the input root, so the
// inputs may have moved since.
func CheckInputs(m *Manifest, have []rows.InputFile) []Problem {
	var out []Problem
	used := make([]bool, len(have))
	for _, in := range m.Inputs {
		k := -1
		for i, h := range have {
			p := filepath.ToSlash(h.Path)
			if !used[i] && (p == in.Path || strings.HasSuffix(p, "/"+in.Path)) {
				k = i
				if h.SHA256 == in.SHA256 {
					break
				}
			}
		}
		if k < 0 {
			out = append(out, Problem{in.Path, "an input of the report, not in the warehouse"})
			continue
		}
		used[k] = true
		if have[k].SHA256 != in.SHA256 || have[k].Size != in.Size {
			out = append(out, Problem{in.Path, fmt.Sprintf("the warehouse holds other content: SHA-256 %s (%d bytes), the manifest says %s (%d bytes)",
				short(have[k].SHA256), have[k].Size, short(in.SHA256), in.Size)})
		}
	}
	for i, h := range have {
		if !used[i] {
			out = append(out, Problem{filepath.ToSlash(h.Path), "in the warehouse, not an input of the report"})
		}
	}
	return out
}

// CheckJudgeSteps compares the judge's calls the manifest records with
// those the warehouse holds now.
func CheckJudgeSteps(m *Manifest, have []rows.JudgeStep) []Problem {
	key := func(j rows.JudgeStep) string {
		return j.Judge + " · " + j.Model + " · " + j.Prompt + " · " + j.Params
	}
	want := map[string]rows.JudgeStep{}
	for _, j := range m.Steps.Judge {
		want[key(j)] = j
	}
	var out []Problem
	for _, j := range have {
		w, ok := want[key(j)]
		delete(want, key(j))
		switch {
		case !ok:
			out = append(out, Problem{"judge " + key(j), fmt.Sprintf("%d calls in the warehouse, none in the manifest", j.Calls)})
		case w.Calls != j.Calls || w.Valid != j.Valid:
			out = append(out, Problem{"judge " + key(j), fmt.Sprintf("%d calls (%d valid) in the warehouse, %d (%d valid) in the manifest", j.Calls, j.Valid, w.Calls, w.Valid)})
		}
	}
	for k, w := range want {
		out = append(out, Problem{"judge " + k, fmt.Sprintf("%d calls in the manifest, none in the warehouse", w.Calls)})
	}
	slices.SortFunc(out, func(a, b Problem) int { return strings.Compare(a.File, b.File) })
	return out
}

// InputFiles finds the manifest's inputs under root (the input root, or
// a folder holding it) and checks each one's size and SHA-256; it returns
// their paths in the manifest's order. When the folder holding them is
// named otherwise than the recorded input root, the paths go through a
// link of that name made in scratch, so that a report built from them
// names the same root.
func InputFiles(m *Manifest, root, scratch string) ([]string, []Problem, error) {
	if st, err := os.Stat(root); err != nil || !st.IsDir() {
		return nil, nil, fmt.Errorf("--inputs %s: not a folder", root)
	}
	// The inputs are under root, or under root/INPUT_ROOT.
	base := root
	if m.InputRoot != "" && len(m.Inputs) > 0 {
		if _, err := os.Stat(filepath.Join(root, m.InputRoot, filepath.FromSlash(m.Inputs[0].Path))); err == nil {
			base = filepath.Join(root, m.InputRoot)
		}
	}
	var paths []string
	var out []Problem
	read := base
	if abs, err := filepath.Abs(base); err == nil && m.InputRoot != "" && filepath.Base(abs) != m.InputRoot {
		read = filepath.Join(scratch, m.InputRoot)
		if err := os.Symlink(abs, read); err != nil {
			return nil, nil, fmt.Errorf("--inputs: %w", err)
		}
	}
	missing := map[string][]string{} // the inputs not found, by their first folder
	for _, in := range m.Inputs {
		p := filepath.Join(read, filepath.FromSlash(in.Path))
		f, err := os.Open(p)
		if err != nil {
			top, _, _ := strings.Cut(in.Path, "/")
			missing[top] = append(missing[top], in.Path)
			continue
		}
		h := sha256.New()
		n, err := io.Copy(h, f)
		f.Close()
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", p, err)
		}
		if got := hex.EncodeToString(h.Sum(nil)); got != in.SHA256 || n != in.Size {
			out = append(out, Problem{in.Path, fmt.Sprintf("differs from the report's input: SHA-256 %s (%d bytes), the manifest says %s (%d bytes)", short(got), n, short(in.SHA256), in.Size)})
			continue
		}
		paths = append(paths, p)
	}
	return paths, append(notFound(m, root, base, missing, len(paths)+len(out) == 0), out...), nil
}

// notFound says which inputs are not under base (the folder --inputs
// root gave), by their first folder (missing). When none is there, or
// none of a first folder's, it says so once, with the folder to give
// instead where it can tell (the inputs of several ingests may lie under
// two folders, and input_root is then the one that holds both).
func notFound(m *Manifest, root, base string, missing map[string][]string, none bool) []Problem {
	if len(missing) == 0 {
		return nil
	}
	tops := slices.Sorted(maps.Keys(missing))
	if none {
		where := fmt.Sprintf("in a folder named %q", m.InputRoot)
		if m.InputRoot == "" {
			where = "in a folder"
		}
		var held []string
		for _, t := range tops {
			if strings.Contains(missing[t][0], "/") {
				held = append(held, t+"/")
			}
		}
		if len(held) > 0 {
			where += " that holds " + strings.Join(held, ", ")
		}
		what := fmt.Sprintf("none of the report's %d inputs is there: they are %s (manifest.json's input_root)", len(m.Inputs), where)
		// The user named one of the folders the inputs' root holds.
		if abs, err := filepath.Abs(root); err == nil && missing[filepath.Base(abs)] != nil && strings.Contains(missing[filepath.Base(abs)][0], "/") {
			what += "; give --inputs " + filepath.Join(filepath.Dir(filepath.Clean(root)), "") + " instead"
		} else {
			what += "; give --inputs that folder"
		}
		return []Problem{{"--inputs " + root, what}}
	}
	var out []Problem
	for _, t := range tops {
		ins := missing[t]
		if st, err := os.Stat(filepath.Join(base, t)); len(ins) > 1 && strings.Contains(ins[0], "/") && (err != nil || !st.IsDir()) {
			out = append(out, Problem{t + "/", fmt.Sprintf("%d inputs of the report are under %s/, and %s has no folder %s", len(ins), t, base, t)})
			continue
		}
		for _, in := range ins {
			out = append(out, Problem{in, fmt.Sprintf("not found under %s", base)})
		}
	}
	return out
}

// CompareFolders compares the report folder with one rebuilt from the
// recorded options: every listed file and manifest.json, byte for byte,
// naming the first differing line of a text file or byte of a binary
// one; and any file the rebuild writes that the report lacks. Files are
// compared as they are read (a few buffers, whatever their size); a file
// of the report that is a link or not a regular file is not read.
func CompareFolders(report, rebuilt string, m *Manifest) []Problem {
	rootA, err := os.OpenRoot(report)
	if err != nil {
		return []Problem{{".", err.Error()}}
	}
	defer rootA.Close()
	rootB, err := os.OpenRoot(rebuilt)
	if err != nil {
		return []Problem{{".", "the rebuild: " + err.Error()}}
	}
	defer rootB.Close()
	var out []Problem
	names := []string{"manifest.json"}
	for _, f := range m.Files {
		names = append(names, f.Path)
	}
	seen := map[string]bool{}
	for _, name := range names {
		seen[name] = true
		if p := compareFile(rootA, rootB, name); p != "" {
			out = append(out, Problem{name, p})
		}
	}
	return append(out, unlisted(rootB, seen, "written by the rebuild, not in the report")...)
}

// compareFile says how name differs between the two folders ("": it
// does not, or the report's copy cannot be read, which CheckFolder says).
func compareFile(rootA, rootB *os.Root, name string) string {
	a, sa, err := openRegular(rootA, name)
	if err != nil {
		return ""
	}
	defer a.Close()
	b, sb, err := openRegular(rootB, name)
	if err != nil {
		return "in the report, not written by the rebuild"
	}
	defer b.Close()
	d, err := firstDifference(name, a, b, sa.Size(), sb.Size())
	switch {
	case err != nil:
		return err.Error()
	case d != "":
		return "differs from the rebuild: " + d
	}
	return ""
}

// FirstDifference says where a (the report's file name) and b (the
// rebuild's) first differ: the line and both texts for a text file, the
// byte offset for a binary one (PNG, PDF).
func FirstDifference(name string, a, b []byte) string {
	d, _ := firstDifference(name, bytes.NewReader(a), bytes.NewReader(b), int64(len(a)), int64(len(b)))
	if d == "" {
		return "differ" // not reached: a and b differ
	}
	return d
}

// firstDifference is FirstDifference of two files of sizes na and nb,
// read in blocks ("": they are equal). Of a text line it quotes at most
// 40 bytes before the difference and 120 characters from there.
func firstDifference(name string, a, b io.ReaderAt, na, nb int64) (string, error) {
	d, line, start, differ, err := diffAt(io.NewSectionReader(a, 0, na), io.NewSectionReader(b, 0, nb))
	if err != nil || !differ {
		return "", err
	}
	if ext := path.Ext(name); ext == ".png" || ext == ".pdf" {
		return fmt.Sprintf("first at byte %d (of %d in the report, %d rebuilt)", d, na, nb), nil
	}
	// One file ends where the other has a newline: the lines so far are
	// equal, and the next exists in one file only.
	if d == na && byteAt(b, d) == '\n' {
		return fmt.Sprintf("first at line %d: the report has no such line, the rebuild %s", line+2, quoteAt(b, nb, d+1, 0)), nil
	}
	if d == nb && byteAt(a, d) == '\n' {
		return fmt.Sprintf("first at line %d: the report has %s, the rebuild no such line", line+2, quoteAt(a, na, d+1, 0)), nil
	}
	// A long line (an embedded figure) is shown around the first
	// difference.
	c := d - start
	from := max(0, c-40)
	at := ""
	if from > 0 {
		at = fmt.Sprintf(", byte %d of it", c+1)
	}
	return fmt.Sprintf("first at line %d%s: the report has %s, the rebuild %s", line+1, at, quoteAt(a, na, start, from), quoteAt(b, nb, start, from)), nil
}

// diffAt reads a and b in blocks to the first offset d where they differ
// (one ending before the other counts), counting the newlines before it
// and the offset just after the last of them.
func diffAt(a, b io.Reader) (d, lines, start int64, differ bool, err error) {
	const block = 64 << 10
	ba, bb := make([]byte, block), make([]byte, block)
	for {
		ka, errA := io.ReadFull(a, ba)
		kb, errB := io.ReadFull(b, bb)
		for _, e := range []error{errA, errB} {
			if e != nil && e != io.EOF && e != io.ErrUnexpectedEOF {
				return 0, 0, 0, false, e
			}
		}
		n := min(ka, kb)
		i := n
		if !bytes.Equal(ba[:n], bb[:n]) {
			i = 0
			for ba[i] == bb[i] {
				i++
			}
		}
		if k := bytes.LastIndexByte(ba[:i], '\n'); k >= 0 {
			lines += int64(bytes.Count(ba[:i], []byte("\n")))
			start = d + int64(k) + 1
		}
		if i < n || ka != kb {
			return d + int64(i), lines, start, true, nil
		}
		if ka < block {
			return 0, 0, 0, false, nil
		}
		d += block
	}
}

func byteAt(r io.ReaderAt, off int64) byte {
	var b [1]byte
	if n, _ := r.ReadAt(b[:], off); n == 1 {
		return b[0]
	}
	return 0
}

// quoteAt quotes up to 120 characters of the line that starts at start
// in r (of size n), from its byte from (moved back to a character's
// start), with … where the line goes on before or after.
func quoteAt(r io.ReaderAt, n, start, from int64) string {
	// Up to 3 bytes before from (a character's start), 121 characters
	// of at most 4 bytes after it.
	ws := max(start, start+from-3)
	w := make([]byte, max(0, min(n, start+from+4*121)-ws))
	k, _ := r.ReadAt(w, ws)
	w = w[:k]
	if i := bytes.IndexByte(w, '\n'); i >= 0 {
		w = w[:i]
	}
	f := start + from - ws
	for from > 0 && f > 0 && f < int64(len(w)) && !utf8.RuneStart(w[f]) {
		from--
		f--
	}
	s, pre := string(w[min(f, int64(len(w))):]), ""
	if from > 0 {
		pre = "…"
	}
	if r := []rune(s); len(r) > 120 {
		s = string(r[:120]) + "…"
	}
	return pre + fmt.Sprintf("%q", s)
}

// VerifyStore is what verify reads of a warehouse.
type VerifyStore interface {
	Inputs(ctx context.Context) ([]rows.InputFile, error)
	Steps(ctx context.Context) (*rows.Steps, error)
	Close() error
}

// LoadedStore is a new warehouse verify loaded the inputs into: it
// rescores it as the manifest's steps say.
type LoadedStore interface {
	analysis.ScoreStore
	Close() error
}

// VerifyOptions say what to verify and give verify the parts that live
// above this package: opening a warehouse, loading files into a new one,
// and writing a report with the recorded arguments.
type VerifyOptions struct {
	Dir     string // the report folder
	DB      string // the warehouse (unused with Inputs)
	Inputs  string // the input files' folder: rebuild from them into a new warehouse
	Scratch string // an empty folder verify may write into ("": a temporary one)
	Version string // this gymlens's version
	// Open opens a warehouse for reading; it is closed before Rebuild.
	Open func(ctx context.Context, path string) (VerifyStore, error)
	// Load reads files into the warehouse at path (made by its first
	// call) as one ingest with the options o, invalid records skipped (to
	// a file beside it) when o says so.
	Load func(ctx context.Context, path string, files []string, o IngestReplay) (LoadedStore, error)
	// Rebuild writes the report folder out from the warehouse db with the
	// recorded arguments of `gymlens report`.
	Rebuild func(ctx context.Context, db, out string, args []string) error
}

// Verified is what Verify found: the number of files checked (the
// manifest's and the manifest) and of inputs, the problems (none: the
// folder is what its inputs give) and, when another gymlens or Go made
// the report, a note saying so.
type Verified struct {
	Dir           string
	Files, Inputs int
	Problems      []Problem
	Note          string
}

// Write writes the note (to errs), then each problem, or the line saying
// that all match; it returns an error when there are problems.
func (v *Verified) Write(out, errs io.Writer) error {
	if v.Note != "" {
		fmt.Fprintln(errs, "note: "+v.Note)
	}
	for _, p := range v.Problems {
		fmt.Fprintln(out, p)
	}
	if len(v.Problems) > 0 {
		return fmt.Errorf("verify %s: %d problems (listed above)", v.Dir, len(v.Problems))
	}
	fmt.Fprintf(out, "verify %s: all %d files match a rebuild from the %d inputs\n", v.Dir, v.Files, v.Inputs)
	return nil
}

// Verify checks a report folder: that it holds folders and regular files
// only (CheckTree), its files against its manifest, the
// warehouse's inputs and judge calls (or the files under Inputs) against
// the manifest's, then every output against a rebuild with the recorded
// options. The problems are listed in that order.
func Verify(ctx context.Context, o VerifyOptions) (*Verified, error) {
	if err := CheckTree(o.Dir); err != nil {
		return nil, err
	}
	m, err := ReadManifest(o.Dir)
	if err != nil {
		return nil, err
	}
	if o.Scratch == "" {
		if o.Scratch, err = os.MkdirTemp("", "gymlens-verify-*"); err != nil {
			return nil, err
		}
		defer os.RemoveAll(o.Scratch)
	}
	v := &Verified{Dir: o.Dir, Files: len(m.Files) + 1, Inputs: len(m.Inputs), Problems: CheckFolder(o.Dir, m)}
	if m.Version != o.Version || m.Build.Go != runtime.Version() {
		v.Note = fmt.Sprintf("gymlens %s (%s) made the report, gymlens %s (%s) checks it: the files naming the version differ", m.Version, m.Build.Go, o.Version, runtime.Version())
	}
	// The warehouse is reached by the file name the manifest records (a
	// link when it differs), which the rebuilt manifest then names.
	name := m.Warehouse
	if name == "" || name != filepath.Base(name) {
		name = "gymlens.duckdb"
	}
	db := o.DB
	if o.Inputs != "" {
		for _, j := range m.Steps.Judge {
			if j.Valid > 0 {
				return nil, fmt.Errorf("verify --inputs: the report uses %d judgments `gymlens judge` made (judge %s, model %s, prompt %s), which are not input files: verify against the warehouse (--db) instead", j.Valid, j.Judge, j.Model, j.Prompt)
			}
		}
		paths, bad, err := InputFiles(m, o.Inputs, o.Scratch)
		if err != nil {
			return nil, err
		}
		if len(bad) > 0 {
			v.Problems = append(v.Problems, bad...)
			return v, nil
		}
		found := make(map[string]string, len(paths))
		for i, in := range m.Inputs {
			found[in.Path] = paths[i]
		}
		db = filepath.Join(o.Scratch, name)
		if err := loadInputs(ctx, o, m, db, found, paths); err != nil {
			return nil, err
		}
	} else if filepath.Base(db) != name {
		abs, err := filepath.Abs(db)
		if err == nil {
			_, err = os.Stat(abs)
		}
		if err != nil {
			return nil, fmt.Errorf("--db %s: %w", db, err)
		}
		if db = filepath.Join(o.Scratch, name); os.Symlink(abs, db) != nil {
			db = abs
		}
	}
	s, err := o.Open(ctx, db)
	if err != nil {
		return nil, err
	}
	have, err := s.Inputs(ctx)
	st, err2 := s.Steps(ctx)
	s.Close()
	if err != nil || err2 != nil {
		return nil, errors.Join(err, err2)
	}
	if o.Inputs == "" {
		v.Problems = append(v.Problems, CheckInputs(m, have)...)
	}
	v.Problems = append(v.Problems, CheckJudgeSteps(m, st.Judge)...)
	// The rebuild and the comparison need the files and the arguments
	// alone. The rest is let go, and the memory given back, first: a
	// manifest of MaxManifestBytes can take 30 times that decoded, and
	// the rebuild runs in this process.
	files, args := m.Files, m.Steps.Report.Args
	m = nil
	debug.FreeOSMemory()
	out := filepath.Join(o.Scratch, "report")
	if err := o.Rebuild(ctx, db, out, args); err != nil {
		return nil, fmt.Errorf("verify: rebuilding the report with %v: %w", args, err)
	}
	v.Problems = append(v.Problems, CompareFolders(o.Dir, out, &Manifest{Files: files})...)
	return v, nil
}

// IngestReplay are the options of one recorded ingest (rows.IngestStep)
// that change what it loads, as verify --inputs replays it.
type IngestReplay struct {
	SkipInvalid, Replace  bool
	MaxErrors, MaxRejects int // 0: the ingest's default
}

// replayOf reads a recorded ingest's options (JSON numbers are float64).
func replayOf(o map[string]any) IngestReplay {
	num := func(k string) int {
		if f, ok := o[k].(float64); ok {
			return int(f)
		}
		return 0
	}
	return IngestReplay{SkipInvalid: o["skip_invalid"] == true, Replace: o["replace"] == true, MaxErrors: num("max_errors"), MaxRejects: num("max_rejects")}
}

// loadInputs loads the inputs into a new warehouse at db as the
// manifest's steps did: each recorded ingest again, in its order, with
// its options and its files (found is each input's path under the
// folder given, by its path in the manifest), then rescored as the
// scores were (derived values if all were). A manifest that records no
// ingest has its inputs loaded by one.
func loadInputs(ctx context.Context, o VerifyOptions, m *Manifest, db string, found map[string]string, all []string) error {
	type step struct {
		files []string
		opt   IngestReplay
	}
	var steps []step
	for _, st := range m.Steps.Ingests {
		x := step{opt: replayOf(st.Options)}
		for _, f := range st.Files {
			p, ok := found[f]
			if !ok {
				return fmt.Errorf("verify --inputs: ingest %d of the manifest read %s, which is not among its inputs: not a manifest gymlens report writes", st.Ingest, f)
			}
			x.files = append(x.files, p)
		}
		if len(x.files) > 0 {
			steps = append(steps, x)
		}
	}
	if len(steps) == 0 {
		steps = []step{{files: all}}
	}
	var w LoadedStore
	for i, st := range steps {
		var err error
		if w, err = o.Load(ctx, db, st.files, st.opt); err != nil {
			return err
		}
		if i < len(steps)-1 {
			if err := w.Close(); err != nil {
				return err
			}
		}
	}
	defer w.Close()
	if len(m.Steps.Scores) == 0 {
		return nil
	}
	derived := true
	for _, s := range m.Steps.Scores {
		derived = derived && s.Prefer == "derived"
	}
	_, err := analysis.Rescore(ctx, w, derived, 0)
	return err
}
