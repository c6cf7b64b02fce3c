package ingest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// smallLake exports the small hand-made corpus as a lake and returns its
// folder and the (writable) warehouse it came from.
func smallLake(t *testing.T) (string, *Warehouse) {
	t.Helper()
	w := openTemp(t)
	if _, err := w.Ingest(ctx, []string{smallCorpus(t)}, IngestOptions{}); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "lake")
	if _, err := w.Export(ctx, dir, "parquet"); err != nil {
		t.Fatal(err)
	}
	return dir, w
}

// rewriteParquet replaces a lake's Parquet file by the rows of query, in
// which {f} stands for read_parquet of the file as it was.
func rewriteParquet(t *testing.T, w *Warehouse, file, query string) {
	t.Helper()
	tmp := file + ".new"
	q := strings.ReplaceAll(query, "{f}", "read_parquet("+sqlString(file)+")")
	if _, err := w.db.Exec(`COPY (` + q + `) TO ` + sqlString(tmp) + ` (FORMAT parquet)`); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, file); err != nil {
		t.Fatal(err)
	}
}

func openLakeErr(dir string) error {
	lake, err := Open(ctx, dir, OpenOptions{ReadOnly: true})
	if err == nil {
		lake.Close()
	}
	return err
}

// TestLakeKeysAndParents: a lake whose rows repeat a key, or whose child
// rows have no parent, is refused naming the file, the key and the value;
// the clean lake opens.
func TestLakeKeysAndParents(t *testing.T) {
	dir, w := smallLake(t)
	if err := openLakeErr(dir); err != nil {
		t.Fatalf("the clean lake: %v", err)
	}
	copyLake := func(t *testing.T) string {
		out := filepath.Join(t.TempDir(), "lake")
		if err := os.CopyFS(out, os.DirFS(dir)); err != nil {
			t.Fatal(err)
		}
		return out
	}
	t.Run("repeated run", func(t *testing.T) {
		d := copyLake(t)
		rewriteParquet(t, w, filepath.Join(d, "runs.parquet"), `SELECT * FROM {f} UNION ALL SELECT * FROM {f}`)
		err := openLakeErr(d)
		if err == nil || !strings.Contains(err.Error(), "runs.parquet") || !strings.Contains(err.Error(), "run_id") || !strings.Contains(err.Error(), `"r1"`) {
			t.Errorf("a lake with run r1 twice: %v", err)
		}
	})
	t.Run("repeated judgment", func(t *testing.T) {
		d := copyLake(t)
		parts, _ := filepath.Glob(filepath.Join(d, "judgments", "*", "*.parquet"))
		if len(parts) != 1 {
			t.Fatalf("judgments: %v", parts)
		}
		rewriteParquet(t, w, parts[0], `SELECT * FROM {f} UNION ALL (SELECT * FROM {f} WHERE metric = 'ta')`)
		err := openLakeErr(d)
		rel, _ := filepath.Rel(d, parts[0])
		if err == nil || !strings.Contains(err.Error(), rel) || !strings.Contains(err.Error(), "run_id, task, metric, judge, prompt") || !strings.Contains(err.Error(), `"ta"`) {
			t.Errorf("a lake with a judgment twice: %v", err)
		}
	})
	t.Run("orphan task", func(t *testing.T) {
		d := copyLake(t)
		parts, _ := filepath.Glob(filepath.Join(d, "task_outcomes", "*", "*.parquet"))
		if len(parts) != 1 {
			t.Fatalf("task_outcomes: %v", parts)
		}
		rewriteParquet(t, w, parts[0], `SELECT * FROM {f} UNION ALL (SELECT * REPLACE ('ghost' AS run_id) FROM {f} LIMIT 1)`)
		err := openLakeErr(d)
		rel, _ := filepath.Rel(d, parts[0])
		if err == nil || !strings.Contains(err.Error(), rel) || !strings.Contains(err.Error(), `"ghost"`) || !strings.Contains(err.Error(), "runs.parquet") {
			t.Errorf("a lake with a task of no run: %v", err)
		}
	})
}

