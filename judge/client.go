// Package judge reruns LLM-as-judge scoring against any OpenAI-compatible
// chat-completions endpoint (OpenAI, vLLM, SGLang, Ollama, llama.cpp
// server, LiteLLM). This file is the client: bounded concurrency, request
// and token rate limits, retries with exponential backoff and jitter that
// honour Retry-After, and a timeout per request.
package judge

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"
	"golang.org/x/time/rate"
)

// Endpoint is one judge: a name (used in the warehouse and for its API
// key), a model and where it is served.
type Endpoint struct {
	Name, Model, BaseURL string
	// Pool is every base URL serving the judge's model, BaseURL first,
	// when more than one was named (NAME=MODEL@URL1,URL2,…): the judge's
	// requests spread over them. Which server answered changes nothing
	// stored: the cache keys on the model, prompt and input.
	Pool   []string
	apiKey string // from the environment only; never stored
}

// URLs are the endpoint's base URLs ("" for the OpenAI API).
func (e Endpoint) URLs() []string {
	if len(e.Pool) > 0 {
		return e.Pool
	}
	return []string{e.BaseURL}
}

// checkPool checks each base URL of a pool and refuses a URL named twice.
func checkPool(name, raw string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, part := range strings.Split(raw, ",") {
		u, err := CheckBaseURL(name, strings.TrimSpace(part))
		if err != nil {
			return nil, err
		}
		if seen[u] {
			return nil, fmt.Errorf("--judge %s: the endpoint %s is named twice in its pool", name, u)
		}
		seen[u] = true
		out = append(out, u)
	}
	return out, nil
}

var nameRE = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

// ParseEndpoint reads NAME=MODEL[@BASE_URL[,BASE_URL…]] (several base
// URLs: a pool of servers of the same model). The API key comes from
// $GYMLENS_<NAME>_API_KEY (NAME upper-cased, '-' and '.' as '_'), else
// $OPENAI_API_KEY; an endpoint that needs no key works without one.
func ParseEndpoint(spec string, getenv func(string) string) (Endpoint, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	name, rest, ok := strings.Cut(spec, "=")
	if !ok || name == "" || rest == "" {
		return Endpoint{}, fmt.Errorf("--judge: expected NAME=MODEL[@BASE_URL], found %q", spec)
	}
	if !nameRE.MatchString(name) {
		return Endpoint{}, fmt.Errorf("--judge: the name %q may hold only letters, digits, '_', '-' and '.'", name)
	}
	ep := Endpoint{Name: name, Model: rest}
	// The URL starts at the first "@http://" or "@https://": a model name
	// may hold "@" (then name the URL with --endpoint), a URL may not hold
	// credentials, so a request never goes to a host the user did not name.
	at := -1
	for _, scheme := range []string{"@http://", "@https://"} {
		if i := strings.Index(strings.ToLower(rest), scheme); i >= 0 && (at < 0 || i < at) {
			at = i
		}
	}
	if at == 0 {
		return Endpoint{}, fmt.Errorf("--judge %s: no model before the URL: expected NAME=MODEL@BASE_URL", name)
	}
	if at > 0 {
		urls, err := checkPool(name, rest[at+1:])
		if err != nil {
			return Endpoint{}, err
		}
		ep.Model, ep.BaseURL = rest[:at], urls[0]
		if len(urls) > 1 {
			ep.Pool = urls
		}
	} else if strings.Contains(rest, "://") {
		return Endpoint{}, fmt.Errorf("--judge %s: %q looks like a URL but does not follow \"@http://\" or \"@https://\": expected NAME=MODEL@BASE_URL (or --endpoint %s=URL)", name, rest, name)
	}
	ep.apiKey = getenv(KeyVariable(name))
	if ep.apiKey == "" {
		ep.apiKey = getenv("OPENAI_API_KEY")
	}
	return ep, nil
}

// CheckBaseURL checks the base URL of judge name's endpoint: http or https
// with a host, and no credentials in it (keys come from the environment
// only, and a URL with user:pass@ is where a key would leak into logs and
// shell history). It returns the URL as given.
func CheckBaseURL(name, raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("--judge %s: the endpoint %q is not a URL: %w", name, raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("--judge %s: the endpoint %q: expected an http:// or https:// URL", name, raw)
	}
	if u.User != nil {
		return "", fmt.Errorf("--judge %s: the endpoint URL holds credentials (user:password@): remove them and give the key in $%s", name, KeyVariable(name))
	}
	if u.Host == "" || u.Hostname() == "" {
		return "", fmt.Errorf("--judge %s: the endpoint %q names no host", name, raw)
	}
	return raw, nil
}

