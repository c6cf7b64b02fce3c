package ingest

import (
	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/gymlens/gymlens/ingest/pare"
	"github.com/gymlens/gymlens/ingest/runlog"
)

// PAREDecisions are the decisions PARE's user and annotators make.
var PAREDecisions = pare.Decisions

// readPARESamples reads a Parquet file of PARE annotation samples.
func (p *pass) readPARESamples(fs *fileState) error {
	p.bytes.Add(fs.Size)
	ss, err := pare.ReadSamples(p.ctx, fs.Path, fs.id)
	if err != nil {
		return p.collect(err)
	}
	p.pareSamples = append(p.pareSamples, ss...)
	p.records.Add(int64(len(ss)))
	return nil
}

// readPAREAnnotations reads a PARE annotation CSV; a bad row is rejected
// with its reason, the others read.
func (p *pass) readPAREAnnotations(fs *fileState) error {
	p.bytes.Add(fs.Size)
	as, err := pare.ReadAnnotations(fs.Path, fs.id, func(e *runlog.Error) {
		p.errs.Add(e)
		fs.rejected++
	})
	if err != nil {
		return p.collect(err)
	}
	p.pareAnnots = append(p.pareAnnots, as...)
	p.records.Add(int64(len(as)))
	return nil
}

// loadPAREAnnotations writes the samples and annotations read.
func (p *pass) loadPAREAnnotations() error {
	nul := func(s string) any {
		if s == "" {
			return nil
		}
		return s
	}
	if len(p.pareSamples) > 0 {
		if err := p.appendRows("pare_samples", func(a *duckdb.Appender) error {
			for _, s := range p.pareSamples {
				var run, final, tut any
				if s.Run != nil {
					run = int32(*s.Run)
				}
				if s.Final != nil {
					final = *s.Final
				}
				if s.Tutorial != nil {
					tut = *s.Tutorial
				}
				if err := a.AppendRow(s.ID, nul(s.Scenario), run, nul(s.Proactive), nul(s.User), s.Decision, final, tut,
					nul(s.Correct), nul(s.Proposal), int32(s.File)); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			return err
		}
	}
	if len(p.pareAnnots) == 0 {
		return nil
	}
	return p.appendRows("pare_annotations", func(a *duckdb.Appender) error {
		for _, x := range p.pareAnnots {
			var extra any
			if len(x.Extra) > 0 {
				extra = x.Extra
			}
			if err := a.AppendRow(nul(x.ID), x.Sample, x.Annotator, x.Decision, extra, int32(x.File), int32(x.Line)); err != nil {
				return err
			}
		}
		return nil
	})
}
