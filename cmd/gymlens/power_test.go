package main

import (
	"strings"
	"testing"
)

// power --delta is per metric, in each metric's own unit, which the
// output names: one number for metrics of different scales is refused.
func TestPowerDeltaPerMetric(t *testing.T) {
	t.Parallel()
	_, db := sharedSampleWarehouse(t, 8, 2)
	code, out, stderr := gymlens(t, "--db", db, "-q", "power", "--delta", "TC=3,TR-J=0.2", "-f", "csv")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 5 || !strings.HasPrefix(lines[0], "metric,unit,") ||
		!strings.HasPrefix(lines[1], "TC,points of the 0–100 scale,") || !strings.Contains(lines[1], ",3,") ||
		!strings.HasPrefix(lines[2], "TA,percentage points,") || !strings.HasSuffix(lines[2], ",,") ||
		!strings.HasPrefix(lines[4], "TR-J,points of the 1–5 scale,") || !strings.Contains(lines[4], ",0.2,") {
		t.Errorf("--delta TC=3,TR-J=0.2: exit %d\n%s%s", code, out, stderr)
	}
	code, _, stderr = gymlens(t, "--db", db, "-q", "power", "--delta", "3")
	if code != 2 || !strings.Contains(stderr, "--delta 3: one number for 4 metrics") {
		t.Errorf("--delta 3 over four metrics: exit %d %s", code, stderr)
	}
	code, out, stderr = gymlens(t, "--db", db, "-q", "power", "--metrics", "TR-J", "--delta", "0.2", "-f", "csv")
	if code != 0 || !strings.Contains(out, "TR-J,points of the 1–5 scale,") {
		t.Errorf("--metrics TR-J --delta 0.2: exit %d\n%s%s", code, out, stderr)
	}
}
