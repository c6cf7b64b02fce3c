package rows

import "testing"

// A key reads back as what it was made of.
func FuzzInspectSampleKey(f *testing.F) {
	f.Add("abc", "1", 1)
	f.Add("run/task:%3A", "a:b", 12)
	f.Fuzz(func(t *testing.T, ev, sample string, epoch int) {
		if epoch < 0 {
			return
		}
		e, s, n, ok := ParseInspectSampleKey(InspectSampleKey(ev, sample, epoch))
		if !ok || e != ev || s != sample || n != epoch {
			t.Fatalf("(%q, %q, %d) read back as (%q, %q, %d, %v)", ev, sample, epoch, e, s, n, ok)
		}
	})
}
