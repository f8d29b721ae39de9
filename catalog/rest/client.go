package rest

// The HTTP layer: one retrying client for reads, one for commits (retried
// only when nothing reached the server), JSON bodies, Paimon's
// ErrorResponse, and the redaction of the token.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/hashicorp/go-retryablehttp"
)

// maxBody bounds a response body read into memory (a table's schema is
// the largest answer compactd asks for).
const maxBody = 64 << 20

// errorResponse is Paimon's ErrorResponse.
type errorResponse struct {
	Message      string `json:"message"`
	ResourceType string `json:"resourceType"`
	ResourceName string `json:"resourceName"`
	Code         int    `json:"code"`
}

// httpError is a non-2xx answer.
type httpError struct {
	Method, Path string
	Status       int
	Message      string // the server's message (redacted), or the body's start
}

func (e *httpError) Error() string {
	msg := e.Message
	if msg == "" {
		msg = http.StatusText(e.Status)
	}
	return fmt.Sprintf("%s %s: HTTP %d: %s", e.Method, e.Path, e.Status, msg)
}

type client struct {
	base    string // scheme://host[:port][/path], no trailing slash
	token   string
	headers map[string]string
	reads   *retryablehttp.Client
	commits *retryablehttp.Client
}

func newClient(base, token string, timeout time.Duration, retries int, hc *http.Client) *client {
	if hc == nil {
		hc = &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	}
	if timeout > 0 {
		hc.Timeout = timeout
	}
	// No redirects: a redirected commit would be sent again (307/308) or
	// turned into a GET (301-303), and the bearer token would follow it.
	// A 3xx is an answer like any other unexpected one.
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	mk := func(policy retryablehttp.CheckRetry, max int) *retryablehttp.Client {
		return &retryablehttp.Client{
			HTTPClient:   hc,
			Logger:       nil, // we log ourselves, without headers
			RetryWaitMin: 200 * time.Millisecond,
			RetryWaitMax: 5 * time.Second,
			RetryMax:     max,
			CheckRetry:   policy,
			Backoff:      retryablehttp.DefaultBackoff,
			// Keep the last response: its status and body decide the outcome.
			ErrorHandler: retryablehttp.PassthroughErrorHandler,
		}
	}
	return &client{
		base:    base,
		token:   token,
		headers: map[string]string{},
		reads:   mk(retryablehttp.DefaultRetryPolicy, retries),
		commits: mk(commitRetryPolicy, retries),
	}
}

// commitRetryPolicy retries a commit only when its connection could not
// be made: then the server has seen nothing of it. Any other failure may
// follow a request the server processed, and is the caller's to settle.
func commitRetryPolicy(ctx context.Context, resp *http.Response, err error) (bool, error) {
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	return err != nil && isDialError(err), nil
}

func isDialError(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// redact removes the token from text that may quote it (a server's error
// message, a body).
func (c *client) redact(s string) string {
	if c.token != "" {
		s = strings.ReplaceAll(s, c.token, "[REDACTED]")
	}
	return s
}

// request is one call's outcome.
type request struct {
	method, path string
	query        url.Values
	body         []byte
	commit       bool
}

// do sends r and returns the status and body of the answer. A transport
// error (after the retries) is returned as is, redacted.
func (c *client) do(ctx context.Context, r request) (int, []byte, error) {
	u := c.base + r.path
	if len(r.query) > 0 {
		u += "?" + r.query.Encode()
	}
	var body any
	if r.body != nil {
		body = r.body
	}
	req, err := retryablehttp.NewRequestWithContext(ctx, r.method, u, body)
	if err != nil {
		return 0, nil, fmt.Errorf("%s %s: %s", r.method, r.path, c.redact(err.Error()))
	}
	req.Header.Set("Accept", "application/json")
	if r.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range c.headers {
		req.Header.Set(k, v)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	hc := c.reads
	if r.commit {
		hc = c.commits
	}
	start := time.Now()
	resp, err := hc.Do(req)
	if err != nil {
		slog.Debug("rest request failed", "method", r.method, "path", r.path, "elapsed", time.Since(start), "err", c.redact(err.Error()))
		return 0, nil, &transportError{method: r.method, path: r.path, msg: c.redact(err.Error()), err: err}
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return resp.StatusCode, nil, &transportError{method: r.method, path: r.path, msg: "read answer: " + c.redact(err.Error()), err: err}
	}
	if len(data) > maxBody {
		return resp.StatusCode, nil, fmt.Errorf("%s %s: answer larger than %d bytes", r.method, r.path, maxBody)
	}
	slog.Debug("rest request", "method", r.method, "path", r.path, "status", resp.StatusCode, "elapsed", time.Since(start))
	return resp.StatusCode, data, nil
}

// transportError is a request that got no answer. Its message is
// redacted; Unwrap keeps context errors visible (errors.Is(err,
// context.Canceled)) without exposing the original text.
type transportError struct {
	method, path, msg string
	err               error
}

func (e *transportError) Error() string { return e.msg }

func (e *transportError) Unwrap() error {
	switch {
	case errors.Is(e.err, context.Canceled):
		return context.Canceled
	case errors.Is(e.err, context.DeadlineExceeded):
		return context.DeadlineExceeded
	}
	return nil
}

// statusError turns a non-2xx answer into an httpError.
func (c *client) statusError(r request, status int, body []byte) error {
	e := &httpError{Method: r.method, Path: r.path, Status: status}
	var er errorResponse
	if json.Unmarshal(body, &er) == nil && er.Message != "" {
		e.Message = c.redact(er.Message)
	} else if s := strings.TrimSpace(string(body)); s != "" {
		if len(s) > 200 {
			s = s[:200] + "..."
		}
		e.Message = c.redact(s)
	}
	return e
}

// getJSON GETs path into out; a non-200 answer is an *httpError.
func (c *client) getJSON(ctx context.Context, path string, query url.Values, out any) error {
	r := request{method: http.MethodGet, path: path, query: query}
	status, body, err := c.do(ctx, r)
	if err != nil {
		return err
	}
	if status != http.StatusOK {
		return c.statusError(r, status, body)
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("GET %s: decode answer: %w", path, err)
	}
	return nil
}

// segment encodes one path element as Java's RESTUtil.encodeString does
// (form encoding, which the server's URL decoding reverses).
func segment(s string) string { return url.QueryEscape(s) }

// isStatus reports whether err is an HTTP answer with that status.
func isStatus(err error, status int) bool {
	var he *httpError
	return errors.As(err, &he) && he.Status == status
}

// bodyJSON marshals v (never fails for the request types here).
func bodyJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}
