package yarnrpc

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/jcmturner/gokrb5/v8/client"
	"github.com/jcmturner/gokrb5/v8/crypto"
	"github.com/jcmturner/gokrb5/v8/gssapi"
	"github.com/jcmturner/gokrb5/v8/iana/flags"
	"github.com/jcmturner/gokrb5/v8/iana/keyusage"
	"github.com/jcmturner/gokrb5/v8/messages"
	"github.com/jcmturner/gokrb5/v8/spnego"
	"github.com/jcmturner/gokrb5/v8/types"
)

// SASL GSSAPI (RFC 4752) with the Kerberos V5 GSS mechanism (RFC 4121), client side, as Hadoop's
// servers (the JDK's GSSAPI SASL server) run it:
//
//	client INITIATE  AP-REQ initial context token (mutual authentication requested)
//	server CHALLENGE AP-REP (mutual authentication: the server proves it has the service key)
//	client RESPONSE  empty
//	server CHALLENGE wrap(4 bytes: offered security layers, server's maximum message size)
//	client RESPONSE  wrap(4 bytes: chosen layer, our maximum message size)
//	server SUCCESS
//
// gokrb5 builds the AP-REQ and computes the wrap token checksums; it has no sealed (encrypted) wrap
// tokens, which privacy needs, so those are made here with its encryption types.

// GSSAPI security layer bits of RFC 4752.
const (
	gssLayerNone      = 1
	gssLayerIntegrity = 2
	gssLayerPrivacy   = 4
	// gssClientMaxBuf is the largest wrapped message we accept, as we announce it.
	gssClientMaxBuf = 65536
	// gssWrapOverhead bounds what a wrap token adds to its payload (header, encrypted header copy,
	// confounder, checksum).
	gssWrapOverhead = 16 + 16 + 16 + 32
)

// RFC 4121 wrap token flags.
const (
	gssFlagSentByAcceptor = 0x01
	gssFlagSealed         = 0x02
	gssFlagAcceptorSubkey = 0x04
)

// ticketSource gets service tickets; *Kerberos is the real one, tests use fakes.
type ticketSource interface {
	serviceTicket(spn string) (messages.Ticket, types.EncryptionKey, error)
	client() *client.Client
}

// gssapiClient is one GSSAPI authentication and, after it, the connection's security layer.
type gssapiClient struct {
	creds   ticketSource
	spn     string   // service/host of the server
	wantQOP []string // acceptable QOPs, most preferred first

	stage   int // 0 start, 1 waiting for AP-REP, 2 waiting for the layer offer, 3 done
	session types.EncryptionKey
	key     types.EncryptionKey // the key of wrap tokens: acceptor subkey, else the session key
	subkey  bool                // key is the acceptor's subkey
	ctime   types.Authenticator // the authenticator we sent, to check the AP-REP against
	sendSeq uint64
	recvSeq uint64
	chosen  string
	srvMax  int
}

func newGSSAPIClient(creds ticketSource, spn string, wantQOP []string) *gssapiClient {
	return &gssapiClient{creds: creds, spn: spn, wantQOP: wantQOP}
}

func (g *gssapiClient) name() string   { return "GSSAPI" }
func (g *gssapiClient) complete() bool { return g.stage == 3 }
func (g *gssapiClient) qop() string    { return g.chosen }

func (g *gssapiClient) maxWrap() int {
	if g.srvMax == 0 {
		return 0 // the server named no limit
	}
	return max(g.srvMax-gssWrapOverhead, 1)
}

// start returns the initial context token: the AP-REQ for the server's service ticket.
func (g *gssapiClient) start() ([]byte, error) {
	if g.stage != 0 {
		return nil, errors.New("GSSAPI: start called twice")
	}
	tkt, key, err := g.creds.serviceTicket(g.spn)
	if err != nil {
		return nil, err
	}
	tok, err := spnego.NewKRB5TokenAPREQ(g.creds.client(), tkt, key,
		[]int{gssapi.ContextFlagMutual, gssapi.ContextFlagInteg, gssapi.ContextFlagConf},
		[]int{flags.APOptionMutualRequired})
	if err != nil {
		return nil, fmt.Errorf("GSSAPI: AP-REQ for %s: %w", g.spn, err)
	}
	// The authenticator's sequence number starts our wrap tokens, and its time is what the AP-REP
	// must echo.
	if err := tok.APReq.DecryptAuthenticator(key); err != nil {
		return nil, fmt.Errorf("GSSAPI: AP-REQ for %s: %w", g.spn, err)
	}
	g.ctime = tok.APReq.Authenticator
	g.sendSeq = uint64(g.ctime.SeqNumber)
	g.session, g.key = key, key
	b, err := tok.Marshal()
	if err != nil {
		return nil, fmt.Errorf("GSSAPI: AP-REQ for %s: %w", g.spn, err)
	}
	g.stage = 1
	return b, nil
}

