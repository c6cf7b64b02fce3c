package serve

import (
	"crypto/rand"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/gymlens/gymlens/analysis"
)

// MinTokenLength is the fewest characters a token may have: a token
// guards the whole warehouse, and a short one is guessed.
const MinTokenLength = 16

// AutoToken is the --token value that asks for a token made at start
// (NewToken).
const AutoToken = "auto"

// CheckToken refuses a token shorter than MinTokenLength ("" is no
// token).
func CheckToken(token string) error {
	if n := utf8.RuneCountInString(token); token != "" && n < MinTokenLength {
		return fmt.Errorf("--token has %d characters: a token needs at least %d (or --token %s makes one)", n, MinTokenLength, AutoToken)
	}
	// The printed link's cookie carries the token as it is: a cookie
	// value holds printable ASCII but space, '"', ';', ',' and '\'.
	for i := 0; i < len(token); i++ {
		if c := token[i]; c <= ' ' || c >= 0x7f || strings.IndexByte(`";,\`, c) >= 0 {
			return fmt.Errorf("--token: %q at byte %d: a token is printable ASCII without space, '\"', ';', ',' or '\\' (or --token %s makes one)", c, i+1, AutoToken)
		}
	}
	return nil
}

// NewToken is a token of 128 random bits (crypto/rand), 26 characters of
// base32 that a URL carries as they are.
func NewToken() string { return rand.Text() }

// ResolveToken is the token --token gives: NewToken's for AutoToken, else
// token itself once CheckToken took it.
func ResolveToken(token string) (string, error) {
	if token == AutoToken {
		return NewToken(), nil
	}
	if err := CheckToken(token); err != nil {
		return "", err
	}
	return token, nil
}

// CheckListen reads, before the warehouse is opened, where the viewer
// listens and for whom: o.Token (ResolveToken: AutoToken becomes a token
// made now), o.Addr (CheckAddr) and o.AllowedHosts (CheckHosts), in this
// order. What cannot be is a usage error (*analysis.OptionError).
func (o *Options) CheckListen() error {
	token, err := ResolveToken(o.Token)
	if err == nil {
		err = CheckAddr(o.Addr, token)
	}
	if err == nil {
		err = CheckHosts(o.AllowedHosts)
	}
	if err != nil {
		return &analysis.OptionError{Err: err}
	}
	o.Token = token
	return nil
}

// bearer is the credentials of an Authorization header of the Bearer
// scheme, whose name is case-insensitive and followed by one space or
// more (RFC 9110, section 11.4; RFC 6750).
func bearer(h string) (string, bool) {
	scheme, cred, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	cred = strings.TrimLeft(cred, " ")
	return cred, cred != ""
}
