package ingest

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"runtime/metrics"
	"sort"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/valyala/fastjson"
	"github.com/zeebo/xxh3"

	"github.com/gymlens/gymlens/ingest/inspect"
	"github.com/gymlens/gymlens/ingest/pare"
	"github.com/gymlens/gymlens/ingest/runlog"
)

// IngestOptions tunes Ingest and Validate.
type IngestOptions struct {
	MaxErrors   int    // errors reported before giving up; 0 means 20
	SkipInvalid bool   // load the valid records and write the rest to RejectsPath
	RejectsPath string // where rejected lines go; "" means gymlens-rejects.jsonl
	// MaxRejects is how many rejected entries of each input file the
	// rejects file keeps (the first ones); 0 means DefaultMaxRejects. The
	// rest are counted (Summary.RejectsUnwritten), not written.
	MaxRejects int
	Replace    bool // replace runs and scenarios stored with other content
	Workers    int  // decoding goroutines; 0 means GOMAXPROCS
	// Progress, when set, is called about ten times a second and once at the end.
	Progress func(Progress)
}

// CheckLimits refuses the limits that --max-errors and --max-rejects
// (the latter with SkipInvalid) cannot be: below 1. In IngestOptions
// built by a program, 0 stands for the default.
func (o IngestOptions) CheckLimits() error {
	if o.MaxErrors < 1 {
		return fmt.Errorf("--max-errors: expected a number ≥ 1, found %d", o.MaxErrors)
	}
	if o.SkipInvalid && o.MaxRejects < 1 {
		return fmt.Errorf("--max-rejects: expected a number ≥ 1, found %d", o.MaxRejects)
	}
	return nil
}

// Progress is a snapshot of a running ingest.
type Progress struct {
	File                  string
	FilesDone, FilesTotal int
	Bytes, TotalBytes     int64
	Records               int64
	Elapsed               time.Duration
	Loading               bool // validation is done; DuckDB is loading
	Done                  bool
}

// String says p in a progress bar's words: files and records while the
// records are checked, then the records DuckDB is loading.
func (p Progress) String() string {
	if p.Loading {
		return thousands(p.Records) + " records checked · loading into the warehouse"
	}
	return fmt.Sprintf("files %d/%d · %s records", p.FilesDone, p.FilesTotal, thousands(p.Records))
}

// Summary says what an ingest or validation did.
type Summary struct {
	Files       int              // files read
	Unchanged   []string         // files skipped because their content was ingested before
	Empty       []string         // empty files (nothing to ingest)
	Skipped     []runlog.Skipped // files in folders that are not in a known format
	Records     map[string]int64 // records loaded (or valid, for validate), by type
	Identical   map[string]int64 // records already stored with the same content
	Runs        int              // runs loaded
	Replaced    int              // runs and scenarios replaced
	Rejected    int64            // records rejected (--skip-invalid)
	RejectsPath string           // where they were written
	// RejectsUnwritten are the rejected records the rejects file leaves
	// out (past MaxRejects of their input file, or past
	// MaxRejectsFileBytes); RejectsTruncated the entries written with
	// their record's text cut (MaxRejectLine).
	RejectsUnwritten, RejectsTruncated int64
	MaxRejects                         int   // the limit applied
	Bytes                              int64 // bytes read from disk
	Elapsed                            time.Duration
	Notes                              []string // what was read but deserves a word (a PARE trace PARE itself leaves out)
}

// TotalRecords is the number of records loaded.
func (s *Summary) TotalRecords() int64 {
	var n int64
	for _, v := range s.Records {
		n += v
	}
	return n
}

// goMemoryLimit is the soft limit of the Go heap during a pass; DuckDB's
// own memory is limited apart (OpenOptions.MemoryLimit).
const goMemoryLimit = 128 << 20

// roomForState sets the Go heap's soft limit, after each file of a pass,
// to twice the live heap or goMemoryLimit, whichever is more. The checks
// keep some state for every run read (checker.runs: about 100 MB at --scale 100,
// 234,000 runs), and with the live heap near a fixed limit the collector
// ran almost without pause: a quarter of the CPU at --scale 100 against
// 2 % at --scale 10 (docs/benchmarks.md). Twice the live heap is Go's
// default pace, so the collector's work grows with the input, no faster.
func roomForState() {
	live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(live)
	if live[0].Value.Kind() != metrics.KindUint64 {
		return
	}
	debug.SetMemoryLimit(max(goMemoryLimit, 2*int64(live[0].Value.Uint64())))
}

