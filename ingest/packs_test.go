package ingest

import (
	"database/sql"
	"reflect"
	"testing"
	"time"

	"github.com/gymlens/gymlens/ingest/rows"
)

// samplePath gives a copy of the shared sample warehouse (seed 5, two
// configurations) written at schema version (0 the latest), open for
// writing, and the folder of its corpus, which the test must not change.
func samplePath(t *testing.T, version int) (*Warehouse, string) {
	t.Helper()
	path, dir := sampleCopy(t, sampleKind{seed: 5, configs: 2, version: version})
	w, err := Open(ctx, path, OpenOptions{SchemaVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w, dir
}

// runIDs are the warehouse's runs, in order.
func runIDs(t *testing.T, w *Warehouse) []string {
	t.Helper()
	var ids []string
	if err := w.scan(ctx, `SELECT run_id FROM runs ORDER BY run_id`, func(rs *sql.Rows) error {
		var id string
		err := rs.Scan(&id)
		ids = append(ids, id)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return ids
}

// pagesMatchColumns checks that every run's page shows its events as the
// events table holds them (RunEvents reads the columns alone), reading
// the pages 50 at a time as the viewer does.
func pagesMatchColumns(t *testing.T, w *Warehouse, ids []string) {
	t.Helper()
	for lo := 0; lo < len(ids); lo += 50 {
		batch := ids[lo:min(lo+50, len(ids))]
		pages, err := w.RunPages(ctx, batch)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range batch {
			want, err := w.RunEvents(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if len(want) == 0 {
				t.Fatalf("%s: no events", id)
			}
			if !reflect.DeepEqual(pages[id].Events, want) {
				t.Fatalf("%s: the page's events differ from the columns'", id)
			}
		}
	}
}

// An ingest packs every run's events; a pack decodes to exactly what
// the columns hold; the pages read them.
func TestEventPacksAreTheColumns(t *testing.T) {
	w, _ := samplePath(t, 0)
	ids := runIDs(t, w)
	// An ingest packs nothing (the viewer does, when it starts).
	var unpacked, packs int
	w.db.QueryRow(`SELECT count(*) FROM event_packs`).Scan(&packs)
	if packs != 0 {
		t.Fatalf("%d packs after an ingest", packs)
	}
	var told [][2]int
	st, err := w.RefreshEventPacks(ctx, func(done, total int) { told = append(told, [2]int{done, total}) })
	if err != nil || st.Runs != len(ids) || st.Skipped != 0 || st.Events == 0 {
		t.Fatalf("refresh: %+v, %v", st, err)
	}
	if len(told) == 0 || told[len(told)-1] != [2]int{len(ids), len(ids)} {
		t.Errorf("progress told %v", told)
	}
	w.db.QueryRow(`SELECT count(*) FROM run_spans s WHERE NOT EXISTS (SELECT 1 FROM event_packs p WHERE p.run_id = s.run_id)`).Scan(&unpacked)
	w.db.QueryRow(`SELECT count(*) FROM event_packs`).Scan(&packs)
	if unpacked != 0 || packs != len(ids) {
		t.Fatalf("%d runs without a pack, %d packs for %d runs", unpacked, packs, len(ids))
	}
	got, err := w.packsOf(ctx, ids)
	if err != nil {
		t.Fatal(err)
	}
	okSeen := map[string]bool{}
	for _, id := range ids {
		es, err := decodePack(got[id].pack)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := w.RunEvents(ctx, id)
		if !reflect.DeepEqual(es, want) || got[id].events != int64(len(want)) {
			t.Fatalf("%s: its pack (%d events) differs from its columns (%d)", id, len(es), len(want))
		}
		for _, e := range es {
			switch {
			case e.OK == nil:
				okSeen["none"] = true
			case *e.OK:
				okSeen["true"] = true
			default:
				okSeen["false"] = true
			}
		}
	}
	if !okSeen["none"] || !okSeen["true"] {
		t.Errorf("the sample's events have ok values %v: the test needs none and true (TestPackRoundTrip has false)", okSeen)
	}
	pagesMatchColumns(t, w, ids)
	// Nothing left to pack: a second refresh packs nothing.
	if st, err := w.RefreshEventPacks(ctx, nil); err != nil || st.Runs != 0 {
		t.Errorf("a second refresh: %+v, %v", st, err)
	}
}

// The pages read the packs, and a pack that does not hold the events
// its spans count, or does not decode, is passed over for the columns.
func TestStalePacksAreNotRead(t *testing.T) {
	w, _ := samplePath(t, 0)
	if _, err := w.RefreshEventPacks(ctx, nil); err != nil {
		t.Fatal(err)
	}
	ids := runIDs(t, w)
	a, b, c := ids[0], ids[1], ids[2]
	// The columns changed behind the packs' back (no writer does this):
	// the pages show the packs.
	if _, err := w.db.Exec(`UPDATE events SET text = 'changed' WHERE run_id IN (?, ?, ?)`, a, b, c); err != nil {
		t.Fatal(err)
	}
	texts := func() map[string]bool {
		pages, err := w.RunPages(ctx, []string{a, b, c})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]bool{}
		for id, p := range pages {
			for _, e := range p.Events {
				if e.Text == "changed" {
					out[id] = true
				}
			}
		}
		return out
	}
	if got := texts(); len(got) != 0 {
		t.Fatalf("the pages read the columns, not the packs: %v", got)
	}
	// a's pack counts one event too many, b's does not decode: their
	// pages read the columns; c's is still read.
	if _, err := w.db.Exec(`UPDATE event_packs SET events = events + 1 WHERE run_id = ?`, a); err != nil {
		t.Fatal(err)
	}
	if _, err := w.db.Exec(`UPDATE event_packs SET pack = '\x01\x28\xb5\x2f\xfd'::BLOB WHERE run_id = ?`, b); err != nil {
		t.Fatal(err)
	}
	if got := texts(); !got[a] || !got[b] || got[c] {
		t.Errorf("runs read from the columns: %v, want %s and %s", got, a, b)
	}
	pagesMatchColumns(t, w, []string{a, b})
}

// A warehouse written before the packs reads its pages from the columns,
// and after the upgrade until it is packed.
func TestPacksAfterAnUpgrade(t *testing.T) {
	w, _ := samplePath(t, packsSchema-1)
	ids := runIDs(t, w)
	if !w.RunInputsFresh(ctx) {
		t.Fatal("the run inputs are not fresh after an ingest")
	}
	if st, err := w.RefreshEventPacks(ctx, nil); err != nil || st.Runs != 0 {
		t.Fatalf("a refresh at schema %d: %+v, %v", packsSchema-1, st, err)
	}
	pagesMatchColumns(t, w, ids[:60])
	path := w.Path
	w.Close()
	w, err := Open(ctx, path, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	// The upgrade adds a derived table alone: the run inputs stay fresh.
	if !w.RunInputsFresh(ctx) {
		t.Error("the upgrade to the event packs made the run inputs stale")
	}
	pagesMatchColumns(t, w, ids[:60])
	if st, err := w.RefreshEventPacks(ctx, nil); err != nil || st.Runs != len(ids) {
		t.Fatalf("after the upgrade: %+v, %v; want %d runs", st, err, len(ids))
	}
	pagesMatchColumns(t, w, ids)
}

// The events are packed a batch of runs at a time, each query reading at
// most packBatchEvents rows (or one run's, when it has more): the
// rebuild's memory does not grow with the warehouse. Every run is packed
// however small the batches, and the pages read what the columns hold.
func TestPacksInBoundedBatches(t *testing.T) {
	defer func(b int64) { packBatchEvents = b }(packBatchEvents)
	w, _ := samplePath(t, 0)
	ids := runIDs(t, w)
	var total, most int64
	if err := w.db.QueryRow(`SELECT sum(n), max(n) FROM (SELECT count(*) AS n FROM events GROUP BY run_id)`).Scan(&total, &most); err != nil {
		t.Fatal(err)
	}
	packBatchEvents = 3 * most // a few runs a batch, far fewer than the warehouse
	st, err := w.RefreshEventPacks(ctx, nil)
	if err != nil || st.Runs != len(ids) || st.Skipped != 0 || st.Events != total {
		t.Fatalf("refresh: %+v, %v; want %d runs, %d events", st, err, len(ids), total)
	}
	if st.MostRead > packBatchEvents || st.MostRead < most {
		t.Errorf("a query read %d rows of events: more than the bound %d, or fewer than a run's %d", st.MostRead, packBatchEvents, most)
	}
	pagesMatchColumns(t, w, ids)
	// A batch smaller than any run: a run a query.
	if _, err := w.db.Exec(`DELETE FROM event_packs`); err != nil {
		t.Fatal(err)
	}
	packBatchEvents = 1
	st, err = w.RefreshEventPacks(ctx, nil)
	if err != nil || st.Runs != len(ids) || st.MostRead != most {
		t.Fatalf("refresh a run a batch: %+v, %v; want %d runs, at most %d rows a query", st, err, len(ids), most)
	}
	pagesMatchColumns(t, w, ids)
}

// A pack keeps every field as it was, and any cut or damaged pack is an
// error, never a panic or a wrong page.
func TestPackRoundTrip(t *testing.T) {
	yes, no := true, false
	events := []rows.EventRow{
		{Seq: 1, T: time.Date(1969, 7, 20, 20, 17, 40, 123456000, time.UTC), Actor: "user", Kind: "message", Text: "héllo\x00 <script>alert(1)</script>", Visible: true},
		{Seq: 2, T: time.Date(2026, 3, 2, 18, 0, 0, 0, time.UTC), Actor: "agent", Kind: "tool_call", Task: "t", Tool: "search", Depth: "deep",
			Args: `{"q":"x"}`, Result: `[1,2]`, OK: &yes, Decision: "approve", Phase: "work", Ref: -3},
		{Seq: 1 << 40, T: time.Unix(0, 0).UTC(), OK: &no},
	}
	pack := encodePack(events)
	got, err := decodePack(pack)
	if err != nil || !reflect.DeepEqual(got, events) {
		t.Fatalf("round trip: %v\n%+v\n%+v", err, got, events)
	}
	if got, err := decodePack(encodePack(nil)); err != nil || len(got) != 0 {
		t.Errorf("no events: %v, %v", got, err)
	}
	for n := range len(pack) {
		if _, err := decodePack(pack[:n]); err == nil {
			t.Errorf("a pack cut to %d of %d bytes decodes", n, len(pack))
		}
	}
	raw, _ := packDecoder().DecodeAll(pack[1:], nil)
	if _, err := decodePack(packEncoder().EncodeAll(append(raw, 0), []byte{packFormat})); err == nil {
		t.Error("a payload with a byte after its events decodes")
	}
	// The payload itself damaged (compressed again, so that zstd's own
	// checksum does not catch it first).
	for n := 1; n < len(raw); n++ {
		cut := packEncoder().EncodeAll(raw[:n], []byte{packFormat})
		if _, err := decodePack(cut); err == nil {
			t.Errorf("a payload cut to %d bytes decodes", n)
		}
	}
	if _, err := decodePack(append([]byte{packFormat + 1}, pack[1:]...)); err == nil {
		t.Error("a pack of another format decodes")
	}
}

// Past MaxPackEvents events to pack, nothing is packed (the pages read
// the columns).
func TestPacksNotPastTheBound(t *testing.T) {
	defer func(m int64) { MaxPackEvents = m }(MaxPackEvents)
	w, _ := samplePath(t, 0)
	ids := runIDs(t, w)
	MaxPackEvents = 1000
	st, err := w.RefreshEventPacks(ctx, nil)
	if err != nil || st.Runs != 0 || st.Skipped != len(ids) {
		t.Fatalf("refresh past the bound: %+v, %v", st, err)
	}
	pagesMatchColumns(t, w, ids[:50])
}
