package rpctest

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// Wire constants of Hadoop IPC (see yarnrpc's frame.go; repeated here so this package does not
// import the client it tests).
const (
	authNone      = 0x00
	authSASL      = 0xDF
	callIDConnCtx = -3
	callIDPing    = -4
	callIDSASL    = -33
	maxFrame      = 64 << 20
)

// Options configure a Server.
type Options struct {
	// Simple accepts SIMPLE connections (no SASL) and offers SIMPLE to SASL clients.
	Simple bool
	// SimpleFirst (which implies Simple) lists SIMPLE first among the auths offered in NEGOTIATE,
	// and makes a server with neither Tokens nor Kerberos offer SIMPLE in NEGOTIATE instead of
	// answering it with SUCCESS: the two ways a server asks a SASL client to fall back to SIMPLE.
	SimpleFirst bool
	// Tokens enables TOKEN authentication (SASL DIGEST-MD5): identifier (as a string of its bytes) →
	// password.
	Tokens map[string][]byte
	// QOP is what DIGEST-MD5 offers; nil means ["auth"]. With auth-int or auth-conf (cipher rc4)
	// every message after the handshake is wrapped.
	QOP []string
	// Kerberos enables KERBEROS authentication (SASL GSSAPI) as that service; its QOP field says
	// which security layers it offers.
	Kerberos *Kerberos
	// Addr is the address to listen on; empty means 127.0.0.1:0. Tests that restart a server on the
	// same port set it to a former Addr().
	Addr string
}

// Handler answers one call. Returning an *Exception sends it as a remote exception; any other error
// is sent as java.io.IOException.
type Handler func(ctx context.Context, r *Request) (proto.Message, error)

// Request is one call as the server received it.
type Request struct {
	Protocol string
	Method   string
	CallID   int32
	Retry    int32
	Conn     ConnInfo
	body     []byte
}

// Decode unmarshals the request message into m.
func (r *Request) Decode(m proto.Message) error { return proto.Unmarshal(r.body, m) }

// Exception is a Java exception the server returns (status ERROR, or FATAL when Fatal is set, after
// which the server closes the connection).
type Exception struct {
	Class   string
	Message string
	Fatal   bool
}

// Error implements error.
func (e *Exception) Error() string { return e.Class + ": " + e.Message }

// StandbyException is what a standby RM answers.
func StandbyException() *Exception {
	return &Exception{Class: "org.apache.hadoop.ipc.StandbyException",
		Message: "Operation category WRITE is not supported in state standby"}
}

// ConnInfo describes an accepted connection after its handshake.
type ConnInfo struct {
	// Auth is SIMPLE, TOKEN or KERBEROS.
	Auth string
	// QOP is the negotiated quality of protection of TOKEN and KERBEROS connections: auth,
	// auth-int or auth-conf.
	QOP string
	// Principal is the client principal of a KERBEROS connection (user@REALM).
	Principal string
	// User and RealUser are what the connection context carried.
	User, RealUser string
	// Protocol is the connection context's protocol.
	Protocol string
	// TokenIdentifier is the identifier a TOKEN connection authenticated with.
	TokenIdentifier []byte
}

// Fault is what the server does to one call instead of (or before) answering it normally.
type Fault struct {
	// Delay waits before answering.
	Delay time.Duration
	// Drop never answers.
	Drop bool
	// Malformed answers with a frame whose header does not decode.
	Malformed bool
	// Oversize answers with a length prefix of 2 GiB-1 and no body.
	Oversize bool
	// CloseConn closes the connection instead of answering.
	CloseConn bool
	// Standby answers with StandbyException.
	Standby bool
	// Unwrapped answers normally but outside the security layer of an auth-int or auth-conf
	// connection, as an attacker on the path would inject a response.
	Unwrapped bool
}

// Server is an in-process fake Hadoop RPC server on 127.0.0.1.
type Server struct {
	opts Options
	ln   net.Listener

	mu       sync.Mutex
	handlers map[[2]string]Handler
	conns    map[*serverConn]struct{}
	infos    []ConnInfo
	calls    map[string]int
	faults   func(*Request) Fault
	reorder  int
	closed   bool

	standby  atomic.Bool
	pings    atomic.Int64
	accepted atomic.Int64
	wg       sync.WaitGroup
}

