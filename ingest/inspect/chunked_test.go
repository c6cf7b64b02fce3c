package inspect

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// Inspect ships no log in the chunked layout: toChunked writes one from
// a monolith .eval, following design/large-samples.md and Inspect's
// converter (chunked/convert.py): the message sequence is the message
// pool followed by the final conversation (message_refs point at it),
// events and calls as they are, attachments a sequence renumbered
// attachment://HASH → attachment://INDEX; chunks of size items, named by
// their first index. drop names entries to leave out.
func toChunked(t testing.TB, src string, size int, drop map[string]bool) string {
	t.Helper()
	zr, err := zip.OpenReader(src)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	put := func(name string, b []byte) {
		if drop[name] {
			return
		}
		var comp bytes.Buffer
		fw, _ := flate.NewWriter(&comp, flate.DefaultCompression)
		fw.Write(b)
		fw.Close()
		w, err := zw.CreateRaw(&zip.FileHeader{Name: name, Method: zip.Deflate, CRC32: crc32.ChecksumIEEE(b),
			CompressedSize64: uint64(comp.Len()), UncompressedSize64: uint64(len(b))})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(comp.Bytes())
	}
	for _, f := range zr.File {
		rc, _ := f.Open()
		b, _ := io.ReadAll(rc)
		rc.Close()
		if !strings.HasPrefix(f.Name, "samples/") {
			put(f.Name, b)
			continue
		}
		var sm map[string]json.RawMessage
		if err := json.Unmarshal(b, &sm); err != nil {
			t.Fatal(err)
		}
		var att map[string]string
		json.Unmarshal(sm["attachments"], &att)
		keys := make([]string, 0, len(att))
		for k := range att {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		index := map[string]int{}
		var contents []string
		for i, k := range keys {
			index[k] = i
			contents = append(contents, att[k])
		}
		ref := regexp.MustCompile(`attachment://([0-9a-f]{32})`)
		renumber := func(b []byte) []byte {
			return ref.ReplaceAllFunc(b, func(m []byte) []byte {
				i, ok := index[string(m[len("attachment://"):])]
				if !ok {
					return m
				}
				return []byte(fmt.Sprintf("attachment://%d", i))
			})
		}
		var pool, final, events, calls []json.RawMessage
		json.Unmarshal(sm["message_pool"], &pool)
		json.Unmarshal(sm["call_pool"], &calls)
		json.Unmarshal(sm["messages"], &final)
		json.Unmarshal(sm["events"], &events)
		refs := [][2]int{{len(pool), len(pool) + len(final)}}
		messages := append(pool, final...)
		prefix := strings.TrimSuffix(f.Name, ".json") + "/"
		shell := map[string]json.RawMessage{}
		for k, v := range sm {
			switch k {
			case "messages", "events", "attachments", "message_pool", "call_pool", "events_data", "metadata":
			default:
				shell[k] = v
			}
		}
		shell["message_refs"], _ = json.Marshal(refs)
		sb, _ := json.Marshal(shell)
		put(prefix+"sample.json", renumber(sb))
		if m := sm["metadata"]; len(m) > 2 {
			put(prefix+"metadata.json", renumber(m))
		}
		for _, seq := range []struct {
			name  string
			items []json.RawMessage
		}{{"messages", messages}, {"events", events}, {"calls", calls}} {
			for start := 0; start < len(seq.items); start += size {
				cb, _ := json.Marshal(seq.items[start:min(start+size, len(seq.items))])
				put(fmt.Sprintf("%s%s/%d.json", prefix, seq.name, start), renumber(cb))
			}
		}
		if len(contents) > 0 {
			ab, _ := json.Marshal(contents)
			put(prefix+"attachments/0.json", ab)
		}
		put(prefix+"skeleton.json", []byte(`{"version": 1}`))
		put(prefix+"events/stats.json", []byte(`[]`))
	}
	zw.Close()
	p := filepath.Join(t.TempDir(), "chunked_"+filepath.Base(src))
	os.WriteFile(p, buf.Bytes(), 0o644)
	return p
}

func readErr(p string) (*recorder, error) {
	r := &recorder{}
	return r, ReadFile(p, r)
}

// A chunked sample reads as its monolith does: the same scores, events
// and attachments; the message sequence is the pool and the final
// conversation, which message_refs refer to.
func TestReadChunkedSample(t *testing.T) {
	const src = "testdata/log_message_deduplication.eval"
	mono := read(t, src)
	r := read(t, toChunked(t, src, 5, nil))
	if len(r.samples) != 1 {
		t.Fatalf("%d samples", len(r.samples))
	}
	m, c := mono.samples[0], r.samples[0]
	if c.Layout != "chunked" || c.Events != m.Events || c.ModelEvents != m.ModelEvents || c.MessageCount != m.MessageCount ||
		c.PoolMessages != m.PoolMessages+m.MessageCount || c.Attachments != m.Attachments || fmt.Sprint(c.Scores) != fmt.Sprint(m.Scores) {
		t.Errorf("chunked %+v\nmonolith %+v", c, m)
	}
	if r.items[KindEvent] != 42 || r.items[KindMessage] != 12 {
		t.Errorf("items %v", r.items)
	}
	for _, tc := range []struct {
		drop string
		want []string
	}{
		{"samples/0_epoch_1/events/10.json", []string{"entry samples/0_epoch_1/events/15.json", "items 10 to 14 in no chunk"}},
		{"samples/0_epoch_1/messages/20.json", []string{"entry samples/0_epoch_1/", "message_refs", "message pool"}},
		{"samples/0_epoch_1/attachments/0.json", []string{"attachment://0"}},
		{"samples/0_epoch_1/sample.json", []string{"whose sample.json is not in the archive"}},
	} {
		_, err := readErr(toChunked(t, src, 5, map[string]bool{tc.drop: true}))
		if err == nil {
			t.Errorf("without %s: no error", tc.drop)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("without %s: %v does not say %q", tc.drop, err, w)
			}
		}
	}
}
