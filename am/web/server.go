package web

import (
	"context"
	"crypto/tls"
	"io"
	stdlog "log"
	"net"
	"net/http"
	"sync"
	"time"
)

// This file is the AM's two HTTP servers and the bound on the connections they hold
// (docs/security.md#flood-bounds): whoever can reach the AM's ports can open connections, and
// net/http keeps each one (a goroutine and its buffers, ~30-40 KiB) until it closes or IdleTimeout
// passes; without a bound, 1,500 idle keep-alive connections from one address were all held.
// connLimiter counts the accepted connections of both listeners together, in total and per remote
// address, and closes one beyond either bound at once, before a byte of it is read (no TLS
// handshake, no HTTP): the client sees the connection closed and may retry. Connections that end
// release their slot.

// Connection bounds, both listeners together.
const (
	// DefaultMaxConns: 1,024 connections of ~40 KiB each are ~40 MiB, and leave room for the 256 event
	// streams, every TaskExecutor's reporter, token refresher and rendezvous poll, and the web UI.
	DefaultMaxConns = 1024
	// DefaultMaxConnsPerClient: 16 event streams and the keep-alive connections of a browser, a
	// driver and the launchers of one node; the RM's web proxy, through which every browser on the
	// tracking URL comes, counts as one address.
	DefaultMaxConnsPerClient = 64
)

// connLimiter counts open connections, in total and per remote host.
type connLimiter struct {
	max, perClient int
	mu             sync.Mutex
	open           int
	by             map[string]int
	refused        uint64
}

// newConnLimiter allows max connections at once, perClient of them from one address; <= 0 means no
// bound.
func newConnLimiter(max, perClient int) *connLimiter {
	return &connLimiter{max: max, perClient: perClient, by: map[string]int{}}
}

// listener wraps ln so that its connections count against l.
func (l *connLimiter) listener(ln net.Listener) net.Listener {
	return &limitedListener{Listener: ln, l: l}
}

// take counts a connection from host, or says no.
func (l *connLimiter) take(host string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.max > 0 && l.open >= l.max || l.perClient > 0 && l.by[host] >= l.perClient {
		l.refused++
		return false
	}
	l.open++
	l.by[host]++
	return true
}

func (l *connLimiter) release(host string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.open--
	if l.by[host]--; l.by[host] <= 0 {
		delete(l.by, host)
	}
}

// Open is how many connections are open; Refused how many were closed at accept.
func (l *connLimiter) Open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open
}

// Refused is how many connections were closed at once for a bound.
func (l *connLimiter) Refused() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.refused
}

type limitedListener struct {
	net.Listener
	l *connLimiter
}

// Accept returns the next connection within the bounds, closing those beyond them.
func (ll *limitedListener) Accept() (net.Conn, error) {
	for {
		c, err := ll.Listener.Accept()
		if err != nil {
			return nil, err
		}
		host := remoteHost(c.RemoteAddr())
		if !ll.l.take(host) {
			_ = c.Close()
			continue
		}
		return &limitedConn{Conn: c, release: sync.OnceFunc(func() { ll.l.release(host) })}, nil
	}
}

func remoteHost(a net.Addr) string {
	if ta, ok := a.(*net.TCPAddr); ok {
		return ta.IP.String()
	}
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	return host
}

type limitedConn struct {
	net.Conn
	release func()
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.release()
	return err
}

// Limits are the flood bounds of Serve; zero fields take the defaults.
type Limits struct {
	MaxConns, MaxConnsPerClient     int
	MaxStreams, MaxStreamsPerClient int
}

// Server is the AM's two HTTP servers, serving.
type Server struct {
	plain, secure *http.Server
	conns         *connLimiter
	streams       *streamLimiter
}

// Serve serves b's API on ln (plain, the tracking URL) and tln (HTTPS with tlsConf), with one
// connection bound and one event-stream bound shared by both (docs/security.md#flood-bounds);
// o.Secure and o.Streams are set here.
func Serve(b Backend, o Options, lim Limits, tlsConf *tls.Config, ln, tln net.Listener) *Server {
	def := func(v, d int) int {
		if v == 0 {
			return d
		}
		return v
	}
	s := &Server{
		conns:   newConnLimiter(def(lim.MaxConns, DefaultMaxConns), def(lim.MaxConnsPerClient, DefaultMaxConnsPerClient)),
		streams: newStreamLimiter(def(lim.MaxStreams, DefaultMaxEventStreams), def(lim.MaxStreamsPerClient, DefaultMaxEventStreamsPerClient)),
	}
	o.Streams, o.Secure = s.streams, false
	s.plain = newHTTPServer(Handler(b, o))
	o.Secure = true
	s.secure = newHTTPServer(Handler(b, o))
	s.secure.TLSConfig = tlsConf
	go func() { _ = s.plain.Serve(s.conns.listener(ln)) }()
	go func() { _ = s.secure.ServeTLS(s.conns.listener(tln), "", "") }()
	return s
}

// Shutdown stops both servers.
func (s *Server) Shutdown(ctx context.Context) {
	_ = s.plain.Shutdown(ctx)
	_ = s.secure.Shutdown(ctx)
}

// newHTTPServer bounds what one connection may hold (docs/design.md#faults): headers must arrive
// within 10 s and fit in 64 KiB, an idle keep-alive connection is closed after 60 s. There is no
// server-wide read or write timeout, which would cut event streams; the write endpoints bound their
// body's read (bodyReadTimeout), streams each write (sseWriteTimeout).
func newHTTPServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       60 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          stdlog.New(io.Discard, "", 0), // TLS handshake noise from scanners; nothing to act on
	}
}
