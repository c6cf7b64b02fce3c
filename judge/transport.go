package judge

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// MaxAnswerBytes bounds the body of one chat completion a judge endpoint
// sends back. A judge's answer is a few kilobytes of JSON; the bound keeps
// a faulty or hostile endpoint from filling the memory every command
// keeps within 1 GB.
const MaxAnswerBytes = 16 << 20

// errRedirect and errAnswerTooLarge end a request without a retry: the
// endpoint will answer the same way again.
var (
	errRedirect       = errors.New("redirect refused")
	errAnswerTooLarge = errors.New("answer too large")
)

// guarded returns a client that sends requests only to the URL it was
// given (a redirect, to any place, is an error: an OpenAI-compatible
// endpoint answers where it is asked, and following one would send the
// judge's inputs to a host the user did not name) and, when maxBody > 0,
// reads at most maxBody bytes of an answer. base (nil: Go's default
// transport with a 10-minute wait for the answer's headers) keeps its
// transport and timeout.
func guarded(base *http.Client, maxBody int64) *http.Client {
	c := &http.Client{}
	if base != nil {
		*c = *base
	}
	rt := c.Transport
	if rt == nil {
		if t, ok := http.DefaultTransport.(*http.Transport); ok {
			t = t.Clone()
			t.ResponseHeaderTimeout = 10 * time.Minute
			rt = t
		} else {
			rt = http.DefaultTransport
		}
	}
	if maxBody > 0 {
		rt = capped{rt: rt, max: maxBody}
	}
	c.Transport = rt
	c.CheckRedirect = func(r *http.Request, via []*http.Request) error {
		return fmt.Errorf("%w: %s answered with a redirect to %s://%s; gymlens sends requests only to the URL given with --judge or --endpoint",
			errRedirect, via[0].URL.Host, r.URL.Scheme, r.URL.Host)
	}
	return c
}

// capped is a transport whose answers' bodies end in an error past max
// bytes.
type capped struct {
	rt  http.RoundTripper
	max int64
}

func (c capped) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.rt.RoundTrip(r)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	if resp.ContentLength > c.max {
		resp.Body.Close()
		return nil, fmt.Errorf("%w: %s announced %d bytes, more than the %d MiB limit for one answer", errAnswerTooLarge, r.URL.Host, resp.ContentLength, c.max>>20)
	}
	resp.Body = &cappedBody{rc: resp.Body, left: c.max, host: r.URL.Host, max: c.max}
	return resp, nil
}

type cappedBody struct {
	rc   io.ReadCloser
	left int64
	max  int64
	host string
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// One byte more tells a body of exactly max bytes from a longer one.
		var one [1]byte
		n, err := b.rc.Read(one[:])
		if n > 0 {
			return 0, fmt.Errorf("%w: %s sent more than the %d MiB limit for one answer", errAnswerTooLarge, b.host, b.max>>20)
		}
		return 0, err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *cappedBody) Close() error { return b.rc.Close() }
