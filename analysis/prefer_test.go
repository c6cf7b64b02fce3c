package analysis

import (
	"errors"
	"testing"
)

// PreferDerived reads score's --prefer: logged or derived, anything else
// a usage error in the flag's words.
func TestPreferDerived(t *testing.T) {
	for prefer, want := range map[string]bool{"logged": false, "derived": true} {
		if got, err := PreferDerived(prefer); got != want || err != nil {
			t.Errorf("%q: %v %v", prefer, got, err)
		}
	}
	for _, prefer := range []string{"", "Derived", "both"} {
		_, err := PreferDerived(prefer)
		var oe *OptionError
		if want := `--prefer: expected logged or derived, found "` + prefer + `"`; err == nil || err.Error() != want || !errors.As(err, &oe) {
			t.Errorf("%q: %v, want the usage error %q", prefer, err, want)
		}
	}
}
