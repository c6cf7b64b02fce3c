// Package ingest owns the gymlens warehouse: one DuckDB file holding
// scenarios, runs, events, task outcomes, judgments and ratings, its schema
// and migrations, loading (validated, atomic, idempotent), export to
// Parquet and Arrow, and read-only queries. Input formats are read by
// subpackages (ingest/runlog) that only this package imports; the rest of
// gymlens sees the warehouse.
package ingest

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	duckdb "github.com/duckdb/duckdb-go/v2"
)

//go:embed schema/*.sql
var schemaFS embed.FS

// Version is the tool version recorded with every ingest and report.
const Version = "0.1.0"

// DefaultPath is the warehouse used when neither --db nor $GYMLENS_DB says.
const DefaultPath = "gymlens.duckdb"

// DefaultMemoryLimit caps DuckDB's buffer pool; larger work spills to disk.
const DefaultMemoryLimit = "512MB"

// JudgeMemoryLimit is DuckDB's memory limit for gymlens judge: it scans a
// slice of runs' events at a time, which needs no large buffer pool, and
// the prompts it renders need the room.
const JudgeMemoryLimit = "256MB"

// ReportMemoryLimit is DuckDB's memory limit for gymlens report and the
// commands whose outputs it holds (agree, table, plot): they hold every
// run's tasks (packed) and ratings in Go while they compute, and DuckDB's
// buffer pool stays as full as its limit lets it, so a smaller pool keeps
// the process under 1 GB at 234,000 runs (docs/benchmarks.md); every
// query of the report runs in it.
const ReportMemoryLimit = "128MB"

// ExportMemoryLimit is DuckDB's memory limit for gymlens export and
// score: their sorts, joins and Parquet writers spill, and the Go side
// (the run inputs written, the tasks rescored) needs the room. At
// --scale 100, neither run finished, the peaks at the same point of the
// work: export 430 against 721 MB with DuckDB's default (through the
// events), score 700 against 811 MB (docs/benchmarks.md).
const ExportMemoryLimit = "256MB"

// ReadingMemoryLimit is DuckDB's default memory limit for a command that
// reads the warehouse: ReportMemoryLimit for report, agree, table, plot
// and notebook (whose blocks are those commands, sharing the runs they
// hold), and for a command that holds every run's tasks as they do
// (holdsTasks: metrics --judge-noise), ExportMemoryLimit for export and
// score, else DefaultMemoryLimit.
func ReadingMemoryLimit(command string, holdsTasks bool) string {
	switch command {
	case "report", "agree", "table", "plot", "notebook":
		return ReportMemoryLimit
	case "export", "score":
		return ExportMemoryLimit
	}
	if holdsTasks {
		return ReportMemoryLimit
	}
	return DefaultMemoryLimit
}

// IngestMemoryLimit is DuckDB's memory limit while ingesting: bulk loads
// stream, and a low limit keeps the whole process near 500 MB at any input
// size (measured in docs/benchmarks.md).
const IngestMemoryLimit = "160MB"

// Warehouse is an open gymlens warehouse.
type Warehouse struct {
	// Leftovers are what Open removed that killed processes had left
	// beside the warehouse (staging folders, DuckDB spill files).
	Leftovers []string
	Path      string
	// MemoryLimit is DuckDB's memory limit for this warehouse, as set.
	MemoryLimit string
	ReadOnly    bool
	// Lake: the warehouse is a Parquet lake read in place (openLake).
	Lake         bool
	exportedFrom string // a lake's meta: the warehouse's file name
	lakeInputs   bool   // a lake whose run inputs match its tables (lakeInputsUsable)
	connector    *duckdb.Connector
	db           *sql.DB
	writeMu      sync.Mutex // one annotation write at a time
	viewer       bool       // OpenOptions.Viewer
	specMu       sync.Mutex // guards specs
	specs        map[string]*scenarioSpec
	packsOnce    sync.Once // guards packs
	packs        bool      // the warehouse has event_packs
	pagePacks    bool      // the warehouse has page_packs
	typedOnce    sync.Once // registers typedEventsFunction
	typedErr     error
}

