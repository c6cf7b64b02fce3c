package rows

import (
	"errors"
	"time"
)

// ErrNoQueue is the error of an annotation queue, or an item of one, that
// is not in the warehouse.
var ErrNoQueue = errors.New("not in the warehouse")

// Queue kinds: tasks or runs rated on questions (the ratings that `agree
// --human` compares with the judges), or PARE annotation samples decided
// accept, reject or gather_context (what `agree --pare` compares with the
// simulated user).
const (
	QueueRatings = "ratings"
	QueuePARE    = "pare"
)

// PAREQuestion is the one question of a PARE queue.
const PAREQuestion = "decision"

// Queue is an annotation queue: items that each need K annotators'
// answers to Questions.
type Queue struct {
	Name, Kind string
	K          int
	Questions  []string
	Source     string // where the items came from: a sheet's path, "sample …", "pare samples"
	Created    time.Time
}

// QueueItem is one item of a queue. Item is its id (run_id, run_id#task,
// or the PARE sample id); Pos its place in the queue (tutorial items
// first). Context is what the rater is shown (the sheet's context column,
// or the PARE proposal); Key, for a tutorial item, the expected answers.
type QueueItem struct {
	Item                string
	Pos                 int
	RunID, Task, Sample string
	Tutorial            bool
	Context             string
	Key                 map[string]string
}

// ItemID names a run's item: the run id, and "#task" for a task.
func ItemID(runID, task string) string {
	if task == "" {
		return runID
	}
	return runID + "#" + task
}

// Answer is one annotator's answer to one question of an item: Value for
// a rating, Choice for a PARE decision.
type Answer struct {
	Item, Annotator, Question string
	Value                     float64
	Choice                    string
	At                        time.Time
}

// JudgeBatch is a batch of judge requests submitted to a Batches API.
type JudgeBatch struct {
	ID, Judge, Model, BaseURL, Metrics, InputFile string
	Requests                                      int
	Status                                        string
	Collected                                     bool
	Created, Updated                              time.Time
}
