package main

import (
	"context"
	"strings"

	"github.com/schollz/progressbar/v3"
	"github.com/urfave/cli/v3"

	"github.com/gymlens/gymlens/analysis"
	"github.com/gymlens/gymlens/ingest"
	"github.com/gymlens/gymlens/ingest/runlog"
	"github.com/gymlens/gymlens/reports"
)

// readCommand is the CLI face of the library's reading command name
// (reports.Commands): its flags made from the command's parameters, its
// arguments handed over as they are, the warehouse opened read-only when
// the command first reads it.
func readCommand(e *env, name string) *cli.Command {
	c := reports.CommandNamed(name)
	desc := c.Description
	if name == "query" {
		desc = "Tables: " + strings.Join(ingest.TableNames(), ", ") + ".\nViews: " + strings.Join(ingest.ViewNames, ", ") + ".\n" + desc
	}
	return &cli.Command{Name: c.Name, Usage: c.Usage, ArgsUsage: c.ArgsUsage, Description: desc, Flags: cliFlags(c.Params...),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			format, err := outputFormat(cmd, c.Default, c.Formats...)
			if err != nil {
				return err
			}
			var w *ingest.Warehouse
			defer func() {
				if w != nil {
					w.Close()
				}
			}()
			progress, done := readProgress(e, cmd.Bool("quiet"))
			defer done()
			args := argsOf(cmd)
			return c.Run(ctx, &reports.Exec{Args: args, Format: format, Out: e.stdout, Err: e.stderr, Quiet: cmd.Bool("quiet"), Name: cmd.String("db"),
				ReadRatings: runlog.ReadRatingSets, Progress: progress,
				Open: func(ctx context.Context) (reports.Warehouse, error) {
					var err error
					if w, err = ingest.Open(ctx, cmd.String("db"), openOptions(cmd, true, ingest.ReadingMemoryLimit(cmd.Name, args.Bool("judge-noise")))); err != nil {
						return nil, err
					}
					return w, nil
				}})
		}}
}

// readProgress draws a long read's progress on a terminal (nothing when
// quiet or piped): what it does and how far; done clears it.
func readProgress(e *env, quiet bool) (update func(reports.Progress), done func()) {
	if quiet || !e.terminal {
		return nil, func() {}
	}
	b := newBar(e, -1, progressbar.OptionSpinnerType(14))
	return func(p reports.Progress) { b.Describe(p.Stage); b.Set64(p.Done) }, func() { b.Finish() }
}

// cliFlags makes the flags of the parameters ps.
func cliFlags(ps ...reports.Param) []cli.Flag {
	flags := make([]cli.Flag, len(ps))
	for i, p := range ps {
		switch d := p.Default.(type) {
		case string:
			flags[i] = &cli.StringFlag{Name: p.Name, Value: d, Usage: p.Usage, Required: p.Required, Hidden: p.Hidden}
		case int:
			flags[i] = &cli.IntFlag{Name: p.Name, Value: d, Usage: p.Usage, Required: p.Required, Hidden: p.Hidden}
		case uint64:
			flags[i] = &cli.Uint64Flag{Name: p.Name, Value: d, Usage: p.Usage, Required: p.Required, Hidden: p.Hidden}
		case float64:
			flags[i] = &cli.FloatFlag{Name: p.Name, Value: d, Usage: p.Usage, Required: p.Required, Hidden: p.Hidden}
		case bool:
			flags[i] = &cli.BoolFlag{Name: p.Name, Value: d, Usage: p.Usage, Required: p.Required, Hidden: p.Hidden}
		default:
			flags[i] = &cli.StringSliceFlag{Name: p.Name, Usage: p.Usage, Required: p.Required, Hidden: p.Hidden}
		}
	}
	return flags
}

// argsOf hands a command's flags and arguments to the library.
func argsOf(cmd *cli.Command) *reports.Args {
	a := reports.NewArgs(cmd.Args().Slice())
	for _, f := range cmd.Flags {
		n := f.Names()[0]
		var v any
		switch f.(type) {
		case *cli.StringFlag:
			v = cmd.String(n)
		case *cli.IntFlag:
			v = int(cmd.Int(n))
		case *cli.Uint64Flag:
			v = cmd.Uint64(n)
		case *cli.FloatFlag:
			v = cmd.Float(n)
		case *cli.BoolFlag:
			v = cmd.Bool(n)
		case *cli.StringSliceFlag:
			v = cmd.StringSlice(n)
		default:
			continue
		}
		a.Put(n, v, cmd.IsSet(n))
	}
	return a
}

// dataset is the reports.Dataset over the warehouse that the command's
// flags choose.
func dataset(ctx context.Context, cmd *cli.Command, w *ingest.Warehouse, keep reports.Keep) (*reports.Dataset, error) {
	opt, err := argsOf(cmd).Options(w.Path, keep)
	if err != nil {
		return nil, err
	}
	return reports.NewDataset(ctx, w, opt)
}

// bootstrapFlags are the flags of the cluster bootstrap.
func bootstrapFlags() []cli.Flag {
	return cliFlags(reports.BootstrapParams(analysis.DefaultBootstrap.Resamples, "level")...)
}
