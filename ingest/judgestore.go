package ingest

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/gymlens/gymlens/ingest/rows"
)

// JudgeCachedInputs returns, for each of the input hashes already
// answered by model with these parameters and prompt version (valid or
// not), the items (run id and task) it was answered for: the same input
// may belong to several items. The judge asks about a slice of runs at a
// time, so that what it holds does not grow with the cache.
func (w *Warehouse) JudgeCachedInputs(ctx context.Context, model, params, prompt string, hashes []string) (map[string][][2]string, error) {
	out := map[string][][2]string{}
	if len(hashes) == 0 {
		return out, nil
	}
	err := w.scan(ctx, `SELECT input_hash, run_id, task FROM judge_calls WHERE model = ? AND params = ? AND prompt = ?
		AND input_hash IN (SELECT unnest(?::VARCHAR[])) ORDER BY input_hash, run_id, task`,
		func(rows *sql.Rows) error {
			var h, run, task string
			if err := rows.Scan(&h, &run, &task); err != nil {
				return err
			}
			out[h] = append(out[h], [2]string{run, task})
			return nil
		}, model, params, prompt, hashes)
	if err != nil {
		return nil, fmt.Errorf("the judge cache: %w", err)
	}
	return out, nil
}

// JudgeSourceKeys returns which of keys are already answered by model
// with these parameters and prompt version (valid or not).
func (w *Warehouse) JudgeSourceKeys(ctx context.Context, model, params, prompt string, keys []string) (map[string]bool, error) {
	out := map[string]bool{}
	if len(keys) == 0 {
		return out, nil
	}
	err := w.scan(ctx, `SELECT DISTINCT source_key FROM judge_calls WHERE model = ? AND params = ? AND prompt = ?
		AND source_key IN (SELECT unnest(?::VARCHAR[]))`,
		func(rows *sql.Rows) error {
			var h string
			if err := rows.Scan(&h); err != nil {
				return err
			}
			out[h] = true
			return nil
		}, model, params, prompt, keys)
	if err != nil {
		return nil, fmt.Errorf("the judge cache: %w", err)
	}
	return out, nil
}

// JudgeAnswers returns one stored answer (the reply as received) for each
// of the input hashes
// (model, parameters and prompt version as given): a valid one where
// there is one, else the earliest.
func (w *Warehouse) JudgeAnswers(ctx context.Context, model, params, prompt string, hashes []string) (map[string]string, error) {
	out := map[string]string{}
	if len(hashes) == 0 {
		return out, nil
	}
	err := w.scan(ctx, `SELECT input_hash, coalesce(answer, '') FROM (
			SELECT *, row_number() OVER (PARTITION BY input_hash ORDER BY status = 'valid' DESC, created_at, run_id, task) AS k
			FROM judge_calls WHERE model = ? AND params = ? AND prompt = ? AND input_hash IN (SELECT unnest(?::VARCHAR[])))
		WHERE k = 1`, func(rows *sql.Rows) error {
		var h, a string
		if err := rows.Scan(&h, &a); err != nil {
			return err
		}
		out[h] = a
		return nil
	}, model, params, prompt, hashes)
	if err != nil {
		return nil, fmt.Errorf("the judge cache: %w", err)
	}
	return out, nil
}

var scoreColumns = []string{"correctness", "grounding", "completeness", "artifact_quality", "ta_now", "ta_later", "ta_cq",
	"understandability", "competence", "reliability", "attachment", "faith"}

func nullIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// JudgeCosts sums tokens and cost per judge over the calls stored.
func (w *Warehouse) JudgeCosts(ctx context.Context) ([]string, [][]any, error) {
	q := `SELECT judge, model, count(*) AS calls, count(*) FILTER (WHERE status = 'invalid') AS invalid,
		sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens,
		CASE WHEN count(cost_usd) = count(*) THEN sum(cost_usd) END AS cost_usd
		FROM judge_calls GROUP BY ALL ORDER BY ALL`
	rows, err := w.db.QueryContext(ctx, q)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out [][]any
	for rows.Next() {
		var judge, model string
		var calls, invalid int64
		var in, outT sql.NullInt64
		var cost sql.NullFloat64
		if err := rows.Scan(&judge, &model, &calls, &invalid, &in, &outT, &cost); err != nil {
			return nil, nil, err
		}
		var c any = "unknown"
		if cost.Valid {
			c = cost.Float64
		}
		out = append(out, []any{judge, model, calls, invalid, in.Int64, outT.Int64, c})
	}
	return cols, out, rows.Err()
}

