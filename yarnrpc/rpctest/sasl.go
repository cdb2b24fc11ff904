package rpctest

import (
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// The server side of the SASL handshake: SIMPLE, TOKEN (DIGEST-MD5) and KERBEROS (GSSAPI).

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