// NewServer listens on 127.0.0.1:0 (or Options.Addr) and serves until Close. With zero Options it accepts SIMPLE.
func NewServer(opts Options) (*Server, error) {
	if opts.SimpleFirst || opts.Tokens == nil && opts.Kerberos == nil {
		opts.Simple = true
	}
	if opts.QOP == nil {
		opts.QOP = []string{"auth"}
	}
	if opts.Addr == "" {
		opts.Addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return nil, fmt.Errorf("rpctest: listen: %w", err)
	}
	s := &Server{
		opts:     opts,
		ln:       ln,
		handlers: map[[2]string]Handler{},
		conns:    map[*serverConn]struct{}{},
		calls:    map[string]int{},
	}
	s.wg.Add(1)
	go s.accept()
	return s, nil
}

// Addr returns host:port.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Handle registers h for method of protocol (e.g. org.apache.hadoop.yarn.api.ApplicationClientProtocolPB).
func (s *Server) Handle(protocol, method string, h Handler) {
	s.mu.Lock()
	s.handlers[[2]string{protocol, method}] = h
	s.mu.Unlock()
}

// SetFaults installs f, consulted for every call; nil removes it.
func (s *Server) SetFaults(f func(*Request) Fault) {
	s.mu.Lock()
	s.faults = f
	s.mu.Unlock()
}

// SetStandby makes every call fail with StandbyException (like a standby RM) while on.
func (s *Server) SetStandby(on bool) { s.standby.Store(on) }

// SetReorder holds responses on each connection until n are ready and then sends them newest first;
// n <= 1 sends each at once.
func (s *Server) SetReorder(n int) {
	s.mu.Lock()
	s.reorder = n
	s.mu.Unlock()
}

// Calls returns how many calls of method arrived (whatever their outcome).
func (s *Server) Calls(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[method]
}

// Pings returns how many pings (call id -4) arrived.
func (s *Server) Pings() int { return int(s.pings.Load()) }

// Accepted returns how many connections were accepted.
func (s *Server) Accepted() int { return int(s.accepted.Load()) }

// Connections returns the handshakes completed so far.
func (s *Server) Connections() []ConnInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]ConnInfo(nil), s.infos...)
}

// OpenConnections returns the number of connections currently open.
func (s *Server) OpenConnections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// CloseConnections closes every open connection; the server keeps accepting.
func (s *Server) CloseConnections() {
	s.mu.Lock()
	conns := make([]*serverConn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	for _, c := range conns {
		c.close()
	}
}

// Close stops listening, closes every connection and waits for the server's goroutines.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	err := s.ln.Close()
	s.CloseConnections()
	s.wg.Wait()
	return err
}

func (s *Server) accept() {
	defer s.wg.Done()
	for {
		nc, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.accepted.Add(1)
		c := &serverConn{srv: s, nc: nc, br: bufio.NewReaderSize(nc, 64<<10), done: make(chan struct{})}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			_ = nc.Close()
			return
		}
		s.conns[c] = struct{}{}
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			c.serve()
			c.close()
			c.calls.Wait()
			s.mu.Lock()
			delete(s.conns, c)
			s.mu.Unlock()
		}()
	}
}

type serverConn struct {
	srv  *Server
	nc   net.Conn
	br   *bufio.Reader
	info ConnInfo

	wmu  sync.Mutex
	held [][]byte

	layer layer  // after a handshake that negotiated auth-int or auth-conf
	plain []byte // unwrapped request bytes not yet making a whole frame

	calls     sync.WaitGroup
	closeOnce sync.Once
	done      chan struct{}
}

func (c *serverConn) close() {
	c.closeOnce.Do(func() {
		close(c.done)
		_ = c.nc.Close()
	})
}

