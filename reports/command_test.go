package reports

import (
	"errors"
	"reflect"
	"testing"

	"github.com/gymlens/gymlens/analysis"
)

// A notebook block is parsed as the CLI parses the command line: flags
// before and after the name, lists repeated, booleans with =false,
// defaults where nothing is given, and mistakes as option errors.
func TestCommandParse(t *testing.T) {
	c := CommandNamed("table")
	a, err := c.Parse([]string{"--resamples", "200", "main", "--where", "harness=CC", "-where=persona_group=S", "--intervals=false"})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a.Pos, []string{"main"}) || a.Int("resamples") != 200 || !a.IsSet("resamples") || a.Bool("intervals") {
		t.Errorf("parsed %+v", a)
	}
	if got := a.List("where"); !reflect.DeepEqual(got, []string{"harness=CC", "persona_group=S"}) {
		t.Errorf("where = %q", got)
	}
	if a.Uint("seed") != analysis.DefaultBootstrap.Seed || a.IsSet("seed") || a.Float("level") != analysis.DefaultBootstrap.Level {
		t.Errorf("defaults: seed %d level %g", a.Uint("seed"), a.Float("level"))
	}
	opt, err := a.Options("w", KeepTasks)
	if err != nil {
		t.Fatal(err)
	}
	if opt.StudyResamples != 200 || opt.Bootstrap.Resamples != 200 || !reflect.DeepEqual(opt.Where["harness"], []string{"CC"}) {
		t.Errorf("options %+v", opt)
	}
	for _, bad := range [][]string{{"main", "--nope"}, {"main", "--resamples", "many"}} {
		_, err := c.Parse(bad)
		var oe *analysis.OptionError
		if !errors.As(err, &oe) {
			t.Errorf("%q: got %v, want an option error", bad, err)
		}
	}
	// Checked when made into options: a level outside (0, 1).
	a, _ = c.Parse([]string{"main", "--level", "1.5"})
	if _, err := a.Options("w", KeepTasks); err == nil {
		t.Error("--level 1.5 accepted")
	}
}

// The confidence level of agree is --confidence (its --level is
// Krippendorff's); human's resamples default to the paper's 20,000.
func TestCommandBootstrapParams(t *testing.T) {
	a, err := CommandNamed("agree").Parse([]string{"--human", "--confidence", "0.9", "--level", "ordinal"})
	if err != nil {
		t.Fatal(err)
	}
	o, err := a.Bootstrap()
	if err != nil || o.Level != 0.9 || a.String("level") != "ordinal" {
		t.Errorf("agree: %+v %v", o, err)
	}
	a, _ = CommandNamed("human").Parse(nil)
	if o, _ := a.Bootstrap(); o.Resamples != 20000 {
		t.Errorf("human resamples %d", o.Resamples)
	}
	if o, _ := NewArgs(nil).Bootstrap(); o.Resamples != analysis.DefaultBootstrap.Resamples {
		t.Errorf("no bootstrap params: %+v", o)
	}
}

// Every parameter's default is of a kind the CLI and Parse both know, and
// names are unique within a command.
func TestCommandParams(t *testing.T) {
	if len(NotebookCommands) != len(Commands) {
		t.Fatalf("NotebookCommands %v", NotebookCommands)
	}
	for _, c := range Commands {
		seen := map[string]bool{}
		for _, p := range c.Params {
			switch p.Default.(type) {
			case string, int, uint64, float64, bool, nil:
			default:
				t.Errorf("%s --%s: default of type %T", c.Name, p.Name, p.Default)
			}
			if seen[p.Name] {
				t.Errorf("%s: --%s twice", c.Name, p.Name)
			}
			seen[p.Name] = true
		}
		if c.Run == nil || c.Default == "" || len(c.Formats) == 0 {
			t.Errorf("%s: incomplete", c.Name)
		}
	}
}
