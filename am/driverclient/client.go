package driverclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/contract/amtls"
)

// Client talks to one ApplicationMaster's driver API.
type Client struct {
	base   *url.URL // ends in /api/v1/
	secret string
	// HTTP is used for every request; its Timeout must be 0 for event streams (each non-streaming
	// call has its own deadline, CallTimeout).
	HTTP *http.Client
	// CallTimeout bounds each non-streaming call (default 30s).
	CallTimeout time.Duration
	// pinned: Trust installed an HTTP client that trusts the application's authority alone; the
	// secret is sent through no other (TestClientSendsTheSecretOnlyToThePinnedAM).
	pinned bool
}

// New returns a client for the API at api (https://host:port/api/v1/, as in YARN_AM_API; the plain
// tracking URL http://host:port/api/v1/ serves reads only). secret is the application secret
// (YARN_AM_SECRET); reads work without it, writes need it, an https:// api and Trust with the
// application's TLS authority (ErrNotPinned otherwise). Reads carry it only there too, and then see
// what the AM shows its owner alone (authorize). Call Trust before talking to an https:// api.
func New(api, secret string) (*Client, error) {
	u, err := url.Parse(api)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%s=%q: want the AM's API URL, like http://host:port/api/v1/", contract.EnvAPI, api)
	}
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
	}
	if !strings.HasSuffix(u.Path, "/api/v1/") {
		u.Path += "api/v1/"
	}
	return &Client{base: u, secret: secret, HTTP: &http.Client{}, CallTimeout: 30 * time.Second}, nil
}

// FromEnv returns a client configured from YARN_AM_API, YARN_AM_SECRET and YARN_AM_CA_CERT (set by
// the AM for its driver program).
func FromEnv() (*Client, error) {
	api := os.Getenv(contract.EnvAPI)
	if api == "" {
		return nil, fmt.Errorf("%s is not set: the driver API address is given to drivers run with 'yarn-am submit --driver'", contract.EnvAPI)
	}
	c, err := New(api, os.Getenv(contract.EnvSecret))
	if err != nil {
		return nil, err
	}
	if f := os.Getenv(contract.EnvCACert); f != "" {
		pem, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("%s=%s: %w", contract.EnvCACert, f, err)
		}
		if err := c.Trust(pem); err != nil {
			return nil, fmt.Errorf("%s=%s: %w", contract.EnvCACert, f, err)
		}
	}
	return c, nil
}

// Trust makes the client trust the application's TLS authority (PEM) and nothing else: the AM's
// HTTPS API presents a certificate it issued (YARN_AM_CA_CERT). It replaces HTTP.
func (c *Client) Trust(caPEM []byte) error {
	hc, err := amtls.HTTPClient(caPEM, 0) // no overall timeout: event streams last; calls have CallTimeout
	if err != nil {
		return err
	}
	c.HTTP = hc
	c.pinned = true
	return nil
}

// authorize sends the secret with req only where it is safe: over HTTPS to the AM whose certificate
// the application's authority issued (Trust). A read elsewhere goes without it and gets what anonymous
// readers see; with it the AM shows its owner the failed workers' and the driver's stderr tails
// (docs/security.md#what-anonymous-readers-see; TestReadsCarryTheSecretOnlyToThePinnedAM).
func (c *Client) authorize(req *http.Request) {
	if c.secret != "" && c.pinned && c.base.Scheme == "https" && req.URL.Scheme == "https" {
		req.Header.Set("Authorization", "Bearer "+c.secret)
	}
}

// ErrNotPinned: a write (which carries the secret) on a client that Trust did not pin to the
// application's TLS authority. Without the pin any server the system trusts could present itself as
// the AM and receive the secret.
var ErrNotPinned = errors.New("driverclient: the secret goes only to the AM's own TLS authority: call Trust with the application's CA certificate (" + contract.EnvCACert + ") first")

// APIError is a non-2xx answer of the AM.
type APIError struct {
	Method, URL string
	StatusCode  int
	Message     string // the AM's "error" field, or the body
}

func (e *APIError) Error() string {
	return fmt.Sprintf("%s %s: HTTP %d: %s", e.Method, e.URL, e.StatusCode, e.Message)
}

