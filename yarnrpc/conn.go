package yarnrpc

import (
	"bufio"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sirupsen/logrus"
	"google.golang.org/protobuf/proto"

	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// Defaults of ConnOptions, after Hadoop's ipc.client.* settings.
const (
	DefaultConnectTimeout  = 20 * time.Second // ipc.client.connect.timeout
	DefaultPingInterval    = 60 * time.Second // ipc.ping.interval
	DefaultMaxIdle         = 10 * time.Second // ipc.client.connection.maxidletime
	DefaultProtocolVersion = 1                // clientProtocolVersion of the YARN and HDFS PB protocols
	defaultWriteTimeout    = 60 * time.Second // for writes whose context has no deadline
	fatalGrace             = 200 * time.Millisecond
)

// ConnOptions configure one connection.
type ConnOptions struct {
	// Protocol is the connection's protocol, sent in the connection context and in every call header,
	// e.g. org.apache.hadoop.yarn.api.ApplicationClientProtocolPB. Required.
	Protocol string
	// ProtocolVersion is the clientProtocolVersion of every call; 0 means DefaultProtocolVersion.
	ProtocolVersion uint64
	// Auth says who the connection speaks for. Required.
	Auth Auth
	// Protection is the hadoop.rpc.protection value ("authentication", "integrity", "privacy", or a
	// comma list, most preferred first); empty means authentication. It applies to TOKEN and
	// KERBEROS connections; integrity and privacy wrap every message.
	Protection string
	// ClientID is the 16-byte id Hadoop's retry cache keys calls by; random when nil. A Client gives
	// all its connections the same one.
	ClientID []byte
	// ConnectTimeout bounds dialing and the handshake when the context allows longer; 0 means
	// DefaultConnectTimeout.
	ConnectTimeout time.Duration
	// PingInterval: while calls are outstanding and the server has been silent this long, send a ping
	// (call id -4). 0 means DefaultPingInterval, negative disables pings.
	PingInterval time.Duration
	// MaxIdle closes the connection after this long without calls; 0 means DefaultMaxIdle, negative
	// keeps idle connections open.
	MaxIdle time.Duration
	// FallbackToSimpleAllowed is ipc.client.fallback-to-simple-auth-allowed: a server may switch a
	// TOKEN or KERBEROS connection to SIMPLE (logged as a warning). Without it such a server is
	// refused, except for TOKEN connections when InsecureCluster is set.
	FallbackToSimpleAllowed bool
	// InsecureCluster says the cluster does not use Kerberos (hadoop.security.authentication=simple),
	// so a server may switch a TOKEN connection to SIMPLE, as Hadoop's client allows. It never
	// allows the switch for KERBEROS connections.
	InsecureCluster bool
	// WeakDigestCiphersAllowed is yarn-am.sasl.digest-md5.weak-ciphers-allowed: DIGEST-MD5 auth-conf
	// may use the export-grade ciphers des, rc4-56 and rc4-40 when the server offers nothing
	// stronger. Without it such a server is refused.
	WeakDigestCiphersAllowed bool
	// MaxResponseLength rejects longer response frames before reading them; 0 means
	// DefaultMaxResponseLength (ipc.maximum.response.length).
	MaxResponseLength int
	// Logger receives debug logs (addresses, call ids, methods; never tokens); nil means logrus's
	// standard logger.
	Logger logrus.FieldLogger

	// ticks, when set (tests), replaces the monitor's ticker: each value is "now" for one check of
	// pings and idleness (TestPingWhileWaiting).
	ticks <-chan time.Time
}

func (o ConnOptions) withDefaults() ConnOptions {
	if o.ProtocolVersion == 0 {
		o.ProtocolVersion = DefaultProtocolVersion
	}
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = DefaultConnectTimeout
	}
	if o.PingInterval == 0 {
		o.PingInterval = DefaultPingInterval
	}
	if o.MaxIdle == 0 {
		o.MaxIdle = DefaultMaxIdle
	}
	if o.MaxResponseLength <= 0 {
		o.MaxResponseLength = DefaultMaxResponseLength
	}
	if o.Logger == nil {
		o.Logger = logrus.StandardLogger()
	}
	return o
}

// simpleFallbackAllowed says whether a server may switch a connection authenticating with m to
// SIMPLE (TestSimpleFallbackPolicy).
func (o ConnOptions) simpleFallbackAllowed(m AuthMethod) bool {
	switch {
	case o.FallbackToSimpleAllowed:
		return true
	case m == AuthToken:
		return o.InsecureCluster
	}
	return false
}

