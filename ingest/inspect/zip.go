package inspect

import (
	"archive/zip"
	"bufio"
	"compress/flate"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"os"

	"github.com/klauspost/compress/zstd"
)

// The caps every .eval is read within (docs/inspect.md). They admit a
// sample of 1 GB and more: a monolith sample entry up to MaxEntryBytes,
// a chunked sample without limit on its total (its chunks are entries).
const (
	// MaxEntries caps the entries of one archive (Inspect's chunked
	// layout aims at some 10,000 a log).
	MaxEntries = 500_000
	// MaxEntryBytes caps one entry's uncompressed size, declared or read
	// (Inspect's viewer refuses a sample entry past 2 GiB too).
	MaxEntryBytes = 2 << 30
	// MaxRatio caps one entry's uncompressed bytes per compressed byte,
	// once past its first MiB (deflate cannot exceed about 1,032).
	MaxRatio = 1000
	// MaxItem caps one JSON item held at a time: a message, an event, a
	// pool entry, an attachment, a field of a sample, a header entry.
	MaxItem = 256 << 20
)

// zipMethodZstd is the zip compression method of Zstandard (APPNOTE 4.4.5).
const zipMethodZstd = 93

// entry is one member of an archive.
type entry struct {
	name       string
	method     uint16
	crc        uint32
	comp, size uint64
	open       func() (io.ReadCloser, error) // the compressed bytes
}

// archive is an opened .eval: its entries in stored order, the last of
// each name (Inspect re-logs a requeued sample under the same name; the
// last is the current one, as Inspect's readers take it).
type archive struct {
	path    string
	f       *os.File
	entries []*entry
	byName  map[string]*entry
	// partial says why the archive was read without its central
	// directory (a log still being written or cut short), or "".
	partial string
	// zstd is a decoder kept for the next zstd entry (one is read at a
	// time; its buffers are large to allocate).
	zstd *zstd.Decoder
}

func openArchive(path string) (*archive, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	a := &archive{path: path, f: f, byName: map[string]*entry{}}
	zr, err := zip.NewReader(f, st.Size())
	if err != nil {
		// No central directory: walk the local headers from the start and
		// keep every entry that is whole.
		if !errors.Is(err, zip.ErrFormat) {
			f.Close()
			return nil, &Error{File: path, Msg: err.Error()}
		}
		if err := a.scanLocal(st.Size()); err != nil {
			f.Close()
			return nil, err
		}
		return a, nil
	}
	if len(zr.File) > MaxEntries {
		f.Close()
		return nil, &Error{File: path, Msg: fmt.Sprintf("%d entries: more than the cap of %d", len(zr.File), MaxEntries)}
	}
	for _, zf := range zr.File {
		a.add(&entry{name: zf.Name, method: zf.Method, crc: zf.CRC32, comp: zf.CompressedSize64, size: zf.UncompressedSize64,
			open: func() (io.ReadCloser, error) {
				r, err := zf.OpenRaw()
				if err != nil {
					return nil, err
				}
				return io.NopCloser(r), nil
			}})
	}
	return a, nil
}

func (a *archive) add(e *entry) {
	a.entries = append(a.entries, e)
	a.byName[e.name] = e
}

func (a *archive) Close() error {
	if a.zstd != nil {
		a.zstd.Close()
	}
	return a.f.Close()
}

// scanLocal reads the local file headers one after the other, as a log
// still being written has them before its central directory is there.
func (a *archive) scanLocal(size int64) error {
	var off int64
	for {
		if len(a.entries) >= MaxEntries {
			return &Error{File: a.path, Msg: fmt.Sprintf("more than the cap of %d entries", MaxEntries)}
		}
		var h [30]byte
		if _, err := a.f.ReadAt(h[:], off); err != nil {
			a.partial = fmt.Sprintf("no central directory; the archive ends at byte %d inside an entry's header", off)
			break
		}
		sig := binary.LittleEndian.Uint32(h[0:])
		if sig != 0x04034b50 {
			if len(a.entries) == 0 {
				return &Error{File: a.path, Msg: "not a zip archive (no entry header at its start)"}
			}
			a.partial = fmt.Sprintf("no central directory; unreadable bytes from offset %d", off)
			break
		}
		flags := binary.LittleEndian.Uint16(h[6:])
		e := &entry{method: binary.LittleEndian.Uint16(h[8:]), crc: binary.LittleEndian.Uint32(h[14:]),
			comp: uint64(binary.LittleEndian.Uint32(h[18:])), size: uint64(binary.LittleEndian.Uint32(h[22:]))}
		nl, xl := int64(binary.LittleEndian.Uint16(h[26:])), int64(binary.LittleEndian.Uint16(h[28:]))
		nx := make([]byte, nl+xl)
		if _, err := a.f.ReadAt(nx, off+30); err != nil {
			a.partial = fmt.Sprintf("no central directory; the archive ends at byte %d inside an entry's name", off)
			break
		}
		e.name = string(nx[:nl])
		readZip64(nx[nl:], e)
		if flags&8 != 0 && e.comp == 0 {
			a.partial = fmt.Sprintf("no central directory; entry %s was being written (its size is not in its header)", e.name)
			break
		}
		data := off + 30 + nl + xl
		if data+int64(e.comp) > size {
			a.partial = fmt.Sprintf("no central directory; entry %s is cut short", e.name)
			break
		}
		sec := io.NewSectionReader(a.f, data, int64(e.comp))
		e.open = func() (io.ReadCloser, error) {
			sec.Seek(0, io.SeekStart)
			return io.NopCloser(sec), nil
		}
		a.add(e)
		off = data + int64(e.comp)
		if flags&8 != 0 {
			// A data descriptor follows: signature (optional), crc and sizes.
			var d [4]byte
			if _, err := a.f.ReadAt(d[:], off); err == nil && binary.LittleEndian.Uint32(d[:]) == 0x08074b50 {
				off += 4
			}
			off += 12
			if e.size > 0xffffffff || e.comp > 0xffffffff {
				off += 8
			}
		}
	}
	return nil
}

