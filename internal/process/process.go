// Package process sets up the gymlens process: the Go heap's soft limit
// and, when asked, a CPU or heap profile.
package process

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"
)

// GoMemoryLimit is the soft limit of Go's heap: Go's collector works
// harder as the heap nears it, so that gymlens with DuckDB's own limit
// (ingest.DefaultMemoryLimit) stays under 1 GB (docs/benchmarks.md).
const GoMemoryLimit = 640 << 20

// Setup sets the heap's soft limit (GoMemoryLimit; $GYMLENS_GO_MEMORY, in
// bytes, or GOMEMLIMIT overrides it); with GYMLENS_CPUPROFILE=FILE it
// starts a CPU profile of the command, and with GYMLENS_HEAPPROFILE=FILE
// it keeps in FILE the heap profile of the largest heap seen and in
// FILE.rss what the largest resident size was made of, looked at twice
// a second (both for `go tool pprof`). The function it returns stops
// the profiles.
func Setup() (stop func()) {
	if os.Getenv("GOMEMLIMIT") == "" {
		limit := int64(GoMemoryLimit)
		if v, err := strconv.ParseInt(os.Getenv("GYMLENS_GO_MEMORY"), 10, 64); err == nil && v > 0 {
			limit = v
		}
		debug.SetMemoryLimit(limit)
	}
	stops := []func(){}
	if path := os.Getenv("GYMLENS_CPUPROFILE"); path != "" {
		if f, err := os.Create(path); err == nil {
			pprof.StartCPUProfile(f)
			stops = append(stops, func() { pprof.StopCPUProfile(); f.Close() })
		}
	}
	if path := os.Getenv("GYMLENS_HEAPPROFILE"); path != "" {
		done := make(chan struct{})
		go heapProfiles(path, done)
		stops = append(stops, func() { close(done) })
	}
	return func() {
		for _, s := range stops {
			s()
		}
	}
}

// heapProfiles writes the heap profile to path whenever the heap in use
// is larger than it has been, and to path.rss a line saying the largest
// resident size seen and how much of it Go's runtime held then, until
// done is closed.
func heapProfiles(path string, done chan struct{}) {
	var most, rss uint64
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return
		case <-tick.C:
		}
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		if r := residentKB(); r > rss {
			rss = r
			line := fmt.Sprintf("peak resident %d MB: Go's runtime %d MB (heap in use %d MB), the rest %d MB\n",
				r>>10, (m.Sys-m.HeapReleased)>>20, m.HeapInuse>>20, int64(r>>10)-int64((m.Sys-m.HeapReleased)>>20))
			os.WriteFile(path+".rss", []byte(line), 0o644)
		}
		if m.HeapInuse <= most {
			continue
		}
		most = m.HeapInuse
		if f, err := os.Create(path); err == nil {
			pprof.Lookup("heap").WriteTo(f, 0)
			f.Close()
		}
	}
}

// residentKB is the process's resident size in KB (0 when not known).
func residentKB() uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			v, _ := strconv.ParseUint(f[1], 10, 64)
			return v
		}
	}
	return 0
}
