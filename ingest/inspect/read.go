package inspect

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/valyala/fastjson"
)

// Entry names of a .eval archive.
const (
	headerEntry     = "header.json"
	summariesEntry  = "summaries.json"
	reductionsEntry = "reductions.json"
	startEntry      = "_journal/start.json"
	journalSummary  = "_journal/summaries/"
	samplesDir      = "samples/"
)

// ReadFile reads an Inspect log, .eval or .json, into sink: Begin with
// the header, each sample's items and then the sample, End with the
// whole evaluation (results and reductions included). Nothing is held
// but one item, one sample's scalars and the header.
func ReadFile(path string, sink Sink) error {
	var err error
	if strings.EqualFold(filepath.Ext(path), ".eval") {
		err = readEval(path, sink, false)
	} else {
		err = readJSONLog(path, sink, false)
	}
	var ke *sinkError
	if errors.As(err, &ke) {
		return ke.err
	}
	return err
}

// ReadHeader reads what a log says of its evaluation, without its
// samples.
func ReadHeader(path string) (*Eval, error) {
	var e *Eval
	sink := &headerSink{got: &e}
	var err error
	if strings.EqualFold(filepath.Ext(path), ".eval") {
		err = readEval(path, sink, true)
	} else {
		err = readJSONLog(path, sink, true)
	}
	if errors.Is(err, errHeaderRead) {
		err = nil
	}
	return e, err
}

var errHeaderRead = errors.New("header read")

type headerSink struct{ got **Eval }

func (h *headerSink) Begin(e *Eval) error       { *h.got = e; return errHeaderRead }
func (h *headerSink) Item(*Sample, *Item) error { return nil }
func (h *headerSink) Sample(*Sample) error      { return nil }
func (h *headerSink) End(*Eval) error           { return nil }

// readWholeEntry reads a (small) entry and parses it.
func (a *archive) json(e *entry, sc **scanner) (*fastjson.Value, error) {
	w := where{file: a.path, entry: e.name}
	r, err := a.open(e)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	s := newScanner(r, MaxItem)
	raw, err := s.raw()
	if err != nil {
		return nil, w.err("", err)
	}
	if err := s.end(); err != nil {
		return nil, w.err("", err)
	}
	// read to the end, so that the size and checksum are checked
	if _, err := io.Copy(io.Discard, r); err != nil {
		return nil, w.err("", err)
	}
	v, err := parseOne(raw)
	if err != nil {
		return nil, w.errf("", "not JSON: %v", err)
	}
	if sc != nil {
		*sc = s
	}
	return v, nil
}

func readEval(path string, sink Sink, headerOnly bool) error {
	a, err := openArchive(path)
	if err != nil {
		return err
	}
	defer a.Close()
	e := &Eval{File: path, Format: "eval"}
	if h := a.byName[headerEntry]; h != nil {
		v, err := a.json(h, nil)
		if err != nil {
			return err
		}
		if err := e.header(where{path, h.name}, v); err != nil {
			return err
		}
		if a.partial != "" {
			e.Incomplete = a.partial
		}
	} else if st := a.byName[startEntry]; st != nil {
		v, err := a.json(st, nil)
		if err != nil {
			return err
		}
		if err := e.header(where{path, st.name}, v); err != nil {
			return err
		}
		e.Status = "started"
		e.Incomplete = "no header.json: the log is still being written, or its writer stopped"
		if a.partial != "" {
			e.Incomplete += "; " + a.partial
		}
	} else {
		msg := "neither header.json nor _journal/start.json: not an Inspect log"
		if a.partial != "" {
			msg += " (" + a.partial + ")"
		}
		return &Error{File: path, Msg: msg}
	}
	if e.EvalID == "" {
		return &Error{File: path, Field: "eval.eval_id", Msg: "the log names no eval_id, run_id or task_id"}
	}
	if err := sink.Begin(e); err != nil || headerOnly {
		return err
	}
	// Samples, in stored order, the last of each name.
	seen := map[string]bool{}
	var chunked []string
	for _, en := range a.entries {
		if !strings.HasPrefix(en.name, samplesDir) {
			continue
		}
		if a.byName[en.name] != en {
			e.Duplicates++
			continue
		}
		rest := en.name[len(samplesDir):]
		if j := strings.IndexByte(rest, '/'); j >= 0 {
			if rest[j+1:] == "sample.json" {
				chunked = append(chunked, rest[:j])
			} else if a.byName[samplesDir+rest[:j]+"/sample.json"] == nil {
				return &Error{File: path, Entry: en.name, Msg: "a chunk of a sample whose sample.json is not in the archive"}
			}
			continue
		}
		if !strings.HasSuffix(rest, ".json") {
			continue
		}
		id, epoch, ok := splitSampleName(strings.TrimSuffix(rest, ".json"))
		if !ok {
			return &Error{File: path, Entry: en.name, Msg: "a sample entry's name is not {id}_epoch_{epoch}.json"}
		}
		s := &Sample{ID: id, Epoch: epoch, Entry: en.name, Layout: "entry"}
		if err := a.readSampleEntry(en, s, sink); err != nil {
			return err
		}
		seen[sampleKey(s.ID, s.Epoch)] = true
		if err := sink.Sample(s); err != nil {
			return err
		}
	}
	for _, dir := range chunked {
		s, err := a.readChunked(dir, sink)
		if err != nil {
			return err
		}
		seen[sampleKey(s.ID, s.Epoch)] = true
		if err := sink.Sample(s); err != nil {
			return err
		}
	}
	// Samples known only from their summaries (a log written with
	// log_samples off, or the journal of a log still being written).
	if err := a.summaries(seen, sink); err != nil {
		return err
	}
	if r := a.byName[reductionsEntry]; r != nil {
		v, err := a.json(r, nil)
		if err != nil {
			return err
		}
		if e.Reductions, err = readReductions(where{path, r.name}, "", v); err != nil {
			return err
		}
	}
	return sink.End(e)
}