// errStop stops a stream once enough errors are collected.
var errStop = errors.New("stop")

type fileState struct {
	runlog.File
	abs      string
	id       int
	sha      string
	mtime    time.Time
	rejected int64
}

type pass struct {
	ctx     context.Context
	start   time.Time
	opt     IngestOptions
	errs    *runlog.ErrorList
	chk     *checker
	sum     *Summary
	files   []*fileState
	conn    *sql.Conn // nil when validating
	rejects *rejectWriter
	tmpDir  string                // staging files, beside the warehouse
	stages  map[string]*stageFile // staging CSV per bulk record type
	bytes   atomic.Int64
	records atomic.Int64
	loading atomic.Bool
	// committed: the transaction has ended with COMMIT.
	committed bool
	// staleInputs: the pass wrote what the run inputs come from;
	// someInputs: only those of the runs it wrote rows of.
	staleInputs, someInputs bool
	// packs: the warehouse has event_packs (schema 17 on).
	packs bool
	// rejectsColumn: the warehouse's ingests have rejects_unwritten
	// (schema 20 on).
	rejectsColumn bool
	// fileDupes maps content hashes of this input to their first path.
	fileDupes map[string]string
	// known and knownStat are the files ingested before.
	known     map[string]bool
	knownStat map[statKey]string
	// superseded are the ids of superseded files, by content hash: read
	// again, their ratings (which have no key of their own) are replaced.
	superseded map[string][]int
	// pareFiles are the PARE and Meta-ARE traces to read; pare those read.
	pareFiles   []*fileState
	pare        []*pareRun
	pareSamples []pare.Sample
	pareAnnots  []pare.Annotation
	pareResults []pareResult
	pareReports []pareReport
	// inspect counts the Inspect logs read (their rows are appended as
	// they are read: readInspect).
	inspect *inspectTally
}

// Ingest loads the files and folders in paths into the warehouse as one
// transaction: after any error nothing of this call remains.
func (w *Warehouse) Ingest(ctx context.Context, paths []string, opt IngestOptions) (*Summary, error) {
	if w.ReadOnly {
		return nil, ErrReadOnly
	}
	return runPass(ctx, w, paths, opt, true)
}

// Validate checks the files without writing anything. When w is not nil,
// references may point into it (as they may when ingesting into it).
func Validate(ctx context.Context, w *Warehouse, paths []string, opt IngestOptions) (*Summary, error) {
	return runPass(ctx, w, paths, opt, false)
}

