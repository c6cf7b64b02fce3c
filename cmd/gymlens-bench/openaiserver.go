package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/gymlens/gymlens/internal/openaitest"
)

// benchOpenAIServer serves the in-process OpenAI-compatible endpoint
// the judge's tests use, for trying gymlens judge without a model: it
// prints its base URL and serves until Ctrl-C or SIGTERM.
func benchOpenAIServer(args []string) error {
	fl := flag.NewFlagSet("openai-server", flag.ExitOnError)
	addr := fl.String("addr", "127.0.0.1:8000", "loopback `HOST:PORT` to listen on (port 0: any free one)")
	latency := fl.Duration("latency", 0, "wait `D` before each answer, as a model would")
	fl.Parse(args)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return serveOpenAIAt(ctx, *addr, *latency, os.Stdout)
}

// serveOpenAIAt serves the fake endpoint on addr, a loopback address
// only (it answers whoever asks), writes its base URL (…/v1) to out and
// serves until ctx ends. Every answer is valid and fixed by the request
// (openaitest's "ok"): a way to try the judge's commands, its cache,
// batches and the metrics' judge notes, not a judgment.
func serveOpenAIAt(ctx context.Context, addr string, latency time.Duration, out io.Writer) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--addr %s: %w", addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("--addr %s: a loopback address only (127.0.0.1, [::1], localhost): the fake endpoint answers anyone who reaches it", addr)
	}
	srv, err := openaitest.NewAt(addr)
	if err != nil {
		return fmt.Errorf("--addr %s: %w", addr, err)
	}
	defer srv.Close()
	srv.Latency = latency
	fmt.Fprintln(out, srv.URL+"/v1")
	<-ctx.Done()
	return nil
}