func (c *Client) url(path string) string {
	ref, err := url.Parse(path) // path may carry a query
	if err != nil {
		ref = &url.URL{Path: path}
	}
	return c.base.ResolveReference(ref).String()
}

func (c *Client) do(ctx context.Context, method, path string, body, out any) error {
	_, err := c.doRaw(ctx, method, path, body, out)
	return err
}

// doRaw is do that also returns the answer as the AM sent it.
func (c *Client) doRaw(ctx context.Context, method, path string, body, out any) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, c.CallTimeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.url(path), rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if method != http.MethodGet && c.secret != "" {
		// The secret goes over HTTPS only (docs/design.md#security); the AM's plain port refuses
		// writes anyway, but by then the secret would have crossed the wire in the clear.
		if err := amtls.RequireHTTPS(c.base.String(), contract.EnvAPI); err != nil {
			return nil, err
		}
		if !c.pinned {
			return nil, ErrNotPinned
		}
	}
	c.authorize(req)
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		return nil, apiError(method, req.URL.String(), resp, data)
	}
	if out == nil || len(data) == 0 {
		return data, nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return nil, fmt.Errorf("%s %s: the answer is not the expected JSON: %w", method, req.URL, err)
	}
	return data, nil
}

// apiError is the AM's "error" field, else its body, else the reason phrase (a proxy or another
// server in the AM's place may answer with no body).
func apiError(method, u string, resp *http.Response, data []byte) *APIError {
	var e struct {
		Error string `json:"error"`
	}
	msg := strings.TrimSpace(string(data))
	if json.Unmarshal(data, &e) == nil && e.Error != "" {
		msg = e.Error
	}
	if msg == "" {
		msg = strings.TrimSpace(strings.TrimPrefix(resp.Status, strconv.Itoa(resp.StatusCode)))
	}
	return &APIError{Method: method, URL: u, StatusCode: resp.StatusCode, Message: msg}
}

// Status returns the application's status (state, requirement, counts, containers).
func (c *Client) Status(ctx context.Context) (contract.Status, error) {
	var s contract.Status
	err := c.do(ctx, http.MethodGet, "status", nil, &s)
	return s, err
}

// StatusDocument is Status with the document as the AM sent it, for printing it unchanged (yarn-am
// status --json keeps the fields this client does not know).
func (c *Client) StatusDocument(ctx context.Context) (contract.Status, json.RawMessage, error) {
	var s contract.Status
	raw, err := c.doRaw(ctx, http.MethodGet, "status", nil, &s)
	if err != nil {
		return contract.Status{}, nil, err
	}
	return s, raw, nil
}

// Containers returns the TaskExecutor containers with their resource infos (GPU indexes).
func (c *Client) Containers(ctx context.Context) ([]contract.ContainerStatus, error) {
	var cs []contract.ContainerStatus
	err := c.do(ctx, http.MethodGet, "containers", nil, &cs)
	return cs, err
}

// SetRequirements declares the number of TaskExecutors wanted; the AM asks for more, or cancels
// pending asks and then stops the newest TaskExecutors. It returns the requirement now in force.
func (c *Client) SetRequirements(ctx context.Context, instances int) (contract.Requirement, error) {
	var r contract.Requirement
	err := c.do(ctx, http.MethodPut, "requirements", contract.RequirementsUpdate{Instances: &instances}, &r)
	return r, err
}

// RecentEvents returns up to limit of the latest events (oldest first), without streaming.
func (c *Client) RecentEvents(ctx context.Context, limit int) ([]contract.Event, error) {
	var evs []contract.Event
	err := c.do(ctx, http.MethodGet, fmt.Sprintf("events?format=json&limit=%d", limit), nil, &evs)
	return evs, err
}

// EventsSince returns the events after id (at most limit if > 0), without streaming.
func (c *Client) EventsSince(ctx context.Context, after uint64, limit int) ([]contract.Event, error) {
	var evs []contract.Event
	err := c.do(ctx, http.MethodGet, fmt.Sprintf("events?format=json&since=%d&limit=%d", after, limit), nil, &evs)
	return evs, err
}

// ErrStreamClosed is returned by Stream.Next after Close.
var ErrStreamClosed = errors.New("driverclient: event stream closed")
