//go:build unix

package ingest

import (
	"syscall"
	"time"
)

// processCPU is the CPU time (user and system) of the process so far, every
// thread's, DuckDB's included.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
