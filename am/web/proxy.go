package web

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
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
//   - Who may reach a path is the framework's to say (framework.Proxy.Access), asked of the path as
//     it is forwarded: the decoded path below the prefix, cleaned (framework.CleanPath), so that no
//     spelling reaches a path its rule did not see. An anonymous reader of the AM's page (the plain
//     port, the RM's web proxy, HTTPS without the secret) may GET and HEAD the paths the framework
//     declares Public, without a body. Every other path and method needs the application secret
//     over HTTPS, as every write to the AM (403 on the plain port, 401 without the secret), so a path
//     the framework does not name is closed. A Withheld path is forwarded to no one (403), and an
//     OwnerLog's answer is redacted of the secrets the AM knows before the owner gets it.
//   - Budget: an anonymous exchange holds a slot of its own (DefaultMaxProxied in total,
//     DefaultMaxProxiedPerClient per address; 503 beyond), and its connection may be closed to make
//     room for a new one (conns.go); every write of the answer must be taken within
//     exchangeWriteTimeout (conns.go); the owner's body is bounded (DefaultProxyMaxBody) and read
//     within bodyReadTimeout; the whole exchange lasts at most proxyTimeout. Before, an exchange
//     whose reader took nothing stayed served for good, and 64 of them from a node locked its
//     launchers out (TestProxiedExchangesAreBounded, TestHeldProxyExchangeMakesRoomForALauncher).
//   - The secret and the reader's cookies are never forwarded, the request goes to the framework's
//     address only (the path below the prefix is appended to it; nothing in the request names a
//     host).

// DefaultProxyMaxBody bounds a forwarded request's body when the framework names no bound: 100 MiB, a
// jar upload's size in Flink's own default (rest.server.max-content-length).
const DefaultProxyMaxBody = 100 << 20

// Bounds on anonymous proxied exchanges at once, both ports together. Flink's dashboard asks a few
// paths at a time per browser, and every browser on the tracking URL comes through the RM's web proxy,
// one address; 32 of them and 16 event streams leave an address's 64 connections room
// (defaultMaxConnsPerClient).
const (
	DefaultMaxProxied          = 128
	DefaultMaxProxiedPerClient = 32
)

// proxyTimeout bounds one forwarded exchange, the answer's body included.
const proxyTimeout = 5 * time.Minute

// proxyCSP is the policy that replaces the AM page's for a framework's pages, from what the framework
// declares (framework.Proxy): scripts, styles, images, fonts and requests from the same origin only;
// the inline event handlers it names, each by its hash ('unsafe-hashes' lets a hash allow a handler
// attribute, no other inline script); inline styles only when it says its pages set them. A
// framework that declares nothing gets no inline script or style at all.
func proxyCSP(p *framework.Proxy) string {
	script := "script-src 'self'"
	if len(p.InlineHandlers) > 0 {
		script += " 'unsafe-hashes'"
		for _, h := range p.InlineHandlers {
			sum := sha256.Sum256([]byte(h))
			script += " 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
		}
	}
	style := "style-src 'self'"
	if p.InlineStyles {
		style += " 'unsafe-inline'"
	}
	return "default-src 'self'; " + script + "; " + style + "; img-src 'self' data:; font-src 'self' data:; connect-src 'self'; frame-ancestors 'self'"
}

// ProxyPrefix is where a framework's proxy is served: /<Path>/.
func ProxyPrefix(p *framework.Proxy) string { return "/" + strings.Trim(p.Path, "/") + "/" }

// newProxyLimiter allows max anonymous proxied exchanges at once, perClient of them from one address.
func newProxyLimiter(max, perClient int) *slotLimiter {
	return newSlotLimiter(max, perClient, func(total bool, max int, client string) string {
		if total {
			return fmt.Sprintf("the AM forwards at most %d anonymous requests to the framework's pages at once; retry later", max)
		}
		return fmt.Sprintf("the AM forwards at most %d anonymous requests to the framework's pages at once from one address, %s; retry later", max, client)
	})
}

