package main

import (
	"context"
	"fmt"
	"io"

	"github.com/urfave/cli/v3"

	"github.com/gymlens/gymlens/ingest"
	"github.com/gymlens/gymlens/reports"
)

func verifyCommand(e *env) *cli.Command {
	return &cli.Command{
		Name: "verify", Usage: "check a report folder against its manifest and inputs, rebuilding every output", ArgsUsage: "DIR",
		Description: "Refuses a DIR that holds a symbolic link, a pipe, a socket or a device (each named; none followed or read)\n" +
			fmt.Sprintf("or a manifest.json over %d MiB. Checks", reports.MaxManifestBytes>>20) +
			" that DIR's files are those its manifest.json lists (SHA-256), that the\n" +
			"warehouse (--db) holds exactly the manifest's inputs and judge calls, then rebuilds the report with the recorded\n" +
			"options and compares every file byte for byte, naming the first differing line (text) or byte (PNG, PDF). With\n" +
			"--inputs FOLDER the inputs are read from FOLDER into a new warehouse first, each recorded ingest replayed in order.\n" +
			"Exit 0: all match; 1: not.",
		Flags: []cli.Flag{&cli.StringFlag{Name: "inputs", Usage: "rebuild from the input files under `FOLDER` into a new warehouse"}},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() != 1 {
				return usagef("verify: name one report folder")
			}
			v, err := reports.Verify(ctx, reports.VerifyOptions{Dir: cmd.Args().First(), DB: cmd.String("db"), Inputs: cmd.String("inputs"), Version: ingest.Version,
				Open: func(ctx context.Context, path string) (reports.VerifyStore, error) {
					return ingest.Open(ctx, path, openOptions(cmd, true, ""))
				},
				Load: func(ctx context.Context, path string, files []string, o reports.IngestReplay) (reports.LoadedStore, error) {
					w, _, err := load(ctx, e, cmd, path, files, ingest.IngestOptions{SkipInvalid: o.SkipInvalid, Replace: o.Replace, MaxErrors: o.MaxErrors,
						MaxRejects: o.MaxRejects, RejectsPath: path + ".rejects.jsonl"})
					return w, err
				},
				Rebuild: func(ctx context.Context, db, out string, args []string) error {
					if code := run(ctx, append([]string{"gymlens", "--db", db, "--quiet", "report", "--out", out}, args...), io.Discard, e.stderr); code != 0 {
						return fmt.Errorf("exit status %d", code)
					}
					return nil
				}})
			if err != nil {
				return err
			}
			return v.Write(e.stdout, e.stderr)
		},
	}
}