// KeyVariable is the environment variable that holds judge name's API key.
func KeyVariable(name string) string {
	return "GYMLENS_" + strings.NewReplacer("-", "_", ".", "_").Replace(strings.ToUpper(name)) + "_API_KEY"
}

// ClientOptions tunes a Client; zero values take the defaults.
type ClientOptions struct {
	Concurrency int           // requests in flight at most (default 8)
	RPM, TPM    int           // requests and tokens per minute (0: no limit)
	Timeout     time.Duration // per request (default 120 s)
	MaxRetries  int           // after the first try (default 5)
	BaseBackoff time.Duration // first backoff (default 1 s), doubled each retry
	MaxBackoff  time.Duration // cap (default 60 s)
	Seed        int64         // sent where the endpoint supports it
	Temperature float64       // sampling temperature (default 0)
	HTTPClient  *http.Client
}

// Request is one chat completion asking for JSON.
type Request struct {
	System, User string
	SchemaName   string
	Schema       map[string]any // a JSON Schema for structured output; nil: free text
	EstTokens    int            // estimated input tokens, for the token rate limit
}

// Response is a completion with what it cost.
type Response struct {
	Content                   string
	InputTokens, OutputTokens int64
	Attempts                  int
	Latency                   time.Duration
}

// Client sends requests to one endpoint: one server, or a pool of them.
type Client struct {
	ep       Endpoint
	opt      ClientOptions
	rpm, tpm *rate.Limiter
	sleep    func(context.Context, time.Duration) error
	now      func() time.Time
	inFlight atomic.Int64
	noSchema atomic.Bool // the endpoint refused structured output
	retrying atomic.Int64
	notesMu  sync.Mutex
	notes    []string // said once each, in the judge's report

	pmu     sync.Mutex // guards the members' counts and wake
	members []*member
	wake    chan struct{} // closed when a request ends (a slot is free)
}

// member is one server of an endpoint: its requests in flight (at most
// Concurrency), its failures in a row, and until when it is out of the
// pool after them.
type member struct {
	url      string
	oa       openai.Client
	inFlight int
	fails    int
	outUntil time.Time
	outs     int // times taken out since it last answered
	sent     atomic.Int64
}

// Pool tuning: a server is taken out after poolFailures failed requests
// in a row (server errors, timeouts, dropped connections; not 429, which
// Retry-After paces, nor 4xx), for poolPause, doubling each time it fails
// again on return, up to poolMaxPause.
const (
	poolFailures = 3
	poolPause    = 30 * time.Second
	poolMaxPause = 5 * time.Minute
)

// badRequest marks an error the endpoint answered with 400.
type badRequest struct{ error }

func (b badRequest) Unwrap() error { return b.error }

// IsBadRequest says whether the endpoint refused the request as malformed.
func IsBadRequest(err error) bool {
	var b badRequest
	return errors.As(err, &b)
}