// proxyHandler forwards requests under ProxyPrefix(p) to p.Target by the rules above.
func (h *api) proxyHandler(p *framework.Proxy) http.Handler {
	prefix := strings.TrimSuffix(ProxyPrefix(p), "/")
	maxBody := p.MaxBody
	if maxBody <= 0 {
		maxBody = DefaultProxyMaxBody
	}
	// forwarded is r's path as the framework gets it, and who may reach it.
	forwarded := func(r *http.Request) (string, framework.Access) {
		fwd := framework.CleanPath(strings.TrimPrefix(r.URL.Path, prefix))
		if p.Access == nil {
			return fwd, framework.Access{Level: framework.OwnerOnly}
		}
		return fwd, p.Access(fwd)
	}
	red := redactor(h.o.Secret, h.o.Redact)
	csp := proxyCSP(p)
	target := *p.Target
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			fwd, acc := forwarded(pr.In)
			pr.Out.URL.Scheme, pr.Out.URL.Host, pr.Out.Host = target.Scheme, target.Host, target.Host
			pr.Out.URL.Path, pr.Out.URL.RawPath = fwd, ""
			pr.Out.Header.Del("Authorization")
			pr.Out.Header.Del("Cookie")
			if acc.Level == framework.OwnerLog {
				// The AM redacts what it can read, whole: no encoding, no range that could cut a
				// secret in two.
				pr.Out.Header.Set("Accept-Encoding", "identity")
				pr.Out.Header.Del("Range")
			}
		},
		Transport: p.Transport,
		ModifyResponse: func(resp *http.Response) error {
			// The AM's own headers stand (the proxyCSP, set before); the framework's must not add to them.
			for _, k := range []string{"Content-Security-Policy", "X-Frame-Options", "Set-Cookie", "Access-Control-Allow-Origin"} {
				resp.Header.Del(k)
			}
			if loc := resp.Header.Get("Location"); strings.HasPrefix(loc, "/") {
				resp.Header.Set("Location", prefix+loc)
			}
			if _, acc := forwarded(resp.Request); acc.Level == framework.OwnerLog {
				if enc := resp.Header.Get("Content-Encoding"); enc != "" && !strings.EqualFold(enc, "identity") {
					return fmt.Errorf("the log came encoded (%.40s), which the AM cannot redact", enc)
				}
				resp.Body = newRedactingReader(resp.Body, red)
				resp.ContentLength = -1
				resp.Header.Del("Content-Length")
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
		fwd, acc := forwarded(r)
		read := r.Method == http.MethodGet || r.Method == http.MethodHead
		switch {
		case acc.Level == framework.Withheld:
			writeError(w, http.StatusForbidden, fmt.Sprintf("%s: %.200s is not served through the AM: %s", p.Name, fwd, acc.Why))
			return
		case acc.Level == framework.Public && read && !h.full(r):
			if r.ContentLength != 0 {
				w.Header().Set("Connection", "close") // what is left of the body is not read
				writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("%s: a %s of the framework's page takes no body", p.Name, r.Method))
				return
			}
			release, err := h.o.Proxied.acquire(clientAddr(r))
			if err != nil {
				w.Header().Set("Retry-After", "10")
				w.Header().Set("Connection", "close")
				writeError(w, http.StatusServiceUnavailable, fmt.Sprintf("%s: %v", p.Name, err))
				return
			}
			defer release()
			defer yieldable(r)()
			r.Body = http.NoBody
		default:
			if (acc.Level != framework.Public || !read) && !h.owner(w, r, p.Name, fwd) {
				return
			}
			_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(bodyReadTimeout))
			r.Body = http.MaxBytesReader(w, r.Body, maxBody)
		}
		ctx, cancel := context.WithTimeout(r.Context(), proxyTimeout)
		defer cancel()
		w.Header().Set("Content-Security-Policy", csp)
		rp.ServeHTTP(w, r.WithContext(ctx))
	})
}

// owner says r comes from the application's owner (the secret over HTTPS), else answers 403 on the
// plain port and 401 without the secret, naming what the owner would send.
func (h *api) owner(w http.ResponseWriter, r *http.Request, name, fwd string) bool {
	if !h.o.Secure {
		msg := fmt.Sprintf("%s: %s %.200s is the application owner's (readers of the page get what the framework's dashboard draws): it takes the application secret, over HTTPS only", name, r.Method, fwd)
		if h.o.SecureAPI != "" {
			msg += ": " + strings.TrimSuffix(h.o.SecureAPI, "api/v1/") + strings.TrimPrefix(r.URL.Path, "/")
		}
		writeError(w, http.StatusForbidden, msg)
		return false
	}
	if !authorized(r, h.o.Secret) {
		writeError(w, http.StatusUnauthorized, fmt.Sprintf("%s: %s %.200s is the application owner's and needs the header 'Authorization: Bearer <application secret>' (yarn-am sends it)", name, r.Method, fwd))
		return false
	}
	return true
}

// redactWindow is how much of a log the redacting reader keeps back until it has read on: more than
// the longest form of a secret the redactor knows (the application secret is 64 hex characters, 88
// in base64), so a secret split between two reads is still found.
const redactWindow = 4 << 10

// redactingReader is a log as it reaches the owner: red applied to it as it streams.
type redactingReader struct {
	src  io.ReadCloser
	red  func(string) string
	buf  []byte
	out  []byte // redacted, ready to be read
	tail string // redacted, kept back until more is read
	done bool
	err  error
}

func newRedactingReader(src io.ReadCloser, red func(string) string) *redactingReader {
	return &redactingReader{src: src, red: red, buf: make([]byte, 32<<10)}
}

func (r *redactingReader) Read(p []byte) (int, error) {
	for len(r.out) == 0 {
		if r.done {
			return 0, r.err
		}
		n, err := r.src.Read(r.buf)
		s := r.red(r.tail + string(r.buf[:n]))
		if err != nil {
			r.out, r.tail, r.done, r.err = []byte(s), "", true, err
			continue
		}
		if len(s) > redactWindow {
			r.out, r.tail = []byte(s[:len(s)-redactWindow]), s[len(s)-redactWindow:]
		} else {
			r.tail = s
		}
	}
	n := copy(p, r.out)
	r.out = r.out[n:]
	return n, nil
}

func (r *redactingReader) Close() error { return r.src.Close() }
