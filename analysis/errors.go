package analysis

import "fmt"

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
