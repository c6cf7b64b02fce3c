package openaitest

import (
	"net/http"
	"strings"
	"testing"
)

// A server that forgets counts every request and keeps none of them; by
// default it keeps each body and its headers.
func TestForgetCountsWithoutKeeping(t *testing.T) {
	for _, forget := range []bool{false, true} {
		f := New()
		f.Forget = forget
		for range 3 {
			resp, err := http.Post(f.URL+"/v1/chat/completions", "application/json",
				strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
		f.Close()
		kept := 3
		if forget {
			kept = 0
		}
		if f.Count() != 3 || len(f.Requests) != kept || len(f.Headers) != kept {
			t.Errorf("forget %v: count %d, %d bodies and %d headers kept, want 3, %d", forget, f.Count(), len(f.Requests), len(f.Headers), kept)
		}
	}
}
