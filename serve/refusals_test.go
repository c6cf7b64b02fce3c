package serve

import (
	"net/http/httptest"
	"strings"
	"testing"
)

// A token goes into the printed link's cookie as it is: characters a
// cookie value cannot hold are refused, naming where they are.
func TestTokenCharacters(t *testing.T) {
	base := strings.Repeat("a", MinTokenLength)
	for _, tok := range []string{base + ";", base + " b", base + `"`, base + `\`, base + ",", base + "é", base + "\x7f", "\t" + base} {
		err := CheckToken(tok)
		if err == nil || !strings.Contains(err.Error(), "printable ASCII") || !strings.Contains(err.Error(), "at byte") {
			t.Errorf("token %q: %v", tok, err)
		}
	}
	if err := CheckToken(base + "-_.~!$%&'()*+/:<=>?@[]^`{|}"); err != nil {
		t.Errorf("printable ASCII refused: %v", err)
	}
}

// A refused request (another Host, no token) closes its connection, so
// that those who may not use the viewer hold none of its connection slots
// while the idle timeout runs.
func TestRefusalsCloseTheConnection(t *testing.T) {
	s, _ := newServer(t, testToken)
	req := httptest.NewRequest("GET", "/api/runs", nil)
	req.Host = "evil.example:8077"
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	if rec.Code != 403 || rec.Header().Get("Connection") != "close" {
		t.Errorf("rebound Host: %d, Connection %q", rec.Code, rec.Header().Get("Connection"))
	}
	rec = get(t, s, "/api/runs")
	if rec.Code != 401 || rec.Header().Get("Connection") != "close" {
		t.Errorf("no token: %d, Connection %q", rec.Code, rec.Header().Get("Connection"))
	}
}

// A status page far past any queue is a bad request, not an offset that
// overflows.
func TestStatusPageBound(t *testing.T) {
	s, _ := annotated(t, "", false)
	for _, p := range []string{"9223372036854775807", "92233720368547758", "1048577"} {
		for _, target := range []string{"/annotate/q1/status?page=" + p, "/api/annotate/q1/status?page=" + p} {
			if rec := get(t, s, target); rec.Code != 400 {
				t.Errorf("%s: %d, want 400", target, rec.Code)
			}
		}
	}
}
