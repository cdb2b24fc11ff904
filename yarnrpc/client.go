package yarnrpc

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/sirupsen/logrus"
	"google.golang.org/protobuf/proto"
)

// DefaultMaxAttempts is how many times a Client tries a call (across reconnects and failovers) when
// ClientOptions.MaxAttempts is 0.
const DefaultMaxAttempts = 10

// ClientOptions configure a Client.
type ClientOptions struct {
	// Addresses are the servers (host:port) to use, in order: one for a single RM or NM, several for
	// RM HA (from Config.RMAddresses). Required.
	Addresses []string
	// ConnOptions apply to every connection (Protocol and Auth are required). ClientID, when nil, is
	// chosen once for the Client.
	ConnOptions
	// MaxAttempts bounds the tries of one call; 0 means DefaultMaxAttempts. The call's context bounds
	// them too.
	MaxAttempts int
	// Backoff spaces reconnects; failing over to an address not yet tried in this call is immediate.
	Backoff Backoff
	// IdempotentMethods may be re-sent when the connection broke after the request was written (the
	// server may or may not have run it). Other methods are re-sent only when the server provably did
	// not process them: connection refused, standby, retriable.
	IdempotentMethods []string
	// FailFast is for commands a person waits on: a server that refuses connections, has an unknown
	// host name, speaks HTTP or is standby is tried a few times within about two seconds
	// (FailFastBackoff), and when every server failed so the call ends with an *UnreachableError
	// naming each. Without it (the AM) such failures are retried for MaxAttempts with Backoff, to
	// outlive server restarts. Either way the call's context bounds the wait.
	FailFast bool
	// Role names the servers in messages, e.g. "ResourceManager"; empty means "server".
	Role string
	// Endpoints describe Addresses for messages (RM ids, where each address came from; see
	// Config.RMEndpoints); addresses without one are named by themselves.
	Endpoints []Endpoint
	// Progress receives one line when a call is still waiting after ProgressAfter, saying what for;
	// nil logs it at INFO.
	Progress func(msg string)
	// ProgressAfter: 0 means DefaultProgressAfter; negative disables the progress line.
	ProgressAfter time.Duration
}

// Client calls one protocol on a server or an HA set of servers, keeping one connection per
// (address, protocol, user), reconnecting with backoff and failing over to the next address on
// connection failures and StandbyException. It is safe for concurrent use.
type Client struct {
	opts ClientOptions
	idem map[string]bool
	log  logrus.FieldLogger

	mu      sync.Mutex
	auth    Auth
	active  int // index into opts.Addresses
	conns   map[connKey]*Conn
	dialing map[connKey]chan struct{}
	closed  bool
}

type connKey struct{ addr, protocol, user string }

// NewClient checks opts and returns a Client; connections are opened by the first call.
func NewClient(opts ClientOptions) (*Client, error) {
	if len(opts.Addresses) == 0 {
		return nil, errors.New("yarnrpc: ClientOptions.Addresses is empty; want at least one host:port")
	}
	for _, a := range opts.Addresses {
		if !strings.Contains(a, ":") {
			return nil, fmt.Errorf("yarnrpc: address %q has no port; want host:port", a)
		}
	}
	opts.ConnOptions = opts.ConnOptions.withDefaults()
	if _, err := opts.ConnOptions.validate(); err != nil {
		return nil, err
	}
	if opts.ClientID == nil {
		id, err := newClientID()
		if err != nil {
			return nil, err
		}
		opts.ClientID = id
	}
	if opts.MaxAttempts <= 0 {
		opts.MaxAttempts = DefaultMaxAttempts
	}
	c := &Client{
		opts:    opts,
		idem:    map[string]bool{},
		log:     opts.Logger.WithField("protocol", opts.Protocol),
		auth:    opts.Auth,
		conns:   map[connKey]*Conn{},
		dialing: map[connKey]chan struct{}{},
	}
	for _, m := range opts.IdempotentMethods {
		c.idem[m] = true
	}
	return c, nil
}

// SetAuth replaces the authentication of new connections (e.g. a rolled AM-RM token); open
// connections keep theirs, as in Hadoop.
func (c *Client) SetAuth(a Auth) error {
	if err := a.validate(); err != nil {
		return err
	}
	c.mu.Lock()
	c.auth = a
	c.mu.Unlock()
	return nil
}

// Active returns the address calls currently go to.
func (c *Client) Active() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.opts.Addresses[c.active]
}