func runPass(ctx context.Context, w *Warehouse, paths []string, opt IngestOptions, write bool) (sum *Summary, err error) {
	start := time.Now()
	// The live heap of a pass is small (chunks in flight and per-run
	// state): collect less often, but within a soft limit, so that memory
	// stays bounded whatever the input's size; the limit makes room for
	// the per-run state as it grows (roomForState).
	gcPercent, memoryLimit := debug.SetGCPercent(300), debug.SetMemoryLimit(goMemoryLimit)
	restoreGC := func() {
		debug.SetGCPercent(gcPercent)
		debug.SetMemoryLimit(memoryLimit)
	}
	defer restoreGC()
	if opt.MaxErrors <= 0 {
		opt.MaxErrors = 20
	}
	if opt.RejectsPath == "" {
		opt.RejectsPath = "gymlens-rejects.jsonl"
	}
	if opt.MaxRejects <= 0 {
		opt.MaxRejects = DefaultMaxRejects
	}
	files, skipped, err := runlog.Discover(paths)
	if err != nil {
		return nil, err
	}
	p := &pass{ctx: ctx, start: start, opt: opt, errs: &runlog.ErrorList{Max: opt.MaxErrors},
		sum:       &Summary{Skipped: skipped, Records: map[string]int64{}, Identical: map[string]int64{}},
		fileDupes: map[string]string{}}
	p.chk = newChecker(p.errs, opt.Replace)
	if w != nil {
		if err := p.chk.preload(ctx, w); err != nil {
			return nil, fmt.Errorf("reading the warehouse: %w", err)
		}
	}
	if err := p.knownFiles(w); err != nil {
		return nil, fmt.Errorf("reading the warehouse: %w", err)
	}
	var total int64
	for _, f := range files {
		total += f.Size
	}
	stopProgress := p.startProgress(start, len(files), total)
	defer stopProgress()

	if write {
		p.packs = w.hasPacks(ctx)
		if v, err := w.Version(ctx); err == nil && v >= rejectsSchema {
			p.rejectsColumn = true
		}
		p.conn, err = w.db.Conn(ctx)
		if err != nil {
			return nil, err
		}
		defer p.conn.Close()
		if err := w.registerTypedEvents(p.conn); err != nil {
			return nil, fmt.Errorf("registering the events' table function: %w", err)
		}
		if _, err := p.conn.ExecContext(ctx, "BEGIN TRANSACTION"); err != nil {
			return nil, err
		}
		defer func() {
			p.closeStages()
			if !p.committed {
				// Also when nothing was loaded: the connection goes back to
				// the pool, and must not carry an open transaction.
				_, _ = p.conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
			}
		}()
		if p.tmpDir, err = os.MkdirTemp(filepath.Dir(w.Path), stagingPrefix(w.Path)); err != nil {
			return nil, fmt.Errorf("cannot make a staging folder beside the warehouse: %w", err)
		}
		defer os.RemoveAll(p.tmpDir)
	}
	if opt.SkipInvalid {
		p.rejects, err = newRejectWriter(opt.RejectsPath, opt.MaxRejects)
		if err != nil {
			return nil, err
		}
		defer p.rejects.close()
		p.sum.RejectsPath = opt.RejectsPath
		p.sum.MaxRejects = opt.MaxRejects
	}

	for _, f := range files {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if p.errs.Full() && !opt.SkipInvalid {
			break
		}
		if err := p.readFile(f); err != nil {
			return nil, err
		}
		roomForState()
	}
	if err := p.readPAREFiles(); err != nil {
		return nil, err
	}
	p.sum.Notes = append(p.sum.Notes, p.inspect.notes()...)
	traced("validation pass", start)
	decisions, dropped := p.chk.finish()
	if p.errs.Len() > 0 && !opt.SkipInvalid {
		return nil, p.errs
	}
	for id, e := range dropped {
		ir := p.chk.runs[id]
		p.reject(e, nil, max(1, ir.records))
	}
	if err := p.rejects.flush(); err != nil {
		return nil, err
	}
	if !write {
		p.countValid(decisions)
		p.sum.Elapsed = time.Since(start)
		p.sum.Bytes = p.bytes.Load()
		return p.sum, nil
	}
	if len(p.files) == 0 {
		// Every file was ingested before: nothing to record.
		p.sum.Elapsed = time.Since(start)
		p.sum.Bytes = p.bytes.Load()
		return p.sum, nil
	}
	// The pass's buffers are garbage now: give the memory back before
	// DuckDB takes its share.
	debug.FreeOSMemory()
	p.loading.Store(true)
	if err := p.load(decisions); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if strings.Contains(err.Error(), "Out of Memory") {
			// The largest files first: the likeliest to have needed it.
			files := append([]*fileState(nil), p.files...)
			sort.SliceStable(files, func(i, j int) bool { return files[i].Size > files[j].Size })
			var names []string
			for _, f := range files {
				names = append(names, f.Path)
			}
			if len(names) > 3 {
				names = append(names[:3], fmt.Sprintf("and %d more", len(names)-3))
			}
			return nil, fmt.Errorf("DuckDB ran out of its memory limit (%s) while loading %s (nothing was written): rerun with a larger --memory-limit, such as 1GB",
				w.MemoryLimit, strings.Join(names, ", "))
		}
		// Every record passed the checks, so the database should have taken
		// them all: say so instead of showing its bare message.
		return nil, fmt.Errorf("the warehouse refused records that passed every check (nothing was written): %v; "+
			"unless the machine ran out of memory or disk (see --memory-limit), this is a gymlens bug: please report it with the input", err)
	}
	if p.errs.Len() > 0 && !opt.SkipInvalid {
		return nil, p.errs
	}
	if err := p.rejects.flush(); err != nil {
		return nil, err
	}
	t0 := time.Now()
	if _, err := p.conn.ExecContext(ctx, "COMMIT"); err != nil {
		return nil, fmt.Errorf("committing the ingest: %w", err)
	}
	traced("COMMIT", t0)
	p.committed = true
	if p.staleInputs {
		// The rebuild is not part of the pass: the checks' per-run state
		// is garbage, and the collector goes back to its pace from before
		// the pass (the pass's collects less often): the ingest's peak
		// RSS at --scale 10 went from 395–422 MB to 327–406 MB, at
		// --scale 100 from 734–735 to 646–674 MB, its time unchanged
		// within the noise (docs/benchmarks.md).
		p.chk = nil
		restoreGC()
		t0 = time.Now()
		if err := w.RefreshRunInputs(ctx); err != nil {
			return nil, fmt.Errorf("the ingest is committed, but %w (the analyses read the tables meanwhile; any later ingest or score rebuilds them)", err)
		}
		traced("rebuild of the run inputs", t0)
	}
	p.sum.Elapsed = time.Since(start)
	p.sum.Bytes = p.bytes.Load()
	return p.sum, nil
}