func (g *gssapiClient) step(challenge []byte) ([]byte, error) {
	switch g.stage {
	case 1:
		if err := g.checkAPRep(challenge); err != nil {
			return nil, err
		}
		g.stage = 2
		return []byte{}, nil
	case 2:
		return g.negotiateLayer(challenge)
	}
	return nil, fmt.Errorf("GSSAPI: unexpected server message in stage %d", g.stage)
}

// checkAPRep verifies the server's AP-REP: only the holder of the service key can encrypt our
// authenticator's time under the session key.
func (g *gssapiClient) checkAPRep(b []byte) error {
	var tok spnego.KRB5Token
	if err := tok.Unmarshal(b); err != nil {
		return fmt.Errorf("GSSAPI: server's reply token from %s: %w", g.spn, err)
	}
	if tok.IsKRBError() {
		return fmt.Errorf("GSSAPI: %s refused our ticket: %s", g.spn, strings.TrimSpace(tok.KRBError.EText))
	}
	if !tok.IsAPRep() {
		return fmt.Errorf("GSSAPI: server's reply token from %s is not an AP-REP (mutual authentication failed)", g.spn)
	}
	plain, err := crypto.DecryptEncPart(tok.APRep.EncPart, g.session, keyusage.AP_REP_ENCPART)
	if err != nil {
		return fmt.Errorf("GSSAPI: AP-REP from %s does not decrypt with the session key (not the real server?): %w", g.spn, err)
	}
	var part messages.EncAPRepPart
	if err := part.Unmarshal(plain); err != nil {
		return fmt.Errorf("GSSAPI: AP-REP from %s: %w", g.spn, err)
	}
	if !part.CTime.Equal(g.ctime.CTime) || part.Cusec != g.ctime.Cusec {
		return fmt.Errorf("GSSAPI: AP-REP from %s does not echo our authenticator's time (mutual authentication failed)", g.spn)
	}
	if len(part.Subkey.KeyValue) > 0 {
		g.key, g.subkey = part.Subkey, true
	}
	g.recvSeq = uint64(part.SequenceNumber)
	return nil
}

// negotiateLayer answers the server's security layer offer with the first acceptable QOP.
func (g *gssapiClient) negotiateLayer(challenge []byte) ([]byte, error) {
	offer, err := g.unwrap(challenge)
	if err != nil {
		return nil, fmt.Errorf("GSSAPI: security layer offer: %w", err)
	}
	if len(offer) != 4 {
		return nil, fmt.Errorf("GSSAPI: security layer offer of %d bytes, want 4", len(offer))
	}
	bits := map[string]byte{qopAuth: gssLayerNone, qopAuthInt: gssLayerIntegrity, qopAuthConf: gssLayerPrivacy}
	var offered []string
	for _, q := range []string{qopAuth, qopAuthInt, qopAuthConf} {
		if offer[0]&bits[q] != 0 {
			offered = append(offered, q)
		}
	}
	g.chosen = ""
	for _, w := range g.wantQOP {
		if offer[0]&bits[w] != 0 {
			g.chosen = w
			break
		}
	}
	if g.chosen == "" {
		return nil, fmt.Errorf("GSSAPI: no common quality of protection: the server offers %v, hadoop.rpc.protection allows %v", offered, g.wantQOP)
	}
	g.srvMax = int(binary.BigEndian.Uint32(offer) & 0xffffff)
	reply := make([]byte, 4)
	if g.chosen != qopAuth {
		binary.BigEndian.PutUint32(reply, gssClientMaxBuf)
	}
	reply[0] = bits[g.chosen]
	out, err := g.wrapToken(reply, false)
	if err != nil {
		return nil, err
	}
	g.stage = 3
	return out, nil
}

func (g *gssapiClient) wrap(p []byte) ([]byte, error) {
	if g.stage != 3 || g.chosen == qopAuth {
		return nil, fmt.Errorf("GSSAPI: no security layer for QOP %q", g.chosen)
	}
	return g.wrapToken(p, g.chosen == qopAuthConf)
}

