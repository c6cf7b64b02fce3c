// Package serve is gymlens's viewer: a web server over the warehouse that
// shows the paper tables with every cell linked to the runs behind it, the
// runs (filtered, searched, sorted), and each run's trajectory with its
// tasks and judgments, as HTML pages and as JSON under /api/. It calls the
// library (reports, analysis) through a Store, never the CLI.
//
// Everything from the warehouse is data: pages are html/template (every
// value escaped), served with a Content-Security-Policy that allows no
// script and no inline style; GET and HEAD are answered, and POST where
// annotations are stored, from the viewer's own pages only. A request
// whose Host is not the viewer's (DNS rebinding) is refused first
// (hosts.go). It binds loopback unless given a token (CheckAddr); with a
// token, every request must carry it. Connections are held to Limits.
package serve

import (
	"context"
	"crypto/subtle"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"

	"github.com/gymlens/gymlens/analysis"
	"github.com/gymlens/gymlens/ingest/rows"
	"github.com/gymlens/gymlens/reports"
)

// Store is what the viewer reads: the reading commands' warehouse, a
// run's events, and a search of the trajectories' text. ingest.Warehouse
// is one.
type Store interface {
	reports.Warehouse
	// RunPages reads what the runs' pages show besides their values (runs
	// not there are not in the map).
	RunPages(ctx context.Context, ids []string) (map[string]*rows.RunPage, error)
	// LoadRunTasks reads a run's active tasks and judgments into it (the
	// viewer keeps the runs' values only).
	LoadRunTasks(ctx context.Context, r *rows.RunRow) error
	SearchRuns(ctx context.Context, q string) (map[string]bool, error)
	// SearchSnippets gives the first match of q in each of the runs ids.
	SearchSnippets(ctx context.Context, q string, ids []string) (map[string]rows.Snippet, error)
	// PARETexts reads what a PARE run's events and proposals say.
	PARETexts(ctx context.Context, id string) (*rows.PARETexts, error)
}

// Options configure the viewer.
type Options struct {
	Name      string // the warehouse, in titles and messages
	Token     string // when set, every request must carry it (or an annotator's own link)
	Bootstrap analysis.BootstrapOptions
	// ReadOnly: the store is open read-only, and the viewer stores no
	// answers.
	ReadOnly bool
	// Histories gives what the user saw of the items of a queue drawn in
	// the page (nil: the page makes PARE queues only).
	Histories reports.Histories
	// Progress, when not nil, is told what New does while it prepares the
	// warehouse (packing the runs' events, reading the runs).
	Progress func(reports.Progress)
	// Addr is where Listen listens (DefaultAddr when empty); its host is
	// a name requests may give besides loopback (unless 0.0.0.0 or [::]).
	Addr string
	// AllowedHosts are the other names requests may give in Host: NAME
	// (any port) or NAME:PORT (CheckHosts).
	AllowedHosts []string
	// Limits bound the connections Listen serves (zero fields: the
	// defaults) and the time each answer may take to be written.
	Limits Limits
}

// RunPacker is a Store that can keep what a run page shows of each run as
// a few values (ingest's event and page packs), which a cold run page
// reads several times faster than the tables' columns. New packs the runs
// behind the pages, after reading their values, unless the store is
// read-only; progress is told what is being packed (its stage) and how
// far it is, and the overview says so.
type RunPacker interface {
	PackRuns(ctx context.Context, progress func(stage string, done, total int)) error
}

// DefaultAddr is where the viewer listens unless told otherwise.
const DefaultAddr = "127.0.0.1:8077"

// CheckAddr refuses a listening address other than loopback unless a
// token guards the server.
func CheckAddr(addr, token string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--addr %q: expected HOST:PORT (%v)", addr, err)
	}
	if token != "" || host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("--addr %s is not a loopback address: give --token (or $GYMLENS_TOKEN) so that only those who have it read the warehouse", addr)
}

//go:embed assets
var assets embed.FS

