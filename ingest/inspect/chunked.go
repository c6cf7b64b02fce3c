package inspect

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/valyala/fastjson"
)

// The chunked sample layout (Inspect's design/large-samples.md, Part I):
// under samples/{id}_epoch_{e}/ a small shell sample.json (the sample
// without its messages, events, attachments and metadata, and with
// message_refs, the final conversation as [start, end) ranges into the
// message sequence), metadata.json, and four sequences, each stored as
// chunks named by the index of their first item: messages/ (the message
// pool, which model events' input_refs index), events/, calls/ (which
// call_refs index) and attachments/ (bare strings, referred to as
// attachment://INDEX). skeleton.json, events/stats.json and
// events/uuids.json are derived views for Inspect's viewer, not read.

// chunkSeq is one sequence's chunks, in order of their start.
type chunkSeq struct {
	starts  []int
	entries []*entry
}

// readChunked reads the sample stored chunked under samples/{dir}/, one
// chunk at a time, item by item.
func (a *archive) readChunked(dir string, sink Sink) (*Sample, error) {
	prefix := samplesDir + dir + "/"
	id, epoch, ok := splitSampleName(dir)
	if !ok {
		return nil, &Error{File: a.path, Entry: prefix, Msg: "a chunked sample's folder is not named {id}_epoch_{epoch}"}
	}
	seqs := map[string]*chunkSeq{}
	for name, en := range a.byName {
		rest, ok := strings.CutPrefix(name, prefix)
		if !ok {
			continue
		}
		seq, file, ok := strings.Cut(rest, "/")
		if !ok {
			continue
		}
		switch seq {
		case "messages", "events", "calls", "attachments":
		default:
			continue
		}
		n, err := strconv.Atoi(strings.TrimSuffix(file, ".json"))
		if err != nil || !strings.HasSuffix(file, ".json") {
			continue // stats.json, uuids.json
		}
		cs := seqs[seq]
		if cs == nil {
			cs = &chunkSeq{}
			seqs[seq] = cs
		}
		cs.starts = append(cs.starts, n)
		cs.entries = append(cs.entries, en)
	}
	for _, cs := range seqs {
		sort.Sort(cs)
	}
	s := &Sample{ID: id, Epoch: epoch, Entry: prefix, Layout: "chunked"}
	rf := newRefs()
	// The shell.
	shellEntry := a.byName[prefix+"sample.json"]
	w := where{a.path, shellEntry.name}
	v, err := a.json(shellEntry, nil)
	if err != nil {
		return nil, err
	}
	o, err := v.Object()
	if err != nil {
		return nil, w.errf("", "expected a sample object, found %s", v.Type())
	}
	var ferr error
	var finalRefs *fastjson.Value
	o.Visit(func(k []byte, fv *fastjson.Value) {
		if ferr != nil {
			return
		}
		key := string(k)
		switch key {
		case "id":
			got, err := sampleID(fv)
			if err != nil || got != id {
				ferr = w.errf(key, "is %s, but the folder's name says %s", fv, id)
			}
		case "epoch":
			if e, err := fv.Int(); err != nil || e != epoch {
				ferr = w.errf(key, "is %s, but the folder's name says %d", fv, epoch)
			}
		case "message_refs":
			finalRefs = fv
		default:
			raw := jsonOf(fv)
			rf.scan(raw, key)
			ferr = sampleField(w, key, key, fv, raw, false, s)
		}
	})
	if ferr != nil {
		return nil, ferr
	}
	if finalRefs != nil && finalRefs.Type() != fastjson.TypeNull {
		hi, err := ranges(finalRefs)
		if err != nil {
			return nil, w.errf("message_refs", "%v", err)
		}
		rf.msgPool, rf.msgField = hi, "message_refs"
		for _, p := range finalRefs.GetArray() {
			a, b := p.GetInt("0"), p.GetInt("1")
			for i := a; i < b; i++ {
				raw := []byte(fmt.Sprintf(`{"message_ref": %d}`, i))
				if err := sink.Item(s, &Item{Kind: KindMessage, Index: s.MessageCount, Raw: raw}); err != nil {
					return nil, err
				}
				s.MessageCount++
			}
		}
	}
	if m := a.byName[prefix+"metadata.json"]; m != nil {
		mv, err := a.json(m, nil)
		if err != nil {
			return nil, err
		}
		raw := jsonOf(mv)
		rf.scan(raw, "metadata")
		if err := sampleField(where{a.path, m.name}, "", "metadata", mv, raw, false, s); err != nil {
			return nil, err
		}
	}
	// The sequences, chunk by chunk.
	for _, seq := range []string{"messages", "events", "calls", "attachments"} {
		cs := seqs[seq]
		if cs == nil {
			continue
		}
		next := 0
		for ci, en := range cs.entries {
			cw := where{a.path, en.name}
			if cs.starts[ci] != next {
				return nil, cw.errf("", "the %s sequence has items %d to %d in no chunk (a chunk is missing)", seq, next, cs.starts[ci]-1)
			}
			r, err := a.open(en)
			if err != nil {
				return nil, err
			}
			sc := newScanner(r, MaxItem)
			item := &Item{}
			err = sc.elements(func(i int) error {
				idx := next + i
				f := fmt.Sprintf("[%d]", i)
				raw, err := sc.raw()
				if err != nil {
					return cw.err(f, err)
				}
				v, err := sc.parse(raw)
				if err != nil {
					return cw.errf(f, "not JSON: %v", err)
				}
				*item = Item{Index: idx, Raw: storable(raw, sc.nonFinite)}
				switch seq {
				case "messages":
					item.Kind, item.Type = KindPoolMessage, string(v.GetStringBytes("role"))
					s.PoolMessages++
				case "events":
					item.Kind, item.Type = KindEvent, string(v.GetStringBytes("event"))
					s.Events++
					sr := &sampleReader{w: cw}
					if err := sr.event(s, rf, v, f); err != nil {
						return err
					}
				case "calls":
					item.Kind = KindPoolCall
					s.PoolCalls++
				case "attachments":
					if v.Type() != fastjson.TypeString {
						return cw.errf(f, "expected an attachment's text, found %s", v.Type())
					}
					item.Kind, item.Key = KindAttachment, strconv.Itoa(idx)
					rf.attachKeys[item.Key] = true
					s.Attachments++
				}
				if seq != "attachments" {
					rf.scan(raw, en.name+" "+f)
				}
				return sinkErr(sink.Item(s, item))
			})
			n := 0
			switch seq {
			case "messages":
				n = s.PoolMessages
			case "events":
				n = s.Events
			case "calls":
				n = s.PoolCalls
			default:
				n = s.Attachments
			}
			if err == nil {
				err = sc.end()
			}
			if err == nil {
				_, err = io.Copy(io.Discard, r)
			}
			r.Close()
			if err != nil {
				return nil, cw.err("", err)
			}
			next = n
		}
	}
	// References, as Inspect's pool and attachment resolution follows them.
	if err := rf.check(where{a.path, prefix}, s); err != nil {
		return nil, err
	}
	return s, nil
}

func (c *chunkSeq) Len() int           { return len(c.starts) }
func (c *chunkSeq) Less(i, j int) bool { return c.starts[i] < c.starts[j] }
func (c *chunkSeq) Swap(i, j int) {
	c.starts[i], c.starts[j] = c.starts[j], c.starts[i]
	c.entries[i], c.entries[j] = c.entries[j], c.entries[i]
}
