package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/gymlens/gymlens/ingest"
	"github.com/gymlens/gymlens/internal/mutate"
	"github.com/gymlens/gymlens/internal/sample"
)

// benchMutate corrupts the sample corpus at random, a file at a time
// (truncations, byte flips, type changes, duplicated and dropped lines),
// and ingests each corrupted file into a copy of a warehouse that holds
// the rest: each must either ingest or fail with an error naming the file
// (and the line, where there is one), never panic, and leave the warehouse
// as it was. It prints the counts.
func benchMutate(args []string) error {
	fl := flag.NewFlagSet("mutate", flag.ExitOnError)
	n := fl.Int("n", 1000, "corruptions")
	seed := fl.Uint64("seed", 1, "random seed")
	verbose := fl.Bool("v", false, "also print the errors that name a file but no line")
	fl.Parse(args)
	ctx := context.Background()
	work, err := os.MkdirTemp("", "gymlens-bench-mutate-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	corpus := filepath.Join(work, "corpus")
	if _, err := sample.Write(corpus, sample.Options{Seed: 3, Configs: 1}); err != nil {
		return err
	}
	var files []string
	filepath.WalkDir(corpus, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !strings.HasPrefix(d.Name(), ".") {
			files = append(files, p)
		}
		return nil
	})
	// The base warehouse holds the scenarios; each corrupted file is
	// ingested into a copy of it (with the scenarios, so that run logs
	// refer to something).
	base := filepath.Join(work, "base.duckdb")
	w, err := ingest.Open(ctx, base, ingest.OpenOptions{})
	if err != nil {
		return err
	}
	if _, err := w.Ingest(ctx, []string{filepath.Join(corpus, "scenarios")}, ingest.IngestOptions{}); err != nil {
		return err
	}
	w.Close()
	r := rand.New(rand.NewPCG(*seed, 99))
	counts := make([]int, len(mutate.Names))
	atLine := regexp.MustCompile(`:\d+(:\d+)?: `)
	var examples, fileOnly []string
	for i := range *n {
		src := files[r.IntN(len(files))]
		orig, err := os.ReadFile(src)
		if err != nil {
			return err
		}
		dir := filepath.Join(work, fmt.Sprintf("m%d", i))
		os.MkdirAll(dir, 0o755)
		bad := filepath.Join(dir, filepath.Base(src))
		os.WriteFile(bad, mutate.Bytes(r, orig), 0o644)
		db := filepath.Join(dir, "w.duckdb")
		if err := sample.CopyFile(db, base); err != nil {
			return err
		}
		out := func() (o mutate.Outcome) {
			defer func() {
				if p := recover(); p != nil {
					o = mutate.Panicked
					examples = append(examples, fmt.Sprintf("panic on %s: %v", bad, p))
				}
			}()
			w, err := ingest.Open(ctx, db, ingest.OpenOptions{MemoryLimit: ingest.IngestMemoryLimit})
			if err != nil {
				panic(err)
			}
			defer w.Close()
			before, _ := w.Counts(ctx)
			_, err = w.Ingest(ctx, []string{bad}, ingest.IngestOptions{})
			if err == nil {
				return mutate.Ingested
			}
			after, _ := w.Counts(ctx)
			if fmt.Sprint(before) != fmt.Sprint(after) {
				examples = append(examples, fmt.Sprintf("warehouse changed by %s: %v", bad, err))
				return mutate.Changed
			}
			msg := err.Error()
			switch {
			case !strings.Contains(msg, bad):
				examples = append(examples, fmt.Sprintf("no file named: %s", firstLine(msg)))
				return mutate.NoFile
			case atLine.MatchString(msg):
				return mutate.RefusedAtLine
			}
			if *verbose {
				fileOnly = append(fileOnly, firstLine(msg))
			}
			return mutate.RefusedAtFile
		}()
		counts[out]++
		os.RemoveAll(dir)
	}
	fmt.Printf("%d random corruptions of the sample corpus (a file at a time), each ingested into a warehouse holding the scenarios:\n", *n)
	for i, name := range mutate.Names {
		fmt.Printf("  %-32s %5d\n", name, counts[i])
	}
	for _, e := range examples[:min(len(examples), 10)] {
		fmt.Println("  e.g.", e)
	}
	for _, e := range fileOnly {
		fmt.Println("  file only:", e)
	}
	if counts[mutate.Panicked]+counts[mutate.Changed]+counts[mutate.NoFile] > 0 {
		return fmt.Errorf("some corruptions broke the promise")
	}
	return nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
