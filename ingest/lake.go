package ingest

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"

	duckdb "github.com/duckdb/duckdb-go/v2"
	"github.com/zeebo/xxh3"
)

// A lake is the folder `gymlens export --format parquet` writes: one
// Parquet file per table, the large tables split into one file per
// configuration (TABLE/config_key=K/part_0.parquet). Opened as a
// warehouse (--db DIR), it is read in place and read-only: an in-memory
// DuckDB holds the schema, and each table with data is a view over its
// Parquet files, so every query, and every analysis on top, reads the same
// rows as on the DuckDB file the lake came from.

// IsLake says whether path is a folder holding an exported warehouse.
func IsLake(path string) bool {
	st, err := os.Stat(path)
	if err != nil || !st.IsDir() {
		return false
	}
	_, err = os.Stat(filepath.Join(path, "meta.parquet"))
	return err == nil
}

func openLake(ctx context.Context, path string, opt OpenOptions) (*Warehouse, error) {
	if !opt.ReadOnly {
		return nil, fmt.Errorf("%s is a Parquet lake (gymlens export): it is read in place, read-only; ingest, score, judge and annotate write to a DuckDB file (--db FILE.duckdb)", path)
	}
	mem := opt.MemoryLimit
	if mem == "" {
		mem = DefaultMemoryLimit
	}
	settings := []string{"SET memory_limit='" + strings.ReplaceAll(mem, "'", "") + "'", "SET preserve_insertion_order = false"}
	if opt.Threads > 0 {
		settings = append(settings, fmt.Sprintf("SET threads = %d", opt.Threads))
	}
	connector, err := duckdb.NewConnector("", firstConnection(ctx, settings))
	if err != nil {
		return nil, openError(path, err)
	}
	// Every connection of the connector reaches the same in-memory database.
	db := sql.OpenDB(connector)
	w := &Warehouse{Path: path, MemoryLimit: mem, connector: connector, db: db, viewer: opt.Viewer, Lake: true}
	if err := w.migrate(ctx, OpenOptions{}); err != nil {
		w.Close()
		return nil, err
	}
	if err := lakeRegular(path, "meta.parquet"); err != nil {
		w.Close()
		return nil, err
	}
	tableFiles := map[string][]string{}
	for _, t := range exportTables {
		files, err := lakeFiles(path, t)
		if err != nil {
			w.Close()
			return nil, err
		}
		if len(files) == 0 {
			continue // no rows: the empty table stands
		}
		tableFiles[t.name] = files
		q := make([]string, len(files))
		for i, f := range files {
			q[i] = sqlString(f)
		}
		if _, err := w.db.ExecContext(ctx, `DROP TABLE `+t.name); err != nil {
			w.Close()
			return nil, fmt.Errorf("lake %s: %w", path, err)
		}
		if _, err := w.db.ExecContext(ctx, `CREATE VIEW `+t.name+` AS SELECT * FROM read_parquet([`+strings.Join(q, ", ")+`])`); err != nil {
			w.Close()
			return nil, fmt.Errorf("lake %s: table %s: %w", path, t.name, err)
		}
	}
	if err := checkLake(ctx, w.db, path, tableFiles); err != nil {
		w.Close()
		return nil, err
	}
	// The run inputs, when the lake carries them for the tables it holds
	// (export.go): else the analyses read the tables.
	if _, err := os.Lstat(filepath.Join(path, lakeInputsFile)); err == nil {
		if err := lakeRegular(path, lakeInputsFile); err != nil {
			w.Close()
			return nil, err
		}
	}
	ok, err := lakeInputsUsable(ctx, w.db, path)
	if err != nil {
		w.Close()
		return nil, err
	}
	if ok {
		if _, err := w.db.ExecContext(ctx, `DROP TABLE run_inputs`); err != nil {
			w.Close()
			return nil, fmt.Errorf("lake %s: %w", path, err)
		}
		if _, err := w.db.ExecContext(ctx, `CREATE VIEW run_inputs AS SELECT * FROM read_parquet(`+sqlString(filepath.Join(path, lakeInputsFile))+`)`); err != nil {
			w.Close()
			return nil, fmt.Errorf("lake %s: %s: %w", path, lakeInputsFile, err)
		}
		w.lakeInputs = true
	}
	var v string
	if err := w.db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'schema_version'`).Scan(&v); err != nil {
		w.Close()
		return nil, fmt.Errorf("lake %s: meta.parquet: %w", path, err)
	}
	ms := migrations()
	if n, _ := strconv.Atoi(v); n != ms[len(ms)-1].version {
		w.Close()
		return nil, fmt.Errorf("lake %s has schema version %s, this gymlens reads %d: export it again from its warehouse with this gymlens", path, v, ms[len(ms)-1].version)
	}
	// What export recorded of the warehouse: its file name (none in a
	// lake written before it did).
	if err := w.db.QueryRowContext(ctx, `SELECT coalesce(max(value), '') FROM meta WHERE key = 'exported_from'`).Scan(&w.exportedFrom); err != nil {
		w.Close()
		return nil, fmt.Errorf("lake %s: meta.parquet: %w", path, err)
	}
	w.ReadOnly = true
	return w, nil
}

// lakeFiles lists a table's Parquet files in the lake, in order. Each is
// a regular file, reached through no symbolic link inside the lake
// (lakeRegular).
func lakeFiles(dir string, t exportTable) ([]string, error) {
	if !t.partitioned {
		f := filepath.Join(dir, t.name+".parquet")
		if _, err := os.Lstat(f); err != nil {
			return nil, fmt.Errorf("lake %s: no %s.parquet: is it a complete gymlens export? %s", dir, t.name, lakeHolds)
		}
		if err := lakeRegular(dir, t.name+".parquet"); err != nil {
			return nil, err
		}
		return []string{f}, nil
	}
	if _, err := os.Lstat(filepath.Join(dir, t.name)); err == nil {
		if err := lakeRegular(dir, t.name); err != nil {
			return nil, err
		}
	}
	// The pattern is matched below dir, never in it: a folder named with
	// [, *, ? or \ is a name, not a pattern.
	rels, err := fs.Glob(os.DirFS(dir), t.name+"/config_key=*/*.parquet")
	sort.Strings(rels)
	parts := make([]string, len(rels))
	for i, rel := range rels {
		if err := lakeRegular(dir, filepath.FromSlash(rel)); err != nil {
			return nil, err
		}
		parts[i] = filepath.Join(dir, filepath.FromSlash(rel))
	}
	return parts, err
}

// lakeHolds says what makes a lake, for the messages of a folder that is
// not one.
const lakeHolds = "A lake (gymlens export --format parquet --out DIR) holds meta.parquet, one TABLE.parquet for each other table " +
	"(runs.parquet, scenarios.parquet, …) and the folders events/, task_outcomes/ and judgments/ of Parquet files by configuration (config_key=…/part_0.parquet)."

// lakeRegular refuses a path inside a lake (rel, relative to dir) that
// is, or goes through, a symbolic link, or that is not a regular file or
// folder. A lake is read in place, and its views may read its own folder
// alone (query's allowed_directories): a link would read whatever file it
// points to, as a table of the lake.
func lakeRegular(dir, rel string) error {
	if !filepath.IsLocal(rel) {
		return fmt.Errorf("lake %s: %s is not a path inside the lake", dir, rel)
	}
	p := dir
	for _, part := range strings.Split(filepath.Clean(rel), string(filepath.Separator)) {
		p = filepath.Join(p, part)
		st, err := os.Lstat(p)
		if err != nil {
			return fmt.Errorf("lake %s: %w", dir, err)
		}
		name, _ := filepath.Rel(dir, p)
		switch {
		case st.Mode()&os.ModeSymlink != 0:
			return fmt.Errorf("lake %s: %s is a symbolic link: a lake's files and folders must be its own, not links (docs/scale.md)", dir, name)
		case !st.Mode().IsRegular() && !st.IsDir():
			return fmt.Errorf("lake %s: %s is not a regular file (%s)", dir, name, st.Mode().Type())
		}
	}
	return nil
}

// lakeKey is a table's key: the columns that name one of its rows
// (docs/format.md, docs/warehouse.md).
type lakeKey struct {
	table string
	cols  []string
}

// lakeKeys are the keys a lake must hold unique. An engine that appends
// to a lake's files can repeat rows that gymlens' ingest never lets in,
// and every mean over them would weigh the repeated rows twice.
//
// unvouched marks a key or reference the warehouse does not hold by
// construction, which export checks on the warehouse before it vouches
// for the lake (exportVouches). The judgments' key: the judge saves a
// batch of answers replacing the judgments of their keys, and a batch
// holding two valid answers of one key (two seeds of --repeats before
// they are settled) stores both. The runs' personas: a scenario replaced
// (ingest --replace) is stored with its new personas, and only the runs
// of that input are checked against them, so a stored run may name a
// persona the new spec dropped.
var lakeKeys = []struct {
	lakeKey
	unvouched bool
}{
	{lakeKey{"scenarios", []string{"scenario"}}, false},
	{lakeKey{"personas", []string{"scenario", "persona"}}, false},
	{lakeKey{"runs", []string{"run_id"}}, false},
	{lakeKey{"task_outcomes", []string{"run_id", "task"}}, false},
	{lakeKey{"judgments", []string{"run_id", "task", "metric", "judge", "prompt"}}, true},
	{lakeKey{"events", []string{"run_id", "seq"}}, false},
}

// lakeParents are the references a lake's rows must keep: every child
// row (its columns) has the parent row of the same values.
// unvouched: as for lakeKeys.
var lakeParents = []struct {
	child     lakeKey
	parent    lakeKey
	unvouched bool
}{
	{lakeKey{"personas", []string{"scenario"}}, lakeKey{"scenarios", []string{"scenario"}}, false},
	{lakeKey{"runs", []string{"scenario", "persona"}}, lakeKey{"personas", []string{"scenario", "persona"}}, true},
	{lakeKey{"task_outcomes", []string{"run_id"}}, lakeKey{"runs", []string{"run_id"}}, false},
	{lakeKey{"judgments", []string{"run_id"}}, lakeKey{"runs", []string{"run_id"}}, false},
	{lakeKey{"events", []string{"run_id"}}, lakeKey{"runs", []string{"run_id"}}, false},
}

func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

func identList(cols []string, prefix string) string {
	q := make([]string, len(cols))
	for i, c := range cols {
		q[i] = prefix + quoteIdent(c)
	}
	return strings.Join(q, ", ")
}

// lakeCheckDir is the folder where gymlens remembers the lakes whose
// check passed ("" to remember none): one file per lake folder, holding
// the fingerprint of the files checked.
var lakeCheckDir = func() string {
	d, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "gymlens", "lake-checks")
}

// checkLake refuses a lake (its tables already views over files) whose
// keys repeat or whose child rows lack their parent, naming the file, the
// key and the first value found: one query per key and per reference,
// over the key columns alone. The check reads every key of the largest
// tables, several times what metrics reads from a lake with its run
// inputs (docs/benchmarks.md). So it is left out for a lake as export
// wrote it, from a warehouse that holds those keys and references: its
// table files' digests are those export recorded in meta.parquet
// (lakeDigestsMatch, exportVouches). And a lake that passed is remembered by the names, sizes and
// modification times of the files checked, and checked again when one of
// them changes.
func checkLake(ctx context.Context, db *sql.DB, dir string, files map[string][]string) error {
	memo, fp := lakeCheckMemo(dir, files)
	if memo != "" {
		if b, err := os.ReadFile(memo); err == nil && string(b) == fp {
			return nil
		}
	}
	vouched, err := lakeDigestsMatch(ctx, db, dir, files)
	if err != nil {
		return err
	}
	if !vouched {
		if err := runLakeCheck(ctx, db, dir, files, false); err != nil {
			return err
		}
	}
	if memo != "" {
		// Only a memory: a folder that cannot be written checks again next time.
		if os.MkdirAll(filepath.Dir(memo), 0o755) == nil {
			_ = os.WriteFile(memo, []byte(fp), 0o644)
		}
	}
	return nil
}

// lakeDigestsKey is the meta row where export records the digests of the
// lake's table files (lakeDigests). meta.parquet itself is not among
// them: it holds no key the check reads.
const lakeDigestsKey = "table_digests"

// lakeDigestsHead opens the record: its version and the hash.
const lakeDigestsHead = "gymlens table digests 1, xxh3-128\n"

// lakeDigestBuf is the buffer a table file is read through to digest it.
const lakeDigestBuf = 1 << 20

// lakeDigestFile digests the file at path: its size and the hex of the
// xxh3-128 of its bytes, read once through a buffer of lakeDigestBuf.
func lakeDigestFile(path string, buf []byte) (int64, string, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, "", err
	}
	defer f.Close()
	h := xxh3.New()
	n, err := io.CopyBuffer(h, f, buf)
	if err != nil {
		return 0, "", err
	}
	sum := h.Sum128().Bytes()
	return n, hex.EncodeToString(sum[:]), nil
}

// lakeTableFiles lists the table files of the lake in dir that the
// digests cover, with their paths relative to dir (slashes): every
// table's files but meta.parquet, in export order. files are the tables'
// files as lakeFiles lists them.
func lakeTableFiles(dir string, files map[string][]string) (paths, rels []string, err error) {
	for _, t := range exportTables {
		if t.name == "meta" {
			continue
		}
		for _, f := range files[t.name] {
			rel, err := filepath.Rel(dir, f)
			if err != nil {
				return nil, nil, err
			}
			paths = append(paths, f)
			rels = append(rels, filepath.ToSlash(rel))
		}
	}
	return paths, rels, nil
}

// lakeTables lists the files of every table of the lake in dir but meta
// (lakeFiles).
func lakeTables(dir string) (map[string][]string, error) {
	files := map[string][]string{}
	for _, t := range exportTables {
		if t.name == "meta" {
			continue
		}
		fs, err := lakeFiles(dir, t)
		if err != nil {
			return nil, err
		}
		files[t.name] = fs
	}
	return files, nil
}

// lakeDigests is the record export writes of the lake in dir, whose
// table files are files (lakeTables): after lakeDigestsHead, a line per
// table file (lakeTableFiles): its relative path, size and digest,
// tab-separated.
func lakeDigests(dir string, files map[string][]string) (string, error) {
	paths, rels, err := lakeTableFiles(dir, files)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString(lakeDigestsHead)
	buf := make([]byte, lakeDigestBuf)
	for i, p := range paths {
		n, sum, err := lakeDigestFile(p, buf)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "%s\t%d\t%s\n", rels[i], n, sum)
	}
	return b.String(), nil
}

// lakeDigestsMatch says whether the lake's table files are those export
// recorded: the same paths, sizes and digests, no file more or less.
// Names and sizes are compared first, so that a lake another engine
// changed is seldom read twice; no record (a lake written by another
// tool, or meta.parquet rewritten) is no match.
func lakeDigestsMatch(ctx context.Context, db *sql.DB, dir string, files map[string][]string) (bool, error) {
	var n int
	var rec string
	if err := db.QueryRowContext(ctx, `SELECT count(*), coalesce(max(value), '') FROM meta WHERE key = '`+lakeDigestsKey+`'`).Scan(&n, &rec); err != nil {
		return false, fmt.Errorf("lake %s: meta.parquet: %w", dir, err)
	}
	body, ok := strings.CutPrefix(rec, lakeDigestsHead)
	if n != 1 || !ok {
		return false, nil
	}
	paths, rels, err := lakeTableFiles(dir, files)
	if err != nil {
		return false, nil
	}
	lines := strings.Split(body, "\n")
	if len(lines) != len(paths)+1 || lines[len(paths)] != "" {
		return false, nil
	}
	for i, p := range paths {
		f := strings.Split(lines[i], "\t")
		st, err := os.Stat(p)
		if len(f) != 3 || f[0] != rels[i] || err != nil || strconv.FormatInt(st.Size(), 10) != f[1] {
			return false, nil
		}
	}
	buf := make([]byte, lakeDigestBuf)
	for i, p := range paths {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		n, sum, err := lakeDigestFile(p, buf)
		if err != nil || fmt.Sprintf("%s\t%d\t%s", rels[i], n, sum) != lines[i] {
			return false, nil
		}
	}
	return true, nil
}

// lakeCheckMemo is the file remembering the lake at dir and the
// fingerprint of its checked files as they are now ("" when there is
// nowhere to remember).
func lakeCheckMemo(dir string, files map[string][]string) (memo, fp string) {
	cache := lakeCheckDir()
	abs, err := filepath.Abs(dir)
	if cache == "" || err != nil {
		return "", ""
	}
	h := sha256.New()
	fmt.Fprintf(h, "gymlens lake check 2\n%s\n", abs)
	for _, k := range lakeKeys {
		fmt.Fprintf(h, "%s %v\n", k.table, k.cols)
	}
	for _, r := range lakeParents {
		fmt.Fprintf(h, "%s %v > %s %v\n", r.child.table, r.child.cols, r.parent.table, r.parent.cols)
	}
	tables := make([]string, 0, len(files))
	for t := range files {
		tables = append(tables, t)
	}
	sort.Strings(tables)
	for _, t := range tables {
		for _, f := range files[t] {
			st, err := os.Stat(f)
			if err != nil {
				return "", ""
			}
			fmt.Fprintf(h, "%s %d %d %s\n", f, st.Size(), st.ModTime().UnixNano(), changeStamp(st))
		}
	}
	name := sha256.Sum256([]byte(abs))
	return filepath.Join(cache, hex.EncodeToString(name[:16])), hex.EncodeToString(h.Sum(nil))
}

// lakeFullChecks counts the full checks of keys and parents run (for
// the tests: a lake as export wrote it opens without one).
var lakeFullChecks atomic.Int64

// runLakeCheck checks the keys and references of the tables of db that
// have files (files: the lake's, named in the messages); with
// unvouchedOnly, only those marked unvouched.
func runLakeCheck(ctx context.Context, db *sql.DB, dir string, files map[string][]string, unvouchedOnly bool) error {
	if !unvouchedOnly {
		lakeFullChecks.Add(1)
	}
	for _, k := range lakeKeys {
		if len(files[k.table]) == 0 || (unvouchedOnly && !k.unvouched) {
			continue
		}
		vals, n, err := repeatedKey(ctx, db, k.lakeKey)
		if err != nil {
			return fmt.Errorf("lake %s: checking the key of %s: %w", dir, k.table, err)
		}
		if vals == nil {
			continue
		}
		file := lakeFileOf(ctx, db, dir, files[k.table], k.cols, vals)
		return fmt.Errorf("lake %s: %s: the key (%s) of table %s repeats: %s is in %d rows; a lake's keys are unique (docs/scale.md)",
			dir, file, strings.Join(k.cols, ", "), k.table, keyValue(k.cols, vals), n)
	}
	for _, r := range lakeParents {
		if len(files[r.child.table]) == 0 || (unvouchedOnly && !r.unvouched) {
			continue
		}
		on := make([]string, len(r.child.cols))
		for i := range r.child.cols {
			on[i] = "c." + quoteIdent(r.child.cols[i]) + " = p." + quoteIdent(r.parent.cols[i])
		}
		q := `SELECT ` + castList(r.child.cols, "c.") + `, 1 FROM ` + quoteIdent(r.child.table) + ` c ANTI JOIN ` +
			quoteIdent(r.parent.table) + ` p ON ` + strings.Join(on, " AND ") + ` LIMIT 1`
		vals, _, err := firstRow(ctx, db, q, len(r.child.cols))
		if err != nil {
			return fmt.Errorf("lake %s: checking the rows of %s against %s: %w", dir, r.child.table, r.parent.table, err)
		}
		if vals == nil {
			continue
		}
		file := lakeFileOf(ctx, db, dir, files[r.child.table], r.child.cols, vals)
		parent := r.parent.table + ".parquet"
		return fmt.Errorf("lake %s: %s: a row of %s with %s has no row in %s (key %s): a lake holds no row without its parent (docs/scale.md)",
			dir, file, r.child.table, keyValue(r.child.cols, vals), parent, strings.Join(r.parent.cols, ", "))
	}
	return nil
}

// repeatedKey finds a value of k's key held by more than one row of its
// table (nil when none), and in how many. The rows are grouped by a
// hash of the key first, which takes half the time and memory of the key
// itself at --scale 10 (docs/benchmarks.md); a repeated hash is then
// looked at by the key, so that a collision is not taken for a repeat.
func repeatedKey(ctx context.Context, db *sql.DB, k lakeKey) ([]string, int64, error) {
	h := `hash(` + identList(k.cols, "") + `)`
	rows, err := db.QueryContext(ctx, `SELECT h FROM (SELECT `+h+` AS h FROM `+quoteIdent(k.table)+`) GROUP BY h HAVING count(*) > 1 LIMIT 1000`)
	if err != nil {
		return nil, 0, err
	}
	var hashes []string
	for rows.Next() {
		var v uint64
		if err := rows.Scan(&v); err != nil {
			rows.Close()
			return nil, 0, err
		}
		hashes = append(hashes, strconv.FormatUint(v, 10)+"::UBIGINT")
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(hashes) == 0 {
		return nil, 0, err
	}
	return firstRow(ctx, db, `SELECT `+castList(k.cols, "")+`, count(*) FROM `+quoteIdent(k.table)+
		` WHERE `+h+` IN (`+strings.Join(hashes, ", ")+`) GROUP BY `+identList(k.cols, "")+
		` HAVING count(*) > 1 ORDER BY ALL LIMIT 1`, len(k.cols))
}

func castList(cols []string, prefix string) string {
	q := make([]string, len(cols))
	for i, c := range cols {
		q[i] = "CAST(" + prefix + quoteIdent(c) + " AS VARCHAR)"
	}
	return strings.Join(q, ", ")
}

// firstRow reads the first row of q: ncols values (NULL as "") and a
// count; nil values when q has no row.
func firstRow(ctx context.Context, db *sql.DB, q string, ncols int) ([]string, int64, error) {
	vals := make([]sql.NullString, ncols)
	var n int64
	dest := make([]any, 0, ncols+1)
	for i := range vals {
		dest = append(dest, &vals[i])
	}
	dest = append(dest, &n)
	err := db.QueryRowContext(ctx, q).Scan(dest...)
	if err == sql.ErrNoRows {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	out := make([]string, ncols)
	for i, v := range vals {
		out[i] = v.String
	}
	return out, n, nil
}

// keyValue writes a key's value: run_id "r1", task "t".
func keyValue(cols, vals []string) string {
	parts := make([]string, len(cols))
	for i := range cols {
		parts[i] = fmt.Sprintf("%s %s", cols[i], strconv.Quote(vals[i]))
	}
	return strings.Join(parts, ", ")
}

// lakeFileOf names the first of files (relative to dir) holding a row
// with the values vals in cols; only called once a check has failed.
func lakeFileOf(ctx context.Context, db *sql.DB, dir string, files, cols, vals []string) string {
	rel := func(f string) string {
		r, err := filepath.Rel(dir, f)
		if err != nil {
			return f
		}
		return r
	}
	if len(files) == 1 {
		return rel(files[0])
	}
	q := make([]string, len(files))
	for i, f := range files {
		q[i] = sqlString(f)
	}
	where := make([]string, len(cols))
	args := make([]any, len(cols))
	for i, c := range cols {
		where[i] = "CAST(" + quoteIdent(c) + " AS VARCHAR) IS NOT DISTINCT FROM ?"
		args[i] = vals[i]
	}
	var f string
	if err := db.QueryRowContext(ctx, `SELECT filename FROM read_parquet([`+strings.Join(q, ", ")+`], filename = true) WHERE `+
		strings.Join(where, " AND ")+` ORDER BY filename LIMIT 1`, args...).Scan(&f); err != nil {
		return rel(files[0]) + " (and the other files of " + rel(filepath.Dir(filepath.Dir(files[0]))) + "/)"
	}
	return rel(f)
}
