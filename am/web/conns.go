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
//   - Connections that showed the application secret over HTTPS (the launchers' reports, liveness,
//     token refreshes and notice polls, drivers, `scale`) leave the anonymous count for a budget of
//     their own, which no anonymous connection takes or closes; nor does the per-address bound apply
//     to them, since a node's launchers share its address (TestManyLaunchersOnOneAddressAreServed).
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

// newConnGrace is how long a fresh connection (TLS handshake, first request's headers) is spared
// when room is made; a variable for tests.
var newConnGrace = time.Second

// connLimiter counts open connections: anonymous ones in total and per remote host, authenticated
// ones in total. Its mutex guards every trackedConn's fields.
type connLimiter struct {
	max, perClient, maxAuthed int

	mu      sync.Mutex
	anon    map[string]map[*trackedConn]struct{} // by remote host
	nAnon   int
	authed  map[*trackedConn]struct{}
	refused uint64
	evicted uint64
}

// newConnLimiter allows max anonymous connections at once, perClient of them from one address, and
// maxAuthed authenticated ones; <= 0 means no bound.
func newConnLimiter(max, perClient, maxAuthed int) *connLimiter {
	return &connLimiter{max: max, perClient: perClient, maxAuthed: maxAuthed,
		anon: map[string]map[*trackedConn]struct{}{}, authed: map[*trackedConn]struct{}{}}
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
// newConnGrace, then, with evenFresh, younger fresh ones; oldest first. A connection a handler is
// serving is never closed for room.
func (l *connLimiter) toCloseLocked(set map[*trackedConn]struct{}, now time.Time, evenFresh bool) *trackedConn {
	rank := func(c *trackedConn) int {
		switch {
		case c.serving > 0 || c.hijacked:
			return -1
		case !c.fresh:
			return 0
		case now.Sub(c.since) >= newConnGrace:
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
		if c.fresh && c.serving == 0 && !c.hijacked && now.Sub(c.since) < newConnGrace {
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

// dropLocked stops counting c (it is being closed).
func (l *connLimiter) dropLocked(c *trackedConn) {
	if c.gone {
		return
	}
	c.gone = true
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

// connState is the servers' ConnState hook: it records which connections sit idle.
func (l *connLimiter) connState(nc net.Conn, st http.ConnState) {
	c := tracked(nc)
	if c == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch st {
	case http.StateIdle:
		c.fresh, c.since = false, time.Now()
	case http.StateHijacked:
		c.hijacked = true
	}
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
// served, and on the HTTPS server (secret != "") one whose request shows the secret becomes
// authenticated.
func (l *connLimiter) serving(next http.Handler, secret string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, _ := r.Context().Value(connKey{}).(*trackedConn)
		if c == nil {
			next.ServeHTTP(w, r)
			return
		}
		l.mu.Lock()
		c.serving++
		l.mu.Unlock()
		defer func() {
			l.mu.Lock()
			c.serving--
			l.mu.Unlock()
		}()
		if secret != "" && authorized(r, secret) {
			l.authenticate(c)
		}
		next.ServeHTTP(w, r)
	})
}

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
