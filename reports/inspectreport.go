package reports

import (
	"context"
	"fmt"

	"github.com/gymlens/gymlens/analysis"
)

// WriteReportFolder writes the report of the runs --source chooses
// (ReportSource): the Inspect report, or the Proactivity-Gym report of ds
// (nil: the one dataset reads).
func (a *Args) WriteReportFolder(ctx context.Context, dir string, w FolderStore, ds *Dataset, fo FolderOptions, dataset func() (*Dataset, error)) (*Report, error) {
	source, err := ReportSource(ctx, w, a.String("source"))
	if err != nil {
		return nil, err
	}
	if source == "inspect" {
		if err := a.CheckInspectReport(); err != nil {
			return nil, err
		}
		boot, err := a.Bootstrap()
		if err != nil {
			return nil, err
		}
		return WriteInspectFolder(ctx, dir, w, fo, boot)
	}
	if ds == nil {
		if ds, err = dataset(); err != nil {
			return nil, err
		}
	}
	return WriteFolder(ctx, dir, ds, w, fo)
}

// ReportSources are the runs a report can be of.
var ReportSources = []string{"gym", "inspect"}

// ReportSource chooses the runs a report is of: gym or inspect as asked;
// "" (not asked) chooses inspect when the warehouse holds Inspect
// evaluations and no Proactivity-Gym run, gym otherwise.
func ReportSource(ctx context.Context, w any, asked string) (string, error) {
	switch asked {
	case "gym", "inspect":
		return asked, nil
	case "":
	default:
		return "", analysis.Optionf("--source: expected gym or inspect, found %q", asked)
	}
	ss, ok := w.(SummaryStore)
	is, ok2 := w.(InspectStore)
	if !ok || !ok2 {
		return "gym", nil
	}
	c, err := ss.Counts(ctx)
	if err != nil {
		return "", err
	}
	if c["runs"] > 0 {
		return "gym", nil
	}
	d, err := is.LoadInspect(ctx)
	if err != nil {
		return "", err
	}
	if len(d.Evals) > 0 {
		return "inspect", nil
	}
	return "gym", nil
}

// InspectReport computes the Inspect tables (InspectTables: per task and
// scorer the configurations' means, the paired comparisons, rank
// intervals, variance components and power, the scorers' correlations,
// and the tokens and seconds per configuration); what cannot be made is
// in Skipped with why. The caller fills in the manifest.
func InspectReport(ctx context.Context, s any, boot analysis.BootstrapOptions) (*Report, error) {
	is, ok := s.(InspectStore)
	cs, ok2 := s.(InspectCostStore)
	if !ok || !ok2 {
		return nil, analysis.Optionf("report --source inspect: the warehouse holds no Inspect tables")
	}
	d, err := is.LoadInspect(ctx)
	if err != nil {
		return nil, err
	}
	if len(d.Evals) == 0 {
		return nil, analysis.NoDataf("report --source inspect: no Inspect evaluation in the warehouse (ingest .eval or .json logs first)")
	}
	costs, err := cs.LoadInspectCosts(ctx)
	if err != nil {
		return nil, err
	}
	boot = boot.WithDefaults()
	tables, skipped, err := InspectTables(d, costs, boot)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r := &Report{Title: "gymlens report: Inspect runs", Tables: tables, Skipped: skipped}
	r.Manifest.Bootstrap = Bootstrap{Method: boot.Method, Level: boot.Level, Resamples: boot.Resamples, Seed: boot.Seed, Unit: "samples (each sample's epochs averaged)"}
	// Inspect runs have no human study; the record says so in its unit.
	r.Manifest.Study = Bootstrap{Method: boot.Method, Level: boot.Level, Seed: boot.Seed, Unit: "none (no human study of Inspect runs)"}
	// An Inspect report has no figure, hence no PDF: a fixed date keeps
	// the manifest the same for the same warehouse.
	r.Manifest.PDFDate = "1970-01-01T00:00:00Z"
	return r, nil
}

// WriteInspectFolder writes the Inspect report (InspectReport) with its
// manifest into dir, as WriteFolder writes the Proactivity-Gym one.
func WriteInspectFolder(ctx context.Context, dir string, s FolderStore, o FolderOptions, boot analysis.BootstrapOptions) (*Report, error) {
	r, err := InspectReport(ctx, s, boot)
	if err != nil {
		return nil, err
	}
	r.Options = o.Tables
	if err := r.FillManifest(ctx, s, o.Warehouse, o.Version, o.PromptSHA); err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	r.Manifest.Steps.Report = o.Step
	return r, WriteReport(dir, r)
}

// CheckInspectReport refuses the report's parameters an Inspect report
// has no use for: the selection of Proactivity-Gym runs, judges, figure
// sizes and the two-level bootstrap.
func (a *Args) CheckInspectReport() error {
	for _, n := range []string{"where", "judge", "judges", "size", "mark", "two-level", "families"} {
		if a.IsSet(n) {
			return analysis.Optionf("report --source inspect: --%s does not apply: an Inspect report has per task and scorer the scorers' means, comparisons, ranks, variance, power, correlations and costs, no judges, figures or Proactivity-Gym selection", n)
		}
	}
	return nil
}