// NewClient makes a client; the openai-go SDK's own retries are switched
// off, so that gymlens counts, spaces and reports every attempt.
func NewClient(ep Endpoint, opt ClientOptions) *Client {
	if opt.Concurrency <= 0 {
		opt.Concurrency = 8
	}
	if opt.Timeout <= 0 {
		opt.Timeout = 120 * time.Second
	}
	if opt.MaxRetries < 0 {
		opt.MaxRetries = 0
	} else if opt.MaxRetries == 0 {
		opt.MaxRetries = 5
	}
	if opt.BaseBackoff <= 0 {
		opt.BaseBackoff = time.Second
	}
	if opt.MaxBackoff <= 0 {
		opt.MaxBackoff = 60 * time.Second
	}
	c := &Client{ep: ep, opt: opt, sleep: sleepCtx, now: time.Now, wake: make(chan struct{})}
	for _, u := range ep.URLs() {
		opts := []option.RequestOption{option.WithMaxRetries(0), option.WithAPIKey(ep.apiKey)}
		if u != "" {
			opts = append(opts, option.WithBaseURL(u))
		}
		opts = append(opts, option.WithHTTPClient(guarded(opt.HTTPClient, MaxAnswerBytes)))
		c.members = append(c.members, &member{url: u, oa: openai.NewClient(opts...)})
	}
	if opt.RPM > 0 {
		c.rpm = rate.NewLimiter(rate.Limit(float64(opt.RPM)/60), max(1, opt.RPM/60))
	}
	if opt.TPM > 0 {
		c.tpm = rate.NewLimiter(rate.Limit(float64(opt.TPM)/60), opt.TPM)
	}
	return c
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// InFlight is the number of requests being sent now.
func (c *Client) InFlight() int64 { return c.inFlight.Load() }

// Capacity is how many requests the client sends at once: Concurrency per
// server.
func (c *Client) Capacity() int { return c.opt.Concurrency * len(c.members) }

// Sent counts the requests sent to each base URL of the endpoint.
func (c *Client) Sent() map[string]int64 {
	out := map[string]int64{}
	for _, m := range c.members {
		out[m.url] = m.sent.Load()
	}
	return out
}

// acquire takes a slot on the server with the fewest requests in flight
// among those in the pool, waiting while all are busy. When every server
// is out, the one due back first is used, so that requests go on (and
// back off) rather than stall.
func (c *Client) acquire(ctx context.Context) (*member, error) {
	for {
		c.pmu.Lock()
		now := c.now()
		var best, due *member
		for _, m := range c.members {
			if m.inFlight >= c.opt.Concurrency {
				continue
			}
			if now.Before(m.outUntil) {
				if due == nil || m.outUntil.Before(due.outUntil) {
					due = m
				}
				continue
			}
			if best == nil || m.inFlight < best.inFlight {
				best = m
			}
		}
		if best == nil && due != nil {
			allOut := true
			for _, m := range c.members {
				if !now.Before(m.outUntil) {
					allOut = false
				}
			}
			if allOut {
				best = due
			}
		}
		if best != nil {
			best.inFlight++
			best.sent.Add(1)
			c.inFlight.Add(1)
			c.pmu.Unlock()
			return best, nil
		}
		wake := c.wake
		c.pmu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// outcome of a request, for the pool's accounting.
type outcome int

const (
	answered outcome = iota // an answer, or a refusal (4xx): the server works
	failed                  // a server error, a timeout, a dropped connection
	paced                   // 429: busy, not broken
)

// release gives the slot back and counts the outcome: a server that fails
// poolFailures times in a row leaves the pool for a pause (noted once
// each time).
func (c *Client) release(m *member, o outcome) {
	c.pmu.Lock()
	m.inFlight--
	c.inFlight.Add(-1)
	var note string
	switch o {
	case answered:
		m.fails, m.outs = 0, 0
	case failed:
		m.fails++
		if m.fails >= poolFailures && len(c.members) > 1 {
			pause := min(poolPause<<m.outs, poolMaxPause)
			m.outUntil, m.fails = c.now().Add(pause), 0
			m.outs++
			note = fmt.Sprintf("%s: %s taken out of the pool after %d failed requests in a row; tried again after %v", c.ep.Name, m.url, poolFailures, pause)
		}
	}
	close(c.wake)
	c.wake = make(chan struct{})
	c.pmu.Unlock()
	if note != "" {
		c.note(note)
	}
}

// Complete sends req, retrying what can succeed later (429, 5xx, timeouts,
// dropped connections) with exponential backoff and full jitter, or after
// the server's Retry-After when it gives one. Other errors (400, 401, …)
// are returned at once.
func (c *Client) Complete(ctx context.Context, req Request) (*Response, error) {
	params := chatParams(c.ep.Model, req, c.opt)
	var last error
	for attempt := 1; attempt <= c.opt.MaxRetries+1; attempt++ {
		if err := c.wait(ctx, req.EstTokens); err != nil {
			return nil, &RequestError{Attempts: attempt - 1, Err: err}
		}
		start := time.Now()
		resp, wait, err := c.once(ctx, params)
		if err == nil {
			return &Response{Content: resp.Choices[0].Message.Content, InputTokens: resp.Usage.PromptTokens,
				OutputTokens: resp.Usage.CompletionTokens, Attempts: attempt, Latency: time.Since(start)}, nil
		}
		if ctx.Err() != nil {
			return nil, &RequestError{Attempts: attempt, Err: ctx.Err()}
		}
		if wait < 0 {
			return nil, &RequestError{Attempts: attempt, Err: err}
		}
		last = err
		if attempt == c.opt.MaxRetries+1 {
			break
		}
		if wait == 0 {
			wait = c.backoff(attempt)
		}
		c.retrying.Add(1)
		err = c.sleep(ctx, wait)
		c.retrying.Add(-1)
		if err != nil {
			return nil, &RequestError{Attempts: attempt, Err: err}
		}
	}
	return nil, &RequestError{Attempts: c.opt.MaxRetries + 1, Err: fmt.Errorf("%s: gave up after %d attempts: %v", c.ep.Name, c.opt.MaxRetries+1, last)}
}

// chatParams is the chat completion a request is: the one body both a
// live request and a batch line send.
func chatParams(model string, req Request, co ClientOptions) openai.ChatCompletionNewParams {
	params := openai.ChatCompletionNewParams{
		Model:       shared.ChatModel(model),
		Messages:    []openai.ChatCompletionMessageParamUnion{openai.SystemMessage(req.System), openai.UserMessage(req.User)},
		Temperature: openai.Float(co.Temperature),
	}
	if co.Seed != 0 {
		params.Seed = openai.Int(co.Seed)
	}
	if req.Schema != nil {
		params.ResponseFormat = openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
			JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: req.SchemaName, Schema: req.Schema, Strict: openai.Bool(true)}}}
	}
	return params
}

