package rpctest

import (
	"bufio"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
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
