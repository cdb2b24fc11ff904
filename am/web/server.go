package web

import (
	"context"
	"crypto/tls"
	"io"
	stdlog "log"
	"net"
	"net/http"
	"time"
)

// This file is the AM's two HTTP servers; the bound on the connections they hold is in conns.go.

// Limits are the flood bounds of Serve; zero fields take the defaults.
type Limits struct {
	MaxConns, MaxConnsPerClient     int
	MaxAuthenticatedConns           int
	MaxStreams, MaxStreamsPerClient int
	// MaxProxied, MaxProxiedPerClient bound anonymous exchanges with the framework's pages (proxy.go).
	MaxProxied, MaxProxiedPerClient int
}

// Server is the AM's two HTTP servers, serving.
type Server struct {
	plain, secure *http.Server
	conns         *connLimiter
	streams       *slotLimiter
	proxied       *slotLimiter
}

// Serve serves b's API on ln (plain, the tracking URL) and tln (HTTPS with tlsConf), with one
// connection bound, one event-stream bound and one proxied-exchange bound shared by both
// (docs/security.md#flood-bounds); o.Secure, o.Streams and o.Proxied are set here.
func Serve(b Backend, o Options, lim Limits, tlsConf *tls.Config, ln, tln net.Listener) *Server {
	def := func(v, d int) int {
		if v == 0 {
			return d
		}
		return v
	}
	s := &Server{
		conns: newConnLimiter(def(lim.MaxConns, defaultMaxConns), def(lim.MaxConnsPerClient, defaultMaxConnsPerClient),
			def(lim.MaxAuthenticatedConns, defaultMaxAuthenticatedConns)),
		streams: newStreamLimiter(def(lim.MaxStreams, DefaultMaxEventStreams), def(lim.MaxStreamsPerClient, DefaultMaxEventStreamsPerClient)),
		proxied: newProxyLimiter(def(lim.MaxProxied, DefaultMaxProxied), def(lim.MaxProxiedPerClient, DefaultMaxProxiedPerClient)),
	}
	o.Streams, o.Proxied, o.Secure = s.streams, s.proxied, false
	s.plain = s.conns.server(Handler(b, o), "")
	o.Secure = true
	s.secure = s.conns.server(Handler(b, o), o.Secret)
	s.secure.TLSConfig = tlsConf
	go func() { _ = s.plain.Serve(s.conns.listener(ln)) }()
	go func() { _ = s.secure.ServeTLS(s.conns.listener(tln), "", "") }()
	return s
}

// server is newHTTPServer with h served through l's bookkeeping (conns.go); secret is the HTTPS
// server's, "" for the plain one, where no connection becomes authenticated.
func (l *connLimiter) server(h http.Handler, secret string) *http.Server {
	s := newHTTPServer(l.serving(h, secret))
	s.ConnState, s.ConnContext = l.connState, connContext
	return s
}

// Shutdown stops both servers.
func (s *Server) Shutdown(ctx context.Context) {
	_ = s.plain.Shutdown(ctx)
	_ = s.secure.Shutdown(ctx)
}

// newHTTPServer bounds what one connection may hold (docs/design.md#faults): headers must arrive
// within 10 s and fit in 64 KiB, an idle keep-alive connection is closed after 60 s. There is no
// server-wide read or write timeout, which would cut event streams; every exchange's body is read
// within bodyReadTimeout and each write taken within exchangeWriteTimeout (conns.go's serving),
// streams' writes within sseWriteTimeout.
func newHTTPServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       60 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          stdlog.New(io.Discard, "", 0), // TLS handshake noise from scanners; nothing to act on
	}
}
