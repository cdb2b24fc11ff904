package yarnrpc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// mechanism is one SASL client authentication: DIGEST-MD5 (digestmd5.go) for tokens, GSSAPI
// (gssapi.go) for Kerberos. With auth-int or auth-conf its wrap/unwrap protect every message after
// the handshake, which then travels inside an RpcSaslProto WRAP message with call id -33
// (sasl_wrap.go).
type mechanism interface {
	// name is the SASL mechanism name, e.g. DIGEST-MD5.
	name() string
	// start returns the initial response of mechanisms that speak first (nil for DIGEST-MD5).
	start() ([]byte, error)
	// step answers a server challenge; the server's final message (in SUCCESS) is also passed here so
	// the mechanism can verify the server.
	step(challenge []byte) ([]byte, error)
	// complete reports whether the mechanism has verified the server.
	complete() bool
	// qop is the negotiated quality of protection: auth, auth-int or auth-conf.
	qop() string
	// wrap and unwrap protect traffic for auth-int and auth-conf. Conn calls wrap from one writer at
	// a time and unwrap from its one reader.
	wrap(p []byte) ([]byte, error)
	unwrap(p []byte) ([]byte, error)
	// maxWrap is the largest message the server accepts wrapped at once; longer frames are sent as
	// several WRAP messages (the server reassembles the byte stream).
	maxWrap() int
}

// maxSASLRounds bounds the handshake; DIGEST-MD5 needs two server messages after NEGOTIATE.
const maxSASLRounds = 8

// saslTarget is the server a handshake is with: what Kerberos needs to check its principal, and
// whether the server may switch the connection to SIMPLE.
type saslTarget struct {
	addr        string // as dialed, host:port
	protocol    string // the connection's protocol
	allowSimple bool   // see ConnOptions.simpleFallbackAllowed
	weakCiphers bool   // ConnOptions.WeakDigestCiphersAllowed
}

// KeyFallbackToSimpleAllowed is Hadoop's switch that lets a secure client accept a server that asks
// to fall back to SIMPLE (unauthenticated) connections.
const KeyFallbackToSimpleAllowed = "ipc.client.fallback-to-simple-auth-allowed"

// errSimpleFallback is the refusal of a server that asked a TOKEN or KERBEROS client to continue as
// SIMPLE. Such a server has proved nothing about itself: a client that went on would send it
// tokens and secrets in cleartext (docs/design.md, ## Security).
func errSimpleFallback(t saslTarget, m AuthMethod, how string) error {
	return saslErr(fmt.Sprintf("the server at %s %s, asking to fall back to SIMPLE authentication; this client "+
		"authenticates with %v and refuses unauthenticated servers (set %s=true to allow it, which gives up "+
		"authenticating the server)", t.addr, how, m, KeyFallbackToSimpleAllowed))
}

// saslResult is how a SASL handshake ended.
type saslResult struct {
	method AuthMethod // AuthSimple when the server switched the connection to SIMPLE
	mech   mechanism  // nil for SIMPLE
}

