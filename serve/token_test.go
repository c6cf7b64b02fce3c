package serve

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/gymlens/gymlens/analysis"
)

// testToken is a token long enough to be taken.
const testToken = "s3cret-s3cret-s3cret"

// A token shorter than MinTokenLength is refused, by CheckToken and by
// New, with the minimum named; "auto" makes one of 128 bits.
func TestTokenLength(t *testing.T) {
	for _, tok := range []string{"x", "s3cret", strings.Repeat("a", MinTokenLength-1), "ééééééééééééééé"} {
		err := CheckToken(tok)
		if err == nil || !strings.Contains(err.Error(), "16") || !strings.Contains(err.Error(), "--token auto") {
			t.Errorf("token %q: %v", tok, err)
		}
		if _, err := New(context.Background(), &fake{}, Options{Token: tok}); err == nil {
			t.Errorf("New took the token %q", tok)
		}
	}
	for _, tok := range []string{"", strings.Repeat("a", MinTokenLength), testToken} {
		if err := CheckToken(tok); err != nil {
			t.Errorf("token %q: %v", tok, err)
		}
	}
	a, err := ResolveToken(AutoToken)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := ResolveToken(AutoToken)
	if a == b || len(a) < 26 || CheckToken(a) != nil || strings.Trim(a, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567") != "" {
		t.Errorf("auto tokens %q, %q: not two base32 values of 128 bits", a, b)
	}
	if tok, err := ResolveToken(testToken); tok != testToken || err != nil {
		t.Errorf("an explicit token: %q %v", tok, err)
	}
	if _, err := ResolveToken("short"); err == nil {
		t.Error("ResolveToken took a short token")
	}
}

// RFC 9110: the authentication scheme is case-insensitive and may be
// followed by more than one space; another scheme, or none, is not the
// token.
func TestBearerScheme(t *testing.T) {
	s, _ := newServer(t, testToken)
	for auth, code := range map[string]int{
		"Bearer " + testToken:       200,
		"bearer " + testToken:       200,
		"BEARER " + testToken:       200,
		"bEaReR   " + testToken:     200,
		"Bearer " + testToken + "x": 401,
		"Bearer" + testToken:        401,
		"Basic " + testToken:        401,
		testToken:                   401,
		"Bearer":                    401,
		"Bearer ":                   401,
		"Bearer x " + testToken:     401,
		"Bearer " + testToken[:16]:  401,
	} {
		if rec := get(t, s, "/api/runs", "Authorization", auth); rec.Code != code {
			t.Errorf("Authorization %q: %d, not %d", auth, rec.Code, code)
		}
	}
}

// /assets/ serves its files and nothing else: no directory listing.
func TestAssetsServeFilesOnly(t *testing.T) {
	s, _ := newServer(t, "")
	if rec := get(t, s, "/assets/style.css"); rec.Code != 200 || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/css") {
		t.Errorf("style.css: %d %s", rec.Code, rec.Header().Get("Content-Type"))
	}
	for _, path := range []string{"/assets", "/assets/", "/assets/.", "/assets/nothing.css"} {
		rec := get(t, s, path)
		if rec.Code/100 == 3 {
			rec = get(t, s, rec.Header().Get("Location"))
		}
		if rec.Code != 404 || strings.Contains(rec.Body.String(), "style.css") {
			t.Errorf("%s: %d %s", path, rec.Code, rec.Body.String())
		}
	}
}

// CheckListen reads where the viewer listens and for whom before the
// warehouse is opened: --token auto becomes a token made at start, and a
// short token, an address beyond loopback without one or a bad allowed
// host is a usage error (*analysis.OptionError), checked in that order.
func TestCheckListen(t *testing.T) {
	o := Options{Token: AutoToken, Addr: "0.0.0.0:8077", AllowedHosts: []string{"viewer.example.org"}}
	if err := o.CheckListen(); err != nil || o.Token == AutoToken || CheckToken(o.Token) != nil || o.Token == "" {
		t.Errorf("--token auto: token %q, %v", o.Token, err)
	}
	o = Options{Token: testToken, Addr: DefaultAddr}
	if err := o.CheckListen(); err != nil || o.Token != testToken {
		t.Errorf("an explicit token: %q %v", o.Token, err)
	}
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{Token: "short", Addr: "0.0.0.0:1", AllowedHosts: []string{"a b"}}, "--token has 5 characters: a token needs at least 16 (or --token auto makes one)"},
		{Options{Addr: "0.0.0.0:8077", AllowedHosts: []string{"a b"}}, "--addr 0.0.0.0:8077 is not a loopback address: give --token (or $GYMLENS_TOKEN) so that only those who have it read the warehouse"},
		{Options{Addr: ""}, `--addr "": expected HOST:PORT (missing port in address)`},
		{Options{Addr: DefaultAddr, AllowedHosts: []string{"http://viewer"}}, `--allowed-hosts "http://viewer"`},
	} {
		err := c.o.CheckListen()
		var oe *analysis.OptionError
		if err == nil || !strings.HasPrefix(err.Error(), c.want) || !errors.As(err, &oe) {
			t.Errorf("%+v: %v, want the usage error %q", c.o, err, c.want)
		}
	}
}
