package am

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/yarn-am/yarn-am/container/contract"
)

// This file is the AM's HTTP API (docs/running.md#http-api). The AM has two listeners: the plain
// tracking URL (also through the RM's web proxy) serves the reads, which hold nothing secret; the HTTPS
// one (tls.go) serves everything, and only it takes the application's secret as "Authorization: Bearer
// <secret>" (writes, the launcher's reports, tokens). The event stream is in sse.go, the status page in
// ui.go, /metrics in metrics.go; API puts them on one mux per listener.

// Status returns a snapshot of the AM's state.
func (a *AM) Status() contract.Status {
	evs := a.events.Latest(contract.StatusEvents)
	a.mu.Lock()
	defer a.mu.Unlock()
	s := contract.Status{App: a.cfg.App, State: a.state, Diagnostics: a.diagnostics, Requirement: a.requirementLocked(),
		Containers: []contract.ContainerStatus{}, Events: evs}
	s.ExcludedNodes, s.Exclusions = a.exclusionsLocked()
	if s.Diagnostics == "" && a.policyOut != nil {
		s.Diagnostics = a.policyOut.Diagnostics
	}
	s.Now, s.Started = a.cfg.Now(), a.started
	s.Gang = a.gangStatusLocked()
	s.Nodes, s.NodesAt = a.nodes.nodes, a.nodes.at
	s.Asks, s.Counts.Requested = a.asks.Status()
	a.rec.compact()
	s.Counts.Completed, s.Counts.Failed = a.rec.completedN, a.rec.failedN
	s.FinishedNotListed = a.rec.completedN - len(a.rec.finished)
	for _, t := range a.rec.seq {
		cs := contract.ContainerStatus{ID: t.ID, Node: t.Node, State: t.Phase, Resources: t.Resources, Infos: t.infos, Rank: t.rank,
			RequestedAt: t.requestedAt, AllocatedAt: t.allocatedAt, LaunchedAt: t.launchedAt, FinishedAt: t.finishedAt}
		switch t.Phase {
		case contract.Launching:
			s.Counts.Allocated++
		case contract.Running:
			s.Counts.Running++
		case contract.Stopping:
			s.Counts.Stopping++
		case contract.Completed:
			st := t.Exit.Status
			cs.ExitStatus, cs.ExitClass, cs.Diagnostics = &st, t.Exit.Class, t.Exit.Diagnostics
		}
		if cs.Diagnostics == "" && t.reportFailure != "" {
			cs.Diagnostics = t.reportFailure
		}
		cs.StderrTail = t.Exit.StderrTail
		if t.notice != nil {
			cs.PreemptionDeadline = t.notice.Deadline
		}
		s.Containers = append(s.Containers, cs)
	}
	return s
}

// Errors of Report.
var (
	errReportUnknown    = errors.New("not a TaskExecutor of this application")
	errReportNotRunning = errors.New("not running")
)

// Report records a launcher's report: errReportUnknown if the container is not one of this AM's,
// errReportNotRunning if it is not launching or running (a finished, stopping or held container's
// launcher has nothing to report, and accepting its reports would let a holder of the secret grow the
// AM's memory through containers that are gone; docs/security.md#flood-bounds).
func (a *AM) Report(id string, r contract.ContainerReport) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	t := a.rec.get(id)
	if t == nil {
		return errReportUnknown
	}
	if t.Phase != contract.Running && t.Phase != contract.Launching {
		return fmt.Errorf("%w: %s is %s", errReportNotRunning, id, t.Phase)
	}
	a.emitAll(a.rec.reported(t, r))
	if r.WorkerExit() {
		return nil // the worker's exit (diagnostics.go): no infos, nothing to check or assign
	}
	log := a.log.WithFields(logrus.Fields{"container": id, "node": t.Node})
	if r.Failure != "" {
		log.WithField("resource", r.FailedResource).Warn("am: launcher reports " + t.reportFailure)
	}
	for name, infos := range r.Infos {
		log.WithFields(logrus.Fields{"resource": name, "infos": infos}).Info("am: resource infos reported")
	}
	if !a.checkSharedGPUsLocked(t) {
		a.assignRanksLocked()
	}
	return nil
}

// APIOptions configure one listener's HTTP API.
type APIOptions struct {
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
	Tokens *TokenRefresher
	// Streams bounds concurrent event streams; share one between listeners. nil: a limiter with the
	// default bounds, for this handler alone.
	Streams *streamLimiter
	// FlinkUI is a Flink job's JobManager web UI, shown in the status (contract.Status.FlinkUI).
	FlinkUI string
}

// Handler returns the whole API as served on HTTPS, with secret authorising writes (tests and
// in-process use).
func (a *AM) Handler(secret string) http.Handler {
	return a.API(APIOptions{Secret: secret, Secure: true})
}

