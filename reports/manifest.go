package reports

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"runtime"
	"runtime/debug"
	"slices"
	"sort"

	"github.com/gymlens/gymlens/analysis"
	"github.com/gymlens/gymlens/ingest/rows"
	"github.com/gymlens/gymlens/plots"
)

// ManifestVersion is the version of manifest.json's layout: 2 added the
// build, the steps, the PDF date and the output files with their hashes.
const ManifestVersion = 2

// Build is how the gymlens that made a report was built: Go's version,
// the main module and every module it links, with their versions and
// checksums (from the binary's build information), and the commit it was
// built from when the build recorded one.
type Build struct {
	Go          string   `json:"go"`
	Module      string   `json:"module"`
	Version     string   `json:"module_version"`
	VCSRevision string   `json:"vcs_revision,omitempty"`
	VCSModified bool     `json:"vcs_modified,omitempty"`
	Modules     []Module `json:"modules"`
}

// Module is one linked module.
type Module struct {
	Path    string `json:"path"`
	Version string `json:"version"`
	Sum     string `json:"sum,omitempty"`
}

// BuildOf reads the running binary's build information.
func BuildOf() Build {
	b := Build{Go: runtime.Version(), Modules: []Module{}}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	b.Module, b.Version = bi.Main.Path, bi.Main.Version
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			b.VCSRevision = s.Value
		case "vcs.modified":
			b.VCSModified = s.Value == "true"
		}
	}
	for _, d := range bi.Deps {
		m := d
		if d.Replace != nil {
			m = d.Replace
		}
		b.Modules = append(b.Modules, Module{Path: d.Path, Version: m.Version, Sum: m.Sum})
	}
	sort.Slice(b.Modules, func(i, j int) bool { return b.Modules[i].Path < b.Modules[j].Path })
	return b
}

// Steps are the steps that made a report's outputs, in order: the
// ingests, the rescoring and the judge's calls that made the warehouse,
// then the report with its options.
type Steps struct {
	Ingests []rows.IngestStep `json:"ingests"`
	Scores  []rows.ScoreStep  `json:"scores"`
	Judge   []rows.JudgeStep  `json:"judge"`
	Report  ReportStep        `json:"report"`
}

// ReportStep is how the report was asked for: each option of `gymlens
// report` by its flag's name, with its value (the defaults included), and
// the same as arguments, which `gymlens verify` passes to rebuild it.
type ReportStep struct {
	Options map[string]any `json:"options"`
	Args    []string       `json:"args"`
}

// OutputFile is one file of the report, its size and SHA-256.
type OutputFile struct {
	Path   string `json:"path"`
	Size   int    `json:"size_bytes"`
	SHA256 string `json:"sha256"`
}

func outputFile(path string, b []byte) OutputFile {
	sum := sha256.Sum256(b)
	return OutputFile{Path: path, Size: len(b), SHA256: hex.EncodeToString(sum[:])}
}

// ReportStep records the options of `gymlens report` (defaults: each one's
// name and default) as a holds them: each one's value (its default when a
// has none), and as arguments those set (a default is left to the
// rebuild, whose default it is).
func (a *Args) ReportStep(defaults map[string]any) ReportStep {
	st := ReportStep{Options: map[string]any{}, Args: []string{}}
	for _, n := range slices.Sorted(maps.Keys(defaults)) {
		if n == "out" {
			continue
		}
		v := defaults[n]
		if a.Has(n) {
			v = a.values[n]
		}
		st.Options[n] = v
		if !a.IsSet(n) {
			continue
		}
		if l, ok := v.([]string); ok {
			for _, x := range l {
				st.Args = append(st.Args, "--"+n+"="+x)
			}
		} else {
			st.Args = append(st.Args, fmt.Sprintf("--%s=%v", n, v))
		}
	}
	return st
}

// FolderStore is what a report folder reads of the warehouse besides its
// dataset: the glossary's names and the manifest's records.
type FolderStore interface {
	GlossaryStore
	ManifestStore
}

// FolderOptions say how WriteFolder writes a report folder.
type FolderOptions struct {
	Tables    TableOptions
	Size      string // figure size: "", column or page (plots.Sizes)
	Warehouse string // the warehouse's path (the manifest keeps its file name)
	Version   string // gymlens's version
	PromptSHA func(prompt string) string
	Step      ReportStep // the options it was asked with
}

// WriteFolder computes every table and figure of ds, with the glossary
// and the manifest, and writes the report folder dir (WriteReport). It
// returns the report, whose Skipped says what was left out.
func WriteFolder(ctx context.Context, dir string, ds *Dataset, s FolderStore, o FolderOptions) (*Report, error) {
	if o.Size != "" && !slices.Contains(plots.Sizes, o.Size) {
		return nil, analysis.Optionf("--size: expected column or page, found %q", o.Size)
	}
	// The ratings first, packed, while little else is held: reading them
	// costs DuckDB memory that is not all given back (docs/benchmarks.md).
	if _, err := ds.packedRatings(); err != nil {
		return nil, err
	}
	r, err := BuildReport(ctx, ds)
	if err != nil {
		return nil, err
	}
	r.Options = o.Tables
	for _, f := range r.Figures {
		f.Resize(o.Size)
	}
	if err := r.AddGlossary(ctx, s, ds); err != nil {
		return nil, err
	}
	if err := r.FillManifest(ctx, s, o.Warehouse, o.Version, o.PromptSHA); err != nil {
		return nil, err
	}
	r.Manifest.Steps.Report = o.Step
	return r, WriteReport(dir, r)
}

// CheckReport checks the arguments of `gymlens report` before anything is
// opened: the tables' options, the dataset's (--mark, --where, the
// bootstrap) and the figure size.
func (a *Args) CheckReport() error {
	if _, err := a.TableOptions(); err != nil {
		return err
	}
	if _, err := a.Options("", KeepPacked); err != nil {
		return err
	}
	if s := a.String("size"); s != "" && !slices.Contains(plots.Sizes, s) {
		return analysis.Optionf("--size: expected column or page, found %q", s)
	}
	if a.String("source") == "inspect" {
		return a.CheckInspectReport()
	}
	return nil
}

// SummaryStore is a warehouse that can say what it holds.
type SummaryStore interface {
	Counts(ctx context.Context) (map[string]int64, error)
	Summary(ctx context.Context) ([]string, [][]any, error)
}

// WriteWarehouseSummary writes the configurations with their runs and
// records; as a table, after a line of the warehouse's (at path) counts.
func WriteWarehouseSummary(ctx context.Context, out io.Writer, format, path string, s SummaryStore) error {
	cols, rows, err := s.Summary(ctx)
	if err != nil {
		return err
	}
	if format == "table" {
		c, err := s.Counts(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "\nwarehouse %s: %d configurations, %s runs, %s events, %s task records, %s judgments, %s ratings, %d scenarios\n\n",
			path, c["configurations"], Thousands(c["runs"]), Thousands(c["events"]), Thousands(c["task_outcomes"]),
			Thousands(c["judgments"]), Thousands(c["ratings"]), c["scenarios"])
	}
	return WriteResult(out, format, &Result{Columns: cols, Rows: rows})
}
