package web

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/framework"
	"github.com/yarn-am/yarn-am/internal/stderrtail"
)

// This file is the AM's HTTP API (docs/running.md#http-api). The AM has two listeners: the plain
// tracking URL (also through the RM's web proxy) serves the reads, which hold nothing secret; the HTTPS
// one serves everything, and only it takes the application's secret as "Authorization: Bearer
// <secret>" (writes, the launcher's reports, tokens). The launchers' endpoints are in launcher.go, the
// event stream in sse.go, the status page in ui.go; Handler puts them and /metrics on one mux per
// listener.

// Options configure one listener's HTTP API.
type Options struct {
	// Secret is the application secret; writes, reports and tokens need it as "Authorization: Bearer
	// <secret>".
	Secret string
	// Secure says this listener is the HTTPS one. The plain listener (the tracking URL, also behind
	// the RM's proxy) serves only what holds no secret and answers 403 to everything that needs the
	// secret, naming SecureAPI: a client must not send the secret where a sniffer can read it
	// (docs/design.md#security).
	Secure bool
	// SecureAPI is the HTTPS API's address, https://host:port/api/v1/, shown in /api/v1/status and in
	// the plain listener's 403s.
	SecureAPI string
	// Tokens serves GET /api/v1/tokens on the HTTPS listener (nil: the AM does not refresh tokens).
	Tokens Tokens
	// Streams bounds concurrent event streams; share one between listeners. nil: a limiter with the
	// default bounds, for this handler alone.
	Streams *slotLimiter
	// Redact replaces, besides the secret, what else a report must not carry (delegation token
	// passwords); nil: the secret only.
	Redact *stderrtail.Redactor
	// Links are the job's framework's pages (a Flink job's web UI), shown in the status
	// (contract.Status.Links; framework.AM.Links).
	Links []contract.Link
	// Framework is what the job's framework says of its work, served in the status
	// (contract.Status.Framework; framework.AM.Details); nil: nothing.
	Framework func() *contract.FrameworkStatus
	// Stop stops the application through its framework (POST /api/v1/stop, stop.go;
	// framework.AM.OnStop); nil: the framework cannot, and the endpoint says to kill instead.
	Stop func(ctx context.Context, r framework.StateRequest) (framework.Kept, error)
	// KeepState keeps the work's state without stopping it (POST /api/v1/savepoint, keepstate.go;
	// framework.AM.OnKeepState); nil: the framework keeps none on demand, and the endpoint says so.
	KeepState func(ctx context.Context, r framework.StateRequest) (framework.Kept, error)
	// Proxy is the job's framework's web UI and API, served under ProxyPrefix (proxy.go;
	// framework.AM.Proxy); nil: none.
	Proxy *framework.Proxy
	// Proxied bounds concurrent anonymous proxied exchanges; share one between listeners. nil: a
	// limiter with the default bounds, for this handler alone.
	Proxied *slotLimiter
	// Published is what the job's framework published for its TaskExecutors so far
	// (framework.AMStart.Publish), served with the secret over HTTPS only (published.go); nil: none.
	Published func() map[string]string
}

// api is one listener's handlers.
type api struct {
	b       Backend
	o       Options
	reports *reportCounter
}

// Handler returns the HTTP API of one listener.
func Handler(b Backend, o Options) http.Handler {
	if o.Streams == nil {
		o.Streams = newStreamLimiter(DefaultMaxEventStreams, DefaultMaxEventStreamsPerClient)
	}
	// The secret in every encoding a report could quote it in, beside o.Redact's tokens
	// (TestReportsAreRedactedInsideLongerEncodings).
	o.Redact = o.Redact.With("application secret", []byte(o.Secret))
	if o.Proxied == nil {
		o.Proxied = newProxyLimiter(DefaultMaxProxied, DefaultMaxProxiedPerClient)
	}
	h := &api{b: b, o: o, reports: newReportCounter(b.State)}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v1/status", h.status)
	mux.HandleFunc("GET /api/v1/containers", h.containers)
	mux.HandleFunc("GET /api/v1/requirements", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, b.State.Requirement())
	})
	mux.HandleFunc("PUT /api/v1/requirements", h.setRequirements)
	mux.HandleFunc("POST /api/v1/stop", h.stop)
	mux.HandleFunc("POST /api/v1/savepoint", h.keepState)
	h.launcherRoutes(mux) // launcher.go
	mux.HandleFunc("GET "+contract.FrameworkPublishedPath, h.published)
	mux.Handle("GET /api/v1/events", limitedEventsHandler(b.Events, 0, o.Streams, h.full))
	mux.Handle("GET /metrics", b.Metrics)
	if o.Proxy != nil && o.Proxy.Target != nil {
		mux.Handle(ProxyPrefix(o.Proxy), h.proxyHandler(o.Proxy))
	}
	ui := UIHandler()
	mux.Handle("GET /{$}", ui)
	mux.Handle("GET /ui/", ui)
	return securityHeaders(mux)
}

// full says the reader sees everything: it sent the secret over HTTPS (visibility.go).
func (h *api) full(r *http.Request) bool {
	return h.o.Secure && authorized(r, h.o.Secret)
}

