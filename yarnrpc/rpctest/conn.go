package rpctest

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"

	"google.golang.org/protobuf/proto"

	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// One accepted connection: the connection header, the read loop, and writes through the
// negotiated security layer.

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