func (o ConnOptions) validate() ([]string, error) {
	if o.Protocol == "" {
		return nil, errors.New("yarnrpc: ConnOptions.Protocol is empty; want e.g. org.apache.hadoop.yarn.api.ApplicationClientProtocolPB")
	}
	if o.ClientID != nil && len(o.ClientID) != 16 {
		return nil, fmt.Errorf("yarnrpc: ConnOptions.ClientID has %d bytes, want 16", len(o.ClientID))
	}
	if err := o.Auth.validate(); err != nil {
		return nil, err
	}
	return protectionQOPs(o.Protection)
}

func newClientID() ([]byte, error) {
	id := make([]byte, 16)
	if _, err := rand.Read(id); err != nil {
		return nil, fmt.Errorf("yarnrpc: client id: %w", err)
	}
	id[6] = id[6]&0x0f | 0x40 // a version 4 UUID, like Hadoop's ClientId
	id[8] = id[8]&0x3f | 0x80
	return id, nil
}

// Conn is one Hadoop IPC connection: authenticated once, then carrying any number of concurrent
// calls matched to their responses by call id. It is safe for concurrent use.
type Conn struct {
	addr   string
	opts   ConnOptions
	nc     net.Conn
	br     *bufio.Reader
	rd     io.Reader // br, or the unwrapping reader over it when the QOP protects traffic
	mech   mechanism // set when every frame is wrapped (auth-int, auth-conf)
	log    logrus.FieldLogger
	method AuthMethod // after negotiation: the server may switch TOKEN to SIMPLE

	wmu sync.Mutex // serializes frames on nc

	mu       sync.Mutex
	calls    map[int32]chan callResult
	closeErr error // non-nil once closed

	lastRead  atomic.Int64 // unix nanos of the last frame from the server
	lastPing  atomic.Int64 // unix nanos of the last ping sent
	lastUsed  atomic.Int64 // unix nanos of the last call started or answered
	pingsSent atomic.Int64
	dropped   atomic.Int64 // responses that arrived for forgotten calls

	done chan struct{}
	wg   sync.WaitGroup
}

type callResult struct {
	header *hadooppb.RpcResponseHeaderProto
	body   []byte
	err    error
}

// Dial connects to addr (host:port), authenticates and sends the connection context. ctx bounds the
// whole set-up (and so does opts.ConnectTimeout).
func Dial(ctx context.Context, addr string, opts ConnOptions) (*Conn, error) {
	opts = opts.withDefaults()
	qops, err := opts.validate()
	if err != nil {
		return nil, err
	}
	if opts.ClientID == nil {
		if opts.ClientID, err = newClientID(); err != nil {
			return nil, err
		}
	}
	dctx, cancel := context.WithTimeout(ctx, opts.ConnectTimeout)
	defer cancel()
	var d net.Dialer
	nc, err := d.DialContext(dctx, "tcp", addr)
	if err != nil {
		if ctx.Err() != nil {
			return nil, &ConnError{Addr: addr, Op: "dial", Err: ctx.Err(), notSent: true}
		}
		return nil, &ConnError{Addr: addr, Op: "dial", Err: err, notSent: true}
	}
	c := &Conn{
		addr:  addr,
		opts:  opts,
		nc:    nc,
		br:    bufio.NewReaderSize(nc, 64<<10),
		log:   opts.Logger.WithFields(logrus.Fields{"addr": addr, "protocol": opts.Protocol}),
		calls: make(map[int32]chan callResult),
		done:  make(chan struct{}),
	}
	c.rd = c.br
	dl, _ := dctx.Deadline()
	_ = nc.SetDeadline(dl)
	if err := c.handshake(dctx, qops); err != nil {
		_ = nc.Close()
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (%w)", ctx.Err(), err)
		}
		return nil, &ConnError{Addr: addr, Op: "handshake", Err: err, notSent: true}
	}
	_ = nc.SetDeadline(time.Time{})
	now := time.Now().UnixNano()
	c.lastRead.Store(now)
	c.lastUsed.Store(now)
	c.wg.Add(2)
	go c.readLoop()
	go c.monitor()
	qop := qopAuth
	if c.mech != nil {
		qop = c.mech.qop()
	}
	c.log.WithFields(logrus.Fields{"auth": c.method, "qop": qop}).Debug("yarnrpc: connected")
	return c, nil
}