// Server serves the viewer's pages.
type Server struct {
	store Store
	notes Annotations // nil when the store holds none
	opt   Options
	mux   *http.ServeMux
	cop   *http.CrossOriginProtection

	hosts  []hostRule // the names requests may give besides loopback
	limits Limits     // with the defaults filled in

	mu sync.Mutex // guards ds and ix
	ds *reports.Dataset
	ix *runIndex // the runs of ds's values, indexed once read

	pmu  sync.Mutex // guards pare
	pare []rows.PARERun

	imu    sync.Mutex             // guards imeans
	imeans []analysis.InspectMean // the Inspect overview's means, computed once

	reads *pageReads // the run pages asked for at once, read together

	cmu    sync.Mutex   // guards recent
	recent []*RunDetail // the last run pages read, newest last (maxRecent)

	packs packing // the runs packed behind the pages (RunPacker)
}

// maxRecent is how many runs' details (tasks, judgments, events) the
// server keeps after reading them, for the next request of the same run.
const maxRecent = 64

// New makes the viewer over store; the runs are read on the first page
// that needs them and kept.
func New(ctx context.Context, store Store, opt Options) (*Server, error) {
	if opt.Bootstrap.Resamples == 0 {
		opt.Bootstrap = analysis.DefaultBootstrap
	}
	if err := opt.Bootstrap.Check("level"); err != nil {
		return nil, err
	}
	if err := CheckToken(opt.Token); err != nil {
		return nil, err
	}
	if opt.Addr != "" {
		if err := CheckAddr(opt.Addr, opt.Token); err != nil {
			return nil, err
		}
	}
	hosts, err := hostRules(opt.AllowedHosts, opt.Addr)
	if err != nil {
		return nil, err
	}
	if err := opt.Limits.check(); err != nil {
		return nil, err
	}
	s := &Server{store: store, opt: opt, mux: http.NewServeMux(), cop: http.NewCrossOriginProtection(), hosts: hosts, limits: opt.Limits.withDefaults()}
	// A reader per two cores: the tables but events are scanned once a
	// batch, and a burst split between more readers scans them more often
	// (a reader per core took 426 ms, not 331, for 100 cold pages at
	// --scale 10: docs/benchmarks.md).
	s.reads = &pageReads{read: store.RunPages, readers: max(1, runtime.GOMAXPROCS(0)/2)}
	s.notes, _ = store.(Annotations)
	s.cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "a request from another site is refused: open the viewer's own page", http.StatusForbidden)
	}))
	s.mux.Handle("GET /assets/", http.FileServerFS(filesOnly{assets}))
	s.mux.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	s.mux.HandleFunc("GET /{$}", s.overview)
	s.mux.HandleFunc("GET /runs", s.runs)
	s.mux.HandleFunc("GET /runs/{id...}", s.run)
	s.mux.HandleFunc("GET /compare", s.compare)
	s.mux.HandleFunc("GET /api/runs", s.apiRuns)
	s.mux.HandleFunc("GET /api/runs/{id...}", s.apiRun)
	s.mux.HandleFunc("GET /api/metrics", s.apiMetrics)
	s.mux.HandleFunc("GET /pare", s.pareList)
	s.mux.HandleFunc("GET /pare/{id...}", s.pareRun)
	s.mux.HandleFunc("GET /inspect", s.inspectOverview)
	s.mux.HandleFunc("GET /inspect/samples", s.inspectSamples)
	s.mux.HandleFunc("GET /inspect/sample", s.inspectSample)
	s.mux.HandleFunc("GET /inspect/compare", s.inspectCompare)
	s.mux.HandleFunc("GET /annotate", s.annotateIndex)
	s.mux.HandleFunc("POST /annotate", s.makeQueue)
	s.mux.HandleFunc("GET /annotate/{queue}", s.queueHome)
	s.mux.HandleFunc("GET /annotate/{queue}/status", s.statusPage)
	s.mux.HandleFunc("GET /annotate/{queue}/items/{n}", s.item)
	s.mux.HandleFunc("POST /annotate/{queue}/items/{n}", s.answerForm)
	s.mux.HandleFunc("GET /api/annotate/{queue}/status", s.apiStatus)
	s.mux.HandleFunc("GET /api/annotate/{queue}/items", s.apiItems)
	s.mux.HandleFunc("POST /api/annotate/{queue}/answers", s.apiAnswers)
	// The runs' values only: a run's tasks are read when its page is asked.
	ds, err := reports.NewDataset(ctx, store, reports.Options{Name: opt.Name, Keep: reports.KeepValues, Bootstrap: opt.Bootstrap, Progress: opt.Progress})
	if err != nil {
		return nil, err
	}
	s.ds = ds
	s.packs.finished = make(chan struct{})
	if p, ok := store.(RunPacker); ok && !opt.ReadOnly {
		// Behind the pages: at --scale 100 the packing takes minutes, and
		// the first page is owed in seconds (docs/serve.md).
		s.startPacking(ctx, p)
	} else {
		close(s.packs.finished)
	}
	return s, nil
}

