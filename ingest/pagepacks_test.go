package ingest

import (
	"database/sql"
	"math"
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/gymlens/gymlens/ingest/rows"
)

// samePages compares two pages as DeepEqual would, but with NaNs (missing
// scores) equal to themselves: the tasks and TA labels by the run inputs'
// encoding, which keeps every bit.
func samePages(a, b *rows.RunPage) bool {
	if a == nil || b == nil {
		return a == b
	}
	x := RunRow{Tasks: a.Tasks, TA: a.TA, Custom: a.Custom}
	y := RunRow{Tasks: b.Tasks, TA: b.TA, Custom: b.Custom}
	return sameTasks(&x, &y) && reflect.DeepEqual(a.TaskViews, b.TaskViews) && reflect.DeepEqual(a.Judgments, b.Judgments) &&
		reflect.DeepEqual(a.Events, b.Events) && a.Capped == b.Capped && reflect.DeepEqual(a.Window, b.Window)
}

// pagePacksGiveTheTables checks that the page packs are fresh or not as
// the step should leave them; then (on a warehouse it may write) that a
// refresh packs every run when they are stale and none when fresh, and
// that every page read from the packs is the page read from the tables.
func pagePacksGiveTheTables(t *testing.T, w *Warehouse, step string, fresh bool) {
	t.Helper()
	if got := w.PagePacksFresh(ctx); got != fresh {
		t.Fatalf("%s: page packs fresh %v, want %v", step, got, fresh)
	}
	if w.ReadOnly {
		return
	}
	ids := runIDs(t, w)
	st, err := w.RefreshPagePacks(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[bool]int{true: 0, false: len(ids)}[fresh]; st.Runs != want || st.Skipped != 0 || !w.PagePacksFresh(ctx) {
		t.Fatalf("%s: refreshing the page packs: %+v, want %d runs", step, st, want)
	}
	var packed map[string]*rows.RunPage
	read := func() map[string]*rows.RunPage {
		out := map[string]*rows.RunPage{}
		for lo := 0; lo < len(ids); lo += 50 {
			pages, err := w.RunPages(ctx, ids[lo:min(lo+50, len(ids))])
			if err != nil {
				t.Fatal(err)
			}
			for id, p := range pages {
				out[id] = p
			}
		}
		return out
	}
	packed = read()
	if _, err := w.db.Exec(`DELETE FROM meta WHERE key = 'page_packs'`); err != nil {
		t.Fatal(err)
	}
	tables := read()
	if _, err := w.db.Exec(`INSERT INTO meta VALUES ('page_packs', ?)`, pageFormat); err != nil {
		t.Fatal(err)
	}
	judged := 0
	for _, id := range ids {
		if !samePages(packed[id], tables[id]) {
			t.Fatalf("%s: %s: the page from its packs differs from the tables'", step, id)
		}
		judged += len(packed[id].Judgments)
	}
	if judged == 0 && step != "upgraded" && step != "upgraded, rebuilt" && step != "ingest of runs" {
		t.Fatalf("%s: no judgment on any page", step)
	}
}

// The pages read the packs while they are fresh (the tables changed
// behind their back, which no writer does, are not seen); a pack that
// does not decode sends its run to the tables; a writer makes them all
// stale, also one that runs while they are rebuilt; past
// MaxPackJudgments nothing is packed.
func TestPagePacksAreRead(t *testing.T) {
	w, dir := samplePath(t, 0)
	ids := runIDs(t, w)
	a, b, c := ids[0], ids[1], ids[2]
	var told [][2]int
	st, err := w.RefreshPagePacks(ctx, func(done, total int) { told = append(told, [2]int{done, total}) })
	if err != nil || st.Runs != len(ids) || st.Bytes == 0 {
		t.Fatalf("refresh: %+v, %v", st, err)
	}
	if len(told) == 0 || told[len(told)-1] != [2]int{len(ids), len(ids)} {
		t.Errorf("progress told %v", told)
	}
	for _, q := range []string{`UPDATE judgments SET reasons = 'changed' WHERE run_id IN (?, ?, ?)`, `UPDATE task_outcomes SET chosen_depth = 'changed' WHERE run_id IN (?, ?, ?)`} {
		if _, err := w.db.Exec(q, a, b, c); err != nil {
			t.Fatal(err)
		}
	}
	changed := func() map[string]bool {
		pages, err := w.RunPages(ctx, []string{a, b, c})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]bool{}
		for id, p := range pages {
			for _, j := range p.Judgments {
				if j.Reasons == "changed" {
					out[id] = true
				}
			}
			for _, v := range p.TaskViews {
				if v.LoggedChosen == "changed" {
					out[id] = true
				}
			}
		}
		return out
	}
	if got := changed(); len(got) != 0 {
		t.Fatalf("the pages read the tables, not the packs: %v", got)
	}
	// b's pack is damaged: b alone is read from the tables.
	if _, err := w.db.Exec(`UPDATE page_packs SET pack = '\x01\x28\xb5\x2f\xfd'::BLOB WHERE run_id = ?`, b); err != nil {
		t.Fatal(err)
	}
	if got := changed(); !got[b] || got[a] || got[c] {
		t.Errorf("runs read from the tables: %v, want %s alone", got, b)
	}
	// An ingest of judgments (the same files: nothing new, nothing
	// written) leaves them fresh; one that writes makes them stale.
	if _, err := w.Ingest(ctx, []string{dir}, IngestOptions{}); err != nil || !w.PagePacksFresh(ctx) {
		t.Fatalf("an ingest that wrote nothing: fresh %v (%v)", w.PagePacksFresh(ctx), err)
	}
	if err := w.ReplaceScores(ctx, func(emit func(TaskScore) error) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if w.PagePacksFresh(ctx) {
		t.Fatal("the page packs are fresh after a rescoring")
	}
	if got := changed(); !got[a] || !got[b] || !got[c] {
		t.Errorf("stale packs: runs read from the tables %v, want all three", got)
	}
	// A writer that runs while they are rebuilt leaves them stale.
	defer func(b int) { pageBatch = b }(pageBatch)
	pageBatch = 20
	wrote := false
	st, err = w.RefreshPagePacks(ctx, func(done, total int) {
		if !wrote && done >= total/2 {
			wrote = true
			if err := w.ReplaceScores(ctx, func(emit func(TaskScore) error) error { return nil }); err != nil {
				t.Error(err)
			}
		}
	})
	if err != nil || !wrote || st.Runs != len(ids) || w.PagePacksFresh(ctx) {
		t.Fatalf("a rescoring during the rebuild: %+v, %v; fresh %v", st, err, w.PagePacksFresh(ctx))
	}
	if st, err := w.RefreshPagePacks(ctx, nil); err != nil || st.Runs != len(ids) || !w.PagePacksFresh(ctx) {
		t.Fatalf("the next rebuild: %+v, %v", st, err)
	}
	if err := w.ReplaceScores(ctx, func(emit func(TaskScore) error) error { return nil }); err != nil {
		t.Fatal(err)
	}
	// A batch of runs at a time read from the lines that hold them: each
	// page from its pack is the tables'.
	pageBatch = 7
	pagePacksGiveTheTables(t, w, "batches of 7 runs", false)
	if err := w.ReplaceScores(ctx, func(emit func(TaskScore) error) error { return nil }); err != nil {
		t.Fatal(err)
	}
	defer func(m int64) { MaxPackJudgments = m }(MaxPackJudgments)
	MaxPackJudgments = 100
	if st, err := w.RefreshPagePacks(ctx, nil); err != nil || st.Runs != 0 || st.Skipped != len(ids) || w.PagePacksFresh(ctx) {
		t.Fatalf("refresh past the bound: %+v, %v", st, err)
	}
}

// A page pack keeps every field as it was, floats to the bit, and any cut
// or damaged pack is an error, never a panic or a wrong page.
func TestPagePackRoundTrip(t *testing.T) {
	nan := math.Float64frombits(0x7ff8000000000001)
	null := func(x float64) sql.NullFloat64 { return sql.NullFloat64{Float64: x, Valid: true} }
	r := &pageRows{
		scores: []pageScore{{task: "a", expected: "suggest", chosen: "noop", prefer: "derived", effExpected: "suggest", effChosen: "exécute",
			derived: [3]sql.NullFloat64{null(0.5), {}, null(math.Inf(-1))}, effective: [3]sql.NullFloat64{{}, null(math.Copysign(0, -1)), null(1)}}},
		tasks: []pageTask{
			{task: "a", active: true, at: sql.NullTime{Time: time.Date(1969, 7, 20, 20, 17, 40, 123456000, time.UTC), Valid: true}, finalSeq: 1 << 40,
				expected: "suggest", chosen: "", logged: [3]sql.NullFloat64{null(nan), {}, null(0.25)}},
			{task: "b <script>", finalSeq: -1},
		},
		judgments: []pageJudgment{
			{task: "a", metric: "tc", judge: "j\x00", prompt: "v2", v: [11]float64{0.1, nan, math.MaxFloat64, math.SmallestNonzeroFloat64, 5, 6, 7, 8, 9, 10, 11},
				cq: null(3), reasons: "because", evidence: `[{"seq":1,"quote":"x"}]`},
			{metric: "ta", judge: "j", both: null(1), custom: sql.NullString{String: `{"x":1}`, Valid: true}},
			{metric: "custom.y", custom: sql.NullString{Valid: true}},
		},
	}
	pack := encodePage(r)
	got, err := decodePage(pack)
	if err != nil {
		t.Fatal(err)
	}
	if again := encodePage(got); string(again) != string(pack) {
		t.Fatal("a pack decoded and encoded again differs")
	}
	if math.Float64bits(got.judgments[0].v[1]) != math.Float64bits(nan) || math.Float64bits(got.tasks[0].logged[0].Float64) != math.Float64bits(nan) {
		t.Error("a NaN's bits changed")
	}
	got.judgments[0].v[1], r.judgments[0].v[1] = 0, 0
	got.tasks[0].logged[0].Float64, r.tasks[0].logged[0].Float64 = 0, 0
	if !reflect.DeepEqual(got, r) {
		t.Fatalf("round trip:\n%+v\n%+v", got, r)
	}
	if got, err := decodePage(encodePage(&pageRows{})); err != nil || len(got.tasks)+len(got.scores)+len(got.judgments) != 0 {
		t.Errorf("an empty run: %+v, %v", got, err)
	}
	for n := range len(pack) {
		if _, err := decodePage(pack[:n]); err == nil {
			t.Errorf("a pack cut to %d of %d bytes decodes", n, len(pack))
		}
	}
	raw, _ := packDecoder().DecodeAll(pack[1:], nil)
	for n := range len(raw) {
		if _, err := decodePage(packEncoder().EncodeAll(raw[:n], []byte{pageFormat})); err == nil {
			t.Errorf("a payload cut to %d of %d bytes decodes", n, len(raw))
		}
	}
	if _, err := decodePage(packEncoder().EncodeAll(append(raw, 0), []byte{pageFormat})); err == nil {
		t.Error("a payload with a byte after its rows decodes")
	}
	if _, err := decodePage(encodePack(nil)); err == nil && packFormat != pageFormat {
		t.Error("an event pack decodes as a page pack")
	}
	if _, err := decodePage(append([]byte{pageFormat + 1}, pack[1:]...)); err == nil {
		t.Error("a pack of another format decodes")
	}
}

// PackRuns packs a new warehouse's events and pages, leaves DuckDB's
// checkpoint threshold as it found it, and ends with a checkpoint (the
// log empty): nothing of the packing left to replay.
func TestPackRunsPacksAndCheckpoints(t *testing.T) {
	w, _ := samplePath(t, 0)
	var before string
	w.db.QueryRow(`SELECT current_setting('checkpoint_threshold')`).Scan(&before)
	var stages []string
	if err := w.PackRuns(ctx, func(stage string, done, total int) {
		if len(stages) == 0 || stages[len(stages)-1] != stage {
			stages = append(stages, stage)
		}
	}); err != nil {
		t.Fatal(err)
	}
	if len(stages) != 2 || !w.PagePacksFresh(ctx) {
		t.Fatalf("stages told %q, page packs fresh %v", stages, w.PagePacksFresh(ctx))
	}
	var after string
	w.db.QueryRow(`SELECT current_setting('checkpoint_threshold')`).Scan(&after)
	if after != before {
		t.Errorf("checkpoint_threshold %q after packing, %q before", after, before)
	}
	if st, err := os.Stat(w.Path + ".wal"); err == nil && st.Size() > 0 {
		t.Errorf("the log holds %d bytes after packing", st.Size())
	}
	var unpacked int
	w.db.QueryRow(`SELECT count(*) FROM runs r WHERE NOT EXISTS (SELECT 1 FROM event_packs p WHERE p.run_id = r.run_id)`).Scan(&unpacked)
	if unpacked != 0 {
		t.Errorf("%d runs without an event pack", unpacked)
	}
}

// While they pack, RefreshEventPacks and RefreshPagePacks checkpoint once
// every packCheckpointBytes of packs appended: DuckDB holds the rows
// appended since the last checkpoint in memory (and in its log), so that
// without them the packing's memory grows with the runs packed. The log
// stays within a checkpoint's worth, and the packs are there after a
// reopen.
func TestPackingCheckpointsAsItGoes(t *testing.T) {
	if testing.Short() {
		t.Skip("packs a warehouse with a checkpoint every few runs: several seconds")
	}
	defer func(b int64, n, p int) { packCheckpointBytes, packAppendRuns, pageBatch = b, n, p }(packCheckpointBytes, packAppendRuns, pageBatch)
	path, _ := sampleCopy(t, sampleKind{seed: 5, configs: 2})
	w, err := Open(ctx, path, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { w.Close() }()
	ids := runIDs(t, w)
	// No automatic checkpoint in between (PackRuns raises the threshold).
	if _, err := w.db.Exec(`SET checkpoint_threshold = '1GB'`); err != nil {
		t.Fatal(err)
	}
	packAppendRuns, pageBatch, packCheckpointBytes = 4, 4, 64<<10
	logSize := func() int64 {
		st, err := os.Stat(path + ".wal")
		if err != nil {
			return 0
		}
		return st.Size()
	}
	for _, refresh := range []func() (PackStats, error){
		func() (PackStats, error) { return w.RefreshEventPacks(ctx, nil) },
		func() (PackStats, error) { return w.RefreshPagePacks(ctx, nil) },
	} {
		st, err := refresh()
		if err != nil || st.Runs != len(ids) {
			t.Fatalf("refresh: %+v, %v; want %d runs", st, err, len(ids))
		}
		// A checkpoint once a batch takes the bytes since the last past
		// the threshold: each holds less than twice it.
		if want := int(st.Bytes / (2 * packCheckpointBytes)); st.Checkpoints < want {
			t.Errorf("%d checkpoints for %d bytes of packs, every %d: want at least %d", st.Checkpoints, st.Bytes, packCheckpointBytes, want)
		}
		if n := logSize(); n > st.Bytes/3 {
			t.Errorf("the log holds %d bytes after %d bytes of packs checkpointed every %d", n, st.Bytes, packCheckpointBytes)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if w, err = Open(ctx, path, OpenOptions{}); err != nil {
		t.Fatal(err)
	}
	var events, pages int
	if err := w.db.QueryRow(`SELECT (SELECT count(DISTINCT run_id) FROM event_packs), (SELECT count(DISTINCT run_id) FROM page_packs)`).Scan(&events, &pages); err != nil {
		t.Fatal(err)
	}
	if events != len(ids) || pages != len(ids) || !w.PagePacksFresh(ctx) {
		t.Fatalf("after a reopen: %d runs with event packs, %d with page packs (fresh %v), of %d", events, pages, w.PagePacksFresh(ctx), len(ids))
	}
	pagesMatchColumns(t, w, ids)
}

// PackRuns has DuckDB store what it checkpoints uncompressed while it
// packs (the packs are zstd already): a checkpoint rewrites the packs
// table's last row group whole, and analysing it for compression took
// memory DuckDB's limit does not count, more as the row group filled.
// It puts the setting back after.
func TestPackRunsCheckpointsUncompressed(t *testing.T) {
	w, _ := samplePath(t, 0)
	setting := func() string {
		var v string
		if err := w.db.QueryRow(`SELECT current_setting('force_compression')`).Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	before := setting()
	seen := map[string]bool{}
	if err := w.PackRuns(ctx, func(stage string, done, total int) { seen[setting()] = true }); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 1 || !seen["uncompressed"] {
		t.Errorf("force_compression while packing: %v, want uncompressed", seen)
	}
	if after := setting(); after != before {
		t.Errorf("force_compression %q after packing, %q before", after, before)
	}
}