// countValid fills the summary of a validation.
func (p *pass) countValid(decisions map[string]runDecision) {
	for i, n := range p.chk.counts[:len(runlog.RecordTypes)] {
		if n > 0 {
			p.sum.Records[runlog.RecordTypes[i]] = n
		}
	}
	for _, d := range decisions {
		if d == runNew || d == runReplace {
			p.sum.Runs++
		}
	}
	// PARE and Meta-ARE files, as read.
	add := func(typ string, n int) {
		if n > 0 {
			p.sum.Records[typ] += int64(n)
		}
	}
	for _, r := range p.pare {
		add("pare_run", 1)
		add("pare_event", len(r.trace.Events))
		add("decision_point", len(r.decisions))
	}
	add("pare_sample", len(p.pareSamples))
	add("pare_annotation", len(p.pareAnnots))
	add("pare_result", len(p.pareResults))
	for _, r := range p.pareReports {
		add("pare_report", len(r.rep.Sections))
	}
}

func (p *pass) startProgress(start time.Time, nfiles int, total int64) func() {
	if p.opt.Progress == nil {
		return func() {}
	}
	done := make(chan struct{})
	stopped := make(chan struct{})
	snap := func(final bool) Progress {
		return Progress{FilesDone: len(p.files), FilesTotal: nfiles, Bytes: p.bytes.Load(), TotalBytes: total,
			Records: p.records.Load(), Elapsed: time.Since(start), Loading: p.loading.Load(), Done: final}
	}
	go func() {
		defer close(stopped)
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				p.opt.Progress(snap(false))
			}
		}
	}()
	return func() {
		close(done)
		<-stopped
		p.opt.Progress(snap(true))
	}
}

type statKey struct {
	path  string
	size  int64
	mtime int64
}

// knownFiles loads the warehouse's record of ingested files: their hashes,
// and the hash of each (path, size, mtime) seen.
func (p *pass) knownFiles(w *Warehouse) error {
	p.known, p.knownStat = map[string]bool{}, map[statKey]string{}
	if w == nil {
		return nil
	}
	// A superseded file lost records after it was ingested: it is read
	// again (SupersedeIngestedJudgments).
	p.superseded = map[string][]int{}
	rows, err := w.db.QueryContext(p.ctx, `SELECT path, size_bytes, mtime, sha256, file_id, superseded FROM ingested_files`)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var k statKey
		var mt *time.Time
		var sha string
		var id int
		var sup bool
		if err := rows.Scan(&k.path, &k.size, &mt, &sha, &id, &sup); err != nil {
			return err
		}
		if sup {
			p.superseded[sha] = append(p.superseded[sha], id)
			continue
		}
		if mt != nil {
			k.mtime = mt.UnixMicro()
			p.knownStat[k] = sha
		}
		p.known[sha] = true
	}
	return rows.Err()
}

// fileHash returns the sha256 of a file, trusting the warehouse's record
// when the path, size and modification time are unchanged.
func (p *pass) fileHash(fs *fileState) error {
	st, err := os.Stat(fs.Path)
	if err != nil {
		return &runlog.Error{File: fs.Path, Msg: "cannot read: " + err.Error()}
	}
	fs.mtime = st.ModTime().UTC().Truncate(time.Microsecond)
	if sha, ok := p.knownStat[statKey{fs.abs, st.Size(), fs.mtime.UnixMicro()}]; ok {
		fs.sha = sha
		return nil
	}
	f, err := os.Open(fs.Path)
	if err != nil {
		return &runlog.Error{File: fs.Path, Msg: "cannot read: " + err.Error()}
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return &runlog.Error{File: fs.Path, Msg: "cannot read: " + err.Error()}
	}
	fs.sha = hex.EncodeToString(h.Sum(nil))
	return nil
}