// RequestError is a request that failed after Attempts tries (every try
// is a request the endpoint may have counted).
type RequestError struct {
	Attempts int
	Err      error
}

func (e *RequestError) Error() string { return e.Err.Error() }
func (e *RequestError) Unwrap() error { return e.Err }

// note records something a user should be told once about the endpoint.
func (c *Client) note(s string) {
	c.notesMu.Lock()
	defer c.notesMu.Unlock()
	c.notes = append(c.notes, s)
}

// Notes are what the run learnt of the endpoint (said once each).
func (c *Client) Notes() []string {
	c.notesMu.Lock()
	defer c.notesMu.Unlock()
	return append([]string(nil), c.notes...)
}

// Retrying is how many requests are waiting to be tried again (backing
// off after a 429, a 5xx, a timeout or a dropped connection).
func (c *Client) Retrying() int64 { return c.retrying.Load() }

// Check asks the endpoint for its model list within 10 s, so that a
// server that is not there fails the run at once, naming the endpoint,
// instead of retrying for hours: refused connections, names that do not
// resolve, no answer, and a refused key (401, 403) are errors; any other
// answer (404 from a server without /models, say) means it is there.
func (c *Client) Check(ctx context.Context) error {
	if len(c.members) == 1 {
		return c.checkOne(ctx, c.members[0])
	}
	// A pool: the servers that do not answer start out of it (noted); the
	// run fails only when none answers.
	errs := make([]error, len(c.members))
	var wg sync.WaitGroup
	for i, m := range c.members {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = c.checkOne(ctx, m) }()
	}
	wg.Wait()
	var first error
	up := 0
	for i, err := range errs {
		if err == nil {
			up++
			continue
		}
		if first == nil {
			first = err
		}
		m := c.members[i]
		c.pmu.Lock()
		m.outUntil, m.outs = c.now().Add(poolPause), 1
		c.pmu.Unlock()
		c.note(fmt.Sprintf("%s; left out of the pool at the start, tried again after %v", err.Error(), poolPause))
	}
	if up == 0 {
		return first
	}
	return nil
}

// checkOne is Check of one server.
func (c *Client) checkOne(ctx context.Context, m *member) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	where := m.url
	if where == "" {
		where = "the OpenAI API (no @BASE_URL given)"
	}
	_, err := m.oa.Models.List(ctx)
	var apiErr *openai.Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &apiErr):
		if apiErr.StatusCode == http.StatusUnauthorized || apiErr.StatusCode == http.StatusForbidden {
			return fmt.Errorf("judge %s: %s refused the API key (HTTP %d): set $%s (or $OPENAI_API_KEY)", c.ep.Name, where, apiErr.StatusCode, KeyVariable(c.ep.Name))
		}
		return nil
	case ctx.Err() != nil && errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("judge %s: %s did not answer within 10 s: is the server up, and the URL right?", c.ep.Name, where)
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return fmt.Errorf("judge %s: %s: the host %q does not resolve", c.ep.Name, where, dns.Name)
	}
	if errors.Is(err, syscall.ECONNREFUSED) {
		return fmt.Errorf("judge %s: %s refused the connection: is the server running?", c.ep.Name, where)
	}
	return fmt.Errorf("judge %s: %s cannot be reached: %w", c.ep.Name, where, err)
}

// wait takes a concurrency slot's turn at the rate limits.
func (c *Client) wait(ctx context.Context, tokens int) error {
	if c.rpm != nil {
		if err := c.rpm.Wait(ctx); err != nil {
			return err
		}
	}
	if c.tpm != nil && tokens > 0 {
		if err := c.tpm.WaitN(ctx, min(tokens, c.opt.TPM)); err != nil {
			return err
		}
	}
	return nil
}