// SaveJudgeCalls stores a batch of answers in one transaction: a call
// replaces the one of the same judge, model, parameters and prompt version
// about the same item (run, task, metric) and input (asked again with
// --force); answers to an earlier input of the item stay, as cache. Valid
// answers replace the judgments with their key. A batch whose calls are
// all New is taken at its word: none is looked for among the stored.
func (w *Warehouse) SaveJudgeCalls(ctx context.Context, calls []JudgeCall) error {
	if w.ReadOnly {
		return ErrReadOnly
	}
	if len(calls) == 0 {
		return nil
	}
	conn, err := w.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `CREATE OR REPLACE TEMP TABLE _jc AS SELECT * FROM judge_calls LIMIT 0`); err != nil {
		return err
	}
	if _, err := conn.ExecContext(ctx, `CREATE OR REPLACE TEMP TABLE _jj AS SELECT * FROM judgments LIMIT 0`); err != nil {
		return err
	}
	now := time.Now().UTC()
	err = conn.Raw(func(dc any) error {
		ac, err := duckdb.NewAppender(dc.(driver.Conn), "temp", "main", "_jc")
		if err != nil {
			return err
		}
		aj, err := duckdb.NewAppender(dc.(driver.Conn), "temp", "main", "_jj")
		if err != nil {
			ac.Close()
			return err
		}
		for _, c := range calls {
			status := "invalid"
			if c.Valid {
				status = "valid"
			}
			var cost any
			if c.CostUSD != nil {
				cost = *c.CostUSD
			}
			var scores any
			if c.Valid && len(c.Scores) > 0 {
				b, _ := json.Marshal(c.Scores) // map keys sorted: byte-stable
				scores = json.RawMessage(b)
			}
			if err := ac.AppendRow(c.Model, c.Params, c.Prompt, c.InputHash, c.Judge, c.RunID, c.Task, c.Metric, status,
				nullIfEmpty(c.Reason), nullIfEmpty(c.Answer), c.InputTokens, c.OutputTokens, cost, int32(c.Attempts),
				float64(c.Latency.Microseconds())/1000, now, nullIfEmpty(c.SourceKey), scores); err != nil {
				ac.Close()
				aj.Close()
				return err
			}
			if !c.Valid {
				continue
			}
			row := judgmentRow(c)
			if err := aj.AppendRow(row...); err != nil {
				ac.Close()
				aj.Close()
				return err
			}
		}
		if err := ac.Close(); err != nil {
			aj.Close()
			return err
		}
		return aj.Close()
	})
	if err != nil {
		return fmt.Errorf("saving judgments: %w", err)
	}
	// The replaced rows are found by a join on the key's columns (all NOT
	// NULL, so the same rows a row-value IN finds): the IN hashed every row
	// of judgments for each batch (12 million at --scale 100), the join
	// took a ninth of its time at --scale 10 (docs/benchmarks.md).
	// The run inputs of the answered runs alone are stale (inputs.go).
	stale := []string{invalidateInputs}
	if w.hasPacks(ctx) {
		stale = []string{staleUnlessFresh, dropInputsOf(`SELECT run_id FROM _jj`)}
	}
	tx := []string{"BEGIN TRANSACTION", stale[0]}
	// A batch of new calls (their inputs unanswered when planned) has
	// nothing to replace: the join, over every stored call, is left out.
	// Kept, it made saving grow with the square of the calls a run makes
	// (docs/benchmarks.md).
	if slices.ContainsFunc(calls, func(c JudgeCall) bool { return !c.New }) {
		tx = append(tx, `DELETE FROM judge_calls USING _jc s WHERE judge_calls.model = s.model AND judge_calls.params = s.params AND judge_calls.prompt = s.prompt
			AND judge_calls.judge = s.judge AND judge_calls.run_id = s.run_id AND judge_calls.task = s.task AND judge_calls.metric = s.metric
			AND judge_calls.input_hash = s.input_hash`)
	}
	tx = append(tx,
		`INSERT INTO judge_calls SELECT * FROM _jc`,
		`DELETE FROM judgments USING _jj s WHERE judgments.run_id = s.run_id AND judgments.task = s.task AND judgments.metric = s.metric
			AND judgments.judge = s.judge AND judgments.prompt = s.prompt`,
		`INSERT INTO judgments SELECT * FROM _jj`)
	tx = append(append(tx, stale[1:]...), "COMMIT")
	for _, q := range tx {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
			return fmt.Errorf("saving judgments: %w", err)
		}
	}
	return nil
}

