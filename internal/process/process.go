// Package process sets up the gymlens process: the Go heap's soft limit
// and, when asked, a CPU profile.
package process

import (
	"os"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
)

// GoMemoryLimit is the soft limit of Go's heap: Go's collector works
// harder as the heap nears it, so that gymlens with DuckDB's own limit
// (ingest.DefaultMemoryLimit) stays under 1 GB (docs/benchmarks.md).
const GoMemoryLimit = 640 << 20

// Setup sets the heap's soft limit (GoMemoryLimit; $GYMLENS_GO_MEMORY, in
// bytes, or GOMEMLIMIT overrides it) and, with GYMLENS_CPUPROFILE=FILE,
// starts a CPU profile of the command (for `go tool pprof`). The function
// it returns stops the profile.
func Setup() (stop func()) {
	if os.Getenv("GOMEMLIMIT") == "" {
		limit := int64(GoMemoryLimit)
		if v, err := strconv.ParseInt(os.Getenv("GYMLENS_GO_MEMORY"), 10, 64); err == nil && v > 0 {
			limit = v
		}
		debug.SetMemoryLimit(limit)
	}
	path := os.Getenv("GYMLENS_CPUPROFILE")
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		return func() {}
	}
	pprof.StartCPUProfile(f)
	return func() { pprof.StopCPUProfile(); f.Close() }
}