func (c *serverConn) serve() {
	var pre [7]byte
	if _, err := io.ReadFull(c.br, pre[:]); err != nil {
		return
	}
	if string(pre[:4]) != "hrpc" || pre[4] != 9 {
		return // Hadoop answers wrong versions in its own way; a test only needs the close
	}
	switch pre[6] {
	case authSASL:
		if err := c.sasl(); err != nil {
			var ex *Exception
			if errors.As(err, &ex) {
				c.sendFatal(callIDSASL, ex)
			}
			return
		}
	case authNone:
		if !c.srv.opts.Simple {
			c.sendFatal(-1, &Exception{Class: "org.apache.hadoop.security.AccessControlException",
				Message: "SIMPLE authentication is not enabled.  Available:[TOKEN]"})
			return
		}
		c.info.Auth = "SIMPLE"
	default:
		return
	}
	for {
		frame, err := c.nextFrame()
		if err != nil {
			return
		}
		hb, rest, err := cut(frame)
		if err != nil {
			return
		}
		h := &hadooppb.RpcRequestHeaderProto{}
		if err := proto.Unmarshal(hb, h); err != nil {
			return
		}
		switch id := h.GetCallId(); {
		case id == callIDConnCtx:
			cb, _, err := cut(rest)
			if err != nil {
				return
			}
			cc := &hadooppb.IpcConnectionContextProto{}
			if err := proto.Unmarshal(cb, cc); err != nil {
				return
			}
			c.info.Protocol = cc.GetProtocol()
			if c.info.Auth == "SIMPLE" || c.info.Auth == "KERBEROS" {
				c.info.User = cc.GetUserInfo().GetEffectiveUser()
				c.info.RealUser = cc.GetUserInfo().GetRealUser()
			}
			if c.info.Auth == "KERBEROS" && c.info.User != c.info.Principal {
				// Hadoop compares the context's user with the authenticated principal (full name);
				// another name is a proxy user request, refused without proxy user rules.
				c.sendFatal(callIDConnCtx, &Exception{Class: "org.apache.hadoop.security.authorize.AuthorizationException",
					Message: fmt.Sprintf("User: %s is not allowed to impersonate %s", c.info.Principal, c.info.User)})
				return
			}
			c.srv.mu.Lock()
			c.srv.infos = append(c.srv.infos, c.info)
			c.srv.mu.Unlock()
		case id == callIDPing:
			c.srv.pings.Add(1)
		case id < 0:
			c.sendFatal(id, &Exception{Class: "org.apache.hadoop.ipc.IpcException", Message: fmt.Sprintf("unexpected call id %d", id)})
			return
		default:
			if err := c.dispatch(h, rest); err != nil {
				return
			}
		}
	}
}

func (c *serverConn) dispatch(h *hadooppb.RpcRequestHeaderProto, rest []byte) error {
	rhb, rest, err := cut(rest)
	if err != nil {
		return err
	}
	rh := &hadooppb.RequestHeaderProto{}
	if err := proto.Unmarshal(rhb, rh); err != nil {
		return err
	}
	body, _, err := cut(rest)
	if err != nil {
		return err
	}
	r := &Request{Protocol: rh.GetDeclaringClassProtocolName(), Method: rh.GetMethodName(),
		CallID: h.GetCallId(), Retry: h.GetRetryCount(), Conn: c.info, body: body}
	s := c.srv
	s.mu.Lock()
	s.calls[r.Method]++
	hd := s.handlers[[2]string{r.Protocol, r.Method}]
	faults := s.faults
	s.mu.Unlock()
	c.calls.Add(1)
	go func() {
		defer c.calls.Done()
		var f Fault
		if faults != nil {
			f = faults(r)
		}
		c.answer(r, hd, f)
	}()
	return nil
}

