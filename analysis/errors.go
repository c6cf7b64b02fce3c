package analysis

import (
	"errors"
	"fmt"
)

// OptionError is a mistake in what the caller asked for (an unknown
// metric, dimension or level, a malformed selection), as opposed to a
// problem with the data. The CLI exits with status 2 on it.
type OptionError struct{ Err error }

func (e *OptionError) Error() string { return e.Err.Error() }
func (e *OptionError) Unwrap() error { return e.Err }

// Optionf formats an OptionError.
func Optionf(format string, args ...any) error {
	return &OptionError{fmt.Errorf(format, args...)}
}

// ErrNoData marks an analysis the data cannot give: no human ratings, no
// effort ablation, no PARE runs, no run left by a selection. A notebook
// notes it and goes on (unless --strict); the report lists it as left out.
var ErrNoData = errors.New("no data for this analysis")

// noData is a message that is an ErrNoData.
type noData struct{ msg string }

func (e *noData) Error() string        { return e.msg }
func (e *noData) Is(target error) bool { return target == ErrNoData }

// NoDataf formats an error that is an ErrNoData.
func NoDataf(format string, args ...any) error { return &noData{fmt.Sprintf(format, args...)} }
