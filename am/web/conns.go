package web

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"sync"
	"time"
)

// This file bounds the connections the AM's two servers hold (docs/security.md#flood-bounds).
// Whoever can reach the AM's ports can open connections, and net/http keeps each one (a goroutine
// and its buffers, ~30-40 KiB) until it closes or a timeout passes; without a bound, 1,500 idle
// keep-alive connections from one address were all held. connLimiter counts the connections of both
// listeners together, and two rules keep the bound from becoming a lockout:
//
//   - Idle connections never lock out a new one. When a bound is reached, the oldest connection
//     that no handler is serving (idle between requests, or one that has not finished sending its
//     first request for newConnGrace) is closed to make room, of the same address when the address
//     is at its own bound. Only when every connection in the way is being served (a request or an
//     event stream, which have bounds of their own) is the new one closed at accept. Before, a
//     neighbour's 64 idle connections from a node stopped every launcher there, and 3,000 left a
//     fresh `yarn-am status` from that address unanswered (TestIdleFloodLocksNoOneOut).
//   - A connection held by an anonymous proxied exchange (a framework's page whose reader does not
//     take the answer) may be closed for room too, after every idle and fresh one: 64 of them from
//     one address locked a launcher of that node out (TestHeldProxyExchangeMakesRoomForALauncher).
//     Event streams and the owner's exchanges are never closed for room.
//   - Connections that showed the application secret over HTTPS (the launchers' reports, liveness,
//     token refreshes and notice polls, drivers, `scale`) leave the anonymous count for a budget of
//     their own, which no anonymous connection takes or closes; nor does the per-address bound apply
//     to them, since a node's launchers share its address (TestManyLaunchersOnOneAddressAreServed).
//
// Every exchange is bounded in time whatever its handler does (serving): each write of its answer must
// be taken within exchangeWriteTimeout, and a request with a body must send it within
// bodyReadTimeout, so that no exchange holds its connection "served" for good
// (TestEveryExchangeHasAWriteDeadline). A connection that turns idle drops the write deadline its
// last exchange left.
//
// A connection is anonymous until a request on it shows the secret. A fresh one (before its first
// request) is not closed for room within newConnGrace, so that launchers connecting together on one
// node do not close each other's handshakes; the address's bound gives way to such a burst, the total
// does not.

// Connection bounds, both listeners together.
const (
	// defaultMaxConns bounds anonymous connections: 1,024 connections of ~40 KiB each are ~40 MiB,
	// and leave room for the 256 event streams and the web UI.
	defaultMaxConns = 1024
	// defaultMaxConnsPerClient: 16 event streams and the keep-alive connections of a browser or
	// two; the RM's web proxy, through which every browser on the tracking URL comes, counts as one
	// address. Beyond it the address's own oldest unserved connection is closed.
	defaultMaxConnsPerClient = 64
	// defaultMaxAuthenticatedConns bounds connections that showed the secret: every TaskExecutor's
	// reporter, liveness, token refresher and notice poll, and drivers.
	defaultMaxAuthenticatedConns = 1024
)

// exchangeWriteTimeout bounds every write of an answer, on both ports: a reader that takes none of it
// for that long loses its connection (a variable for tests, which a limiter reads when it is made).
var exchangeWriteTimeout = 10 * time.Second

// newConnGrace is how long a fresh connection (TLS handshake, first request's headers) is spared
// when room is made; a variable for tests, which a limiter reads when it is made.
var newConnGrace = time.Second

// connLimiter counts open connections: anonymous ones in total and per remote host, authenticated
// ones in total. Its mutex guards every trackedConn's fields.
type connLimiter struct {
	max, perClient, maxAuthed int
	// newConnGrace, exchangeWriteTimeout and bodyReadTimeout when the limiter was made.
	grace, writeTimeout, bodyTimeout time.Duration

	mu      sync.Mutex
	anon    map[string]map[*trackedConn]struct{} // by remote host
	nAnon   int
	authed  map[*trackedConn]struct{}
	refused uint64
	evicted uint64
	// changed is closed, and replaced, at every change of a connection's state (changes).
	changed chan struct{}
}