// judgmentRow is the judgments row of a valid answer: a built-in
// metric's scores in their columns, a user rubric's (custom.NAME) in
// extra, {"scores": {FIELD: value}}; Repeats > 1 (the mean of several
// asks) is noted in extra too.
func judgmentRow(c JudgeCall) []driver.Value {
	row := []driver.Value{c.RunID, c.Task, c.Metric, c.Judge, c.Prompt}
	custom := strings.HasPrefix(c.Metric, CustomMetricPrefix)
	for _, k := range scoreColumns {
		if v, ok := c.Scores[k]; ok && !custom {
			row = append(row, v)
		} else {
			row = append(row, nil)
		}
	}
	extra := map[string]any{}
	if custom {
		extra["scores"] = c.Scores
	}
	if c.Repeats > 1 {
		extra["repeats"] = c.Repeats
	}
	var ex any
	if len(extra) > 0 {
		b, _ := json.Marshal(extra)
		ex = json.RawMessage(b)
	}
	ev, _ := json.Marshal(c.Evidence)
	return append(row, c.Reasons, json.RawMessage(ev), ex, int32(0), nil)
}

// CustomMetricPrefix begins the names of the metrics of user rubrics.
const CustomMetricPrefix = "custom."

// IngestedJudgments counts the judgments of judge on the metrics that
// were ingested from files (not written by gymlens judge), per metric.
func (w *Warehouse) IngestedJudgments(ctx context.Context, judge string, metrics []string) (map[string]int64, error) {
	out := map[string]int64{}
	err := w.scan(ctx, `SELECT metric, count(*) FROM judgments WHERE judge = ? AND file_id > 0 AND list_contains(?, metric) GROUP BY ALL`,
		func(rows *sql.Rows) error {
			var m string
			var n int64
			if err := rows.Scan(&m, &n); err != nil {
				return err
			}
			out[m] = n
			return nil
		}, judge, metrics)
	return out, err
}

// SupersedeIngestedJudgments deletes the ingested judgments of judge on
// the metrics, in one transaction, and marks the files they came from
// superseded: ingesting those files again reads them and restores the
// judgments (with --replace, over what gymlens judge wrote meanwhile).
func (w *Warehouse) SupersedeIngestedJudgments(ctx context.Context, judge string, metrics []string) (int64, error) {
	if w.ReadOnly {
		return 0, ErrReadOnly
	}
	conn, err := w.db.Conn(ctx)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN TRANSACTION"); err != nil {
		return 0, err
	}
	fail := func(err error) (int64, error) {
		conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
		return 0, fmt.Errorf("taking out the ingested judgments of %q: %w", judge, err)
	}
	if _, err := conn.ExecContext(ctx, invalidateInputs); err != nil {
		return fail(err)
	}
	if _, err := conn.ExecContext(ctx, `UPDATE ingested_files SET superseded = true WHERE file_id IN
		(SELECT DISTINCT file_id FROM judgments WHERE judge = ? AND file_id > 0 AND list_contains(?, metric))`, judge, metrics); err != nil {
		return fail(err)
	}
	res, err := conn.ExecContext(ctx, `DELETE FROM judgments WHERE judge = ? AND file_id > 0 AND list_contains(?, metric)`, judge, metrics)
	if err != nil {
		return fail(err)
	}
	n, _ := res.RowsAffected()
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		return fail(err)
	}
	return n, nil
}

// JudgeBatches lists the batches of judge and model not yet collected,
// oldest first.
func (w *Warehouse) JudgeBatches(ctx context.Context, judge, model string) ([]rows.JudgeBatch, error) {
	var out []rows.JudgeBatch
	err := w.scan(ctx, `SELECT batch_id, judge, model, base_url, metrics, input_file_id, requests, status, collected, created_at, updated_at
		FROM judge_batches WHERE judge = ? AND model = ? AND NOT collected ORDER BY created_at, batch_id`, func(rs *sql.Rows) error {
		var b rows.JudgeBatch
		if err := rs.Scan(&b.ID, &b.Judge, &b.Model, &b.BaseURL, &b.Metrics, &b.InputFile, &b.Requests, &b.Status, &b.Collected, &b.Created, &b.Updated); err != nil {
			return err
		}
		out = append(out, b)
		return nil
	}, judge, model)
	return out, err
}