// OpenOptions tunes Open.
type OpenOptions struct {
	ReadOnly    bool
	MemoryLimit string // DuckDB memory_limit; "" means DefaultMemoryLimit
	// SchemaVersion, when > 0, migrates only up to that version (for tests
	// of the upgrade path).
	SchemaVersion int
	// Threads, when > 0, is DuckDB's threads per query (default: the
	// cores): a server answering many small queries at once does better
	// with one each.
	Threads int
	// MustExist: a warehouse that is not there is an error, not a new
	// empty one (commands that write to an existing warehouse).
	MustExist bool
	// Viewer: the warehouse's runs and scenarios do not change while it is
	// open (gymlens serve, its only writer, writes annotations alone), so
	// what every run page needs of the scenarios is read once.
	Viewer bool
}

// keepsInputs is the line of a migration that changes nothing the run
// inputs come from (a new derived table, say): it leaves them fresh.
// Any other migration makes them stale, to be rebuilt.
const keepsInputs = "-- keeps the run inputs"

type migration struct {
	version int
	name    string
	sql     string
}

func migrations() []migration {
	entries, err := fs.ReadDir(schemaFS, "schema")
	if err != nil {
		panic(err) // embedded: cannot fail
	}
	var ms []migration
	for _, e := range entries {
		n, err := strconv.Atoi(strings.SplitN(e.Name(), "_", 2)[0])
		if err != nil {
			panic("schema file without a version prefix: " + e.Name())
		}
		b, _ := schemaFS.ReadFile("schema/" + e.Name())
		ms = append(ms, migration{version: n, name: e.Name(), sql: string(b)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	return ms
}

// SchemaVersion is the schema version this gymlens writes.
func SchemaVersion() int { ms := migrations(); return ms[len(ms)-1].version }

var lockRE = regexp.MustCompile(`(?i)conflicting lock is held in (.*?)(\. |$)`)

// Open opens (creating if needed, unless read-only) the warehouse at path
// and brings its schema up to date. A warehouse written by a newer gymlens
// is refused; one held by another process gets a message saying so.
func Open(ctx context.Context, path string, opt OpenOptions) (*Warehouse, error) {
	if path == "" {
		path = DefaultPath
	}
	if IsLake(path) {
		return openLake(ctx, path, opt)
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return nil, fmt.Errorf("%s is a folder with no meta.parquet: not a lake. %s A warehouse is otherwise one DuckDB file (--db FILE.duckdb)", path, lakeHolds)
	}
	if opt.ReadOnly || opt.MustExist {
		if _, err := os.Stat(path); err != nil {
			return nil, fmt.Errorf("no warehouse at %s: run `gymlens ingest` (or `gymlens demo`) first, or name one with --db", path)
		}
	}
	dsn := path
	if opt.ReadOnly {
		dsn += "?access_mode=READ_ONLY"
	}
	mem := opt.MemoryLimit
	if mem == "" {
		mem = DefaultMemoryLimit
	}
	settings := []string{
		"SET memory_limit='" + strings.ReplaceAll(mem, "'", "") + "'",
		// Rows carry their own keys (run_id, seq): their physical order
		// need not follow the input, and not keeping it lets bulk loads
		// stream within the memory limit.
		"SET preserve_insertion_order = false",
		// DuckDB's allocator keeps the memory a finished query freed
		// unless a background thread hands it back: without one, a run
		// of large statements (the export's 26 sorted partitions of the
		// events at --scale 100) grew the process past the memory limit,
		// to 1.19 GB, where with it they stay at 641 MB (docs/benchmarks.md).
		"SET allocator_background_threads = true",
	}
	if opt.Threads > 0 {
		settings = append(settings, fmt.Sprintf("SET threads = %d", opt.Threads))
	}
	connector, err := duckdb.NewConnector(dsn, firstConnection(ctx, settings))
	if err != nil {
		return nil, openError(path, err)
	}
	w := &Warehouse{Path: path, ReadOnly: opt.ReadOnly, MemoryLimit: mem, connector: connector, db: sql.OpenDB(connector), viewer: opt.Viewer}
	if err := w.db.PingContext(ctx); err != nil {
		w.Close()
		return nil, openError(path, err)
	}
	if err := w.migrate(ctx, opt); err != nil {
		w.Close()
		return nil, err
	}
	if !opt.ReadOnly {
		// Opened for writing, the warehouse is this process's alone: what a
		// killed ingest left beside it can go.
		w.Leftovers = cleanLeftovers(path)
	}
	return w, nil
}

// firstConnection runs DuckDB's settings on the first connection of a
// database alone. They are global: later connections need none of them,
// and must not run them again. Each SET memory_limit hands every freed
// page of DuckDB's allocators back to the system (malloc_trim and a purge
// of every jemalloc arena), so that the next queries fault them in again.
// The pool opens a connection whenever queries run side by side (a run
// page reads its events in two halves): run once, the settings took a
// test that reads every run's page from 17.0–17.4 to 13.2–13.5 CPU-s, its
// page faults from 366,000–392,000 to 256,000–270,000
// (docs/benchmarks.md). A setting changed later (lowerMemory) also stays
// as it was set, where a new connection used to put the default back.
// Once a query has locked the configuration (QueryFunc), the settings
// hold as they were.
func firstConnection(ctx context.Context, settings []string) func(driver.ExecerContext) error {
	var mu sync.Mutex
	done := false
	return func(execer driver.ExecerContext) error {
		mu.Lock()
		defer mu.Unlock()
		if done {
			return nil
		}
		for _, q := range settings {
			if _, err := execer.ExecContext(ctx, q, nil); err != nil {
				if strings.Contains(err.Error(), "configuration has been locked") {
					break
				}
				return err
			}
		}
		done = true
		return nil
	}
}

// stagingPrefix names the staging folders of an ingest into the warehouse
// at path: hidden, beside it, with the warehouse's name and the process id,
// so that the leftovers of a process that died can be told apart.
func stagingPrefix(path string) string {
	return fmt.Sprintf(".gymlens-ingest-%s-%d-", filepath.Base(path), os.Getpid())
}

// cleanLeftovers removes what killed processes left beside the warehouse
// at path: staging folders of ingests whose process is gone (and, from
// gymlens versions that did not name the process, ones a day old), and
// DuckDB's spill files in <path>.tmp. It returns what it removed.
func cleanLeftovers(path string) []string {
	var removed []string
	dir, base := filepath.Dir(path), filepath.Base(path)
	entries, _ := os.ReadDir(dir)
	mine := ".gymlens-ingest-" + base + "-"
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() || !strings.HasPrefix(name, ".gymlens-ingest-") {
			continue
		}
		full := filepath.Join(dir, name)
		if rest, ok := strings.CutPrefix(name, mine); ok {
			pid, err := strconv.Atoi(strings.SplitN(rest, "-", 2)[0])
			if err != nil || pid == os.Getpid() || processAlive(pid) {
				continue
			}
		} else if strings.Count(strings.TrimPrefix(name, ".gymlens-ingest-"), "-") == 0 {
			// An older gymlens's folder: its owner is unknown.
			if info, err := e.Info(); err != nil || time.Since(info.ModTime()) < 24*time.Hour {
				continue
			}
		} else {
			continue // another warehouse's
		}
		if os.RemoveAll(full) == nil {
			removed = append(removed, full)
		}
	}
	spill := path + ".tmp"
	if files, err := os.ReadDir(spill); err == nil {
		for _, f := range files {
			if strings.HasPrefix(f.Name(), "duckdb_temp") && os.RemoveAll(filepath.Join(spill, f.Name())) == nil {
				removed = append(removed, filepath.Join(spill, f.Name()))
			}
		}
		if rest, _ := os.ReadDir(spill); len(rest) == 0 && os.Remove(spill) == nil {
			removed = append(removed, spill)
		}
	}
	return removed
}

// processAlive says whether a process with this id exists.
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

func openError(path string, err error) error {
	msg := err.Error()
	if m := lockRE.FindStringSubmatch(msg); m != nil || strings.Contains(msg, "Could not set lock") {
		holder := "another process"
		if m != nil {
			holder = strings.TrimSpace(m[1])
		}
		return fmt.Errorf("warehouse %s is in use by another process (%s): wait for it to finish (a running `gymlens serve` holds it until stopped, unless started with --read-only), or use another --db", path, holder)
	}
	return fmt.Errorf("cannot open warehouse %s: %w", path, err)
}

// Version returns the schema version stored in the warehouse (0 if empty).
func (w *Warehouse) Version(ctx context.Context) (int, error) {
	if w.Lake && w.ReadOnly { // meta is a view over meta.parquet
		var v string
		if err := w.db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'schema_version'`).Scan(&v); err != nil {
			return 0, fmt.Errorf("%s: cannot read the schema version: %w", w.Path, err)
		}
		return strconv.Atoi(v)
	}
	var n int
	err := w.db.QueryRowContext(ctx, `SELECT count(*) FROM duckdb_tables() WHERE database_name = current_database() AND schema_name = 'main'`).Scan(&n)
	if err != nil {
		return 0, err
	}
	if n == 0 {
		return 0, nil
	}
	var has int
	if err := w.db.QueryRowContext(ctx, `SELECT count(*) FROM duckdb_tables() WHERE database_name = current_database() AND schema_name = 'main' AND table_name = 'meta'`).Scan(&has); err != nil {
		return 0, err
	}
	if has == 0 {
		return 0, fmt.Errorf("%s is a DuckDB database but not a gymlens warehouse (it has no meta table)", w.Path)
	}
	var v string
	if err := w.db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'schema_version'`).Scan(&v); err != nil {
		return 0, fmt.Errorf("%s: cannot read the schema version: %w", w.Path, err)
	}
	return strconv.Atoi(v)
}

func (w *Warehouse) migrate(ctx context.Context, opt OpenOptions) error {
	cur, err := w.Version(ctx)
	if err != nil {
		return err
	}
	ms := migrations()
	target := ms[len(ms)-1].version
	if opt.SchemaVersion > 0 {
		target = opt.SchemaVersion
	}
	if cur > ms[len(ms)-1].version {
		return fmt.Errorf("warehouse %s has schema version %d, newer than this gymlens (%s) supports (%d): upgrade gymlens", w.Path, cur, Version, ms[len(ms)-1].version)
	}
	if cur >= target {
		return nil
	}
	if w.ReadOnly {
		return fmt.Errorf("warehouse %s has schema version %d and needs upgrading to %d: run a writing command (such as gymlens ingest) on it once", w.Path, cur, target)
	}
	tx, err := w.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	stale := false
	for _, m := range ms {
		if m.version <= cur || m.version > target {
			continue
		}
		if _, err := tx.ExecContext(ctx, m.sql); err != nil {
			return fmt.Errorf("migrating %s to schema %s: %w", w.Path, m.name, err)
		}
		stale = stale || !strings.Contains(m.sql, keepsInputs)
	}
	if stale {
		if _, err := tx.ExecContext(ctx, invalidateInputs); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO meta VALUES ('schema_version', ?), ('written_by', ?)`, strconv.Itoa(target), "gymlens "+Version); err != nil {
		return err
	}
	// The run inputs are stale now (invalidateInputs above: unless every
	// migration says it keeps them), until the
	// next ingest, score or judge rebuilds them.
	return tx.Commit()
}

// FileName is the warehouse's file name; for a lake, the file name of the
// warehouse it was exported from (so that a report names the same).
func (w *Warehouse) FileName() string {
	if w.Lake && w.exportedFrom != "" {
		return w.exportedFrom
	}
	return filepath.Base(w.Path)
}

// Close closes the warehouse.
func (w *Warehouse) Close() error {
	err := w.db.Close()
	if cerr := w.connector.Close(); err == nil {
		err = cerr
	}
	return err
}

// DB gives read access for the packages that load typed rows.
func (w *Warehouse) DB() *sql.DB { return w.db }

// ErrReadOnly is returned for a write to a warehouse opened read-only.
var ErrReadOnly = errors.New("warehouse opened read-only")

// Name is the warehouse's path (the judge keeps its journal beside it).
func (w *Warehouse) Name() string { return w.Path }