func sampleKey(id string, epoch int) string { return id + "\x00" + strconv.Itoa(epoch) }

// splitSampleName splits "{id}_epoch_{e}" at its last "_epoch_".
func splitSampleName(s string) (string, int, bool) {
	i := strings.LastIndex(s, "_epoch_")
	if i <= 0 {
		return "", 0, false
	}
	e, err := strconv.Atoi(s[i+len("_epoch_"):])
	if err != nil || e < 1 {
		return "", 0, false
	}
	return s[:i], e, true
}

func (a *archive) readSampleEntry(en *entry, s *Sample, sink Sink) error {
	w := where{a.path, en.name}
	r, err := a.open(en)
	if err != nil {
		return err
	}
	defer r.Close()
	sc := newScanner(r, MaxItem)
	sr := &sampleReader{sc: sc, w: w, sink: sink}
	if ok, err := sc.isObject(); err != nil {
		return w.err("", err)
	} else if !ok {
		return w.errf("", "expected a sample object")
	}
	if err := sr.read(s); err != nil {
		return err
	}
	if err := sc.end(); err != nil {
		return w.err("", err)
	}
	if _, err := io.Copy(io.Discard, sc.r); err != nil {
		return w.err("", err)
	}
	return nil
}

// summaries reads the samples summaries.json (or the journal's summary
// files, in order) lists that no sample entry gave; the last summary of a
// sample wins, as in Inspect.
func (a *archive) summaries(seen map[string]bool, sink Sink) error {
	var names []*entry
	if s := a.byName[summariesEntry]; s != nil {
		names = []*entry{s}
	} else {
		type numbered struct {
			n int
			e *entry
		}
		var js []numbered
		for name, en := range a.byName {
			if rest, ok := strings.CutPrefix(name, journalSummary); ok {
				if n, err := strconv.Atoi(strings.TrimSuffix(rest, ".json")); err == nil {
					js = append(js, numbered{n, en})
				}
			}
		}
		sort.Slice(js, func(i, j int) bool { return js[i].n < js[j].n })
		for _, j := range js {
			names = append(names, j.e)
		}
	}
	// Two passes, so that no summary is held: the first finds each
	// sample's last summary, the second gives those.
	last := map[string]int{}
	for pass := range 2 {
		g := 0
		for _, en := range names {
			w := where{a.path, en.name}
			r, err := a.open(en)
			if err != nil {
				return err
			}
			sc := newScanner(r, MaxItem)
			err = sc.elements(func(i int) error {
				f := fmt.Sprintf("[%d]", i)
				raw, err := sc.raw()
				if err != nil {
					return w.err(f, err)
				}
				v, err := parseOne(raw)
				if err != nil {
					return w.errf(f, "not JSON: %v", err)
				}
				if v.Type() != fastjson.TypeObject {
					return w.errf(f, "expected a sample summary object")
				}
				s := &Sample{Entry: en.name, Layout: "summary"}
				var ferr error
				v.GetObject().Visit(func(k []byte, fv *fastjson.Value) {
					if ferr != nil {
						return
					}
					key := string(k)
					fld := f + "." + key
					switch key {
					case "id":
						s.ID, ferr = sampleID(fv)
					case "epoch":
						s.Epoch, ferr = fv.Int()
					default:
						ferr = sampleField(w, fld, key, fv, jsonOf(fv), false, s)
					}
					if ferr != nil && !isOurs(ferr) {
						ferr = w.errf(fld, "%v", ferr)
					}
				})
				if ferr != nil {
					return ferr
				}
				if s.ID == "" || s.Epoch < 1 {
					return w.errf(f, "a summary without its sample's id or epoch")
				}
				k := sampleKey(s.ID, s.Epoch)
				g++
				if pass == 0 {
					last[k] = g
					return nil
				}
				if seen[k] || last[k] != g {
					return nil
				}
				return sinkErr(sink.Sample(s))
			})
			if err == nil {
				err = sc.end()
			}
			if err == nil {
				_, err = io.Copy(io.Discard, r)
			}
			r.Close()
			if err != nil {
				return w.err("", err)
			}
		}
	}
	return nil
}