func (p *pass) readFile(f runlog.File) error {
	abs, _ := filepath.Abs(f.Path)
	fs := &fileState{File: f, abs: abs}
	if err := p.fileHash(fs); err != nil {
		return err
	}
	if p.known[fs.sha] {
		p.sum.Unchanged = append(p.sum.Unchanged, f.Path)
		p.bytes.Add(f.Size)
		return nil
	}
	if first, dup := p.fileDupes[fs.sha]; dup {
		p.sum.Unchanged = append(p.sum.Unchanged, f.Path+" (same content as "+first+")")
		p.bytes.Add(f.Size)
		return nil
	}
	p.fileDupes[fs.sha] = f.Path
	if p.conn != nil {
		if err := p.conn.QueryRowContext(p.ctx, `SELECT nextval('file_id_seq')`).Scan(&fs.id); err != nil {
			return err
		}
	}
	p.files = append(p.files, fs)
	p.sum.Files++
	if f.Size == 0 {
		p.sum.Empty = append(p.sum.Empty, f.Path)
		return nil
	}
	switch f.Kind {
	case runlog.KindScenario:
		s, raw, err := runlog.ReadScenarioFile(f.Path)
		p.bytes.Add(f.Size)
		if err != nil {
			var e *runlog.Error
			if errors.As(err, &e) {
				p.errs.Add(e)
				p.reject(e, nil, 1)
				fs.rejected++
				return nil
			}
			return err
		}
		canon := canonicalJSON(raw)
		p.chk.scenario(s, xxh3.Hash(canon), p.chk.at(f.Path, s.IDLine), canon)
		p.records.Add(1)
	case runlog.KindRatings:
		err := runlog.ReadRatingsCSV(f.Path, fs.id, func(line int, g *runlog.Rating, raw, row []byte, rowErr *runlog.Error) error {
			if rowErr != nil {
				p.errs.Add(rowErr)
				p.reject(rowErr, raw, 1)
				fs.rejected++
			} else if e := p.chk.record(g, 0, p.chk.at(f.Path, line)); e != nil {
				p.reject(e, raw, 1)
				fs.rejected++
			} else if err := p.stage(runlog.TypeRating, row); err != nil {
				return err
			} else {
				p.records.Add(1)
			}
			if p.errs.Full() && !p.opt.SkipInvalid {
				return errStop
			}
			return nil
		})
		p.bytes.Add(f.Size)
		if err != nil && err != errStop {
			var e *runlog.Error
			if errors.As(err, &e) {
				p.errs.Add(e)
				return nil
			}
			return err
		}
	case runlog.KindJSONL:
		return p.readStream(fs)
	case pare.KindTrace:
		// Read after the other files, several at a time (readPAREFiles).
		p.pareFiles = append(p.pareFiles, fs)
	case pare.KindSamples:
		return p.readPARESamples(fs)
	case pare.KindAnnotations:
		return p.readPAREAnnotations(fs)
	case pare.KindResults, pare.KindCombined, pare.KindAREOutput, pare.KindAREStats:
		return p.readPAREResultFile(fs)
	case inspect.KindLog:
		return p.readInspect(fs)
	}
	return nil
}

func (p *pass) readStream(fs *fileState) error {
	var compressed atomic.Int64
	r, err := runlog.OpenStream(fs.Path, &compressed)
	if err != nil {
		return p.collect(err)
	}
	defer r.Close()
	var last int64
	opt := runlog.StreamOptions{File: fs.Path, Workers: p.opt.Workers, Rows: p.conn != nil, FileID: fs.id, TypedEvents: p.conn != nil}
	here := p.chk.at(fs.Path, 0)
	err = runlog.DecodeStream(p.ctx, r, opt, func(items []runlog.Item) error {
		now := compressed.Load()
		p.bytes.Add(now - last)
		last = now
		for i := range items {
			it := &items[i]
			if it.Err != nil {
				var e *runlog.Error
				if !errors.As(it.Err, &e) {
					e = &runlog.Error{File: fs.Path, Line: it.Line, Msg: it.Err.Error()}
				}
				p.errs.Add(e)
				p.reject(e, it.Raw, 1)
				fs.rejected++
			} else if s, ok := it.Rec.(*runlog.Scenario); ok {
				// A scenario line is stored and compared exactly as the same
				// scenario in a file of its own: canonical JSON, hashed.
				canon := canonicalJSON(it.Raw)
				p.chk.scenario(s, xxh3.Hash(canon), loc{here.file, int32(it.Line)}, canon)
			} else if e := p.chk.record(it.Rec, it.Hash, loc{here.file, int32(it.Line)}); e != nil {
				p.reject(e, it.Raw, 1)
				fs.rejected++
			} else {
				if len(it.Row) > 0 {
					if err := p.stage(it.Rec.RecordType(), it.Row); err != nil {
						return err
					}
				}
			}
			if p.errs.Full() && !p.opt.SkipInvalid {
				return errStop
			}
		}
		p.records.Add(int64(len(items)))
		return nil
	})
	p.bytes.Add(compressed.Load() - last)
	if err == errStop {
		return nil
	}
	return p.collect(err)
}