// newConnLimiter allows max anonymous connections at once, perClient of them from one address, and
// maxAuthed authenticated ones; <= 0 means no bound.
func newConnLimiter(max, perClient, maxAuthed int) *connLimiter {
	return &connLimiter{max: max, perClient: perClient, maxAuthed: maxAuthed, grace: newConnGrace,
		writeTimeout: exchangeWriteTimeout, bodyTimeout: bodyReadTimeout,
		anon: map[string]map[*trackedConn]struct{}{}, authed: map[*trackedConn]struct{}{}, changed: make(chan struct{})}
}

// trackedConn is one accepted connection and where it stands.
type trackedConn struct {
	net.Conn
	l    *connLimiter
	host string
	// Guarded by l.mu.
	since    time.Time // accepted, or last became idle
	fresh    bool      // no request has finished on it yet
	serving  int       // handlers running on it
	yielding int       // of them, anonymous exchanges that may be closed for room (yieldable)
	hijacked bool
	authed   bool
	gone     bool // closed or evicted: counted no more
}

// listener wraps ln so that its connections count against l.
func (l *connLimiter) listener(ln net.Listener) net.Listener {
	return &limitedListener{Listener: ln, l: l}
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
		if tc := ll.l.admit(c); tc != nil {
			return tc, nil
		}
		_ = c.Close()
	}
}

// admit counts c as anonymous, closing others to make room; nil when there is none.
func (l *connLimiter) admit(c net.Conn) *trackedConn {
	now := time.Now()
	host := remoteHost(c.RemoteAddr())
	var victim *trackedConn
	defer func() {
		if victim != nil {
			_ = victim.Conn.Close()
		}
	}()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.perClient > 0 && len(l.anon[host]) >= l.perClient {
		// The address's own oldest unserved connection makes room; a burst of fresh ones (launchers
		// connecting together) is left to the total; an address whose every connection is served
		// gets no more.
		victim = l.toCloseLocked(l.anon[host], now, false)
		if victim == nil && !l.anyFreshLocked(l.anon[host], now) {
			l.refused++
			return nil
		}
	}
	if victim == nil && l.max > 0 && l.nAnon >= l.max {
		// The busiest address pays, down to its fresh connections when it is over its own bound.
		busiest := l.busiestLocked()
		victim = l.toCloseLocked(l.anon[busiest], now, l.perClient > 0 && len(l.anon[busiest]) > l.perClient)
		for h, set := range l.anon {
			if victim != nil {
				break
			}
			if h != busiest {
				victim = l.toCloseLocked(set, now, false)
			}
		}
		if victim == nil {
			l.refused++
			return nil
		}
	}
	if victim != nil {
		l.dropLocked(victim)
		l.evicted++
	}
	l.notifyLocked()
	tc := &trackedConn{Conn: c, l: l, host: host, since: now, fresh: true}
	if l.anon[host] == nil {
		l.anon[host] = map[*trackedConn]struct{}{}
	}
	l.anon[host][tc] = struct{}{}
	l.nAnon++
	return tc
}

// toCloseLocked is the connection of set to close for room, nil if none may be: idle ones first,
// then fresh ones (no request finished yet: a handshake or headers that never came) older than
// newConnGrace, then, with evenFresh, younger fresh ones, then those held by yieldable exchanges
// alone; oldest first. A connection a handler is serving otherwise is never closed for room.
func (l *connLimiter) toCloseLocked(set map[*trackedConn]struct{}, now time.Time, evenFresh bool) *trackedConn {
	rank := func(c *trackedConn) int {
		switch {
		case c.hijacked:
			return -1
		case c.serving > 0 && c.serving == c.yielding:
			return 3
		case c.serving > 0:
			return -1
		case !c.fresh:
			return 0
		case now.Sub(c.since) >= l.grace:
			return 1
		case evenFresh:
			return 2
		}
		return -1
	}
	var best *trackedConn
	bestRank := -1
	for c := range set {
		r := rank(c)
		if r < 0 {
			continue
		}
		if best == nil || r < bestRank || r == bestRank && c.since.Before(best.since) {
			best, bestRank = c, r
		}
	}
	return best
}