func (c *serverConn) answer(r *Request, hd Handler, f Fault) {
	if f.Delay > 0 {
		t := time.NewTimer(f.Delay)
		select {
		case <-t.C:
		case <-c.done:
			t.Stop()
			return
		}
	}
	switch {
	case f.CloseConn:
		c.close()
		return
	case f.Drop:
		return
	case f.Malformed:
		c.write([]byte{0, 0, 0, 5, 4, 0xff, 0xff, 0xff, 0xff})
		return
	case f.Oversize:
		c.write([]byte{0x7f, 0xff, 0xff, 0xff})
		return
	case f.Standby || c.srv.standby.Load():
		c.sendError(r.CallID, StandbyException())
		return
	}
	if hd == nil {
		c.sendErrorCode(r.CallID, &Exception{Class: "org.apache.hadoop.ipc.RpcNoSuchMethodException",
			Message: fmt.Sprintf("Unknown method %s called on %s protocol.", r.Method, r.Protocol)},
			hadooppb.RpcResponseHeaderProto_ERROR_NO_SUCH_METHOD)
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		select {
		case <-c.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	resp, err := hd(ctx, r)
	cancel()
	if err != nil {
		var ex *Exception
		if !errors.As(err, &ex) {
			ex = &Exception{Class: "java.io.IOException", Message: err.Error()}
		}
		if ex.Fatal {
			c.sendFatal(r.CallID, ex)
			c.close()
			return
		}
		c.sendError(r.CallID, ex)
		return
	}
	h := &hadooppb.RpcResponseHeaderProto{
		CallId:              proto.Uint32(uint32(r.CallID)),
		Status:              hadooppb.RpcResponseHeaderProto_SUCCESS.Enum(),
		ServerIpcVersionNum: proto.Uint32(9),
	}
	frame := frameOf(h)
	if resp != nil {
		frame = frameOf(h, resp)
	}
	if f.Unwrapped {
		c.wmu.Lock()
		_, _ = c.nc.Write(frame)
		c.wmu.Unlock()
		return
	}
	c.write(frame)
}

func (c *serverConn) sendError(id int32, ex *Exception) {
	c.sendErrorCode(id, ex, hadooppb.RpcResponseHeaderProto_ERROR_APPLICATION)
}

func (c *serverConn) sendErrorCode(id int32, ex *Exception, code hadooppb.RpcResponseHeaderProto_RpcErrorCodeProto) {
	c.write(frameOf(&hadooppb.RpcResponseHeaderProto{
		CallId:             proto.Uint32(uint32(id)),
		Status:             hadooppb.RpcResponseHeaderProto_ERROR.Enum(),
		ExceptionClassName: proto.String(ex.Class),
		// Hadoop sends the stack trace too; clients must strip it.
		ErrorMsg:            proto.String(ex.Class + ": " + ex.Message + "\n\tat org.example.Fake.call(Fake.java:1)"),
		ErrorDetail:         code.Enum(),
		ServerIpcVersionNum: proto.Uint32(9),
	}))
}

func (c *serverConn) sendFatal(id int32, ex *Exception) {
	c.write(frameOf(&hadooppb.RpcResponseHeaderProto{
		CallId:              proto.Uint32(uint32(id)),
		Status:              hadooppb.RpcResponseHeaderProto_FATAL.Enum(),
		ExceptionClassName:  proto.String(ex.Class),
		ErrorMsg:            proto.String(ex.Message),
		ErrorDetail:         hadooppb.RpcResponseHeaderProto_FATAL_UNAUTHORIZED.Enum(),
		ServerIpcVersionNum: proto.Uint32(9),
	}))
}

// nextFrame returns the next request frame: as read, or reassembled from the unwrapped bytes of
// WRAP messages once a security layer is on.
func (c *serverConn) nextFrame() ([]byte, error) {
	if c.layer == nil {
		return readFrame(c.br)
	}
	for {
		if len(c.plain) >= 4 {
			n := int(binary.BigEndian.Uint32(c.plain))
			if n > maxFrame {
				return nil, fmt.Errorf("request frame of %d bytes", n)
			}
			if len(c.plain) >= 4+n {
				f := c.plain[4 : 4+n]
				c.plain = c.plain[4+n:]
				return f, nil
			}
		}
		m, err := c.readSASL()
		if err != nil {
			return nil, err
		}
		if m.GetState() != hadooppb.RpcSaslProto_WRAP {
			return nil, fmt.Errorf("SASL %v where WRAP was expected", m.GetState())
		}
		b, err := c.layer.unwrap(m.GetToken())
		if err != nil {
			c.sendFatal(callIDSASL, saslFailure(err.Error()))
			return nil, err
		}
		c.plain = append(c.plain, b...)
	}
}

// protect wraps a response frame in a SASL WRAP message once a security layer is on; called under
// wmu, in the order frames go out.
func (c *serverConn) protect(frame []byte) []byte {
	if c.layer == nil {
		return frame
	}
	tok, err := c.layer.wrap(frame)
	if err != nil {
		return nil
	}
	saslID := int32(callIDSASL)
	return frameOf(&hadooppb.RpcResponseHeaderProto{
		CallId: proto.Uint32(uint32(saslID)),
		Status: hadooppb.RpcResponseHeaderProto_SUCCESS.Enum(),
	}, &hadooppb.RpcSaslProto{State: hadooppb.RpcSaslProto_WRAP.Enum(), Token: tok})
}

// write sends a frame, or holds it while reordering.
func (c *serverConn) write(frame []byte) {
	c.srv.mu.Lock()
	n := c.srv.reorder
	c.srv.mu.Unlock()
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if n > 1 {
		c.held = append(c.held, frame)
		if len(c.held) < n {
			return
		}
		for i := len(c.held) - 1; i >= 0; i-- {
			if _, err := c.nc.Write(c.protect(c.held[i])); err != nil {
				break
			}
		}
		c.held = nil
		return
	}
	_, _ = c.nc.Write(c.protect(frame))
}

func (c *serverConn) writeSASL(m *hadooppb.RpcSaslProto) error {
	saslID := int32(callIDSASL)
	_, err := c.nc.Write(frameOf(&hadooppb.RpcResponseHeaderProto{
		CallId: proto.Uint32(uint32(saslID)),
		Status: hadooppb.RpcResponseHeaderProto_SUCCESS.Enum(),
	}, m))
	return err
}

func (c *serverConn) readSASL() (*hadooppb.RpcSaslProto, error) {
	frame, err := readFrame(c.br)
	if err != nil {
		return nil, err
	}
	hb, rest, err := cut(frame)
	if err != nil {
		return nil, err
	}
	h := &hadooppb.RpcRequestHeaderProto{}
	if err := proto.Unmarshal(hb, h); err != nil {
		return nil, err
	}
	if h.GetCallId() != callIDSASL {
		return nil, &Exception{Class: "javax.security.sasl.SaslException", Message: fmt.Sprintf("call id %d during SASL", h.GetCallId())}
	}
	mb, _, err := cut(rest)
	if err != nil {
		return nil, err
	}
	m := &hadooppb.RpcSaslProto{}
	return m, proto.Unmarshal(mb, m)
}

// sasl runs the server side of the handshake; on success c.info.Auth is set.
func (c *serverConn) sasl() error {
	m, err := c.readSASL()
	if err != nil {
		return err
	}
	if m.GetState() != hadooppb.RpcSaslProto_NEGOTIATE {
		return saslFailure(fmt.Sprintf("expected NEGOTIATE, got %v", m.GetState()))
	}
	o := c.srv.opts
	if o.Tokens == nil && o.Kerberos == nil && !o.SimpleFirst { // nothing to authenticate: switch the client to SIMPLE at once
		c.info.Auth = "SIMPLE"
		return c.writeSASL(&hadooppb.RpcSaslProto{State: hadooppb.RpcSaslProto_SUCCESS.Enum()})
	}
	ch, err := newDigestChallenge(o.QOP)
	if err != nil {
		return err
	}
	neg := &hadooppb.RpcSaslProto{State: hadooppb.RpcSaslProto_NEGOTIATE.Enum()}
	simple := &hadooppb.RpcSaslProto_SaslAuth{Method: proto.String("SIMPLE"), Mechanism: proto.String("")}
	if o.SimpleFirst {
		neg.Auths = append(neg.Auths, simple)
	}
	if o.Tokens != nil {
		neg.Auths = append(neg.Auths, &hadooppb.RpcSaslProto_SaslAuth{
			Method: proto.String("TOKEN"), Mechanism: proto.String("DIGEST-MD5"),
			Protocol: proto.String(""), ServerId: proto.String("default"), Challenge: ch.bytes(),
		})
	}
	if o.Kerberos != nil {
		neg.Auths = append(neg.Auths, &hadooppb.RpcSaslProto_SaslAuth{
			Method: proto.String("KERBEROS"), Mechanism: proto.String("GSSAPI"),
			Protocol: proto.String(o.Kerberos.Service), ServerId: proto.String(o.Kerberos.Host),
		})
	}
	if o.Simple && !o.SimpleFirst {
		neg.Auths = append(neg.Auths, simple)
	}
	if err := c.writeSASL(neg); err != nil {
		return err
	}
	m, err = c.readSASL()
	if err != nil {
		return err
	}
	if m.GetState() != hadooppb.RpcSaslProto_INITIATE || len(m.GetAuths()) != 1 {
		return saslFailure(fmt.Sprintf("expected INITIATE with one auth, got %v with %d", m.GetState(), len(m.GetAuths())))
	}
	switch a := m.GetAuths()[0]; {
	case a.GetMethod() == "SIMPLE" && o.Simple:
		c.info.Auth = "SIMPLE"
		return nil
	case a.GetMethod() == "TOKEN" && a.GetMechanism() == "DIGEST-MD5" && o.Tokens != nil:
		out, err := ch.verifyFull(m.GetToken(), func(id []byte) ([]byte, bool) {
			pw, ok := o.Tokens[string(id)]
			return pw, ok
		})
		if err != nil {
			return err
		}
		c.info.Auth, c.info.TokenIdentifier, c.info.QOP = "TOKEN", out.identifier, out.qop
		if out.qop != "auth" {
			c.layer = newDigestServerLayer(out.ha1, out.qop == "auth-conf")
		}
		return c.writeSASL(&hadooppb.RpcSaslProto{State: hadooppb.RpcSaslProto_SUCCESS.Enum(), Token: out.final})
	case a.GetMethod() == "KERBEROS" && a.GetMechanism() == "GSSAPI" && o.Kerberos != nil:
		return c.gssapi(m.GetToken())
	default:
		return &Exception{Class: "org.apache.hadoop.security.AccessControlException",
			Message: fmt.Sprintf("Client cannot authenticate via:[%s]", a.GetMethod())}
	}
}

// gssapi runs the rest of a KERBEROS handshake after the client's AP-REQ.
func (c *serverConn) gssapi(apreq []byte) error {
	acc := &gssAcceptor{k: c.srv.opts.Kerberos}
	aprep, err := acc.accept(apreq)
	if err != nil {
		return err
	}
	if err := c.writeSASL(&hadooppb.RpcSaslProto{State: hadooppb.RpcSaslProto_CHALLENGE.Enum(), Token: aprep}); err != nil {
		return err
	}
	m, err := c.readSASL()
	if err != nil {
		return err
	}
	if m.GetState() != hadooppb.RpcSaslProto_RESPONSE || len(m.GetToken()) != 0 {
		return saslFailure(fmt.Sprintf("GSSAPI: expected an empty RESPONSE after the AP-REP, got %v with %d bytes", m.GetState(), len(m.GetToken())))
	}
	offer, err := acc.offer()
	if err != nil {
		return err
	}
	if err := c.writeSASL(&hadooppb.RpcSaslProto{State: hadooppb.RpcSaslProto_CHALLENGE.Enum(), Token: offer}); err != nil {
		return err
	}
	if m, err = c.readSASL(); err != nil {
		return err
	}
	if m.GetState() != hadooppb.RpcSaslProto_RESPONSE {
		return saslFailure(fmt.Sprintf("GSSAPI: expected RESPONSE with the security layer choice, got %v", m.GetState()))
	}
	if err := acc.choice(m.GetToken()); err != nil {
		return err
	}
	c.info.Auth, c.info.Principal, c.info.QOP = "KERBEROS", acc.client, acc.chosen
	if acc.chosen != "auth" {
		c.layer = acc
	}
	return c.writeSASL(&hadooppb.RpcSaslProto{State: hadooppb.RpcSaslProto_SUCCESS.Enum()})
}

func readFrame(r io.Reader) ([]byte, error) {
	var lb [4]byte
	if _, err := io.ReadFull(r, lb[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(lb[:])
	if n > maxFrame {
		return nil, fmt.Errorf("request frame of %d bytes", n)
	}
	b := make([]byte, n)
	_, err := io.ReadFull(r, b)
	return b, err
}

func cut(b []byte) (msg, rest []byte, err error) {
	n, k := protowire.ConsumeVarint(b)
	if k < 0 || n > uint64(len(b)-k) {
		return nil, nil, errors.New("bad delimited message")
	}
	return b[k : k+int(n)], b[k+int(n):], nil
}

func frameOf(msgs ...proto.Message) []byte {
	b := make([]byte, 4, 64)
	for _, m := range msgs {
		b = protowire.AppendVarint(b, uint64(proto.Size(m)))
		b, _ = proto.MarshalOptions{AllowPartial: true}.MarshalAppend(b, m)
	}
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b
}