// needsSecret guards every endpoint that takes the secret: 403 on the plain listener whatever the
// header says, 401 on HTTPS without the exact "Bearer <secret>".
func (h *api) needsSecret(w http.ResponseWriter, r *http.Request) bool {
	if !h.o.Secure {
		msg := "this endpoint takes the application secret and is served over HTTPS only"
		if h.o.SecureAPI != "" {
			msg += ": " + h.o.SecureAPI + strings.TrimPrefix(r.URL.Path, "/api/v1/")
		}
		writeError(w, http.StatusForbidden, msg)
		return false
	}
	if !authorized(r, h.o.Secret) {
		writeError(w, http.StatusUnauthorized, "this endpoint needs the header 'Authorization: Bearer <application secret>'")
		return false
	}
	return true
}

func (h *api) status(w http.ResponseWriter, r *http.Request) {
	h.b.State.WantNodes() // the web UI's GPU map; only while someone reads
	s := h.b.State.Status()
	s.SecureAPI = h.o.SecureAPI
	s.Links = h.o.Links
	if h.o.Framework != nil {
		s.Framework = h.o.Framework()
	}
	if !h.full(r) {
		s = anonymousStatus(s) // visibility.go
	}
	writeJSON(w, http.StatusOK, s)
}

func (h *api) containers(w http.ResponseWriter, r *http.Request) {
	s := h.b.State.Status()
	if !h.full(r) {
		s = anonymousStatus(s)
	}
	writeJSON(w, http.StatusOK, s.Containers)
}

func (h *api) setRequirements(w http.ResponseWriter, r *http.Request) {
	if !h.needsSecret(w, r) {
		return
	}
	var u contract.RequirementsUpdate
	if err := decodeBody(w, r, contract.MaxRequestBytes, &u); err != nil {
		writeError(w, bodyErrorCode(err), `the body is not a requirement ({"instances": 2}): `+err.Error())
		return
	}
	if err := u.Validate(); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	req, err := h.b.State.SetRequirements(*u.Instances, "PUT /api/v1/requirements from "+r.RemoteAddr)
	if err != nil {
		writeError(w, http.StatusConflict, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, req)
}

// securityHeaders puts the browser-facing safety headers on every response, pages and JSON alike:
// no MIME sniffing, a content security policy that allows only the AM's own origin (the UI loads
// nothing else), and no framing by other sites (TestSecurityHeadersOnEveryResponse).
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("X-Frame-Options", "SAMEORIGIN")
		next.ServeHTTP(w, r)
	})
}

// contentSecurityPolicy is the policy securityHeaders sends.
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'self'"

// bodyReadTimeout bounds the read of a request's body (every one, conns.go's serving): a client trickling it
// does not hold a connection open for long (a variable for tests).
var bodyReadTimeout = 30 * time.Second

// decodeBody reads at most limit bytes of JSON into v within bodyReadTimeout; a longer body is an
// error that bodyErrorCode maps to 413.
func decodeBody(w http.ResponseWriter, r *http.Request, limit int64, v any) error {
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(bodyReadTimeout))
	return json.NewDecoder(http.MaxBytesReader(w, r.Body, limit)).Decode(v)
}

func bodyErrorCode(err error) int {
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return http.StatusRequestEntityTooLarge
	}
	return http.StatusBadRequest
}

// redactReport replaces the application secret, and what more, wherever a report carries it (a
// failure message or the worker's stderr tail quoting its environment, say) before the AM stores it:
// reports become events, the status and log lines (TestReportCarryingTheSecretIsRedacted,
// TestWorkerStderrIsRedactedBeforeItIsStored).
func redactReport(r contract.ContainerReport, secret string, more *stderrtail.Redactor) contract.ContainerReport {
	red := redactor(secret, more)
	r.Failure, r.FailedResource, r.WorkerStderr = red(r.Failure), red(r.FailedResource), red(r.WorkerStderr)
	if r.Infos != nil {
		infos := make(map[string][]contract.Info, len(r.Infos))
		for name, list := range r.Infos {
			out := make([]contract.Info, 0, len(list))
			for _, in := range list {
				c := contract.Info{}
				for k, v := range in {
					c[red(k)] = red(v)
				}
				out = append(out, c)
			}
			infos[red(name)] = out
		}
		r.Infos = infos
	}
	return r
}

// redactor replaces the application secret, and what more replaces, in a text (a report, a
// framework's log, proxy.go).
func redactor(secret string, more *stderrtail.Redactor) func(string) string {
	return func(s string) string {
		if secret != "" {
			s = strings.ReplaceAll(s, secret, "[application secret]")
		}
		return more.Redact(s)
	}
}

// reportCounter caps the reports per container (contract.MaxReportsPerContainer): one secret is
// shared by every TaskExecutor, so the AM cannot tell which container sent a report, but it can stop
// any one container id from being reported on without end. It forgets containers the AM no longer
// keeps, so it holds at most a few entries per listed container. It asks the state which while its
// own mutex is held: the lock order reportCounter.mu → AM.mu (am/doc.go).
type reportCounter struct {
	state State
	mu    sync.Mutex
	n     map[string]int
}

func newReportCounter(s State) *reportCounter { return &reportCounter{state: s, n: map[string]int{}} }

func (c *reportCounter) take(id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n[id] >= contract.MaxReportsPerContainer {
		return false
	}
	c.n[id]++
	if len(c.n) > 4096 {
		for _, k := range c.state.Unknown(slices.Collect(maps.Keys(c.n))) {
			delete(c.n, k)
		}
	}
	return true
}

// authorized checks the bearer secret in constant time.
func authorized(r *http.Request, secret string) bool {
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || secret == "" {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(got), []byte(secret)) == 1
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, map[string]string{"error": msg})
}