// canonicalJSON is raw (valid JSON) without insignificant white space, so
// that one scenario gives the same bytes and hash from any file.
func canonicalJSON(raw []byte) []byte {
	v, err := fastjson.ParseBytes(raw)
	if err != nil {
		return append([]byte(nil), raw...)
	}
	return v.MarshalTo(nil)
}

// collect adds an input error to the list, so that reading goes on with the
// next file; other errors (of the machine, the warehouse) stop the ingest.
func (p *pass) collect(err error) error {
	var e *runlog.Error
	if errors.As(err, &e) {
		p.errs.Add(e)
		return nil
	}
	return err
}

// stageFile is the staging file of one bulk record type: CSV, or for the
// events typed staging records (runlog.AppendTyped), which a table
// function hands DuckDB as vectors (typedEventsFunction).
type stageFile struct {
	path  string
	typed bool
	f     *os.File
	w     *bufio.Writer
	rows  int64
	// longest is the longest row written: DuckDB's CSV reader sizes its
	// buffers by the longest row it must hold.
	longest int
}

// stage writes one record's CSV row to the staging file of its type.
func (p *pass) stage(typ string, row []byte) error {
	if p.conn == nil {
		return nil
	}
	sf := p.stages[typ]
	if sf == nil {
		if p.stages == nil {
			p.stages = map[string]*stageFile{}
		}
		sf = &stageFile{path: filepath.Join(p.tmpDir, typ+".csv")}
		if typ == runlog.TypeEvent {
			// Only readStream stages events, with StreamOptions.TypedEvents.
			sf = &stageFile{path: filepath.Join(p.tmpDir, typ+".typed"), typed: true}
		}
		f, err := os.Create(sf.path)
		if err != nil {
			return fmt.Errorf("cannot write the staging file: %w", err)
		}
		sf.f, sf.w = f, bufio.NewWriterSize(f, 1<<20)
		p.stages[typ] = sf
	}
	sf.rows++
	sf.longest = max(sf.longest, len(row))
	if _, err := sf.w.Write(row); err != nil {
		return fmt.Errorf("cannot write the staging file: %w", err)
	}
	return nil
}

// flushStages finishes the staging files before DuckDB reads them.
func (p *pass) reject(e *runlog.Error, raw []byte, n int64) {
	if p.rejects != nil {
		written, cut := p.rejects.write(e, raw, n)
		p.sum.Rejected += n
		if !written {
			p.sum.RejectsUnwritten += n
		}
		if cut {
			p.sum.RejectsTruncated++
		}
	}
}

func (p *pass) flushStages() error {
	for _, sf := range p.stages {
		if err := sf.w.Flush(); err != nil {
			return fmt.Errorf("cannot write the staging file: %w", err)
		}
	}
	return nil
}

func (p *pass) closeStages() {
	for _, sf := range p.stages {
		sf.f.Close()
	}
}

func floatOrNil(f *float64) any {
	if f == nil {
		return nil
	}
	return *f
}