// handshake writes the preamble, runs SASL when the auth needs it, and sends the connection context
// (wrapped, like everything after SASL, when the QOP protects traffic).
func (c *Conn) handshake(ctx context.Context, qops []string) error {
	auth := c.opts.Auth
	sasl := auth.Method == AuthToken || auth.Method == AuthKerberos
	pre := append(append([]byte{}, preambleHead...), authProtoNone)
	if sasl {
		pre[len(pre)-1] = authProtoSASL
	}
	if _, err := c.nc.Write(pre); err != nil {
		return err
	}
	c.method = AuthSimple
	if sasl {
		res, err := saslHandshake(ctx, struct {
			io.Reader
			io.Writer
		}{c.br, c.nc}, c.saslTarget(), auth, qops, c.opts.MaxResponseLength)
		if err != nil {
			return err
		}
		c.method = res.method
		if res.method == AuthSimple {
			c.log.WithField("auth", auth.Method).Warn("yarnrpc: the server asked to fall back to SIMPLE authentication; " +
				"continuing unauthenticated because " + fallbackReason(c.opts))
		}
		if res.mech != nil && res.mech.qop() != qopAuth {
			c.mech = res.mech
			c.rd = &unwrapReader{r: c.br, mech: res.mech, maxFrame: c.opts.MaxResponseLength}
		}
	}
	// What the connection context says about the user follows Hadoop's ProtoUtil: SIMPLE sends the
	// effective and real user, KERBEROS only the effective user, TOKEN none (the token establishes
	// both). For KERBEROS that is the full principal (UGI's user name): the server compares it with
	// the authenticated principal, and any other name (the short one included) asks to impersonate.
	ui := &hadooppb.UserInformationProto{}
	switch c.method {
	case AuthSimple:
		ui.EffectiveUser = proto.String(auth.User)
		if auth.RealUser != "" {
			ui.RealUser = proto.String(auth.RealUser)
		}
	case AuthKerberos:
		ui.EffectiveUser = proto.String(auth.Kerberos.Principal())
	}
	ctxMsg := &hadooppb.IpcConnectionContextProto{UserInfo: ui, Protocol: proto.String(c.opts.Protocol)}
	f, err := encodeFrame(requestHeader(callIDConnCtx, c.opts.ClientID, -1), ctxMsg)
	if err != nil {
		return err
	}
	if f, err = c.protect(f); err != nil {
		return err
	}
	_, err = c.nc.Write(f)
	return err
}

// protect wraps frame when the QOP protects traffic; it must be called under wmu (or before the
// connection is shared), since wrapping advances sequence numbers and cipher state.
func (c *Conn) protect(frame []byte) ([]byte, error) {
	if c.mech == nil {
		return frame, nil
	}
	return wrapFrames(c.mech, frame)
}

func (c *Conn) saslTarget() saslTarget {
	return saslTarget{addr: c.addr, protocol: c.opts.Protocol, allowSimple: c.opts.simpleFallbackAllowed(c.opts.Auth.Method),
		weakCiphers: c.opts.WeakDigestCiphersAllowed}
}

func fallbackReason(o ConnOptions) string {
	if o.FallbackToSimpleAllowed {
		return KeyFallbackToSimpleAllowed + "=true"
	}
	return "the cluster does not use Kerberos (hadoop.security.authentication=simple)"
}

// QOP returns the negotiated quality of protection: auth, auth-int or auth-conf.
func (c *Conn) QOP() string {
	if c.mech == nil {
		return qopAuth
	}
	return c.mech.qop()
}

// Addr returns the server address the connection was dialed to.
func (c *Conn) Addr() string { return c.addr }

// AuthMethod returns how the connection authenticated (TOKEN may have been switched to SIMPLE by a
// server that does not need tokens).
func (c *Conn) AuthMethod() AuthMethod { return c.method }

// Call sends one request for method of the connection's protocol and waits for the response, which
// it decodes into resp. Remote exceptions come back as *RemoteError; a broken connection as
// *ConnError; the end of ctx as an error wrapping ctx.Err() (the call is then forgotten and a late
// response dropped).
func (c *Conn) Call(ctx context.Context, method string, req, resp proto.Message) error {
	if err := ctx.Err(); err != nil {
		return deadlineError(ctx, method, c.addr)
	}
	id, ch, err := c.register()
	if err != nil {
		return err
	}
	frame, err := encodeFrame(
		requestHeader(id, c.opts.ClientID, 0),
		&hadooppb.RequestHeaderProto{
			MethodName:                 proto.String(method),
			DeclaringClassProtocolName: proto.String(c.opts.Protocol),
			ClientProtocolVersion:      proto.Uint64(c.opts.ProtocolVersion),
		},
		req)
	if err != nil {
		c.forget(id)
		return fmt.Errorf("yarnrpc: %s: %w", method, err)
	}
	if err := c.write(ctx, frame); err != nil {
		c.forget(id)
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return deadlineError(ctx, method, c.addr)
		}
		return err
	}
	select {
	case r := <-ch:
		return c.finish(method, r, resp)
	case <-ctx.Done():
		c.forget(id)
		c.log.WithFields(logrus.Fields{"method": method, "call": id}).Debug("yarnrpc: call abandoned at its deadline")
		return deadlineError(ctx, method, c.addr)
	}
}