// csp allows the page's own stylesheet and nothing else: no script, no
// inline style, no frame, no form posting elsewhere.
const csp = "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// ServeHTTP answers a request: security headers and a write deadline on
// every answer; a Host that is not the viewer's refused (hosts.go); GET,
// HEAD and (annotation answers, new queues) POST only; a POST from another
// site refused; the token checked, or an annotator's own link (which opens
// its queue alone).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	w = writeDeadline(w, s.writeTimeout(r.URL.Path))
	if !s.hostAllowed(r) {
		refuseHost(w, r)
		return
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead:
	case http.MethodPost:
		if err := s.cop.Check(r); err != nil {
			http.Error(w, "a request from another site is refused: open the viewer's own page", http.StatusForbidden)
			return
		}
	default:
		http.Error(w, "the viewer answers GET, and POST of annotations", http.StatusMethodNotAllowed)
		return
	}
	if s.opt.Token != "" && !strings.HasPrefix(r.URL.Path, "/assets/") && r.URL.Path != "/favicon.ico" {
		r2, answered, ok := s.annotatorAccess(w, r)
		if answered {
			return
		}
		if ok {
			r = r2
		} else if !s.authorised(w, r) {
			return
		}
	}
	s.mux.ServeHTTP(w, r)
}

// tokenCookie carries the token once a link with ?token= was followed.
const tokenCookie = "gymlens_token"

// authorised checks the token: an Authorization: Bearer header, the
// cookie, or ?token= (which sets the cookie and redirects to the same page
// without it, so that the token does not stay in the address bar).
func (s *Server) authorised(w http.ResponseWriter, r *http.Request) bool {
	same := func(t string) bool { return subtle.ConstantTimeCompare([]byte(t), []byte(s.opt.Token)) == 1 }
	if t, ok := bearer(r.Header.Get("Authorization")); ok && same(t) {
		return true
	}
	if c, err := r.Cookie(tokenCookie); err == nil && same(c.Value) {
		return true
	}
	if t := r.URL.Query().Get("token"); t != "" && same(t) {
		http.SetCookie(w, &http.Cookie{Name: tokenCookie, Value: t, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
		q := r.URL.Query()
		q.Del("token")
		u := *r.URL
		u.RawQuery = q.Encode()
		http.Redirect(w, r, u.RequestURI(), http.StatusSeeOther)
		return false
	}
	w.Header().Set("Connection", "close") // a refused client keeps no connection slot
	http.Error(w, "this viewer needs its token: open the link gymlens serve printed", http.StatusUnauthorized)
	return false
}

// filesOnly is a file system whose directories are not there: /assets/
// serves its files and lists nothing.
type filesOnly struct{ fs.FS }

func (f filesOnly) Open(name string) (fs.File, error) {
	file, err := f.FS.Open(name)
	if err != nil {
		return nil, err
	}
	if st, err := file.Stat(); err != nil || st.IsDir() {
		file.Close()
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return file, nil
}

// dataset is the viewer's dataset (runs read once).
func (s *Server) dataset() (*reports.Dataset, *reports.Values, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, err := s.ds.Values()
	return s.ds, v, err
}

// index is the viewer's runs, indexed (read on the first call).
func (s *Server) index() (*runIndex, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ix != nil {
		return s.ix, nil
	}
	v, err := s.ds.Values()
	if err != nil {
		return nil, err
	}
	s.ix = newRunIndex(v)
	return s.ix, nil
}

// fail answers an error: 400 for what the request asked wrongly, 404 for
// what is not there, 500 otherwise (the message is text, escaped).
func fail(w http.ResponseWriter, err error) {
	code := http.StatusInternalServerError
	var oe *analysis.OptionError
	switch {
	case errors.As(err, &oe):
		code = http.StatusBadRequest
	case errors.Is(err, errNotFound), errors.Is(err, analysis.ErrNoData), errors.Is(err, rows.ErrNoQueue):
		code = http.StatusNotFound
	}
	http.Error(w, err.Error(), code)
}

var errNotFound = errors.New("not found")