// saslHandshake runs Hadoop's SASL exchange on rw (after the preamble with auth protocol SASL):
// NEGOTIATE, the server's offered auths (for TOKEN with the DIGEST-MD5 challenge inside), INITIATE,
// CHALLENGE/RESPONSE rounds, SUCCESS. A server that does not need authentication answers NEGOTIATE
// with SUCCESS, or offers only SIMPLE: the connection then continues as SIMPLE if target.allowSimple,
// and fails otherwise.
func saslHandshake(ctx context.Context, rw io.ReadWriter, target saslTarget, auth Auth, qops []string, maxFrame int) (saslResult, error) {
	if err := writeSASL(rw, &hadooppb.RpcSaslProto{State: hadooppb.RpcSaslProto_NEGOTIATE.Enum()}); err != nil {
		return saslResult{}, err
	}
	var mech mechanism
	for round := 0; round < maxSASLRounds; round++ {
		msg, err := readSASL(rw, maxFrame)
		if err != nil {
			return saslResult{}, err
		}
		switch msg.GetState() {
		case hadooppb.RpcSaslProto_NEGOTIATE:
			if mech != nil {
				return saslResult{}, saslErr("server sent NEGOTIATE twice")
			}
			chosen, m, err := selectAuth(ctx, msg.GetAuths(), target, auth, qops)
			if err != nil {
				return saslResult{}, err
			}
			if err := ctx.Err(); err != nil {
				return saslResult{}, err
			}
			reply := &hadooppb.RpcSaslProto{State: hadooppb.RpcSaslProto_INITIATE.Enum()}
			if m == nil { // SIMPLE: no answer expected
				if !target.allowSimple {
					return saslResult{}, errSimpleFallback(target, auth.Method, "offers only SIMPLE")
				}
				reply.Auths = []*hadooppb.RpcSaslProto_SaslAuth{chosen}
				return saslResult{method: AuthSimple}, writeSASL(rw, reply)
			}
			mech = m
			var tok []byte
			if chosen.Challenge != nil {
				tok, err = mech.step(chosen.Challenge)
			} else {
				tok, err = mech.start()
			}
			if err != nil {
				return saslResult{}, saslErr(err.Error())
			}
			sent := proto.Clone(chosen).(*hadooppb.RpcSaslProto_SaslAuth)
			sent.Challenge = nil
			reply.Auths = []*hadooppb.RpcSaslProto_SaslAuth{sent}
			reply.Token = nonNil(tok)
			if err := writeSASL(rw, reply); err != nil {
				return saslResult{}, err
			}
		case hadooppb.RpcSaslProto_CHALLENGE:
			if mech == nil {
				return saslResult{}, saslErr("server sent CHALLENGE before NEGOTIATE")
			}
			tok, err := mech.step(msg.GetToken())
			if err != nil {
				return saslResult{}, saslErr(err.Error())
			}
			reply := &hadooppb.RpcSaslProto{State: hadooppb.RpcSaslProto_RESPONSE.Enum(), Token: nonNil(tok)}
			if err := writeSASL(rw, reply); err != nil {
				return saslResult{}, err
			}
		case hadooppb.RpcSaslProto_SUCCESS:
			if mech == nil { // the server switched us to SIMPLE
				if !target.allowSimple {
					return saslResult{}, errSimpleFallback(target, auth.Method, "answered the SASL negotiation with SUCCESS")
				}
				return saslResult{method: AuthSimple}, nil
			}
			if !mech.complete() {
				if _, err := mech.step(msg.GetToken()); err != nil {
					return saslResult{}, saslErr(err.Error())
				}
			}
			if !mech.complete() {
				return saslResult{}, saslErr("server reported SUCCESS before " + mech.name() + " completed")
			}
			return saslResult{method: auth.Method, mech: mech}, nil
		default:
			return saslResult{}, saslErr(fmt.Sprintf("unexpected SASL state %v from the server", msg.GetState()))
		}
	}
	return saslResult{}, saslErr(fmt.Sprintf("no SASL outcome after %d rounds", maxSASLRounds))
}

// selectAuth picks the first offered auth this client can do, SIMPLE only when the server offers
// nothing else this client can do (as Hadoop's client does: a SIMPLE listed first cannot downgrade a
// connection that could authenticate); nil mechanism means SIMPLE.
func selectAuth(ctx context.Context, offered []*hadooppb.RpcSaslProto_SaslAuth, target saslTarget, auth Auth, qops []string) (*hadooppb.RpcSaslProto_SaslAuth, mechanism, error) {
	var names []string
	var simple *hadooppb.RpcSaslProto_SaslAuth
	for _, a := range offered {
		names = append(names, a.GetMethod()+"/"+a.GetMechanism())
		switch {
		case a.GetMethod() == "TOKEN" && a.GetMechanism() == "DIGEST-MD5" && auth.Method == AuthToken:
			return a, newDigestMD5Client(*auth.Token, a.GetProtocol(), a.GetServerId(), qops, target.weakCiphers), nil
		case a.GetMethod() == "KERBEROS" && a.GetMechanism() == "GSSAPI" && auth.Method == AuthKerberos:
			spn, err := checkServerPrincipal(ctx, a, target, auth)
			if err != nil {
				return nil, nil, err
			}
			return a, newGSSAPIClient(auth.Kerberos, spn, qops), nil
		case a.GetMethod() == "SIMPLE" && simple == nil:
			simple = a
		}
	}
	if simple != nil {
		return simple, nil, nil
	}
	advice := ""
	if auth.Method != AuthKerberos && contains(names, "KERBEROS/GSSAPI") {
		advice = " (the cluster uses Kerberos: log in with kinit or --principal/--keytab)"
	}
	return nil, nil, saslErr(fmt.Sprintf("the server offers %s; this client authenticates with %v%s",
		strings.Join(names, ", "), auth.Method, advice))
}