// anyFreshLocked says set holds a fresh connection within its grace.
func (l *connLimiter) anyFreshLocked(set map[*trackedConn]struct{}, now time.Time) bool {
	for c := range set {
		if c.fresh && c.serving == 0 && !c.hijacked && now.Sub(c.since) < l.grace {
			return true
		}
	}
	return false
}

// busiestLocked is the address holding the most anonymous connections.
func (l *connLimiter) busiestLocked() string {
	host, n := "", -1
	for h, set := range l.anon {
		if len(set) > n {
			host, n = h, len(set)
		}
	}
	return host
}

// notifyLocked tells those waiting on changes that a connection's state changed.
func (l *connLimiter) notifyLocked() {
	close(l.changed)
	l.changed = make(chan struct{})
}

// changes is a channel closed at the next change of a connection's state: admitted, closed, idle,
// served, authenticated. Tests wait on it instead of polling.
func (l *connLimiter) changes() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.changed
}

// dropLocked stops counting c (it is being closed).
func (l *connLimiter) dropLocked(c *trackedConn) {
	if c.gone {
		return
	}
	c.gone = true
	defer l.notifyLocked()
	if c.authed {
		delete(l.authed, c)
		return
	}
	delete(l.anon[c.host], c)
	if len(l.anon[c.host]) == 0 {
		delete(l.anon, c.host)
	}
	l.nAnon--
}

// Close closes the connection and frees its slot.
func (c *trackedConn) Close() error {
	err := c.Conn.Close()
	c.l.mu.Lock()
	c.l.dropLocked(c)
	c.l.mu.Unlock()
	return err
}

// connState is the servers' ConnState hook: it records which connections sit idle. An idle one
// drops the write deadline its last exchange left (net/http keeps it, and would fail the next
// answer's writes by it); the hook runs on the connection's goroutine after the answer's last flush.
func (l *connLimiter) connState(nc net.Conn, st http.ConnState) {
	c := tracked(nc)
	if c == nil {
		return
	}
	if st == http.StateIdle {
		_ = nc.SetWriteDeadline(time.Time{})
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch st {
	case http.StateIdle:
		c.fresh, c.since = false, time.Now()
	case http.StateHijacked:
		c.hijacked = true
	default:
		return
	}
	l.notifyLocked()
}

// tracked is the trackedConn under nc (a TLS server's connections wrap it).
func tracked(nc net.Conn) *trackedConn {
	if tc, ok := nc.(*tls.Conn); ok {
		nc = tc.NetConn()
	}
	c, _ := nc.(*trackedConn)
	return c
}

// connKey carries a request's trackedConn in its context (http.Server.ConnContext).
type connKey struct{}

func connContext(ctx context.Context, nc net.Conn) context.Context {
	if c := tracked(nc); c != nil {
		return context.WithValue(ctx, connKey{}, c)
	}
	return ctx
}

// serving wraps a server's handler: a connection is not closed for room while one of its requests is
// served (but by yieldable exchanges alone), on the HTTPS server (secret != "") one whose request
// shows the secret becomes authenticated, and every exchange gets its deadlines: each write within
// exchangeWriteTimeout, a body within bodyReadTimeout.
func (l *connLimiter) serving(next http.Handler, secret string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, _ := r.Context().Value(connKey{}).(*trackedConn)
		if c == nil {
			next.ServeHTTP(w, r)
			return
		}
		l.mu.Lock()
		c.serving++
		l.notifyLocked()
		l.mu.Unlock()
		defer func() {
			l.mu.Lock()
			c.serving--
			l.notifyLocked()
			l.mu.Unlock()
		}()
		if secret != "" && authorized(r, secret) {
			l.authenticate(c)
		}
		if r.ContentLength != 0 {
			// Any body, a GET's too: net/http reads what a handler left of it before the answer,
			// which a client trickling it would otherwise hold for good. Not a stream's (no body),
			// whose read deadline would end it (net/http's background read).
			_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(l.bodyTimeout))
		}
		next.ServeHTTP(&deadlineWriter{ResponseWriter: w, timeout: l.writeTimeout}, r)
	})
}