func strOrNil(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// jsonOrNil hands raw JSON text to a JSON column unchanged.
func jsonOrNil(b []byte) any {
	if b == nil {
		return nil
	}
	return json.RawMessage(b)
}

// The limits of the rejects file (--skip-invalid): at most
// DefaultMaxRejects entries (--max-rejects) for each input file, the
// first ones; an entry's line at most MaxRejectLine bytes, the record's
// text cut to fit (the entry then says record_truncated and the record's
// length, record_bytes); the whole file at most MaxRejectsFileBytes. A
// rejected record left out is counted in the summary and the ingests
// table (rejects_unwritten), never silently dropped.
const (
	DefaultMaxRejects   = 1000
	MaxRejectLine       = 64 << 10
	MaxRejectsFileBytes = 256 << 20
	// maxRejectMessage bounds the error message of an entry.
	maxRejectMessage = 1 << 10
)

// rejectsSchema is the schema version that counts the rejected records
// the rejects file leaves out (ingests.rejects_unwritten).
const rejectsSchema = 20

// maxRejectsFileBytes is MaxRejectsFileBytes, lowered by tests.
var maxRejectsFileBytes int64 = MaxRejectsFileBytes

// rejectWriter writes rejected lines with their reasons as JSON Lines,
// within the limits above.
type rejectWriter struct {
	f       *os.File
	w       *bufio.Writer
	max     int            // entries per input file
	perFile map[string]int // entries written, by input file
	size    int64          // bytes written
	err     error          // the first write error
}

func newRejectWriter(path string, max int) (*rejectWriter, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("cannot write the rejects file: %w", err)
	}
	return &rejectWriter{f: f, w: bufio.NewWriter(f), max: max, perFile: map[string]int{}}, nil
}

// write writes the entry of a rejected record (of n records: a run
// dropped with its records) and says whether it did, and whether the
// record's text was cut to fit MaxRejectLine.
func (r *rejectWriter) write(e *runlog.Error, raw []byte, n int64) (written, cut bool) {
	if r.err != nil || r.perFile[e.File] >= r.max {
		return false, false
	}
	rec := map[string]any{"file": e.File, "line": e.Line, "error": cutText(e.Error(), maxRejectMessage)}
	if e.Field != "" {
		rec["field"] = e.Field
	}
	if e.Column > 0 {
		rec["column"] = e.Column
	}
	if n > 1 {
		rec["records_dropped"] = n
	}
	b := rejectLine(rec)
	if raw != nil {
		// Cut the record until the line fits, in proportion to the
		// excess (escapes make the line longer than the text).
		keep := min(len(raw), MaxRejectLine)
		for {
			keep = runeStart(raw, keep)
			rec["record"] = string(raw[:keep])
			if keep < len(raw) {
				rec["record_truncated"], rec["record_bytes"] = true, len(raw)
			}
			b = rejectLine(rec)
			if len(b) <= MaxRejectLine || keep == 0 {
				break
			}
			keep = max(0, min(keep-1, keep*(MaxRejectLine-512)/len(b)))
		}
		cut = keep < len(raw)
	}
	if r.size+int64(len(b)) > maxRejectsFileBytes {
		return false, false
	}
	r.perFile[e.File]++
	r.size += int64(len(b))
	if _, err := r.w.Write(b); err != nil && r.err == nil {
		r.err = err
	}
	return true, cut
}

// rejectLine is one entry as a line of JSON, HTML characters as they are.
func rejectLine(rec map[string]any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(rec) // strings and numbers: cannot fail
	return buf.Bytes()
}

// runeStart moves i back to the start of a UTF-8 sequence of b (at most
// three bytes), so that a cut does not split a character.
func runeStart(b []byte, i int) int {
	for j := 0; j < utf8.UTFMax-1 && i > 0 && i < len(b) && !utf8.RuneStart(b[i]); j++ {
		i--
	}
	return i
}

// cutText cuts s to at most n bytes, on a character boundary.
func cutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:runeStart([]byte(s), n)] + "…"
}

// flush writes out what is buffered and reports the first write error.
func (r *rejectWriter) flush() error {
	if r == nil {
		return nil
	}
	if err := r.w.Flush(); err != nil && r.err == nil {
		r.err = err
	}
	if r.err != nil {
		return fmt.Errorf("cannot write the rejects file %s: %w", r.f.Name(), r.err)
	}
	return nil
}

func (r *rejectWriter) close() {
	r.w.Flush()
	r.f.Close()
}

func sortedIDs(m map[string]runDecision, want ...runDecision) []string {
	var out []string
	for id, d := range m {
		for _, x := range want {
			if d == x {
				out = append(out, id)
				break
			}
		}
	}
	sort.Strings(out)
	return out
}

func sortStrings(s []string) { sort.Strings(s) }