// TestLakeFilesAndLinks: a folder without meta.parquet is not taken for a
// lake, and says what one holds; a lake's files may not be symbolic links.
func TestLakeFilesAndLinks(t *testing.T) {
	dir, _ := smallLake(t)
	copyLake := func(t *testing.T) string {
		out := filepath.Join(t.TempDir(), "lake")
		if err := os.CopyFS(out, os.DirFS(dir)); err != nil {
			t.Fatal(err)
		}
		return out
	}
	d := copyLake(t)
	os.Remove(filepath.Join(d, "meta.parquet"))
	err := openLakeErr(d)
	if err == nil || !strings.Contains(err.Error(), "no meta.parquet") || !strings.Contains(err.Error(), "runs.parquet") || strings.Contains(err.Error(), "Is a directory") {
		t.Errorf("a lake without meta.parquet: %v", err)
	}
	for _, name := range []string{"runs.parquet", "meta.parquet", "judgments"} {
		d := copyLake(t)
		elsewhere := filepath.Join(t.TempDir(), name)
		if err := os.Rename(filepath.Join(d, name), elsewhere); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(elsewhere, filepath.Join(d, name)); err != nil {
			t.Fatal(err)
		}
		err := openLakeErr(d)
		if err == nil || !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), "symbolic link") {
			t.Errorf("a lake whose %s is a link: %v", name, err)
		}
	}
}

// TestLakeCheckIsRemembered: a lake that passed its check is remembered
// by its files, and checked again once one of them changes.
func TestLakeCheckIsRemembered(t *testing.T) {
	dir, w := smallLake(t)
	defer func(old func() string) { lakeCheckDir = old }(lakeCheckDir)
	cache := t.TempDir()
	lakeCheckDir = func() string { return cache }
	if err := openLakeErr(dir); err != nil {
		t.Fatal(err)
	}
	if memos, _ := os.ReadDir(cache); len(memos) != 1 {
		t.Fatalf("remembered: %v", memos)
	}
	rewriteParquet(t, w, filepath.Join(dir, "runs.parquet"), `SELECT * FROM {f} UNION ALL SELECT * FROM {f}`)
	if err := openLakeErr(dir); err == nil || !strings.Contains(err.Error(), `run_id "r1"`) {
		t.Errorf("a remembered lake changed since: %v", err)
	}
}

// noLakeMemo makes the test's lake opens remember no check (the user's
// cache folder is not read or written).
func noLakeMemo(t *testing.T) {
	old := lakeCheckDir
	lakeCheckDir = func() string { return "" }
	t.Cleanup(func() { lakeCheckDir = old })
}

// openLakeChecked opens the lake at dir and says whether the full check
// of keys and parents ran.
func openLakeChecked(t *testing.T, dir string) (bool, error) {
	t.Helper()
	before := lakeFullChecks.Load()
	err := openLakeErr(dir)
	return lakeFullChecks.Load() != before, err
}

