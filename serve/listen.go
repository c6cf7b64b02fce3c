package serve

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"golang.org/x/net/netutil"
)

// Limits bound what a connection may hold of the viewer. A zero field
// takes its default (the Default constants).
type Limits struct {
	// MaxConns is how many connections are served at once; the next ones
	// wait in the kernel's queue until one closes, so that a flood of
	// connections makes others wait instead of exhausting the process's
	// open files.
	MaxConns int
	// ReadHeaderTimeout bounds the reading of a request's header.
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds the reading of a whole request, header and body.
	ReadTimeout time.Duration
	// IdleTimeout closes a kept-alive connection that sends no request.
	IdleTimeout time.Duration
	// WriteTimeout bounds the writing of an answer, from its first byte
	// (the time a page takes to compute does not count).
	WriteTimeout time.Duration
	// LongWriteTimeout is WriteTimeout for the answers that grow with a
	// run's trajectory or with the warehouse: a run's page, a comparison,
	// a PARE run, and every JSON answer under /api/.
	LongWriteTimeout time.Duration
}

// The default limits: a viewer has a few readers, each browser opening
// up to six connections, far fewer than the 1,024 open files a process
// has at the least (Go raises that to the hard limit).
const (
	DefaultMaxConns          = 256
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultReadTimeout       = 30 * time.Second
	DefaultIdleTimeout       = time.Minute
	DefaultWriteTimeout      = time.Minute
	DefaultLongWriteTimeout  = 10 * time.Minute
)

// withDefaults is l with each zero field set to its default.
func (l Limits) withDefaults() Limits {
	return Limits{
		MaxConns:          cmp.Or(l.MaxConns, DefaultMaxConns),
		ReadHeaderTimeout: cmp.Or(l.ReadHeaderTimeout, DefaultReadHeaderTimeout),
		ReadTimeout:       cmp.Or(l.ReadTimeout, DefaultReadTimeout),
		IdleTimeout:       cmp.Or(l.IdleTimeout, DefaultIdleTimeout),
		WriteTimeout:      cmp.Or(l.WriteTimeout, DefaultWriteTimeout),
		LongWriteTimeout:  cmp.Or(l.LongWriteTimeout, DefaultLongWriteTimeout),
	}
}

// check refuses negative limits.
func (l Limits) check() error {
	if l.MaxConns < 0 || l.ReadHeaderTimeout < 0 || l.ReadTimeout < 0 || l.IdleTimeout < 0 || l.WriteTimeout < 0 || l.LongWriteTimeout < 0 {
		return fmt.Errorf("serve limits: negative value in %+v", l)
	}
	return nil
}

// Listen serves the viewer on Options.Addr (DefaultAddr when empty) until
// ctx ends, then stops within 3 s. It first tells ready the address to
// open, with the token when there is one; for an unspecified address
// (0.0.0.0, [::]) that is localhost with the port. Connections are held
// to Options.Limits; an error accepting a connection (no file descriptor
// left) is logged and retried, never the end of the server.
func (s *Server) Listen(ctx context.Context, ready func(url string)) error {
	defer s.StopPacking() // the store may be closed once Listen returns
	addr := cmp.Or(s.opt.Addr, DefaultAddr)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("--addr %s: %w", addr, err)
	}
	at := ln.Addr().String()
	if a, ok := ln.Addr().(*net.TCPAddr); ok && a.IP.IsUnspecified() {
		at = "localhost:" + strconv.Itoa(a.Port)
	}
	u := "http://" + at + "/"
	if s.opt.Token != "" {
		u += "?" + url.Values{"token": {s.opt.Token}}.Encode()
	}
	ready(u)
	return serveOn(ctx, ln, s, s.opt.Limits, nil)
}

// serveOn serves h on ln with lim until ctx ends; logger takes the
// accept errors (nil: the standard logger).
func serveOn(ctx context.Context, ln net.Listener, h http.Handler, lim Limits, logger *log.Logger) error {
	lim = lim.withDefaults()
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: lim.ReadHeaderTimeout,
		ReadTimeout:       lim.ReadTimeout,
		IdleTimeout:       lim.IdleTimeout,
		// No WriteTimeout: it would count from the request, the page's
		// computation included; the viewer sets a deadline from each
		// answer's first byte (writeDeadline).
		ErrorLog: logger,
	}
	stopped := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(stopped)
		sctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		if srv.Shutdown(sctx) != nil {
			srv.Close()
		}
	})
	err := srv.Serve(netutil.LimitListener(retrying{ln}, lim.MaxConns))
	if errors.Is(err, http.ErrServerClosed) {
		if !stop() {
			<-stopped
		}
		return nil
	}
	stop()
	return err
}

// retrying is a listener whose accept errors, other than its closing,
// are temporary: http.Server logs them and retries after a pause (5 ms
// doubling to 1 s) instead of returning. Out of file descriptors
// (EMFILE) is temporary already; an error the kernel gives for one
// aborted connection, or any other, must not end the viewer either.
type retrying struct{ net.Listener }

func (l retrying) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil && !errors.Is(err, net.ErrClosed) {
		return nil, acceptError{err}
	}
	return c, err
}

type acceptError struct{ error }

func (acceptError) Timeout() bool   { return false }
func (acceptError) Temporary() bool { return true }
func (e acceptError) Unwrap() error { return e.error }

// writeTimeout is how long the answer to path may take to be written.
func (s *Server) writeTimeout(path string) time.Duration {
	if strings.HasPrefix(path, "/api/") || strings.HasPrefix(path, "/runs/") || strings.HasPrefix(path, "/pare/") || path == "/compare" ||
		strings.HasPrefix(path, "/inspect") {
		return s.limits.LongWriteTimeout
	}
	return s.limits.WriteTimeout
}

// writeDeadline is w with a write deadline of d from the first byte
// written (or the header): a client that reads nothing of the answer is
// let go then. The connection's deadline left from an earlier answer is
// cleared at once. Where the connection takes no deadline (a test's
// recorder), w is as it was.
func writeDeadline(w http.ResponseWriter, d time.Duration) http.ResponseWriter {
	rc := http.NewResponseController(w)
	if rc.SetWriteDeadline(time.Time{}) != nil {
		return w
	}
	return &deadlineWriter{ResponseWriter: w, rc: rc, d: d}
}

type deadlineWriter struct {
	http.ResponseWriter
	rc      *http.ResponseController
	d       time.Duration
	started bool
}

func (w *deadlineWriter) start() {
	if !w.started {
		w.started = true
		w.rc.SetWriteDeadline(time.Now().Add(w.d))
	}
}

func (w *deadlineWriter) WriteHeader(code int) {
	w.start()
	w.ResponseWriter.WriteHeader(code)
}

func (w *deadlineWriter) Write(b []byte) (int, error) {
	w.start()
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *deadlineWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
