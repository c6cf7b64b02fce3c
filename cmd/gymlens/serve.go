package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/gymlens/gymlens/ingest"
	"github.com/gymlens/gymlens/serve"
)

func serveCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "serve",
		Usage: "a viewer in the browser: the paper tables with each cell linked to its runs, the runs, each run's trajectory",
		Description: "Serves the warehouse on --addr: / the main, persona and scenario tables, every value a link to\n" +
			"the runs behind it; /runs filtered (where=DIM=VALUE), searched (q=) and sorted (sort=METRIC); /runs/RUN_ID a\n" +
			"run's tasks, judgments and trajectory by day; /compare?a=RUN&b=RUN two runs side by side; /annotate the\n" +
			"annotation queues, each answer stored in the warehouse at once; the same as JSON under /api/ (docs/serve.md).\n" +
			"The server owns the warehouse while it runs (other gymlens commands wait for it to stop) unless --read-only.\n" +
			"It binds loopback unless --token is given; with a token every request must carry it (the printed link sets\n" +
			"it), or an annotator's own link, which opens that annotator's queue alone.",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "addr", Value: serve.DefaultAddr, Usage: "listen on `HOST:PORT`"},
			&cli.StringFlag{Name: "token", Usage: "require `TOKEN` of every request (needed to listen beyond loopback)", Sources: cli.EnvVars("GYMLENS_TOKEN")},
			&cli.BoolFlag{Name: "read-only", Usage: "open the warehouse read-only: other gymlens commands may read it meanwhile; no annotation"},
		}, bootstrapFlags()...),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			addr, token := cmd.String("addr"), cmd.String("token")
			if err := serve.CheckAddr(addr, token); err != nil {
				return usageError{err}
			}
			opt, err := argsOf(cmd).Bootstrap()
			if err != nil {
				return err
			}
			readOnly := cmd.Bool("read-only")
			path := cmd.String("db")
			if path == "" {
				path = ingest.DefaultPath
			}
			if _, err := os.Stat(path); err != nil {
				return fmt.Errorf("no warehouse at %s: run `gymlens ingest` (or `gymlens demo`) first, or name one with --db", path)
			}
			oo := openOptions(cmd, readOnly, "")
			oo.Threads = 1 // many small queries at once: one thread each
			oo.Viewer = true
			w, err := ingest.Open(ctx, path, oo)
			if err != nil {
				return err
			}
			defer w.Close()
			so := serve.Options{Name: w.Path, Token: token, Bootstrap: opt, ReadOnly: readOnly}
			if !readOnly {
				so.Sampler = sampler(w)
			}
			h, err := serve.New(ctx, w, so)
			if err != nil {
				return err
			}
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return fmt.Errorf("--addr %s: %w", addr, err)
			}
			url := "http://" + ln.Addr().String() + "/"
			if token != "" {
				url += "?token=" + token
			}
			fmt.Fprintf(e.stdout, "gymlens serve: %s (Ctrl-C stops)\n", url)
			srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
			go func() {
				<-ctx.Done()
				sctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
				defer cancel()
				srv.Shutdown(sctx)
			}()
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				return err
			}
			return nil
		},
	}
}
