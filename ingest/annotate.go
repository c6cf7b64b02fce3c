package ingest

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/gymlens/gymlens/ingest/rows"
)

// CreateQueue stores an annotation queue and its items in one
// transaction (MaxAnnotators 0 stores rows.DefaultMaxAnnotators); a queue of the same name is an error (queues are not
// replaced: their answers would lose their items).
func (w *Warehouse) CreateQueue(ctx context.Context, q rows.Queue, items []rows.QueueItem) error {
	if w.ReadOnly {
		return fmt.Errorf("warehouse %s is open read-only: annotation queues need it writable", w.Path)
	}
	if q.Name == "" {
		return errors.New("an annotation queue needs a name")
	}
	if len(items) == 0 {
		return fmt.Errorf("queue %q: no items", q.Name)
	}
	if q.MaxAnnotators == 0 {
		q.MaxAnnotators = rows.DefaultMaxAnnotators
	}
	if q.MaxAnnotators < 0 {
		return fmt.Errorf("queue %q: it takes at most %d annotators: give 1 or more", q.Name, q.MaxAnnotators)
	}
	return w.annotationTx(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM annotation_queues WHERE queue = ?`, q.Name).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return fmt.Errorf("queue %q is already in %s: choose another name", q.Name, w.Path)
		}
		qs, _ := json.Marshal(q.Questions)
		created := q.Created
		if created.IsZero() {
			created = time.Now()
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO annotation_queues (queue, kind, k, questions, source, created_at, max_annotators, over_assign)
			VALUES (?, ?, ?, ?::JSON::VARCHAR[], ?, ?, ?, ?)`,
			q.Name, q.Kind, q.K, string(qs), q.Source, created.UTC(), q.MaxAnnotators, q.OverAssign); err != nil {
			return fmt.Errorf("storing queue %q: %w", q.Name, err)
		}
		seen := map[string]bool{}
		for _, it := range items {
			if seen[it.Item] {
				return fmt.Errorf("queue %q: item %q appears twice", q.Name, it.Item)
			}
			seen[it.Item] = true
			var key any
			if len(it.Key) > 0 {
				b, _ := json.Marshal(it.Key)
				key = string(b)
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO annotation_items VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
				q.Name, it.Item, it.Pos, nullString(it.RunID), nullString(it.Task), nullString(it.Sample), it.Tutorial, nullString(it.Context), key); err != nil {
				return fmt.Errorf("storing queue %q, item %q: %w", q.Name, it.Item, err)
			}
		}
		return nil
	})
}

func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// Queues lists the annotation queues, by name.
func (w *Warehouse) Queues(ctx context.Context) ([]rows.Queue, error) {
	var out []rows.Queue
	err := w.scan(ctx, `SELECT queue, kind, k, to_json(questions)::VARCHAR, source, created_at, max_annotators, over_assign
		FROM annotation_queues ORDER BY queue`, func(r *sql.Rows) error {
		var q rows.Queue
		var qs string
		if err := r.Scan(&q.Name, &q.Kind, &q.K, &qs, &q.Source, &q.Created, &q.MaxAnnotators, &q.OverAssign); err != nil {
			return err
		}
		if err := json.Unmarshal([]byte(qs), &q.Questions); err != nil {
			return err
		}
		out = append(out, q)
		return nil
	})
	return out, err
}

// Queue reads a queue and its items, in their order; ErrNoQueue when
// there is none of that name.
func (w *Warehouse) Queue(ctx context.Context, name string) (rows.Queue, []rows.QueueItem, error) {
	qs, err := w.Queues(ctx)
	if err != nil {
		return rows.Queue{}, nil, err
	}
	var q *rows.Queue
	for i := range qs {
		if qs[i].Name == name {
			q = &qs[i]
		}
	}
	if q == nil {
		return rows.Queue{}, nil, fmt.Errorf("annotation queue %q: %w %s", name, rows.ErrNoQueue, w.Path)
	}
	var items []rows.QueueItem
	err = w.scan(ctx, `SELECT item, position, coalesce(run_id, ''), coalesce(task, ''), coalesce(sample_id, ''), tutorial,
		coalesce(context, ''), coalesce(answer_key::VARCHAR, '') FROM annotation_items WHERE queue = ? ORDER BY position, item`, func(r *sql.Rows) error {
		var it rows.QueueItem
		var key string
		if err := r.Scan(&it.Item, &it.Pos, &it.RunID, &it.Task, &it.Sample, &it.Tutorial, &it.Context, &key); err != nil {
			return err
		}
		if key != "" {
			if err := json.Unmarshal([]byte(key), &it.Key); err != nil {
				return err
			}
		}
		items = append(items, it)
		return nil
	}, name)
	return *q, items, err
}

// Answers reads a queue's answers, by item position, annotator and
// question.
func (w *Warehouse) Answers(ctx context.Context, queue string) ([]rows.Answer, error) {
	return w.answers(ctx, queue, false)
}

