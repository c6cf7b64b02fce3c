package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/gymlens/gymlens/analysis"
	"github.com/gymlens/gymlens/ingest"
	"github.com/gymlens/gymlens/internal/process"
	"github.com/gymlens/gymlens/judge"
	"github.com/gymlens/gymlens/reports"
)

func main() {
	stopProfile := process.Setup()
	// SIGTERM (kill, a batch system's timeout) stops gymlens as Ctrl-C does.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		// The signal cancels the command's context: gymlens stops at its next
		// check and says what it kept. A second signal ends the process at
		// once (the default behaviour is back), and so does the first after
		// 10 s. Nothing is half-written either way: an ingest is one
		// transaction, the judge's answers are journaled.
		<-ctx.Done()
		stop()
		time.Sleep(stopGrace)
		fmt.Fprintln(os.Stderr, "gymlens: stopped: the command did not finish within 10 s of the signal")
		os.Exit(1)
	}()
	code := run(ctx, os.Args, os.Stdout, os.Stderr)
	stopProfile()
	stop()
	os.Exit(code)
}

// stopGrace is how long a command may take to stop after Ctrl-C or SIGTERM.
const stopGrace = 10 * time.Second

// interrupted is a command stopped by Ctrl-C or SIGTERM that kept some of
// its work: saved says truthfully what.
type interrupted struct{ saved string }

func (i interrupted) Error() string { return "interrupted; " + i.saved }

// usageError marks a mistake in how gymlens was called (exit status 2).
type usageError struct{ error }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// env is what every command needs besides its flags.
type env struct {
	stdout, stderr io.Writer
	terminal       bool // stderr is a terminal: progress bars may be drawn
}

// run runs gymlens with args and returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	e := &env{stdout: stdout, stderr: stderr, terminal: isTerminal(stderr)}
	root := newApp(e)
	err := root.Run(ctx, args)
	if err == nil {
		return 0
	}
	var ue usageError
	var oe *analysis.OptionError
	var je *judge.OptionError
	if errors.As(err, &ue) || errors.As(err, &oe) || errors.As(err, &je) {
		fmt.Fprintf(stderr, "gymlens: %v\nRun 'gymlens --help' for usage.\n", err)
		return 2
	}
	var ie interrupted
	if errors.As(err, &ie) {
		fmt.Fprintf(stderr, "gymlens: interrupted; %s\n", ie.saved)
		return 1
	}
	if errors.Is(err, context.Canceled) {
		fmt.Fprintln(stderr, "gymlens: interrupted; nothing of the unfinished step was written")
		return 1
	}
	msg := err.Error()
	fmt.Fprintln(stderr, "gymlens: "+strings.ReplaceAll(msg, "\n", "\ngymlens: "))
	return 1
}

func newApp(e *env) *cli.Command {
	root := &cli.Command{
		Name:      "gymlens",
		Usage:     "offline analysis of proactive-agent evaluations",
		Version:   ingest.Version,
		Writer:    e.stdout,
		ErrWriter: e.stderr,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "db", Usage: "warehouse `PATH`", Value: "gymlens.duckdb", Sources: cli.EnvVars("GYMLENS_DB")},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "print no progress and no notes"},
			&cli.StringFlag{Name: "format", Aliases: []string{"f"}, Usage: "output `FORMAT`: table, json or csv; analyses (metrics, compare, corr, agree, human) also md, latex or html; table: latex, md, csv or html; export: parquet or arrow"},
			&cli.StringFlag{Name: "memory-limit", Usage: "DuckDB memory `LIMIT`, such as 2GB (default: " + ingest.IngestMemoryLimit + " when ingesting, " + ingest.ReportMemoryLimit + " for report, agree, table and plot, " + ingest.ExportMemoryLimit + " for export and score, " + ingest.DefaultMemoryLimit + " otherwise)"},
		},
		Commands: []*cli.Command{
			demoCommand(e), sampleCommand(e), ingestCommand(e), validateCommand(e), scoreCommand(e), judgeCommand(e), readCommand(e, "metrics"), readCommand(e, "compare"), readCommand(e, "corr"), readCommand(e, "variance"), readCommand(e, "power"), readCommand(e, "rank"), readCommand(e, "agree"), readCommand(e, "human"), annotateCommand(e),
			readCommand(e, "table"), readCommand(e, "plot"), reportCommand(e), notebookCommand(e), serveCommand(e), readCommand(e, "decisions"), readCommand(e, "reconcile"), exportCommand(e), readCommand(e, "query"), verifyCommand(e),
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() > 0 {
				return usagef("unknown command %q", cmd.Args().First())
			}
			return cli.ShowRootCommandHelp(cmd)
		},
		ExitErrHandler: func(context.Context, *cli.Command, error) {},
	}
	var mark func(c *cli.Command)
	mark = func(c *cli.Command) {
		c.OnUsageError = func(_ context.Context, _ *cli.Command, err error, _ bool) error { return usageError{err} }
		for _, s := range c.Commands {
			mark(s)
		}
	}
	mark(root)
	wholeValues(root)
	return root
}

// outputFormat returns the --format value for a command that prints
// results, checked against what it can write.
func outputFormat(cmd *cli.Command, def string, allowed ...string) (string, error) {
	f := cmd.String("format")
	if f == "" {
		return def, nil
	}
	for _, a := range allowed {
		if f == a {
			return f, nil
		}
	}
	return "", usagef("--format: %s writes %s, not %q", cmd.Name, strings.Join(allowed, ", "), f)
}

// writer is the results writer of the command's --format (already
// checked against what the command writes).
func writer(e *env, cmd *cli.Command, format string) *reports.Writer {
	return reports.NewWriter(e.stdout, format, cmd.Bool("quiet"))
}

// wholeValues takes every repeated flag's values whole, in every command:
// a comma belongs to the value (a pool of base URLs, a model name), and
// never splits it into two.
func wholeValues(c *cli.Command) {
	c.DisableSliceFlagSeparator = true
	for _, sub := range c.Commands {
		wholeValues(sub)
	}
}