// SaveJudgeBatch stores a batch, or its new status.
func (w *Warehouse) SaveJudgeBatch(ctx context.Context, b rows.JudgeBatch) error {
	if w.ReadOnly {
		return fmt.Errorf("warehouse %s is open read-only", w.Path)
	}
	now := time.Now().UTC()
	if b.Created.IsZero() {
		b.Created = now
	}
	_, err := w.db.ExecContext(ctx, `INSERT INTO judge_batches VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (batch_id) DO UPDATE SET status = excluded.status, collected = excluded.collected, updated_at = excluded.updated_at`,
		b.ID, b.Judge, b.Model, b.BaseURL, b.Metrics, b.InputFile, b.Requests, b.Status, b.Collected, b.Created.UTC(), now)
	if err != nil {
		return fmt.Errorf("storing batch %s: %w", b.ID, err)
	}
	return nil
}

// SaveRubrics stores the definitions of user rubrics (one row per prompt
// version, replaced when judged again).
func (w *Warehouse) SaveRubrics(ctx context.Context, rubs []rows.Rubric) error {
	if w.ReadOnly {
		return ErrReadOnly
	}
	now := time.Now().UTC()
	for _, r := range rubs {
		sc, _ := json.Marshal(r.Scores)
		if _, err := w.db.ExecContext(ctx, `INSERT OR REPLACE INTO judge_rubrics VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
			r.Prompt, r.Metric, r.Item, r.Level, string(sc), r.Digest, r.Text, now); err != nil {
			return fmt.Errorf("storing rubric %s: %w", r.Prompt, err)
		}
	}
	return nil
}

// LoadRubrics reads the user rubrics judged with: for each metric, the
// definition of its latest prompt version (the one its metrics use).
func (w *Warehouse) LoadRubrics(ctx context.Context) ([]rows.Rubric, error) {
	var out []rows.Rubric
	err := w.scan(ctx, `SELECT prompt, metric, item, level, scores::VARCHAR, digest, text FROM (
			SELECT *, row_number() OVER (PARTITION BY metric ORDER BY prompt DESC) AS k FROM judge_rubrics) WHERE k = 1
		ORDER BY metric`, func(rs *sql.Rows) error {
		var r rows.Rubric
		var sc string
		if err := rs.Scan(&r.Prompt, &r.Metric, &r.Item, &r.Level, &sc, &r.Digest, &r.Text); err != nil {
			return err
		}
		if err := json.Unmarshal([]byte(sc), &r.Scores); err != nil {
			return fmt.Errorf("rubric %s: scores: %w", r.Prompt, err)
		}
		out = append(out, r)
		return nil
	})
	return out, err
}

// SettleRepeats sets each judgment of spec's judge, model, prompt and
// metric to the mean of its item's valid answers over the repeats'
// parameters (answers to the item's current input alone), noting in extra
// how many there were; reasons and evidence stay those of the answer last
// saved. It returns how many judgments it set, in one transaction.
func (w *Warehouse) SettleRepeats(ctx context.Context, spec rows.RepeatSpec) (int, error) {
	if w.ReadOnly {
		return 0, ErrReadOnly
	}
	type acc struct {
		sum  map[string]float64
		both float64 // TA: answers with now and later both 1
		n    int
	}
	accs := map[[2]string]*acc{}
	var order [][2]string
	err := w.scan(ctx, `SELECT run_id, task, coalesce(source_key, ''), scores::VARCHAR FROM judge_calls
		WHERE judge = ? AND model = ? AND prompt = ? AND metric = ? AND status = 'valid' AND scores IS NOT NULL
		AND list_contains(?, params) AND (? = '' OR run_id BETWEEN ? AND ?) ORDER BY run_id, task, params`, func(rs *sql.Rows) error {
		var k [2]string
		var key, sc string
		if err := rs.Scan(&k[0], &k[1], &key, &sc); err != nil {
			return err
		}
		if want, ok := spec.Keys[k]; !ok || want != key {
			return nil // an answer to an earlier input of the item, or not an item of this run
		}
		var s map[string]float64
		if err := json.Unmarshal([]byte(sc), &s); err != nil {
			return fmt.Errorf("the scores of a judge call on run %s task %q: %w", k[0], k[1], err)
		}
		a := accs[k]
		if a == nil {
			a = &acc{sum: map[string]float64{}}
			accs[k] = a
			order = append(order, k)
		}
		for n, v := range s {
			a.sum[n] += v
		}
		if s["ta_now"] == 1 && s["ta_later"] == 1 {
			a.both++
		}
		a.n++
		return nil
	}, spec.Judge, spec.Model, spec.Prompt, spec.Metric, spec.Params, spec.LastRun, spec.FirstRun, spec.LastRun)
	if err != nil || len(order) == 0 {
		return 0, err
	}
	conn, err := w.db.Conn(ctx)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `CREATE OR REPLACE TEMP TABLE _js AS SELECT * FROM judgments LIMIT 0`); err != nil {
		return 0, err
	}
	err = conn.Raw(func(dc any) error {
		ap, err := duckdb.NewAppender(dc.(driver.Conn), "temp", "main", "_js")
		if err != nil {
			return err
		}
		for _, k := range order {
			a := accs[k]
			c := JudgeCall{RunID: k[0], Task: k[1], Metric: spec.Metric, Judge: spec.Judge, Prompt: spec.Prompt, Scores: map[string]float64{}, Repeats: a.n}
			for n, v := range a.sum {
				c.Scores[n] = v / float64(a.n)
			}
			row := judgmentRow(c)
			if spec.Metric == "ta" && a.n > 1 {
				// TA is 1[now ∧ later]: its mean over the repeats, which the
				// means of now and of later do not give.
				b, _ := json.Marshal(map[string]any{"repeats": a.n, "both": a.both / float64(a.n)})
				row[len(row)-3] = json.RawMessage(b)
			}
			if err := ap.AppendRow(row...); err != nil {
				ap.Close()
				return err
			}
		}
		return ap.Close()
	})
	if err != nil {
		return 0, fmt.Errorf("averaging repeated answers: %w", err)
	}
	set := make([]string, 0, len(scoreColumns)+1)
	for _, c := range scoreColumns {
		set = append(set, c+" = s."+c)
	}
	set = append(set, "extra = s.extra")
	// Stale first (the averaged runs' alone, inputs.go): a crash between
	// the two leaves them stale, which costs time, not a wrong number.
	stale := []string{invalidateInputs}
	if w.hasPacks(ctx) {
		stale = []string{staleUnlessFresh, dropInputsOf(`SELECT run_id FROM _js`)}
	}
	for _, q := range stale {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return 0, fmt.Errorf("averaging repeated answers: %w", err)
		}
	}
	if _, err := conn.ExecContext(ctx, `UPDATE judgments SET `+strings.Join(set, ", ")+` FROM _js s
		WHERE judgments.run_id = s.run_id AND judgments.task = s.task AND judgments.metric = s.metric
		AND judgments.judge = s.judge AND judgments.prompt = s.prompt AND judgments.file_id = 0`); err != nil {
		return 0, fmt.Errorf("averaging repeated answers: %w", err)
	}
	return len(order), nil
}

// JudgeRepeats lists the inputs a judge (every judge: "") answered
// validly under two parameter sets or more (gymlens judge --repeats: the
// seeds), for its latest prompt version of each metric: each input once,
// named by its first item (run, task), with the scores of each answer in
// seed order. Copies of an answer for items sharing the input are not
// answers of their own.
func (w *Warehouse) JudgeRepeats(ctx context.Context, judge string) ([]rows.RepeatItem, error) {
	var out []rows.RepeatItem
	var hashes []uint64 // the input's, for out[i]
	// What recurs is held once: judges, metrics, scenarios, the lists of
	// score names.
	texts := map[string]string{}
	one := func(s string) string {
		if t, ok := texts[s]; ok {
			return t
		}
		texts[s] = s
		return s
	}
	nameLists := map[string][]string{}
	var answers []map[string]float64 // the last item's
	finish := func() {
		if len(out) == 0 {
			return
		}
		it := &out[len(out)-1]
		names, values := rows.RepeatScores(answers)
		key := strings.Join(names, "\x00")
		if l, ok := nameLists[key]; ok {
			names = l
		} else {
			nameLists[key] = names
		}
		it.Names, it.Values = names, values
		answers = answers[:0]
	}
	// The driver holds a query's whole result, and DuckDB the groups of
	// its aggregate: the answers are read a judge and metric at a time,
	// and within them a range of runs at a time, in the order one query
	// ordering them all would give. A range's query groups the calls of
	// the inputs asked for an item in the range (wherever their other
	// items are) and keeps the groups whose first item is in it, so that
	// each is read once. The input is carried as its hash (a number), only
	// to tell apart the inputs of one item.
	type pair struct{ judge, metric, prompt string }
	var pairs []pair
	if err := w.scan(ctx, `SELECT judge, metric, max(prompt) FROM judge_calls
		WHERE status = 'valid' AND scores IS NOT NULL AND (? = '' OR judge = ?) GROUP BY ALL ORDER BY judge, metric`, func(rs *sql.Rows) error {
		var p pair
		if err := rs.Scan(&p.judge, &p.metric, &p.prompt); err != nil {
			return err
		}
		pairs = append(pairs, p)
		return nil
	}, judge, judge); err != nil || len(pairs) == 0 {
		return nil, err
	}
	var cuts []string // the first run of each range but the first
	if err := w.scan(ctx, `SELECT run_id FROM (SELECT run_id, row_number() OVER (ORDER BY run_id) AS k FROM runs)
		WHERE k > 1 AND (k - 1) % ? = 0 ORDER BY run_id`, func(rs *sql.Rows) error {
		var id string
		if err := rs.Scan(&id); err != nil {
			return err
		}
		cuts = append(cuts, id)
		return nil
	}, repeatBatchRuns); err != nil {
		return nil, err
	}
	const q = `WITH k AS (SELECT DISTINCT input_hash FROM judge_calls
			WHERE judge = $1 AND metric = $2 AND prompt = $3 AND status = 'valid' AND scores IS NOT NULL
			AND run_id >= $4 AND ($5 OR run_id < $6)),
		c AS (SELECT model, input_hash, params, min(run_id || chr(0) || task) AS item,
				min(scores::VARCHAR) AS scores, coalesce(TRY_CAST(json_extract(params, '$.seed') AS BIGINT), 0) AS seed
			FROM judge_calls WHERE judge = $1 AND metric = $2 AND prompt = $3 AND status = 'valid' AND scores IS NOT NULL
				AND input_hash IN (SELECT input_hash FROM k)
			GROUP BY model, input_hash, params),
		multi AS (SELECT model, input_hash FROM c GROUP BY ALL HAVING count(*) >= 2)
		SELECT hash(c.input_hash), c.item, coalesce(r.scenario, ''), c.seed, c.scores
		FROM c JOIN multi USING (model, input_hash)
		LEFT JOIN runs r ON r.run_id = split_part(c.item, chr(0), 1)
		WHERE c.item >= $4 AND ($5 OR c.item < $6)
		ORDER BY c.item, c.input_hash, c.seed, c.params`
	for _, p := range pairs {
		judge, metric := one(p.judge), one(p.metric)
		for b := 0; b <= len(cuts); b++ {
			lo, hi, last := "", "", b == len(cuts)
			if b > 0 {
				lo = cuts[b-1]
			}
			if !last {
				hi = cuts[b]
			}
			err := w.scan(ctx, q, func(rs *sql.Rows) error {
				var item, scen, sc string
				var hash uint64
				var seed int64
				if err := rs.Scan(&hash, &item, &scen, &seed, &sc); err != nil {
					return err
				}
				var s map[string]float64
				if err := json.Unmarshal([]byte(sc), &s); err != nil {
					return fmt.Errorf("the scores of a judge call of %s: %w", judge, err)
				}
				run, task, _ := strings.Cut(item, "\x00")
				if n := len(out); n == 0 || out[n-1].Judge != judge || out[n-1].Metric != metric || out[n-1].RunID != run || out[n-1].Task != task || hashes[n-1] != hash {
					finish()
					out = append(out, rows.RepeatItem{RunID: run, Task: one(task), Metric: metric, Judge: judge, Scenario: one(scen)})
					hashes = append(hashes, hash)
				}
				it := &out[len(out)-1]
				it.Seeds, answers = append(it.Seeds, seed), append(answers, s)
				return nil
			}, p.judge, p.metric, p.prompt, lo, last, hi)
			if err != nil {
				return nil, err
			}
		}
	}
	finish()
	return slices.Clip(out), nil
}

// repeatBatchRuns is how many runs' repeated answers JudgeRepeats reads
// at once.
var repeatBatchRuns = 20000