// RatedAnswers reads a queue's answers to items other than practice ones
// (those the agreement counts), as Answers does.
func (w *Warehouse) RatedAnswers(ctx context.Context, queue string) ([]rows.Answer, error) {
	return w.answers(ctx, queue, true)
}

func (w *Warehouse) answers(ctx context.Context, queue string, rated bool) ([]rows.Answer, error) {
	var out []rows.Answer
	err := w.scan(ctx, `SELECT a.item, a.annotator, a.question, coalesce(a.value, 'NaN'::DOUBLE), coalesce(a.choice, ''), a.answered_at
		FROM annotation_answers a JOIN annotation_items i ON i.queue = a.queue AND i.item = a.item
		WHERE a.queue = ? AND NOT (? AND i.tutorial) ORDER BY i.position, a.item, a.annotator, a.question`, func(r *sql.Rows) error {
		var a rows.Answer
		if err := r.Scan(&a.Item, &a.Annotator, &a.Question, &a.Value, &a.Choice, &a.At); err != nil {
			return err
		}
		out = append(out, a)
		return nil
	}, queue, rated)
	return out, err
}

// SaveAnswers stores one annotator's answers to one item of a queue in one
// transaction, replacing what that annotator answered to those questions
// before: saving the same answers again changes nothing, and an edit
// replaces the old answer. The item must be in the queue. The queue's
// limits hold: an annotator new to the queue is refused (rows.ErrFull)
// once it has MaxAnnotators, and one new to an item other than a practice
// item once the item has answers from K annotators, unless the queue
// allows over-assignment; an annotator revising their answers is not new.
//
// The check and the write are one step: annotation writes are serialised
// by the warehouse's write lock (one at a time in this process, reads go
// on meanwhile), and the process that holds a warehouse open for writing
// is its only writer (DuckDB's file lock keeps others out), so no answer
// can come between the count and the insert.
func (w *Warehouse) SaveAnswers(ctx context.Context, queue, item, annotator string, answers []rows.Answer) error {
	if w.ReadOnly {
		return fmt.Errorf("warehouse %s is open read-only: answers need it writable", w.Path)
	}
	if annotator == "" {
		return errors.New("an answer needs an annotator")
	}
	return w.annotationTx(ctx, func(tx *sql.Tx) error {
		var k, most int
		var tutorial, over bool
		err := tx.QueryRowContext(ctx, `SELECT q.k, coalesce(q.max_annotators, 0), coalesce(q.over_assign, false), i.tutorial
			FROM annotation_items i JOIN annotation_queues q ON q.queue = i.queue WHERE i.queue = ? AND i.item = ?`, queue, item).Scan(&k, &most, &over, &tutorial)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("queue %q, item %q: %w", queue, item, rows.ErrNoQueue)
		}
		if err != nil {
			return err
		}
		var inQueue, onItem bool
		if err := tx.QueryRowContext(ctx, `SELECT count(*) > 0, count(*) FILTER (WHERE item = ?) > 0 FROM annotation_answers WHERE queue = ? AND annotator = ?`,
			item, queue, annotator).Scan(&inQueue, &onItem); err != nil {
			return err
		}
		if !inQueue {
			var n int
			if err := tx.QueryRowContext(ctx, `SELECT count(DISTINCT annotator) FROM annotation_answers WHERE queue = ?`, queue).Scan(&n); err != nil {
				return err
			}
			if n >= most {
				return fmt.Errorf("queue %q takes answers from at most %d annotators, and has them: %q is not one (make the queue with a higher --max-annotators): %w",
					queue, most, annotator, rows.ErrFull)
			}
		}
		if !onItem && !tutorial && !over {
			var n int
			if err := tx.QueryRowContext(ctx, `SELECT count(DISTINCT annotator) FROM annotation_answers WHERE queue = ? AND item = ?`, queue, item).Scan(&n); err != nil {
				return err
			}
			if n >= k {
				return fmt.Errorf("queue %q, item %q has answers from its k = %d annotators: it takes none from %q (a queue made with --over-assign would): %w",
					queue, item, k, annotator, rows.ErrFull)
			}
		}
		now := time.Now().UTC()
		for _, a := range answers {
			if _, err := tx.ExecContext(ctx, `DELETE FROM annotation_answers WHERE queue = ? AND item = ? AND annotator = ? AND question = ?`,
				queue, item, annotator, a.Question); err != nil {
				return err
			}
			var v any
			if !math.IsNaN(a.Value) {
				v = a.Value
			}
			at := a.At
			if at.IsZero() {
				at = now
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO annotation_answers VALUES (?, ?, ?, ?, ?, ?, ?)`,
				queue, item, annotator, a.Question, v, nullString(a.Choice), at.UTC()); err != nil {
				return err
			}
		}
		return nil
	})
}

// QueuePage is a page of a queue's annotators (by name) with their
// answers, and what the status counts over all of them.
func (w *Warehouse) QueuePage(ctx context.Context, queue string, offset, limit int) (rows.QueuePage, error) {
	var p rows.QueuePage
	// Items other than practice ones with every question answered by k
	// annotators or more; answers are only ever to the queue's questions.
	err := w.db.QueryRowContext(ctx, `WITH q AS (SELECT k, len(questions) AS nq FROM annotation_queues WHERE queue = ?),
		done AS (SELECT a.item, a.annotator FROM annotation_answers a JOIN annotation_items i ON i.queue = a.queue AND i.item = a.item
			WHERE a.queue = ? AND NOT i.tutorial GROUP BY a.item, a.annotator HAVING count(DISTINCT a.question) = (SELECT nq FROM q)),
		full_items AS (SELECT item FROM done GROUP BY item HAVING count(*) >= (SELECT k FROM q))
		SELECT (SELECT count(DISTINCT annotator) FROM annotation_answers WHERE queue = ?), (SELECT count(*) FROM full_items)`,
		queue, queue, queue).Scan(&p.Annotators, &p.Complete)
	if err != nil {
		return p, err
	}
	names, err := w.scanStrings(ctx, `SELECT DISTINCT annotator FROM annotation_answers WHERE queue = ? ORDER BY annotator LIMIT ? OFFSET ?`, queue, limit, offset)
	if err != nil || len(names) == 0 {
		return p, err
	}
	err = w.scan(ctx, `SELECT item, annotator, question, coalesce(value, 'NaN'::DOUBLE), coalesce(choice, ''), answered_at
		FROM annotation_answers WHERE queue = ? AND annotator BETWEEN ? AND ? ORDER BY annotator, item, question`, func(r *sql.Rows) error {
		var a rows.Answer
		if err := r.Scan(&a.Item, &a.Annotator, &a.Question, &a.Value, &a.Choice, &a.At); err != nil {
			return err
		}
		p.Answers = append(p.Answers, a)
		return nil
	}, queue, names[0], names[len(names)-1])
	p.Names = names
	return p, err
}

// queueRatings are the answers of the ratings queues' items that are not
// tutorial ones, as ratings (file "annotate:QUEUE", line the item's place).
func (w *Warehouse) queueRatings(ctx context.Context) ([]rows.RatingRow, error) {
	var out []rows.RatingRow
	err := w.scan(ctx, `SELECT a.annotator, a.question, a.value, coalesce(i.run_id, ''), coalesce(i.task, ''),
		coalesce(r.scenario, ''), coalesce(r.config_id, ''), a.queue, i.position
		FROM annotation_answers a JOIN annotation_items i ON i.queue = a.queue AND i.item = a.item
		JOIN annotation_queues q ON q.queue = a.queue LEFT JOIN runs r ON r.run_id = i.run_id
		WHERE q.kind = 'ratings' AND NOT i.tutorial AND a.value IS NOT NULL
		ORDER BY a.queue, i.position, a.annotator, a.question`, func(rs *sql.Rows) error {
		var g rows.RatingRow
		var queue string
		if err := rs.Scan(&g.Rater, &g.Question, &g.Value, &g.RunID, &g.Task, &g.Scenario, &g.ConfigID, &queue, &g.Line); err != nil {
			return err
		}
		g.File = "annotate:" + queue
		g.Line++
		out = append(out, g)
		return nil
	})
	return out, err
}

// PAREQueueItems are the ingested PARE annotation samples as queue items,
// by sample id (tutorial samples first): what the annotator is shown is
// the agent's proposal (not the models, nor the simulated user's decision);
// a tutorial sample's key is its correct decision.
func (w *Warehouse) PAREQueueItems(ctx context.Context) ([]rows.QueueItem, error) {
	var out []rows.QueueItem
	err := w.scan(ctx, `SELECT sample_id, coalesce(bool_or(tutorial), false), coalesce(any_value(agent_proposal), ''),
		coalesce(any_value(correct_decision), '') FROM pare_samples GROUP BY sample_id ORDER BY sample_id`, func(r *sql.Rows) error {
		var it rows.QueueItem
		var key string
		if err := r.Scan(&it.Sample, &it.Tutorial, &it.Context, &key); err != nil {
			return err
		}
		it.Item = it.Sample
		if it.Tutorial && key != "" {
			it.Key = map[string]string{rows.PAREQuestion: key}
		}
		out = append(out, it)
		return nil
	})
	return out, err
}

// annotationTx runs fn in a transaction, one annotation write at a time
// (reads go on meanwhile), and commits when fn succeeds.
func (w *Warehouse) annotationTx(ctx context.Context, fn func(*sql.Tx) error) error {
	w.writeMu.Lock()
	defer w.writeMu.Unlock()
	tx, err := w.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}
