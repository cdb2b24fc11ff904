package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httputil"
	"strings"
	"time"

	"github.com/yarn-am/yarn-am/framework"
)

// This file serves a framework's own web UI and API (framework.AM.Proxy, a Flink JobManager's) under
// the AM's tracking URL (docs/security.md#framework-uis-through-the-am). The framework's server answers
// the AM alone (a Flink JobManager's REST API asks for a client certificate of the application's
// authority), so this is the only way users reach it, with the AM's rules:
//
//   - GET and HEAD are reads, open to whoever may read the AM's page (the plain listener, the RM's
//     proxy, HTTPS without the secret): the framework's UI loads through the RM's web proxy;
//   - every other method changes the work, and so does a read the framework says acts
//     (framework.Proxy.Changes: Flink's GET /jobs/<id>/yarn-cancel) (a jar upload or run, a cancel, a savepoint, a rescale) and
//     is forwarded only over HTTPS with the application secret, as every write to the AM: 403 on the
//     plain listener, 401 without the secret (as needsSecret);
//   - the secret and the reader's cookies are never forwarded, the request goes to the framework's
//     address only (the path below the prefix is appended to it; nothing in the request names a
//     host), a write's body is bounded (DefaultProxyMaxBody) and read within bodyReadTimeout, and the
//     whole exchange within proxyTimeout.

// DefaultProxyMaxBody bounds a forwarded request's body when the framework names no bound: 100 MiB, a
// jar upload's size in Flink's own default (rest.server.max-content-length).
const DefaultProxyMaxBody = 100 << 20

// proxyTimeout bounds one forwarded exchange, the answer's body included.
const proxyTimeout = 5 * time.Minute

// proxyCSP replaces the AM page's policy for the framework's pages: their scripts and styles come from
// the same origin, and a single-page UI (Flink's) sets inline styles. The one inline script allowed,
// by its hash, is the handler Angular's critical-CSS inlining writes on the stylesheet's link
// (onload="this.media='all'"): without it the page stays unstyled (seen in Chromium on Flink 1.20's
// dashboard, TestFlinkSessionCluster's screenshot).
const proxyCSP = "default-src 'self'; script-src 'self' 'unsafe-hashes' 'sha256-MhtPZXr7+LpJUY5qtMutB+qWfQtMaPccfe7QXtCcEYc='; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'; frame-ancestors 'self'"

// ProxyPrefix is where a framework's proxy is served: /<Path>/.
func ProxyPrefix(p *framework.Proxy) string { return "/" + strings.Trim(p.Path, "/") + "/" }

// proxyHandler forwards requests under ProxyPrefix(p) to p.Target by the rules above.
func (h *api) proxyHandler(p *framework.Proxy) http.Handler {
	prefix := strings.TrimSuffix(ProxyPrefix(p), "/")
	maxBody := p.MaxBody
	if maxBody <= 0 {
		maxBody = DefaultProxyMaxBody
	}
	target := *p.Target
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL.Scheme, pr.Out.URL.Host, pr.Out.Host = target.Scheme, target.Host, target.Host
			pr.Out.URL.Path = strings.TrimPrefix(pr.In.URL.Path, prefix)
			pr.Out.URL.RawPath = ""
			if pr.Out.URL.Path == "" {
				pr.Out.URL.Path = "/"
			}
			pr.Out.Header.Del("Authorization")
			pr.Out.Header.Del("Cookie")
		},
		Transport: p.Transport,
		ModifyResponse: func(resp *http.Response) error {
			// The AM's own headers stand (proxyCSP, set before); the framework's must not add to them.
			for _, k := range []string{"Content-Security-Policy", "X-Frame-Options", "Set-Cookie", "Access-Control-Allow-Origin"} {
				resp.Header.Del(k)
			}
			if loc := resp.Header.Get("Location"); strings.HasPrefix(loc, "/") {
				resp.Header.Set("Location", prefix+loc)
			}
			return nil
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("%s: the body is larger than %d bytes, the most the AM forwards", p.Name, tooBig.Limit))
				return
			}
			var starting *framework.NotStartedError
			if errors.As(err, &starting) {
				// Not a failure of the server: it is not there yet, and a retry later finds it.
				w.Header().Set("Retry-After", "2")
				writeError(w, http.StatusServiceUnavailable, fmt.Sprintf("%s: %s", p.Name, starting.What))
				return
			}
			writeError(w, http.StatusBadGateway, fmt.Sprintf("%s: %s did not answer: %v", p.Name, r.Method, err))
		},
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead || p.Changes != nil && p.Changes(below(r, prefix)) {
			if !h.o.Secure {
				msg := fmt.Sprintf("%s: a %s changes the work and takes the application secret, over HTTPS only", p.Name, r.Method)
				if h.o.SecureAPI != "" {
					msg += ": " + strings.TrimSuffix(h.o.SecureAPI, "api/v1/") + strings.TrimPrefix(r.URL.Path, "/")
				}
				writeError(w, http.StatusForbidden, msg)
				return
			}
			if !authorized(r, h.o.Secret) {
				writeError(w, http.StatusUnauthorized, fmt.Sprintf("%s: a %s changes the work and needs the header 'Authorization: Bearer <application secret>' (yarn-am sends it)", p.Name, r.Method))
				return
			}
			_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(bodyReadTimeout))
			r.Body = http.MaxBytesReader(w, r.Body, maxBody)
		}
		ctx, cancel := context.WithTimeout(r.Context(), proxyTimeout)
		defer cancel()
		w.Header().Set("Content-Security-Policy", proxyCSP)
		rp.ServeHTTP(w, r.WithContext(ctx))
	})
}

// below is r as the framework sees it: its path below prefix (for framework.Proxy.Changes).
func below(r *http.Request, prefix string) *http.Request {
	u := *r.URL
	u.Path, u.RawPath = strings.TrimPrefix(u.Path, prefix), ""
	r2 := *r
	r2.URL = &u
	return &r2
}