// checkServerPrincipal compares the principal the server names in its KERBEROS offer (protocol
// "rm", server id "host" for rm/host@REALM) with the configured one, _HOST resolved to the canonical
// name of the dialed host (or with the configured pattern), and returns the service name to get a
// ticket for. A server with another principal is not the one configured: we refuse it before
// sending a ticket.
func checkServerPrincipal(ctx context.Context, a *hadooppb.RpcSaslProto_SaslAuth, target saslTarget, auth Auth) (string, error) {
	if a.GetProtocol() == "" || a.GetServerId() == "" {
		return "", saslErr(fmt.Sprintf("the server at %s offers KERBEROS without its principal (protocol %q, server id %q)",
			target.addr, a.GetProtocol(), a.GetServerId()))
	}
	spn := a.GetProtocol() + "/" + a.GetServerId()
	key := PrincipalKeyFor(target.protocol)
	if key == "" {
		key = "the server principal"
	}
	if p := auth.ServerPrincipalPattern; p != "" {
		_, realm, _ := strings.Cut(p, "@")
		got := spn
		if realm != "" {
			got += "@" + realm
		}
		if !globMatch(p, got) {
			return "", saslErr(fmt.Sprintf("the server at %s has Kerberos principal %s, which does not match %s.pattern=%s",
				target.addr, got, key, p))
		}
		return spn, nil
	}
	want := auth.ServerPrincipal
	if strings.Contains(want, "/_HOST") {
		want = ResolvePrincipal(want, canonicalHost(ctx, target.addr))
	}
	wantName, wantRealm, _ := strings.Cut(want, "@")
	got := spn
	if wantRealm != "" {
		got += "@" + wantRealm
	}
	if !strings.EqualFold(spn, wantName) {
		return "", saslErr(fmt.Sprintf("the server at %s has Kerberos principal %s, but %s=%s expects %s",
			target.addr, got, key, auth.ServerPrincipal, want))
	}
	return spn, nil
}

func writeSASL(w io.Writer, m *hadooppb.RpcSaslProto) error {
	f, err := encodeFrame(requestHeader(callIDSASL, []byte{}, -1), m)
	if err != nil {
		return err
	}
	_, err = w.Write(f)
	return err
}

func readSASL(r io.Reader, maxFrame int) (*hadooppb.RpcSaslProto, error) {
	frame, err := readFrame(r, maxFrame)
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		// Hadoop 3.4 sometimes closes without its answer when it refuses a token ("Auth failed ...
		// IO error acquiring password" followed by a NullPointerException in the server log).
		return nil, fmt.Errorf("server closed the connection during SASL authentication "+
			"(an unknown, expired or wrong token is the usual reason; see the server log): %w", err)
	}
	if err != nil {
		return nil, err
	}
	h, body, err := decodeResponse(frame)
	if err != nil {
		return nil, err
	}
	if h.GetStatus() != hadooppb.RpcResponseHeaderProto_SUCCESS {
		return nil, newRemoteError(h, "")
	}
	if id := int32(h.GetCallId()); id != callIDSASL {
		return nil, fmt.Errorf("SASL: response for call id %d during the handshake, want %d", id, callIDSASL)
	}
	m := &hadooppb.RpcSaslProto{}
	if err := proto.Unmarshal(body, m); err != nil {
		return nil, fmt.Errorf("SASL: server message: %w", err)
	}
	return m, nil
}

// saslError is a local SASL failure; it matches ErrAccessControl.
type saslError struct{ msg string }

func saslErr(msg string) error { return &saslError{msg: msg} }

func (e *saslError) Error() string { return "SASL: " + e.msg }

func (e *saslError) Is(target error) bool { return target == ErrAccessControl }

func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}
