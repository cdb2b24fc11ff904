package yarnrpc

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/yarn-am/yarn-am/internal/hadoop"
)

// What a client command (a person waiting) needs from a dead or wrong server: a clear error within
// seconds naming each server, where its address came from and the likely fix, and a progress line
// while a server that accepted the connection stays silent. The AM keeps the patient default
// instead: a running AM must outlive RM restarts.

// ErrHTTPServer: the server answered the Hadoop RPC preamble in HTTP, so the address is a web port.
// UnreachableError names the ports of the server's role (ResourceManager, NameNode).
var ErrHTTPServer = errors.New("this is an HTTP server — is this a web port instead of the RPC port?")

// rolePorts are the default web and RPC ports of a role, for the HTTP hint.
var rolePorts = map[string][2]string{
	"ResourceManager": {"8088", "8032"},
	"NameNode":        {"9870", "8020"},
}

func httpHint(role string) string {
	if p, ok := rolePorts[role]; ok {
		return fmt.Sprintf("this is an HTTP server — is this the web port (%s) instead of the RPC port (%s)?", p[0], p[1])
	}
	return ErrHTTPServer.Error()
}

// DefaultProgressAfter is when a call still waiting on a server reports progress, when
// ClientOptions.ProgressAfter is 0.
const DefaultProgressAfter = 5 * time.Second

// Endpoint describes one server address of a Client for messages.
type Endpoint struct {
	// Addr is host:port, as in ClientOptions.Addresses.
	Addr string
	// ID is the RM id with RM HA (e.g. rm1), else "".
	ID string
	// Origin says where the address came from, e.g. "yarn.resourcemanager.address in
	// /etc/hadoop/yarn-site.xml".
	Origin string
}

// String reads "rm1 (127.0.0.1:8032, yarn.resourcemanager.address.rm1 in /etc/hadoop/yarn-site.xml)".
// Without an RM id: "127.0.0.1:8032 (yarn.resourcemanager.address in ...)".
func (e Endpoint) String() string {
	switch {
	case e.ID != "" && e.Origin != "":
		return e.ID + " (" + e.Addr + ", " + e.Origin + ")"
	case e.ID != "":
		return e.ID + " (" + e.Addr + ")"
	case e.Origin != "":
		return e.Addr + " (" + e.Origin + ")"
	}
	return e.Addr
}

// failKind classifies why a server could not serve a call at all, so that a fail-fast Client can
// give up at once; "" means it may only be slow, or the call itself failed.
type failKind string

const (
	failRefused     failKind = "connection refused"
	failUnknownHost failKind = "unknown host"
	failHTTP        failKind = "HTTP server"
	failStandby     failKind = "standby"
)

// quickTries is how often a fail-fast Client tries a server that failed so; the delays between
// tries are FailFastBackoff's.
func (k failKind) quickTries() int {
	switch k {
	case failRefused, failStandby:
		return 3 // a server just restarting gets a second and a half
	}
	return 1
}

// FailFastBackoff spaces the few retries of a fail-fast Client (ClientOptions.FailFast).
var FailFastBackoff = Backoff{Base: 250 * time.Millisecond, Max: time.Second}

func classify(err error) failKind {
	var de *net.DNSError
	switch {
	case errors.Is(err, ErrHTTPServer):
		return failHTTP
	case errors.As(err, &de):
		return failUnknownHost
	case errors.Is(err, syscall.ECONNREFUSED):
		return failRefused
	case errors.Is(err, ErrStandby):
		return failStandby
	}
	return ""
}

// ServerFailure is what happened to one server of an UnreachableError.
type ServerFailure struct {
	Endpoint
	// Err is the last error from the server.
	Err  error
	kind failKind
	role string
}

func (f ServerFailure) what() string {
	switch f.kind {
	case failRefused:
		return "connection refused (nothing listens there)"
	case failUnknownHost:
		h := hadoop.NodeHost(f.Addr)
		var de *net.DNSError
		if errors.As(f.Err, &de) && !de.IsNotFound {
			return fmt.Sprintf("cannot resolve host %q (%s)", h, de.Err)
		}
		return fmt.Sprintf("unknown host %q", h)
	case failHTTP:
		return httpHint(f.role)
	case failStandby:
		return "standby (not the active ResourceManager)"
	}
	return f.Err.Error()
}