// readZip64 takes the 64-bit sizes from a zip64 extra field.
func readZip64(extra []byte, e *entry) {
	for len(extra) >= 4 {
		tag, n := binary.LittleEndian.Uint16(extra), int(binary.LittleEndian.Uint16(extra[2:]))
		if 4+n > len(extra) {
			return
		}
		body := extra[4 : 4+n]
		if tag == 1 {
			if e.size == 0xffffffff && len(body) >= 8 {
				e.size, body = binary.LittleEndian.Uint64(body), body[8:]
			}
			if e.comp == 0xffffffff && len(body) >= 8 {
				e.comp = binary.LittleEndian.Uint64(body)
			}
		}
		extra = extra[4+n:]
	}
}

// countReader counts the bytes read through it.
type countReader struct {
	r io.Reader
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// entryReader is an entry's uncompressed bytes, held to the caps and
// checked against its CRC-32 at its end.
type entryReader struct {
	a     *archive
	e     *entry
	raw   io.ReadCloser
	comp  *countReader
	dec   io.Reader
	close func()
	crc   hash.Hash32
	n     int64
}

// open opens an entry for reading.
func (a *archive) open(e *entry) (*entryReader, error) {
	if e.size > MaxEntryBytes {
		return nil, &Error{File: a.path, Entry: e.name, Msg: fmt.Sprintf("%d MiB uncompressed: more than the cap of %d MiB on one entry", e.size>>20, MaxEntryBytes>>20)}
	}
	raw, err := e.open()
	if err != nil {
		return nil, &Error{File: a.path, Entry: e.name, Msg: err.Error()}
	}
	er := &entryReader{a: a, e: e, raw: raw, comp: &countReader{r: raw}, crc: crc32.NewIEEE(), close: func() {}}
	switch e.method {
	case zip.Store:
		er.dec = er.comp
	case zip.Deflate:
		fr := flate.NewReader(bufio.NewReaderSize(er.comp, 64<<10))
		er.dec, er.close = fr, func() { fr.Close() }
	case zipMethodZstd:
		zr := a.zstd
		a.zstd = nil
		if zr == nil {
			var err error
			zr, err = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(MaxEntryBytes))
			if err != nil {
				raw.Close()
				return nil, &Error{File: a.path, Entry: e.name, Msg: "zstd: " + err.Error()}
			}
		}
		if err := zr.Reset(er.comp); err != nil {
			zr.Close()
			raw.Close()
			return nil, &Error{File: a.path, Entry: e.name, Msg: "zstd: " + err.Error()}
		}
		er.dec = zr
		er.close = func() {
			if a.zstd == nil {
				a.zstd = zr
			} else {
				zr.Close()
			}
		}
	default:
		raw.Close()
		return nil, &Error{File: a.path, Entry: e.name, Msg: fmt.Sprintf("compression method %d: gymlens reads stored, deflated and zstd (93) entries", e.method)}
	}
	return er, nil
}

func (r *entryReader) Read(p []byte) (int, error) {
	n, err := r.dec.Read(p)
	r.n += int64(n)
	r.crc.Write(p[:n])
	switch {
	case r.n > MaxEntryBytes:
		return n, &Error{File: r.a.path, Entry: r.e.name, Msg: fmt.Sprintf("more than the cap of %d MiB uncompressed on one entry", MaxEntryBytes>>20)}
	case r.n > 1<<20 && r.n > MaxRatio*max(r.comp.n, 1):
		return n, &Error{File: r.a.path, Entry: r.e.name, Msg: fmt.Sprintf("compression ratio above the cap of %d:1 (a zip bomb?)", MaxRatio)}
	}
	if err == io.EOF {
		if uint64(r.n) != r.e.size {
			return n, &Error{File: r.a.path, Entry: r.e.name, Msg: fmt.Sprintf("%d bytes uncompressed, its header says %d (truncated or corrupt)", r.n, r.e.size)}
		}
		if r.crc.Sum32() != r.e.crc {
			return n, &Error{File: r.a.path, Entry: r.e.name, Msg: "checksum mismatch (corrupt entry)"}
		}
	} else if err != nil && !isOurs(err) {
		err = &Error{File: r.a.path, Entry: r.e.name, Msg: "cannot decompress: " + err.Error()}
	}
	return n, err
}

func (r *entryReader) Close() error {
	r.close()
	return r.raw.Close()
}

func isOurs(err error) bool {
	var e *Error
	return errors.As(err, &e)
}