// header reads a header object (header.json, _journal/start.json, or the
// top level of a .json log without its samples).
func (e *Eval) header(w where, v *fastjson.Value) error {
	o, err := v.Object()
	if err != nil {
		return w.errf("", "expected an object, found %s", v.Type())
	}
	var ferr error
	o.Visit(func(k []byte, fv *fastjson.Value) {
		if ferr == nil {
			ferr = e.headerField(w, string(k), fv)
		}
	})
	if ferr != nil {
		return ferr
	}
	if e.Version == 0 {
		return w.errf("version", "the log has no version")
	}
	return nil
}

// headerField reads one top-level field of a log.
func (e *Eval) headerField(w where, key string, v *fastjson.Value) error {
	switch key {
	case "version":
		n, err := v.Int()
		if err != nil || n < 1 {
			return w.errf(key, "expected a version number, found %s", v)
		}
		if n > NewestVersion {
			return w.errf(key, "log version %d is newer than the newest this reader knows (%d, Inspect commit %.10s): update gymlens", n, NewestVersion, InspectCommit)
		}
		e.Version = n
	case "status":
		e.Status = string(v.GetStringBytes())
	case "eval":
		if v.Type() != fastjson.TypeObject {
			return w.errf(key, "expected an object, found %s", v.Type())
		}
		e.Spec = jsonOf(v)
		e.EvalID = string(v.GetStringBytes("eval_id"))
		e.RunID = string(v.GetStringBytes("run_id"))
		e.Task = string(v.GetStringBytes("task"))
		e.TaskID = string(v.GetStringBytes("task_id"))
		if tv := v.Get("task_version"); tv != nil {
			if tv.Type() == fastjson.TypeString {
				e.TaskVersion = string(tv.GetStringBytes())
			} else {
				e.TaskVersion = tv.String()
			}
		}
		if e.EvalID == "" && (e.RunID != "" || e.TaskID != "") {
			e.EvalID = e.RunID + "/" + e.TaskID
		}
		if e.Task == "" {
			return w.errf("eval.task", "the eval names no task")
		}
		e.Created = string(v.GetStringBytes("created"))
		e.Model = string(v.GetStringBytes("model"))
		if e.Model == "" {
			return w.errf("eval.model", "the eval names no model")
		}
		e.ModelArgs = []byte("{}")
		if ma := v.Get("model_args"); ma != nil && ma.Type() == fastjson.TypeObject {
			e.ModelArgs = jsonOf(ma)
			if re := ma.Get("reasoning_effort"); re != nil && e.Effort == "" {
				e.Effort = scalarText(re)
			}
		}
		if re := v.Get("model_generate_config", "reasoning_effort"); re != nil && e.Effort == "" {
			e.Effort = scalarText(re)
		}
		if s := string(v.GetStringBytes("solver")); s != "" {
			e.Harness = s
			if sa := v.Get("solver_args"); sa != nil && sa.Type() == fastjson.TypeObject {
				e.HarnessArgs = jsonOf(sa)
			}
		}
		e.Epochs = 1
		if ep := v.Get("config", "epochs"); ep != nil && ep.Type() == fastjson.TypeNumber {
			e.Epochs = ep.GetInt()
		}
		for _, r := range v.GetArray("config", "epochs_reducer") {
			e.Reducers = append(e.Reducers, string(r.GetStringBytes()))
		}
	case "plan":
		e.Plan = jsonOf(v)
		if e.Harness == "" {
			var steps []string
			var args []byte
			for _, st := range v.GetArray("steps") {
				steps = append(steps, string(st.GetStringBytes("solver")))
				if p := st.Get("params"); p != nil {
					args = append(args, ',')
					args = append(args, jsonOf(p)...)
				}
			}
			e.Harness = strings.Join(steps, "+")
			if len(args) > 0 {
				e.HarnessArgs = append(append([]byte{'['}, args[1:]...), ']')
			}
		}
		if re := v.Get("config", "reasoning_effort"); re != nil && e.Effort == "" {
			e.Effort = scalarText(re)
		}
	case "stats":
		e.Stats = jsonOf(v)
		e.StartedAt = string(v.GetStringBytes("started_at"))
		e.CompletedAt = string(v.GetStringBytes("completed_at"))
	case "error":
		if v.Type() == fastjson.TypeObject {
			e.Error = string(v.GetStringBytes("message"))
			if e.Error == "" {
				e.Error = "error"
			}
		}
	case "results":
		return e.results(w, v)
	}
	return nil
}

