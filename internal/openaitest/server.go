// Package openaitest is an in-process server speaking the OpenAI
// chat-completions protocol, for testing gymlens's judge without a
// network: scriptable to answer well, answer invalid JSON, give
// out-of-range scores, cite evidence that is not there, return 429 with
// Retry-After or 500, hang past the client's timeout, or drop the
// connection. It counts requests and the most in flight at once.
package openaitest

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Server is the fake endpoint. Each request takes the next scripted step:
// "ok", "429:SECONDS", "500", "400", "hang", "drop", "badjson",
// "outofrange", "badevidence", or "json:CONTENT". After the script, "ok".
// An "ok" answer fits the metric named by the request's response_format
// (tc_answer, ta_answer, trj_answer) and cites the first record it was
// shown, word for word; a user rubric's (custom_NAME_answer) is made from
// its schema (fromSchema).
type Server struct {
	*httptest.Server
	// The Files and Batches endpoints: a batch is "validating" when made;
	// each GET of it then takes the next of BatchSteps (default
	// in_progress, finalizing, completed; the last one stays). A batch
	// that ends completed, expired or cancelled has an output file of
	// answers and an error file: lines whose place BatchFail names fail
	// (HTTP 500), and when expired or cancelled the second half of the
	// lines did not run (batch_expired, batch_cancelled). A failed batch
	// has neither file.
	BatchSteps []string
	BatchFail  func(line int) bool
	files      map[string][]byte
	batchList  map[string]*fakeBatch
	BatchGets  int // GETs of batches received
	// FlipEvery, when > 0, makes the answers of one item in FlipEvery
	// (by a hash of the item's data: Flips says which) depend on the
	// request's seed: asked with an even seed, TA's now is 0 instead of 1,
	// TC's correctness 0.25 instead of 0.75, TR-J's faith 2 instead of 4,
	// so that a judge asked again with seeds S, S+1 flips on exactly those
	// items.
	FlipEvery int
	// Forget, when set, counts the requests without keeping them (their
	// bodies and headers): a server for a long benchmark, which would
	// otherwise hold every prompt it was sent (gigabytes at --scale 100).
	Forget      bool
	mu          sync.Mutex
	script      []string
	received    int
	Requests    []map[string]any
	Headers     []http.Header
	inFlight    atomic.Int64
	maxInFlight atomic.Int64
	Latency     time.Duration
	Hang        time.Duration
}

// New starts a server; Close it when done.
func New(script ...string) *Server {
	f := &Server{script: script, Hang: 300 * time.Millisecond}
	f.Server = httptest.NewServer(http.HandlerFunc(f.handle))
	return f
}

// NewAt starts a server listening on addr (host:port; port 0: any
// free one), answering "ok" to everything and keeping no request; Close
// it when done.
func NewAt(addr string) (*Server, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	f := &Server{Hang: 300 * time.Millisecond, Forget: true}
	f.Server = httptest.NewUnstartedServer(http.HandlerFunc(f.handle))
	f.Server.Listener.Close()
	f.Server.Listener = l
	f.Server.Start()
	return f, nil
}

// Script appends steps.
func (f *Server) Script(steps ...string) {
	f.mu.Lock()
	f.script = append(f.script, steps...)
	f.mu.Unlock()
}

// Count is the number of requests received.
func (f *Server) Count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.received
}

// MaxInFlight is the most requests handled at once.
func (f *Server) MaxInFlight() int64 { return f.maxInFlight.Load() }