// TestLakeDigestsVouch: a lake as export wrote it (its table files'
// digests those export recorded in meta.parquet) opens without the full
// check; a file of other bytes, even of the same size, an added file or
// no record at all has the lake checked, and a repeated row refused.
func TestLakeDigestsVouch(t *testing.T) {
	noLakeMemo(t)
	dir, w := smallLake(t)
	copyLake := func(t *testing.T) string {
		out := filepath.Join(t.TempDir(), "lake")
		if err := os.CopyFS(out, os.DirFS(dir)); err != nil {
			t.Fatal(err)
		}
		return out
	}
	if checked, err := openLakeChecked(t, dir); err != nil || checked {
		t.Fatalf("the lake as exported: checked %v, %v", checked, err)
	}
	t.Run("repeated run", func(t *testing.T) {
		d := copyLake(t)
		rewriteParquet(t, w, filepath.Join(d, "runs.parquet"), `SELECT * FROM {f} UNION ALL SELECT * FROM {f}`)
		checked, err := openLakeChecked(t, d)
		if !checked || err == nil || !strings.Contains(err.Error(), `run_id "r1"`) {
			t.Errorf("runs.parquet with run r1 twice: checked %v, %v", checked, err)
		}
	})
	t.Run("same size, other bytes", func(t *testing.T) {
		d := copyLake(t)
		f := filepath.Join(d, "runs.parquet")
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		// The writer's name in the footer: the file stays valid Parquet,
		// of the same rows and size.
		i := strings.LastIndex(string(b), "DuckDB")
		if i < 0 {
			t.Fatal("runs.parquet names no DuckDB writer")
		}
		b[i] = 'd'
		if err := os.WriteFile(f, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if checked, err := openLakeChecked(t, d); err != nil || !checked {
			t.Errorf("runs.parquet of other bytes, same size: checked %v, %v", checked, err)
		}
	})
	t.Run("added file", func(t *testing.T) {
		d := copyLake(t)
		parts, _ := filepath.Glob(filepath.Join(d, "events", "*", "part_0.parquet"))
		if len(parts) == 0 {
			t.Fatal("no events")
		}
		b, err := os.ReadFile(parts[0])
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(filepath.Dir(parts[0]), "part_1.parquet"), b, 0o644); err != nil {
			t.Fatal(err)
		}
		checked, err := openLakeChecked(t, d)
		if !checked || err == nil || !strings.Contains(err.Error(), "run_id, seq") {
			t.Errorf("events with a second copy of a part: checked %v, %v", checked, err)
		}
	})
	t.Run("no record", func(t *testing.T) {
		d := copyLake(t)
		rewriteParquet(t, w, filepath.Join(d, "meta.parquet"), `SELECT * FROM {f} WHERE key <> 'table_digests'`)
		if checked, err := openLakeChecked(t, d); err != nil || !checked {
			t.Errorf("a lake without the digests' record: checked %v, %v", checked, err)
		}
	})
}

// TestLakeExportVouchesOnlyForWhatItChecked: the warehouse can hold what
// ingest and the judge do not prevent (a run whose persona a replaced
// scenario dropped; two answers of one judgment key saved together), and
// its export records no digests: the lake is checked when it opens and
// refused naming the value.
func TestLakeExportVouchesOnlyForWhatItChecked(t *testing.T) {
	noLakeMemo(t)
	t.Run("run without its persona", func(t *testing.T) {
		w := openTemp(t)
		if _, err := w.Ingest(ctx, []string{smallCorpus(t)}, IngestOptions{}); err != nil {
			t.Fatal(err)
		}
		d := t.TempDir()
		write(t, filepath.Join(d, "scenario.yaml"), strings.NewReplacer("  reviewer: {group: S, label: Reviewer}\n", "",
			"reviewer: suggest, ", "", "reviewer: prepare, ", "").Replace(scenarioFile))
		if _, err := w.Ingest(ctx, []string{d}, IngestOptions{Replace: true}); err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(t.TempDir(), "lake")
		if _, err := w.Export(ctx, dir, "parquet"); err != nil {
			t.Fatal(err)
		}
		checked, err := openLakeChecked(t, dir)
		if !checked || err == nil || !strings.Contains(err.Error(), `persona "reviewer"`) || !strings.Contains(err.Error(), "personas.parquet") {
			t.Errorf("a lake whose run r1 names a dropped persona: checked %v, %v", checked, err)
		}
	})
	t.Run("judgment twice", func(t *testing.T) {
		w := openTemp(t)
		if _, err := w.Ingest(ctx, []string{smallCorpus(t)}, IngestOptions{}); err != nil {
			t.Fatal(err)
		}
		call := func(params string) JudgeCall {
			return JudgeCall{Model: "m", Params: params, Prompt: "v9", InputHash: "h", Judge: "judge-new", RunID: "r1", Task: "mp_price",
				Metric: "tc", Valid: true, Scores: map[string]float64{"correctness": 0.5, "grounding": 1}}
		}
		if err := w.SaveJudgeCalls(ctx, []JudgeCall{call(`{"seed":1}`), call(`{"seed":2}`)}); err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(t.TempDir(), "lake")
		if _, err := w.Export(ctx, dir, "parquet"); err != nil {
			t.Fatal(err)
		}
		checked, err := openLakeChecked(t, dir)
		if !checked || err == nil || !strings.Contains(err.Error(), "run_id, task, metric, judge, prompt") || !strings.Contains(err.Error(), `"judge-new"`) {
			t.Errorf("a lake with a judgment twice: checked %v, %v", checked, err)
		}
	})
}