// yieldable marks r's connection as one that may be closed to make room while r is served (an
// anonymous proxied exchange, proxy.go); done ends the mark. Outside Serve it does nothing.
func yieldable(r *http.Request) (done func()) {
	c, _ := r.Context().Value(connKey{}).(*trackedConn)
	if c == nil {
		return func() {}
	}
	c.l.mu.Lock()
	c.yielding++
	c.l.notifyLocked()
	c.l.mu.Unlock()
	return func() {
		c.l.mu.Lock()
		c.yielding--
		c.l.mu.Unlock()
	}
}

// deadlineWriter sets the connection's write deadline before every write and flush of an answer:
// a reader that takes nothing for exchangeWriteTimeout ends the exchange (the handler's write fails),
// however long the handler means to write. A handler that sets its own write deadline (event
// streams, sse.go) keeps it.
type deadlineWriter struct {
	http.ResponseWriter
	timeout time.Duration
	own     bool // the handler set a deadline of its own
}

func (d *deadlineWriter) arm() {
	if !d.own {
		_ = http.NewResponseController(d.ResponseWriter).SetWriteDeadline(time.Now().Add(d.timeout))
	}
}

func (d *deadlineWriter) Write(p []byte) (int, error) {
	d.arm()
	return d.ResponseWriter.Write(p)
}

// FlushError flushes under the deadline (http.ResponseController looks for it).
func (d *deadlineWriter) FlushError() error {
	d.arm()
	return http.NewResponseController(d.ResponseWriter).Flush()
}

// Flush is FlushError for callers that know http.Flusher only.
func (d *deadlineWriter) Flush() { _ = d.FlushError() }

// SetWriteDeadline is the handler's own deadline, which the writer then keeps.
func (d *deadlineWriter) SetWriteDeadline(t time.Time) error {
	d.own = true
	return http.NewResponseController(d.ResponseWriter).SetWriteDeadline(t)
}

// Unwrap lets http.ResponseController reach the server's writer (read deadlines, hijacking).
func (d *deadlineWriter) Unwrap() http.ResponseWriter { return d.ResponseWriter }

// authenticate moves c into the authenticated budget, closing the oldest idle authenticated
// connection when that budget is full; with none idle c stays anonymous.
func (l *connLimiter) authenticate(c *trackedConn) {
	var victim *trackedConn
	defer func() {
		if victim != nil {
			_ = victim.Conn.Close()
		}
	}()
	l.mu.Lock()
	defer l.mu.Unlock()
	if c.authed || c.gone {
		return
	}
	if l.maxAuthed > 0 && len(l.authed) >= l.maxAuthed {
		for o := range l.authed {
			if o.serving == 0 && !o.hijacked && (victim == nil || o.since.Before(victim.since)) {
				victim = o
			}
		}
		if victim == nil {
			return
		}
		l.dropLocked(victim)
		l.evicted++
	}
	delete(l.anon[c.host], c)
	if len(l.anon[c.host]) == 0 {
		delete(l.anon, c.host)
	}
	l.nAnon--
	c.authed = true
	l.authed[c] = struct{}{}
	l.notifyLocked()
}

// Open is how many connections are counted, anonymous and authenticated.
func (l *connLimiter) Open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.nAnon + len(l.authed)
}

// Authenticated is how many connections showed the secret.
func (l *connLimiter) Authenticated() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.authed)
}

// Refused is how many connections were closed at accept for a bound; Evicted how many unserved ones
// were closed to make room.
func (l *connLimiter) Refused() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.refused
}

// Evicted is how many unserved connections were closed to make room for new ones.
func (l *connLimiter) Evicted() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.evicted
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