func (f *Server) handle(w http.ResponseWriter, r *http.Request) {
	n := f.inFlight.Add(1)
	defer f.inFlight.Add(-1)
	for {
		m := f.maxInFlight.Load()
		if n <= m || f.maxInFlight.CompareAndSwap(m, n) {
			break
		}
	}
	if strings.HasPrefix(r.URL.Path, "/v1/files") || strings.HasPrefix(r.URL.Path, "/v1/batches") {
		f.batches(w, r)
		return
	}
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		http.Error(w, `{"error":{"message":"not found"}}`, http.StatusNotFound)
		return
	}
	var body map[string]any
	json.NewDecoder(r.Body).Decode(&body)
	f.mu.Lock()
	f.received++
	if !f.Forget {
		f.Requests = append(f.Requests, body)
		f.Headers = append(f.Headers, r.Header.Clone())
	}
	step := "ok"
	if len(f.script) > 0 {
		step, f.script = f.script[0], f.script[1:]
	}
	f.mu.Unlock()
	if f.Latency > 0 {
		time.Sleep(f.Latency)
	}
	fail := func(code int, msg string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		fmt.Fprintf(w, `{"error":{"message":%q}}`, msg)
	}
	answer := answerFor(body, false)
	if f.FlipEvery > 0 && Flips(lastUser(body), f.FlipEvery) {
		if seed, _ := body["seed"].(float64); int64(seed)%2 == 0 {
			answer = strings.NewReplacer(`"now":1`, `"now":0`, `"correctness":0.75`, `"correctness":0.25`, `"faith":4`, `"faith":2`).Replace(answer)
		}
	}
	switch {
	case strings.HasPrefix(step, "429:"):
		w.Header().Set("Retry-After", step[4:])
		fail(http.StatusTooManyRequests, "rate limited")
		return
	case step == "500":
		fail(http.StatusInternalServerError, "boom")
		return
	case step == "400":
		fail(http.StatusBadRequest, "bad request")
		return
	case step == "hang":
		time.Sleep(f.Hang)
	case step == "drop":
		hj, _ := w.(http.Hijacker)
		conn, _, _ := hj.Hijack()
		conn.Close()
		return
	case step == "badjson":
		answer = "I think the answer is good."
	case step == "outofrange":
		answer = strings.Replace(answerFor(body, false), `0.75`, `1.75`, 1)
		answer = strings.Replace(answer, `"faith":4`, `"faith":7`, 1)
		answer = strings.Replace(answer, `"now":1`, `"now":2`, 1)
	case step == "badevidence":
		answer = answerFor(body, true)
	case strings.HasPrefix(step, "json:"):
		answer = step[5:]
	}
	content, _ := json.Marshal(answer)
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"id":"c1","object":"chat.completion","created":1,"model":%q,
		"choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":%s}}],
		"usage":{"prompt_tokens":120,"completion_tokens":30,"total_tokens":150}}`, body["model"], content)
}

// Flips says whether the item whose request carries user (the data
// message) is one that FlipEvery every flips.
func Flips(user string, every int) bool {
	h := fnv.New32a()
	h.Write([]byte(user))
	return h.Sum32()%uint32(every) == 0
}

// Answer is the answer an "ok" step gives to a request body (a chat
// completion request as JSON): what a batch's output holds for it.
func Answer(body map[string]any) string { return answerFor(body, false) }

// answerFor makes a valid answer for the metric the request asks about,
// citing the first record shown (or, bad, a record that does not exist).
func answerFor(body map[string]any, bad bool) string {
	name := ""
	if rf, ok := body["response_format"].(map[string]any); ok {
		if js, ok := rf["json_schema"].(map[string]any); ok {
			name, _ = js["name"].(string)
		}
	}
	if name == "" {
		// No structured output asked for: tell the metric by its prompt.
		sys := firstRole(body, "system")
		switch {
		case strings.Contains(sys, "allocated its time"):
			name = "ta_answer"
		case strings.Contains(sys, "trust"):
			name = "trj_answer"
		}
	}
	seq, quote := int64(999999), "nothing of the kind"
	if !bad {
		if user := lastUser(body); user != "" {
			data := strings.TrimSuffix(strings.TrimPrefix(user, "BEGIN DATA\n"), "\nEND DATA")
			var d struct {
				Records []struct {
					Seq    int64  `json:"seq"`
					Text   string `json:"text"`
					Args   string `json:"args"`
					Result string `json:"result"`
				} `json:"records"`
			}
			if json.Unmarshal([]byte(data), &d) == nil && len(d.Records) > 0 {
				r := d.Records[0]
				seq, quote = r.Seq, firstWords(r.Text+" "+r.Args+" "+r.Result)
			}
		}
	}
	ev := fmt.Sprintf(`"reasons":"scripted","evidence":[{"seq":%d,"quote":%q}]`, seq, quote)
	if strings.HasPrefix(name, "custom_") {
		return fromSchema(body, seq, quote)
	}
	switch name {
	case "ta_answer":
		return `{"now":1,"later":0,"cq":0.5,` + ev + `}`
	case "trj_answer":
		return `{"understandability":4,"competence":4,"reliability":3,"attachment":3,"faith":4,` + ev + `}`
	}
	return `{"correctness":0.75,"grounding":0.5,"completeness":1,"artifact_quality":0.5,` + ev + `}`
}

// fromSchema answers a user rubric's schema: each number a value of its
// range (its enum's, else one of five evenly spaced points, integers for
// an integer) picked by a hash of the item's data, strings "scripted",
// evidence citing the first record.
func fromSchema(body map[string]any, seq int64, quote string) string {
	rf, _ := body["response_format"].(map[string]any)
	js, _ := rf["json_schema"].(map[string]any)
	sch, _ := js["schema"].(map[string]any)
	props, _ := sch["properties"].(map[string]any)
	h := fnv.New64a()
	h.Write([]byte(lastUser(body)))
	pick := h.Sum64()
	out := map[string]any{}
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys) // the same answer to the same request
	for _, k := range keys {
		p, _ := props[k].(map[string]any)
		switch p["type"] {
		case "number", "integer":
			pick = pick*6364136223846793005 + 1442695040888963407
			if en, ok := p["enum"].([]any); ok && len(en) > 0 {
				out[k] = en[(pick>>33)%uint64(len(en))]
				continue
			}
			lo, _ := p["minimum"].(float64)
			hi, ok := p["maximum"].(float64)
			if !ok {
				hi = lo + 1
			}
			x := lo + (hi-lo)*float64((pick>>33)%5)/4
			if p["type"] == "integer" {
				x = float64(int64(x))
			}
			out[k] = x
		case "string":
			out[k] = "scripted"
		case "array":
			out[k] = []map[string]any{{"seq": seq, "quote": quote}}
		case "boolean":
			out[k] = true
		}
	}
	b, _ := json.Marshal(out)
	return string(b)
}

func firstRole(body map[string]any, role string) string {
	msgs, _ := body["messages"].([]any)
	for _, x := range msgs {
		m, _ := x.(map[string]any)
		if m["role"] == role {
			if s, ok := m["content"].(string); ok {
				return s
			}
		}
	}
	return ""
}

func lastUser(body map[string]any) string {
	msgs, _ := body["messages"].([]any)
	for i := len(msgs) - 1; i >= 0; i-- {
		m, _ := msgs[i].(map[string]any)
		if m["role"] == "user" {
			if s, ok := m["content"].(string); ok {
				return s
			}
		}
	}
	return ""
}

func firstWords(s string) string {
	f := strings.Fields(s)
	if len(f) > 3 {
		f = f[:3]
	}
	return strings.Join(f, " ")
}

// fakeBatch is a batch of the fake Batches endpoint.
type fakeBatch struct {
	id, input, output, errors, status string
	step                              int
}

func (f *Server) batches(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.files == nil {
		f.files, f.batchList = map[string][]byte{}, map[string]*fakeBatch{}
	}
	w.Header().Set("Content-Type", "application/json")
	notFound := func() { w.WriteHeader(http.StatusNotFound); fmt.Fprint(w, `{"error":{"message":"not found"}}`) }
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/files":
		file, hdr, err := r.FormFile("file")
		if err != nil || r.FormValue("purpose") != "batch" {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `{"error":{"message":"expected a file and purpose=batch: %v"}}`, err)
			return
		}
		b, _ := io.ReadAll(file)
		id := fmt.Sprintf("file-%d", len(f.files)+1)
		f.files[id] = b
		fmt.Fprintf(w, `{"id":%q,"object":"file","bytes":%d,"created_at":1,"filename":%q,"purpose":"batch","status":"processed"}`, id, len(b), hdr.Filename)
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/v1/files/") && strings.HasSuffix(r.URL.Path, "/content"):
		b, ok := f.files[strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/v1/files/"), "/content")]
		if !ok {
			notFound()
			return
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Write(b)
	case r.Method == http.MethodPost && r.URL.Path == "/v1/batches":
		var req struct {
			InputFileID      string `json:"input_file_id"`
			Endpoint         string `json:"endpoint"`
			CompletionWindow string `json:"completion_window"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		if _, ok := f.files[req.InputFileID]; !ok || req.Endpoint != "/v1/chat/completions" || req.CompletionWindow != "24h" {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"error":{"message":"bad batch request"}}`)
			return
		}
		b := &fakeBatch{id: fmt.Sprintf("batch_%d", len(f.batchList)+1), input: req.InputFileID, status: "validating"}
		f.batchList[b.id] = b
		f.writeBatch(w, b)
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/v1/batches/"):
		b, ok := f.batchList[strings.TrimPrefix(r.URL.Path, "/v1/batches/")]
		if !ok {
			notFound()
			return
		}
		f.BatchGets++
		steps := f.BatchSteps
		if len(steps) == 0 {
			steps = []string{"in_progress", "finalizing", "completed"}
		}
		if b.output == "" && b.errors == "" && b.status != "failed" {
			b.status = steps[min(b.step, len(steps)-1)]
			b.step++
			if b.status == "completed" || b.status == "expired" || b.status == "cancelled" {
				f.runBatch(b)
			}
		}
		f.writeBatch(w, b)
	default:
		notFound()
	}
}

// runBatch answers a finished batch's lines into its output and error
// files.
func (f *Server) runBatch(b *fakeBatch) {
	lines := strings.Split(strings.TrimSpace(string(f.files[b.input])), "\n")
	var out, errs strings.Builder
	for i, ln := range lines {
		var req struct {
			CustomID string         `json:"custom_id"`
			Body     map[string]any `json:"body"`
		}
		json.Unmarshal([]byte(ln), &req)
		id, _ := json.Marshal(req.CustomID)
		switch {
		case b.status != "completed" && i >= len(lines)/2:
			fmt.Fprintf(&errs, `{"id":"r%d","custom_id":%s,"response":null,"error":{"code":"batch_%s","message":"not run"}}`+"\n", i, id, b.status)
		case f.BatchFail != nil && f.BatchFail(i):
			fmt.Fprintf(&errs, `{"id":"r%d","custom_id":%s,"response":{"status_code":500,"body":{"error":{"message":"boom"}}},"error":null}`+"\n", i, id)
		default:
			content, _ := json.Marshal(answerFor(req.Body, false))
			fmt.Fprintf(&out, `{"id":"r%d","custom_id":%s,"response":{"status_code":200,"body":{"id":"c%d","object":"chat.completion","created":1,"model":%q,`+
				`"choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":%s}}],"usage":{"prompt_tokens":120,"completion_tokens":30,"total_tokens":150}}},"error":null}`+"\n",
				i, id, i, req.Body["model"], content)
		}
	}
	if out.Len() > 0 {
		b.output = fmt.Sprintf("file-%d", len(f.files)+1)
		f.files[b.output] = []byte(out.String())
	}
	if errs.Len() > 0 {
		b.errors = fmt.Sprintf("file-%d", len(f.files)+1)
		f.files[b.errors] = []byte(errs.String())
	}
}

func (f *Server) writeBatch(w http.ResponseWriter, b *fakeBatch) {
	errs := `null`
	if b.status == "failed" {
		errs = `{"object":"list","data":[{"code":"invalid_request","message":"the input file is not valid","line":1}]}`
	}
	fmt.Fprintf(w, `{"id":%q,"object":"batch","endpoint":"/v1/chat/completions","input_file_id":%q,"completion_window":"24h","status":%q,`+
		`"output_file_id":%q,"error_file_id":%q,"created_at":1,"errors":%s,"request_counts":{"total":0,"completed":0,"failed":0}}`, b.id, b.input, b.status, b.output, b.errors, errs)
}