// once sends one attempt. wait < 0: do not retry; 0: back off; > 0: the
// server said how long to wait.
func (c *Client) once(ctx context.Context, params openai.ChatCompletionNewParams) (*openai.ChatCompletion, time.Duration, error) {
	m, err := c.acquire(ctx)
	if err != nil {
		return nil, -1, err
	}
	o := answered
	defer func() { c.release(m, o) }()
	rctx, cancel := context.WithTimeout(ctx, c.opt.Timeout)
	defer cancel()
	resp, err := m.oa.Chat.Completions.New(rctx, params)
	if err == nil {
		if len(resp.Choices) == 0 {
			o = failed
			return nil, 0, fmt.Errorf("%s: the response has no choices", c.where(m))
		}
		return resp, 0, nil
	}
	var apiErr *openai.Error
	switch {
	case ctx.Err() != nil:
		return nil, -1, ctx.Err()
	case errors.As(err, &apiErr):
		if apiErr.StatusCode == http.StatusTooManyRequests {
			o = paced
			return nil, retryAfter(apiErr.Response), err
		}
		if apiErr.StatusCode >= 500 {
			o = failed
			return nil, retryAfter(apiErr.Response), err
		}
		if apiErr.StatusCode == http.StatusBadRequest {
			return nil, -1, badRequest{fmt.Errorf("%s: %w", c.where(m), err)}
		}
		return nil, -1, fmt.Errorf("%s: %w", c.where(m), err)
	case errors.Is(err, errRedirect), errors.Is(err, errAnswerTooLarge):
		o = failed
		return nil, -1, fmt.Errorf("%s: %w", c.where(m), err)
	case errors.Is(err, context.DeadlineExceeded):
		o = failed
		return nil, 0, fmt.Errorf("%s: no answer within %v", c.where(m), c.opt.Timeout)
	default:
		// Transport errors (a dropped connection, a reset) may pass.
		o = failed
		return nil, 0, fmt.Errorf("%s: %w", c.where(m), err)
	}
}

// where names the endpoint in a message, and the server of a pool.
func (c *Client) where(m *member) string {
	if len(c.members) > 1 {
		return c.ep.Name + " (" + m.url + ")"
	}
	return c.ep.Name
}

// backoff is the full-jitter exponential backoff before retry n (1-based).
func (c *Client) backoff(n int) time.Duration {
	d := c.opt.BaseBackoff << (n - 1)
	if d > c.opt.MaxBackoff || d <= 0 {
		d = c.opt.MaxBackoff
	}
	return time.Duration(rand.Int64N(int64(d)) + 1)
}

// retryAfter reads a Retry-After header (seconds or an HTTP date).
func retryAfter(r *http.Response) time.Duration {
	if r == nil {
		return 0
	}
	v := r.Header.Get("Retry-After")
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := time.Until(t); d > 0 {
			return d
		}
	}
	return 0
}

// Endpoints reads the judges named on the command line: specs of the form
// NAME=MODEL[@BASE_URL] (ParseEndpoint), and endpoints NAME=BASE_URL for
// the judges whose model name holds '@'. A judge's endpoint is given once;
// an endpoint without its judge is an error.
func Endpoints(specs, endpoints []string) ([]Endpoint, error) {
	if len(specs) == 0 {
		return nil, fmt.Errorf("judge: name at least one --judge NAME=MODEL[@BASE_URL]")
	}
	urls := map[string]string{}
	var order []string
	for _, s := range endpoints {
		name, u, ok := strings.Cut(s, "=")
		if !ok || name == "" || u == "" {
			return nil, fmt.Errorf("--endpoint: expected NAME=BASE_URL, found %q", s)
		}
		pool, err := checkPool(name, u)
		if err != nil {
			return nil, err
		}
		urls[name] = strings.Join(pool, ",")
		order = append(order, name)
	}
	var out []Endpoint
	for _, s := range specs {
		ep, err := ParseEndpoint(s, nil)
		if err != nil {
			return nil, err
		}
		if u, ok := urls[ep.Name]; ok {
			if ep.BaseURL != "" {
				return nil, fmt.Errorf("judge %s: its endpoint is named twice, in --judge and in --endpoint", ep.Name)
			}
			pool := strings.Split(u, ",")
			ep.BaseURL = pool[0]
			if len(pool) > 1 {
				ep.Pool = pool
			}
			delete(urls, ep.Name)
		}
		out = append(out, ep)
	}
	for _, name := range order {
		if _, left := urls[name]; left {
			return nil, fmt.Errorf("--endpoint %s: no --judge %s=MODEL", name, name)
		}
	}
	return out, nil
}