func scalarText(v *fastjson.Value) string {
	switch v.Type() {
	case fastjson.TypeNull:
		return ""
	case fastjson.TypeString:
		return string(v.GetStringBytes())
	}
	return v.String()
}

// results reads the results section: each score's stored metrics.
func (e *Eval) results(w where, v *fastjson.Value) error {
	if v.Type() == fastjson.TypeNull {
		return nil
	}
	if v.Type() != fastjson.TypeObject {
		return w.errf("results", "expected an object, found %s", v.Type())
	}
	e.HasResults = true
	intp := func(x *fastjson.Value) *int {
		if x == nil || x.Type() != fastjson.TypeNumber {
			return nil
		}
		n := x.GetInt()
		return &n
	}
	if sc := v.Get("scorer"); sc != nil && sc.Type() == fastjson.TypeObject {
		// Version 1: one scorer, its metrics beside it.
		name := string(sc.GetStringBytes("name"))
		list, err := storedMetrics(w, "results", StoredMetric{Score: name, Scorer: name}, v.Get("metrics"))
		if err != nil {
			return err
		}
		e.Results = append(e.Results, list...)
		return nil
	}
	e.TotalSamples = intp(v.Get("total_samples"))
	e.CompletedSamples = intp(v.Get("completed_samples"))
	for i, sc := range v.GetArray("scores") {
		f := fmt.Sprintf("results.scores[%d]", i)
		name := string(sc.GetStringBytes("name"))
		if name == "" {
			return w.errf(f+".name", "a score without a name")
		}
		base := StoredMetric{Score: name, Scorer: string(sc.GetStringBytes("scorer")), Reducer: string(sc.GetStringBytes("reducer")),
			Scored: intp(sc.Get("scored_samples")), Unscored: intp(sc.Get("unscored_samples"))}
		list, err := storedMetrics(w, f, base, sc.Get("metrics"))
		if err != nil {
			return err
		}
		e.Results = append(e.Results, list...)
	}
	return nil
}

// storedMetrics reads a score's metrics object.
func storedMetrics(w where, f string, base StoredMetric, ms *fastjson.Value) ([]StoredMetric, error) {
	if ms == nil || ms.Type() == fastjson.TypeNull {
		return nil, nil
	}
	o, err := ms.Object()
	if err != nil {
		return nil, w.errf(f+".metrics", "expected an object, found %s", ms.Type())
	}
	var list []StoredMetric
	var ferr error
	o.Visit(func(k []byte, m *fastjson.Value) {
		if ferr != nil {
			return
		}
		sm := base
		sm.Metric = string(k)
		if n := m.GetStringBytes("name"); len(n) > 0 {
			sm.Metric = string(n)
		}
		val := m.Get("value")
		if val == nil {
			ferr = w.errf(f+".metrics."+string(k)+".value", "a metric without a value")
			return
		}
		x, ok := ValueToFloat(val)
		if !ok {
			ferr = w.errf(f+".metrics."+string(k)+".value", "expected a number, found %s", val)
			return
		}
		sm.Value = x
		sm.Params = []byte("{}")
		if p := m.Get("params"); p != nil {
			sm.Params = jsonOf(p)
		}
		list = append(list, sm)
	})
	if ferr != nil {
		return nil, ferr
	}
	sort.Slice(list, func(a, b int) bool { return list[a].Metric < list[b].Metric })
	return list, nil
}

