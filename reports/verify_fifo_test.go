//go:build unix

package reports

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A FIFO in the report folder, listed or not, is refused by its name and
// never opened (opening one blocks until a writer comes).
func TestVerifyRefusesAFIFO(t *testing.T) {
	for _, name := range []string{"tables/main.csv", "tables/extra"} {
		t.Run(name, func(t *testing.T) {
			dir, r := tinyReport(t)
			p := filepath.Join(dir, filepath.FromSlash(name))
			os.Remove(p)
			if err := syscall.Mkfifo(p, 0o600); err != nil {
				t.Skipf("no FIFO here: %v", err)
			}
			done := make(chan error, 1)
			go func() {
				_, err := verifyTiny(t, dir, r)
				done <- err
			}()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), name+": a named pipe") {
					t.Errorf("want %s refused as a FIFO, got %v", name, err)
				}
			case <-time.After(5 * time.Second):
				// Release the blocked open: a writer comes and goes.
				if f, err := os.OpenFile(p, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
					f.Close()
				}
				t.Fatalf("verify blocked on the FIFO %s", name)
			}
		})
	}
}
