package main

import (
	"context"
	"fmt"

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
			"The server owns the warehouse while it runs (other gymlens commands wait for it to stop) unless --read-only;\nbehind its pages it packs each run's events, tasks and judgments into a few values when they are new (docs/serve.md), which cold run pages read faster.\n" +
			"It binds loopback unless --token is given; with a token every request must carry it (the printed link sets\n" +
			"it), or an annotator's own link, which opens that annotator's queue alone. A token has 16 characters or more;\n" +
			"--token auto makes one of 128 random bits and prints the link with it. Whatever the token, a request must name\n" +
			"the viewer in its Host header (a guard against DNS rebinding): a loopback address, localhost or NAME.localhost\n" +
			"with the port listened on, --addr's host, or a name of --allowed-hosts; others are refused (403).",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "addr", Value: serve.DefaultAddr, Usage: "listen on `HOST:PORT`"},
			&cli.StringFlag{Name: "token", Usage: "require `TOKEN` (16 characters or more; auto: make one and print the link) of every request (needed to listen beyond loopback)", Sources: cli.EnvVars("GYMLENS_TOKEN")},
			&cli.StringSliceFlag{Name: "allowed-hosts", Usage: "answer requests that name `HOST[:PORT]` (any port when none) besides loopback and --addr's host, e.g. behind a proxy (repeat)"},
			&cli.BoolFlag{Name: "read-only", Usage: "open the warehouse read-only: other gymlens commands may read it meanwhile; no annotation"},
		}, bootstrapFlags()...),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			so := serve.Options{Token: cmd.String("token"), Addr: cmd.String("addr"), AllowedHosts: cmd.StringSlice("allowed-hosts")}
			if err := so.CheckListen(); err != nil {
				return err
			}
			var err error
			if so.Bootstrap, err = argsOf(cmd).Bootstrap(); err != nil {
				return err
			}
			readOnly := cmd.Bool("read-only") || ingest.IsLake(cmd.String("db")) // a lake is read-only
			oo := openOptions(cmd, readOnly, "")
			oo.Threads, oo.Viewer, oo.MustExist = 1, true, true // many small queries at once: one thread each
			w, err := ingest.Open(ctx, cmd.String("db"), oo)
			if err != nil {
				return err
			}
			defer w.Close()
			progress, done := readProgress(e, cmd.Bool("quiet"))
			so.Name, so.ReadOnly, so.Progress = w.Path, readOnly, progress
			if !readOnly {
				so.Histories = histories(w)
			}
			h, err := serve.New(ctx, w, so)
			if done(); err != nil {
				return err
			}
			return h.Listen(ctx, func(url string) { fmt.Fprintf(e.stdout, "gymlens serve: %s (Ctrl-C stops)\n", url) })
		},
	}
}