// API returns the HTTP API of one listener.
func (a *AM) API(o APIOptions) http.Handler {
	if o.Streams == nil {
		o.Streams = newStreamLimiter(DefaultMaxEventStreams, DefaultMaxEventStreamsPerClient)
	}
	// needsSecret guards every endpoint that takes the secret: 403 on the plain listener whatever the
	// header says, 401 on HTTPS without the exact "Bearer <secret>".
	needsSecret := func(w http.ResponseWriter, r *http.Request) bool {
		if !o.Secure {
			msg := "this endpoint takes the application secret and is served over HTTPS only"
			if o.SecureAPI != "" {
				msg += ": " + o.SecureAPI + strings.TrimPrefix(r.URL.Path, "/api/v1/")
			}
			writeError(w, http.StatusForbidden, msg)
			return false
		}
		if !authorized(r, o.Secret) {
			writeError(w, http.StatusUnauthorized, "this endpoint needs the header 'Authorization: Bearer <application secret>'")
			return false
		}
		return true
	}
	reports := newReportCounter(a)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v1/status", func(w http.ResponseWriter, r *http.Request) {
		a.wantNodes() // the web UI's GPU map (nodes.go); only while someone reads
		s := a.Status()
		s.SecureAPI = o.SecureAPI
		s.FlinkUI = o.FlinkUI
		if !(o.Secure && authorized(r, o.Secret)) {
			s = anonymousStatus(s) // visibility.go
		}
		writeJSON(w, http.StatusOK, s)
	})
	mux.HandleFunc("POST /api/v1/containers/{id}"+contract.ReportPath, func(w http.ResponseWriter, r *http.Request) {
		if !needsSecret(w, r) {
			return
		}
		id := r.PathValue("id")
		if !reports.take(id) {
			writeError(w, http.StatusTooManyRequests, fmt.Sprintf("container %s has sent its %d reports; the AM takes no more from it", id, contract.MaxReportsPerContainer))
			return
		}
		var rep contract.ContainerReport
		if err := decodeBody(w, r, contract.MaxReportBytes, &rep); err != nil {
			writeError(w, bodyErrorCode(err), "the body is not a report ({\"infos\": {\"gpu\": [{\"index\": \"0\"}]}}): "+err.Error())
			return
		}
		if err := a.Report(id, redactReport(rep, o.Secret)); err != nil {
			code := http.StatusNotFound
			if errors.Is(err, errReportNotRunning) {
				code = http.StatusConflict
			}
			writeError(w, code, "container "+id+": "+err.Error()+"; the AM takes reports only from its launching and running TaskExecutors")
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	a.handleAlive(mux, needsSecret)
	a.handleNotices(mux, needsSecret)
	mux.HandleFunc("GET /api/v1/containers/{id}/rendezvous", func(w http.ResponseWriter, r *http.Request) {
		code, body := a.RendezvousOf(r.PathValue("id"), o.Secure && authorized(r, o.Secret))
		writeJSON(w, code, body)
	})
	mux.HandleFunc("GET /api/v1/containers", func(w http.ResponseWriter, r *http.Request) {
		s := a.Status()
		if !(o.Secure && authorized(r, o.Secret)) {
			s = anonymousStatus(s)
		}
		writeJSON(w, http.StatusOK, s.Containers)
	})
	mux.HandleFunc("GET /api/v1/requirements", func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		req := a.requirementLocked()
		a.mu.Unlock()
		writeJSON(w, http.StatusOK, req)
	})
	mux.HandleFunc("PUT /api/v1/requirements", func(w http.ResponseWriter, r *http.Request) {
		if !needsSecret(w, r) {
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
		req, err := a.SetRequirements(*u.Instances, "PUT /api/v1/requirements from "+r.RemoteAddr)
		if err != nil {
			writeError(w, http.StatusConflict, err.Error())
			return
		}
		writeJSON(w, http.StatusOK, req)
	})
	mux.HandleFunc(TokensPath, func(w http.ResponseWriter, r *http.Request) {
		if !needsSecret(w, r) {
			return
		}
		if o.Tokens == nil {
			writeError(w, http.StatusNotFound, "this AM does not refresh delegation tokens (it was given no keytab)")
			return
		}
		if r.Method != http.MethodGet {
			writeError(w, http.StatusMethodNotAllowed, "GET only")
			return
		}
		o.Tokens.serve(w)
	})
	mux.Handle("GET /api/v1/events", limitedEventsHandler(a.events, 0, o.Streams))
	mux.Handle("GET /metrics", a.metrics.Handler())
	ui := UIHandler()
	mux.Handle("GET /{$}", ui)
	mux.Handle("GET /ui/", ui)
	return securityHeaders(mux)
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

// bodyReadTimeout bounds the read of a write's body: a client trickling it does not hold a
// connection open for long.
const bodyReadTimeout = 30 * time.Second

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

// redactReport replaces the application secret wherever a report carries it (a failure message
// quoting a worker's environment, say): reports become events and log lines, which are public
// (TestReportCarryingTheSecretIsRedacted).
func redactReport(r contract.ContainerReport, secret string) contract.ContainerReport {
	if secret == "" {
		return r
	}
	red := func(s string) string { return strings.ReplaceAll(s, secret, "[application secret]") }
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

// reportCounter caps the reports per container (contract.MaxReportsPerContainer): one secret is
// shared by every TaskExecutor, so the AM cannot tell which container sent a report, but it can stop
// any one container id from being reported on without end. It forgets containers the AM no longer
// keeps, so it holds at most a few entries per listed container.
type reportCounter struct {
	a  *AM
	mu sync.Mutex
	n  map[string]int
}

func newReportCounter(a *AM) *reportCounter { return &reportCounter{a: a, n: map[string]int{}} }

func (c *reportCounter) take(id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n[id] >= contract.MaxReportsPerContainer {
		return false
	}
	c.n[id]++
	if len(c.n) > 4096 {
		c.a.mu.Lock()
		for k := range c.n {
			if c.a.rec.get(k) == nil {
				delete(c.n, k)
			}
		}
		c.a.mu.Unlock()
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