func (c *Conn) finish(method string, r callResult, resp proto.Message) error {
	c.lastUsed.Store(time.Now().UnixNano())
	if r.err != nil {
		return r.err
	}
	switch r.header.GetStatus() {
	case hadooppb.RpcResponseHeaderProto_SUCCESS:
		if resp == nil {
			return nil
		}
		if err := proto.Unmarshal(r.body, resp); err != nil {
			return fmt.Errorf("yarnrpc: %s: decoding %T: %w", method, resp, err)
		}
		return nil
	default:
		return newRemoteError(r.header, method)
	}
}

// register allocates a call id.
func (c *Conn) register() (int32, chan callResult, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closeErr != nil {
		// Nothing was sent on a closed connection: safe to retry elsewhere.
		return 0, nil, &ConnError{Addr: c.addr, Op: "call", Err: c.closeErr, notSent: true}
	}
	id := nextCallID()
	ch := make(chan callResult, 1)
	c.calls[id] = ch
	c.lastUsed.Store(time.Now().UnixNano())
	return id, ch, nil
}

// callIDs numbers the calls of every connection of this process, as Hadoop's Client does with one
// counter for all its connections: the NameNode's retry cache keys an at-most-once call (setXAttr,
// delete) by client id and call id, and a Client gives all its connections one client id, so a
// connection that started again at call 0 after the server closed an idle one was answered from the
// cache, "done", without doing it (TestCallIDsGoOnAcrossConnections).
var callIDs atomic.Int32

// nextCallID is the next call id, from 0 to 2^31-1 and round again.
func nextCallID() int32 { return (callIDs.Add(1) - 1) & 0x7fffffff }

func (c *Conn) forget(id int32) {
	c.mu.Lock()
	delete(c.calls, id)
	c.mu.Unlock()
}

func (c *Conn) take(id int32) chan callResult {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := c.calls[id]
	delete(c.calls, id)
	return ch
}

// Outstanding returns the number of calls waiting for a response.
func (c *Conn) Outstanding() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.calls)
}

// write sends one frame. A failed write leaves a partial frame on the wire, so it closes the
// connection; the server cannot have processed the truncated request.
func (c *Conn) write(ctx context.Context, frame []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if ctx.Err() != nil {
		// Expired while waiting for the writer lock: nothing written, the connection stays usable.
		return ctx.Err()
	}
	dl, ok := ctx.Deadline()
	if !ok {
		dl = time.Now().Add(defaultWriteTimeout)
	}
	_ = c.nc.SetWriteDeadline(dl)
	frame, err := c.protect(frame)
	if err != nil {
		// The security layer's state may have moved: the connection cannot go on.
		ce := &ConnError{Addr: c.addr, Op: "write", Err: err, notSent: true}
		c.closeWith(ce)
		return ce
	}
	if _, err := c.nc.Write(frame); err != nil {
		if c.isClosed() {
			return &ConnError{Addr: c.addr, Op: "write", Err: c.err(), notSent: true}
		}
		// A server that refuses us (FATAL, e.g. "SIMPLE authentication is not enabled") closes the
		// socket right after its answer, so our write fails with a broken pipe while the reason sits
		// unread; give the reader a moment to find it.
		t := time.NewTimer(fatalGrace)
		select {
		case <-c.done:
		case <-t.C:
		}
		t.Stop()
		var re *RemoteError
		if cerr := c.err(); cerr != nil && errors.As(cerr, &re) {
			err = re
		} else if errors.Is(cerr, ErrHTTPServer) {
			err = ErrHTTPServer
		}
		ce := &ConnError{Addr: c.addr, Op: "write", Err: err, notSent: true}
		c.closeWith(ce)
		return ce
	}
	return nil
}

