package rows

import (
	"errors"
	"time"
)

// ErrNoQueue is the error of an annotation queue, or an item of one, that
// is not in the warehouse.
var ErrNoQueue = errors.New("not in the warehouse")

// ErrFull is the error of an answer a queue does not take: from a new
// annotator on an item that has its K annotators (unless the queue allows
// over-assignment), or from an annotator past the queue's MaxAnnotators.
var ErrFull = errors.New("no room for another annotator")

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

// DefaultMaxAnnotators is how many annotators a queue takes answers from
// unless it is made with another limit (gymlens annotate --max-annotators).
const DefaultMaxAnnotators = 1000

// Queue is an annotation queue: items that each need K annotators'
// answers to Questions.
type Queue struct {
	Name, Kind string
	K          int
	Questions  []string
	Source     string // where the items came from: a sheet's path, "sample …", "pare samples"
	Created    time.Time
	// MaxAnnotators is how many annotators, by name, the queue takes
	// answers from (0 when made: DefaultMaxAnnotators).
	MaxAnnotators int
	// OverAssign: an item other than a practice one takes answers from
	// more than K annotators (otherwise a K+1-th is refused).
	OverAssign bool
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

// QueuePage is a page of a queue's annotators, by name: Names and their
// Answers; Annotators counts them all, Complete the items other than
// practice ones that have every question answered by K annotators or more.
type QueuePage struct {
	Annotators, Complete int
	Names                []string
	Answers              []Answer
}

// JudgeBatch is a batch of judge requests submitted to a Batches API.
type JudgeBatch struct {
	ID, Judge, Model, BaseURL, Metrics, InputFile string
	Requests                                      int
	Status                                        string
	Collected                                     bool
	Created, Updated                              time.Time
}