// Call runs method with req and decodes the response into resp, retrying and failing over as
// ClientOptions describe. Errors are those of Conn.Call; after the last attempt the error says how
// many were made.
func (c *Client) Call(ctx context.Context, method string, req, resp proto.Message) error {
	defer c.startProgress(ctx, method)()
	var last error
	tried := map[string]bool{}
	dead := map[string]ServerFailure{} // fail-fast: servers that failed to serve at all
	tries := map[string]int{}
	for attempt := 0; attempt < c.opts.MaxAttempts; attempt++ {
		addr := c.Active()
		tried[addr] = true
		err := c.callOnce(ctx, addr, method, req, resp)
		if err == nil {
			return nil
		}
		last = err
		if ctx.Err() != nil {
			if errors.Is(err, ctx.Err()) {
				return err
			}
			return fmt.Errorf("%w (last error: %w)", deadlineError(ctx, method, addr), err)
		}
		kind := failKind("")
		if c.opts.FailFast {
			kind = classify(err)
		}
		if kind != "" {
			tries[addr]++
			dead[addr] = ServerFailure{Endpoint: c.endpoint(addr), Err: err, kind: kind, role: c.opts.Role}
			if c.allDead(dead, tries) {
				return c.unreachable(method, dead)
			}
		} else {
			delete(dead, addr)
			if !c.retryable(method, err) {
				return err
			}
		}
		next := addr
		if kind != "" || errors.Is(err, ErrStandby) || errors.Is(err, ErrConnection) {
			next = c.failover(addr)
		}
		log := c.log.WithFields(logrus.Fields{"method": method, "addr": addr, "attempt": attempt + 1, "error": err})
		backoff, level := c.opts.Backoff, logrus.InfoLevel
		if c.opts.FailFast {
			// The person waiting gets the verdict, not a line per retry.
			backoff, level = FailFastBackoff, logrus.DebugLevel
		}
		if next != addr && !tried[next] {
			log.WithField("next", next).Log(level, "yarnrpc: failing over")
			continue
		}
		delay := backoff.Delay(attempt)
		log.WithField("retry_in", delay).Log(level, "yarnrpc: retrying")
		if err := sleep(ctx, delay); err != nil {
			return fmt.Errorf("%w (last error: %w)", deadlineError(ctx, method, addr), last)
		}
	}
	if c.opts.FailFast && len(dead) == len(c.opts.Addresses) {
		return c.unreachable(method, dead)
	}
	return fmt.Errorf("yarnrpc: %s: giving up after %d attempts on %s: %w",
		method, c.opts.MaxAttempts, strings.Join(c.opts.Addresses, ","), last)
}

// allDead: every server failed to serve at all, as often as its failure deserves.
func (c *Client) allDead(dead map[string]ServerFailure, tries map[string]int) bool {
	for _, a := range c.opts.Addresses {
		f, ok := dead[a]
		if !ok || tries[a] < f.kind.quickTries() {
			return false
		}
	}
	return true
}

func (c *Client) unreachable(method string, dead map[string]ServerFailure) error {
	e := &UnreachableError{Role: c.opts.Role, Method: method}
	for _, a := range c.opts.Addresses {
		if f, ok := dead[a]; ok {
			e.Servers = append(e.Servers, f)
		}
	}
	return e
}

func (c *Client) callOnce(ctx context.Context, addr, method string, req, resp proto.Message) error {
	conn, err := c.conn(ctx, addr)
	if err != nil {
		return err
	}
	return conn.Call(ctx, method, req, resp)
}

// retryable: never re-send what the server may have run, unless the method is idempotent.
func (c *Client) retryable(method string, err error) bool {
	switch {
	case errors.Is(err, ErrAccessControl):
		return false
	case errors.Is(err, ErrClosed) && c.isClosed():
		return false
	case notProcessed(err):
		return true
	case errors.Is(err, ErrConnection) && c.idem[method]:
		return true
	}
	return false
}

// failover moves the active address past from (unless another caller already did) and returns the
// new active address.
func (c *Client) failover(from string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.opts.Addresses[c.active] == from && len(c.opts.Addresses) > 1 {
		c.active = (c.active + 1) % len(c.opts.Addresses)
	}
	return c.opts.Addresses[c.active]
}

// conn returns the open connection to addr, dialing it once even when many calls ask at the same
// time.
func (c *Client) conn(ctx context.Context, addr string) (*Conn, error) {
	for {
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			return nil, fmt.Errorf("yarnrpc: client %w", ErrClosed)
		}
		auth := c.auth
		key := connKey{addr: addr, protocol: c.opts.Protocol, user: auth.userKey()}
		if cn := c.conns[key]; cn != nil {
			if !cn.isClosed() {
				c.mu.Unlock()
				return cn, nil
			}
			delete(c.conns, key)
		}
		if wait, ok := c.dialing[key]; ok {
			c.mu.Unlock()
			select {
			case <-wait:
				continue
			case <-ctx.Done():
				return nil, deadlineError(ctx, "connect", addr)
			}
		}
		done := make(chan struct{})
		c.dialing[key] = done
		c.mu.Unlock()

		o := c.opts.ConnOptions
		o.Auth = auth
		cn, err := Dial(ctx, addr, o)

		c.mu.Lock()
		delete(c.dialing, key)
		close(done)
		if err == nil {
			if c.closed {
				c.mu.Unlock()
				_ = cn.Close()
				return nil, fmt.Errorf("yarnrpc: client %w", ErrClosed)
			}
			c.conns[key] = cn
		}
		c.mu.Unlock()
		return cn, err
	}
}

func (c *Client) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

// Close closes every connection; calls in flight fail with an error matching ErrClosed.
func (c *Client) Close() error {
	c.mu.Lock()
	c.closed = true
	conns := c.conns
	c.conns = map[connKey]*Conn{}
	c.mu.Unlock()
	for _, cn := range conns {
		_ = cn.Close()
	}
	return nil
}