// UnreachableError is a fail-fast Client's verdict: no server could serve the call. Its message
// names every server with what happened to it and the likely fix; it matches the errors of the
// servers (ErrConnection, ErrStandby, ErrHTTPServer, syscall.ECONNREFUSED ...).
type UnreachableError struct {
	// Role is what the servers are, e.g. "ResourceManager".
	Role string
	// Method is the call that could not be made.
	Method string
	// Servers are the servers tried, in configuration order.
	Servers []ServerFailure
}

func (e *UnreachableError) Error() string {
	var b strings.Builder
	role := e.Role
	if role == "" {
		role = "server"
	}
	if len(e.Servers) == 1 {
		f := e.Servers[0]
		fmt.Fprintf(&b, "yarnrpc: %s: cannot reach the %s at %s: %s", e.Method, role, f.Endpoint, f.what())
	} else {
		fmt.Fprintf(&b, "yarnrpc: %s: cannot reach any %s: ", e.Method, role)
		for i, f := range e.Servers {
			if i > 0 {
				b.WriteString("; ")
			}
			fmt.Fprintf(&b, "%s: %s", f.Endpoint, f.what())
		}
	}
	if fix := e.fix(); fix != "" {
		if !strings.HasSuffix(b.String(), "?") {
			b.WriteString(".")
		}
		b.WriteString(" " + fix)
	}
	return b.String()
}

// fix is the likely remedy, from the failures seen.
func (e *UnreachableError) fix() string {
	kinds := map[failKind]bool{}
	var origins []string
	for _, f := range e.Servers {
		kinds[f.kind] = true
		if f.Origin != "" && !contains(origins, f.Origin) {
			origins = append(origins, f.Origin)
		}
	}
	where := "the configured address"
	if len(origins) > 0 {
		where = strings.Join(origins, ", ")
	}
	switch {
	case kinds[failHTTP]:
		rpc := ""
		if p, ok := rolePorts[e.Role]; ok {
			rpc = " (port " + p[1] + " by default for the " + e.Role + ")"
		}
		return "Set the RPC address" + rpc + ", not the web address, in " + where
	case kinds[failUnknownHost]:
		return "Check the host name in " + where
	case kinds[failStandby] && !kinds[failRefused]:
		return "No ResourceManager is active: a failover may be in progress; try again shortly"
	case kinds[failRefused]:
		return "Is the " + roleOr(e.Role) + " running there, and does HADOOP_CONF_DIR (or YARN_CONF_DIR) hold this cluster's configuration?"
	}
	return ""
}

func roleOr(r string) string {
	if r == "" {
		return "server"
	}
	return r
}

// Unwrap returns the servers' errors.
func (e *UnreachableError) Unwrap() []error {
	out := make([]error, 0, len(e.Servers))
	for _, f := range e.Servers {
		out = append(out, f.Err)
	}
	return out
}

// startProgress reports, once per call, that a call is still waiting after ProgressAfter: a server
// that accepted the connection but does not answer looks exactly like a slow one, so the person
// waiting is told what for (TestClientSilentServerReportsProgress).
func (c *Client) startProgress(ctx context.Context, method string) (stop func()) {
	if c.opts.ProgressAfter < 0 {
		return func() {}
	}
	after := c.opts.ProgressAfter
	if after == 0 {
		after = DefaultProgressAfter
	}
	t := time.AfterFunc(after, func() {
		addr := c.Active()
		msg := fmt.Sprintf("yarnrpc: %s: still waiting after %s for the %s at %s", method, after.Round(time.Second),
			roleOr(c.opts.Role), c.endpoint(addr))
		switch st := c.stateOf(addr); st {
		case "connected":
			msg += ", which accepted the connection but has not answered yet (a stopped or overloaded server, or not a Hadoop RPC server?)"
		default:
			msg += ", which has not completed the connection handshake yet (a stopped or overloaded server, or not a Hadoop RPC server?)"
		}
		if dl, ok := ctx.Deadline(); ok {
			msg += fmt.Sprintf("; giving up in %s", time.Until(dl).Round(time.Second))
		}
		if c.opts.Progress != nil {
			c.opts.Progress(msg)
		} else {
			c.log.Info(msg)
		}
	})
	return func() { t.Stop() }
}

// stateOf says whether a connection to addr is open.
func (c *Client) stateOf(addr string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, cn := range c.conns {
		if k.addr == addr && !cn.isClosed() {
			return "connected"
		}
	}
	return "connecting"
}

func (c *Client) endpoint(addr string) Endpoint {
	for _, e := range c.opts.Endpoints {
		if e.Addr == addr {
			return e
		}
	}
	return Endpoint{Addr: addr}
}