// wrapToken makes an RFC 4121 wrap token from the initiator: checksummed by gokrb5, or sealed.
func (g *gssapiClient) wrapToken(p []byte, seal bool) ([]byte, error) {
	et, err := crypto.GetEtype(g.key.KeyType)
	if err != nil {
		return nil, fmt.Errorf("GSSAPI wrap: %w", err)
	}
	fl := byte(0)
	if g.subkey {
		fl |= gssFlagAcceptorSubkey
	}
	seq := g.sendSeq
	g.sendSeq++
	if !seal {
		wt := gssapi.WrapToken{Flags: fl, EC: uint16(et.GetHMACBitLength() / 8), SndSeqNum: seq, Payload: p}
		if err := wt.SetCheckSum(g.key, keyusage.GSSAPI_INITIATOR_SEAL); err != nil {
			return nil, fmt.Errorf("GSSAPI wrap: %w", err)
		}
		return wt.Marshal()
	}
	hdr := gssHeader(fl|gssFlagSealed, 0, 0, seq)
	plain := append(append(make([]byte, 0, len(p)+16), p...), hdr...)
	_, enc, err := et.EncryptMessage(g.key.KeyValue, plain, keyusage.GSSAPI_INITIATOR_SEAL)
	if err != nil {
		return nil, fmt.Errorf("GSSAPI wrap: %w", err)
	}
	return append(hdr, enc...), nil
}

// unwrap checks (and, when sealed, decrypts) a wrap token from the server.
func (g *gssapiClient) unwrap(tok []byte) ([]byte, error) {
	if len(tok) < gssapi.HdrLen {
		return nil, fmt.Errorf("GSSAPI: wrap token of %d bytes", len(tok))
	}
	if tok[0] != 0x05 || tok[1] != 0x04 {
		return nil, fmt.Errorf("GSSAPI: token id %#x is not a wrap token (0x0504)", tok[:2])
	}
	fl := tok[2]
	if fl&gssFlagSentByAcceptor == 0 {
		return nil, errors.New("GSSAPI: wrap token not from the acceptor (a reflected message?)")
	}
	if fl&gssFlagAcceptorSubkey != 0 != g.subkey {
		return nil, errors.New("GSSAPI: wrap token's acceptor-subkey flag disagrees with the AP-REP")
	}
	ec := int(binary.BigEndian.Uint16(tok[4:6]))
	rrc := int(binary.BigEndian.Uint16(tok[6:8]))
	seq := binary.BigEndian.Uint64(tok[8:16])
	body := unrotate(tok[16:], rrc)
	if seq != g.recvSeq {
		return nil, fmt.Errorf("GSSAPI: sequence number %d, want %d (a message was lost, replayed or reordered)", seq, g.recvSeq)
	}
	var payload []byte
	if fl&gssFlagSealed == 0 {
		var wt gssapi.WrapToken
		if err := wt.Unmarshal(append(gssHeader(fl, uint16(ec), 0, seq), body...), true); err != nil {
			return nil, fmt.Errorf("GSSAPI: %w", err)
		}
		if ok, err := wt.Verify(g.key, keyusage.GSSAPI_ACCEPTOR_SEAL); !ok {
			return nil, fmt.Errorf("GSSAPI: message %d fails its integrity check: %w", seq, err)
		}
		payload = wt.Payload
	} else {
		et, err := crypto.GetEtype(g.key.KeyType)
		if err != nil {
			return nil, fmt.Errorf("GSSAPI unwrap: %w", err)
		}
		if len(body) < et.GetConfounderByteSize()+et.GetHMACBitLength()/8+16 {
			return nil, fmt.Errorf("GSSAPI: sealed message %d of %d bytes is too short", seq, len(body))
		}
		plain, err := et.DecryptMessage(g.key.KeyValue, body, keyusage.GSSAPI_ACCEPTOR_SEAL)
		if err != nil {
			return nil, fmt.Errorf("GSSAPI: message %d does not decrypt: %w", seq, err)
		}
		if len(plain) < ec+16 {
			return nil, fmt.Errorf("GSSAPI: sealed message %d too short", seq)
		}
		if !bytes.Equal(plain[len(plain)-16:], gssHeader(fl, uint16(ec), 0, seq)) {
			return nil, fmt.Errorf("GSSAPI: sealed message %d: the encrypted header copy does not match", seq)
		}
		payload = plain[:len(plain)-16-ec]
	}
	g.recvSeq++
	return payload, nil
}

// gssHeader is the 16-byte wrap token header.
func gssHeader(fl byte, ec, rrc uint16, seq uint64) []byte {
	h := []byte{0x05, 0x04, fl, 0xFF, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	binary.BigEndian.PutUint16(h[4:6], ec)
	binary.BigEndian.PutUint16(h[6:8], rrc)
	binary.BigEndian.PutUint64(h[8:16], seq)
	return h
}

// unrotate undoes the right rotation by rrc bytes that a sender may apply to a token's body.
func unrotate(b []byte, rrc int) []byte {
	if len(b) == 0 || rrc%len(b) == 0 {
		return b
	}
	r := rrc % len(b)
	return append(append(make([]byte, 0, len(b)), b[r:]...), b[:r]...)
}