func (c *Conn) readLoop() {
	defer c.wg.Done()
	for {
		frame, err := readFrame(c.rd, c.opts.MaxResponseLength)
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = errors.New("server closed the connection")
			}
			c.closeWith(&ConnError{Addr: c.addr, Op: "read", Err: err})
			return
		}
		c.lastRead.Store(time.Now().UnixNano())
		h, body, err := decodeResponse(frame)
		if err != nil {
			c.closeWith(&ConnError{Addr: c.addr, Op: "read", Err: fmt.Errorf("malformed response: %w", err)})
			return
		}
		id := int32(h.GetCallId()) // the response carries the request's sint32 as uint32
		ch := c.take(id)
		if ch != nil {
			ch <- callResult{header: h, body: body}
		}
		if h.GetStatus() == hadooppb.RpcResponseHeaderProto_FATAL {
			c.closeWith(&ConnError{Addr: c.addr, Op: "read", Err: newRemoteError(h, "")})
			return
		}
		if ch == nil {
			c.dropped.Add(1)
			c.log.WithField("call", id).Debug("yarnrpc: dropping response for a call nobody waits for")
		}
	}
}

// monitor sends pings while calls wait on a silent server, and closes the connection when idle.
func (c *Conn) monitor() {
	defer c.wg.Done()
	tick := time.Second
	for _, d := range []time.Duration{c.opts.PingInterval, c.opts.MaxIdle} {
		if d > 0 && d/4 < tick {
			tick = d / 4
		}
	}
	if tick < time.Millisecond {
		tick = time.Millisecond
	}
	ticks := c.opts.ticks
	if ticks == nil {
		t := time.NewTicker(tick)
		defer t.Stop()
		ticks = t.C
	}
	for {
		select {
		case <-c.done:
			return
		case now := <-ticks:
			n := c.Outstanding()
			if n > 0 && c.opts.PingInterval > 0 {
				silent := max(c.lastRead.Load(), c.lastPing.Load())
				if now.UnixNano()-silent >= int64(c.opts.PingInterval) {
					c.ping()
				}
			}
			if n == 0 && c.opts.MaxIdle > 0 && c.closeIfIdle(now) {
				c.log.Debug("yarnrpc: closed idle connection")
				return
			}
		}
	}
}

var errIdle = errors.New("connection closed after its maximum idle time")

func (c *Conn) ping() {
	f, err := encodeFrame(requestHeader(callIDPing, c.opts.ClientID, -1))
	if err != nil {
		return
	}
	c.lastPing.Store(time.Now().UnixNano())
	ctx, cancel := context.WithTimeout(context.Background(), c.opts.PingInterval)
	defer cancel()
	if err := c.write(ctx, f); err == nil {
		c.pingsSent.Add(1)
	}
}

func (c *Conn) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closeErr != nil
}

func (c *Conn) err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closeErr
}

// closeIfIdle closes the connection if no call started or ended within MaxIdle; the check and the
// close happen under one lock so that no call can slip in between.
func (c *Conn) closeIfIdle(now time.Time) bool {
	c.mu.Lock()
	if c.closeErr != nil || len(c.calls) > 0 || now.UnixNano()-c.lastUsed.Load() < int64(c.opts.MaxIdle) {
		c.mu.Unlock()
		return false
	}
	c.closeLocked(&ConnError{Addr: c.addr, Op: "idle", Err: errIdle, notSent: true})
	return true
}

// closeWith closes the connection once, failing every outstanding call with err.
func (c *Conn) closeWith(err error) {
	c.mu.Lock()
	c.closeLocked(err)
}

// closeLocked does closeWith's work; it is called with c.mu held and releases it.
func (c *Conn) closeLocked(err error) {
	if c.closeErr != nil {
		c.mu.Unlock()
		return
	}
	c.closeErr = err
	calls := c.calls
	c.calls = make(map[int32]chan callResult)
	c.mu.Unlock()
	close(c.done)
	_ = c.nc.Close()
	// Calls already on the wire may have been processed: whatever err says for later callers, theirs
	// must not claim otherwise.
	pending := err
	if ce, ok := err.(*ConnError); ok && ce.notSent {
		cp := *ce
		cp.notSent = false
		pending = &cp
	}
	for _, ch := range calls {
		ch <- callResult{err: pending}
	}
	if len(calls) > 0 {
		c.log.WithFields(logrus.Fields{"calls": len(calls), "error": err}).Debug("yarnrpc: connection closed with calls outstanding")
	}
}

// Close closes the connection; outstanding calls fail with an error matching ErrClosed and
// ErrConnection. It waits for the connection's goroutines to end.
func (c *Conn) Close() error {
	c.closeWith(&ConnError{Addr: c.addr, Op: "call", Err: fmt.Errorf("connection %w by its owner", ErrClosed)})
	c.wg.Wait()
	return nil
}