// readReductions reads reductions.json (or a .json log's reductions).
func readReductions(w where, field string, v *fastjson.Value) ([]Reduction, error) {
	if v.Type() == fastjson.TypeNull {
		return nil, nil
	}
	arr, err := v.Array()
	if err != nil {
		return nil, w.errf(field, "expected a list of reductions, found %s", v.Type())
	}
	var out []Reduction
	for i, r := range arr {
		f := fmt.Sprintf("%s[%d]", field, i)
		scorer := string(r.GetStringBytes("scorer"))
		if scorer == "" {
			return nil, w.errf(f+".scorer", "a reduction without its scorer")
		}
		reducer := string(r.GetStringBytes("reducer"))
		for j, s := range r.GetArray("samples") {
			sf := fmt.Sprintf("%s.samples[%d]", f, j)
			idv := s.Get("sample_id")
			if idv == nil {
				return nil, w.errf(sf+".sample_id", "a reduced score without its sample id")
			}
			id, err := sampleID(idv)
			if err != nil {
				return nil, w.errf(sf+".sample_id", "%v", err)
			}
			val := s.Get("value")
			if val == nil {
				return nil, w.errf(sf+".value", "a reduced score without a value")
			}
			if val.Type() == fastjson.TypeObject {
				var keys []Reduction
				val.GetObject().Visit(func(k []byte, kv *fastjson.Value) {
					x, ok := ValueToFloat(kv)
					keys = append(keys, Reduction{Scorer: scorer, Reducer: reducer, SampleID: id, Key: string(k), Value: x, Valid: ok, Raw: jsonOf(kv)})
				})
				sort.Slice(keys, func(a, b int) bool { return keys[a].Key < keys[b].Key })
				out = append(out, keys...)
				continue
			}
			x, ok := ValueToFloat(val)
			out = append(out, Reduction{Scorer: scorer, Reducer: reducer, SampleID: id, Value: x, Valid: ok, Raw: jsonOf(val)})
		}
	}
	return out, nil
}

// readJSONLog reads the single-file .json log, its samples one at a time.
func readJSONLog(path string, sink Sink, headerOnly bool) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	e := &Eval{File: path, Format: "json"}
	w := where{file: path}
	sc := newScanner(f, MaxItem)
	begun := false
	begin := func() error {
		if begun {
			return nil
		}
		begun = true
		if e.Version == 0 {
			return w.errf("version", "the log has no version (or it comes after its samples)")
		}
		if e.EvalID == "" || e.Task == "" {
			return w.errf("eval", "the log has no eval section before its samples")
		}
		return sink.Begin(e)
	}
	err = sc.members(func(key string) error {
		switch key {
		case "samples":
			if err := begin(); err != nil {
				return err
			}
			return sc.elements(func(i int) error {
				s := &Sample{Entry: fmt.Sprintf("samples[%d]", i), Layout: "json"}
				sr := &sampleReader{sc: sc, w: w, sink: sink, prefix: fmt.Sprintf("samples[%d].", i)}
				if ok, err := sc.isObject(); err != nil {
					return w.err(s.Entry, err)
				} else if !ok {
					return w.errf(s.Entry, "expected a sample object")
				}
				if err := sr.read(s); err != nil {
					return err
				}
				return sinkErr(sink.Sample(s))
			})
		case "reductions":
			raw, err := sc.raw()
			if err != nil {
				return w.err(key, err)
			}
			v, err := parseOne(raw)
			if err != nil {
				return w.errf(key, "not JSON: %v", err)
			}
			e.Reductions, err = readReductions(w, key, v)
			return err
		}
		raw, err := sc.raw()
		if err != nil {
			return w.err(key, err)
		}
		v, err := parseOne(raw)
		if err != nil {
			return w.errf(key, "not JSON: %v", err)
		}
		return e.headerField(w, key, v)
	})
	if err != nil {
		if errors.Is(err, errHeaderRead) {
			return err
		}
		return w.err("", err)
	}
	if err := sc.end(); err != nil {
		return w.err("", err)
	}
	if err := begin(); err != nil || headerOnly {
		return err
	}
	return sink.End(e)
}
