package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strings"
	"time"
)

// header writes the line each measuring command prints before its
// results: when, on which code and on what machine they were measured,
// so that a table pasted into docs/benchmarks.md carries its own date and
// commit and is regenerated, never edited.
func header(w io.Writer, now time.Time) {
	fmt.Fprintf(w, "measured %s · commit %s · %d cores · %s\n\n", now.UTC().Format("2006-01-02 15:04 UTC"), commit(), runtime.NumCPU(), cpuModel())
}

// commit is the commit the binary was built from (the build's VCS stamp,
// or else git in the working folder), marked when the tree had changes.
func commit() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		var rev string
		dirty := false
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
		if rev != "" {
			return shortRev(rev, dirty)
		}
	}
	out, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		return "unknown (no VCS stamp and no git)"
	}
	st, _ := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output()
	return shortRev(strings.TrimSpace(string(out)), len(strings.TrimSpace(string(st))) > 0)
}

func shortRev(rev string, dirty bool) string {
	if len(rev) > 7 {
		rev = rev[:7]
	}
	if dirty {
		rev += " with uncommitted changes"
	}
	return rev
}

// cpuModel is the first "model name" of /proc/cpuinfo, or the
// architecture where there is none.
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err == nil {
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				return strings.TrimSpace(v)
			}
		}
	}
	return runtime.GOOS + "/" + runtime.GOARCH
}
