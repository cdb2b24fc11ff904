package rpctest

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jcmturner/gofork/encoding/asn1"
	"github.com/jcmturner/gokrb5/v8/asn1tools"
	"github.com/jcmturner/gokrb5/v8/crypto"
	"github.com/jcmturner/gokrb5/v8/crypto/etype"
	"github.com/jcmturner/gokrb5/v8/gssapi"
	"github.com/jcmturner/gokrb5/v8/iana/asnAppTag"
	"github.com/jcmturner/gokrb5/v8/iana/etypeID"
	"github.com/jcmturner/gokrb5/v8/iana/keyusage"
	"github.com/jcmturner/gokrb5/v8/iana/msgtype"
	"github.com/jcmturner/gokrb5/v8/iana/nametype"
	"github.com/jcmturner/gokrb5/v8/keytab"
	"github.com/jcmturner/gokrb5/v8/messages"
	"github.com/jcmturner/gokrb5/v8/spnego"
	"github.com/jcmturner/gokrb5/v8/types"
)

// Kerberos is a fake Kerberized service for the Server: its own service key (as a keytab) and a
// ticket minting function standing in for the KDC, and the acceptor side of SASL GSSAPI (RFC 4752
// over RFC 4121) as the JDK runs it for Hadoop: AP-REP for mutual authentication, then the
// security layer offer and the client's choice, both in wrap tokens.
type Kerberos struct {
	// Service and Host make the server principal Service/Host@Realm (e.g. rm/localhost@EXAMPLE.COM);
	// the NEGOTIATE offer names them as protocol and server id.
	Service, Host, Realm string
	// QOP is what the security layer offer allows (auth, auth-int, auth-conf); nil means ["auth"].
	QOP []string
	// AcceptorSubkey makes the AP-REP carry a fresh subkey that then keys every wrap token.
	AcceptorSubkey bool
	// ForgeAPRep answers with an AP-REP under a key the client does not have (an impostor).
	ForgeAPRep bool

	kt *keytab.Keytab
}

// NewKerberos returns a service with a random AES-256 key.
func NewKerberos(service, host, realm string) (*Kerberos, error) {
	kt := keytab.New()
	pw := fmt.Sprintf("%x", time.Now().UnixNano())
	if err := kt.AddEntry(service+"/"+host, realm, pw, time.Now(), 1, etypeID.AES256_CTS_HMAC_SHA1_96); err != nil {
		return nil, err
	}
	return &Kerberos{Service: service, Host: host, Realm: realm, kt: kt}, nil
}

func (k *Kerberos) sname() types.PrincipalName {
	return types.NewPrincipalName(nametype.KRB_NT_SRV_HST, k.Service+"/"+k.Host)
}

// Ticket mints a service ticket for client (user or user/host, in the service's realm), as a KDC
// would: the ticket encrypted with the service key, and its session key.
func (k *Kerberos) Ticket(client string) (messages.Ticket, types.EncryptionKey, error) {
	now := time.Now().UTC()
	cname := types.NewPrincipalName(nametype.KRB_NT_PRINCIPAL, client)
	return messages.NewTicket(cname, k.Realm, k.sname(), k.Realm, asn1.BitString{Bytes: make([]byte, 4), BitLength: 32},
		k.kt, etypeID.AES256_CTS_HMAC_SHA1_96, 1, now, now, now.Add(time.Hour), now.Add(time.Hour))
}

// gssAcceptor is one server-side GSSAPI exchange and then the connection's security layer.
type gssAcceptor struct {
	k       *Kerberos
	key     types.EncryptionKey
	subkey  bool
	sseq    uint64
	rseq    uint64
	client  string // principal, user@REALM
	chosen  string
	forgery bool
}

// accept verifies the AP-REQ and returns the AP-REP token.
func (a *gssAcceptor) accept(tok []byte) ([]byte, error) {
	var t spnego.KRB5Token
	if err := t.Unmarshal(tok); err != nil {
		return nil, saslFailure("GSS initiate failed: " + err.Error())
	}
	if !t.IsAPReq() {
		return nil, saslFailure("GSS initiate failed: not an AP-REQ")
	}
	sname := a.k.sname()
	if ok, err := t.APReq.Verify(a.k.kt, 5*time.Minute, types.HostAddress{}, &sname); !ok || err != nil {
		return nil, saslFailure(fmt.Sprintf("GSS initiate failed: %v", err))
	}
	auth := t.APReq.Authenticator
	session := t.APReq.Ticket.DecryptedEncPart.Key
	a.key = session
	a.client = strings.Join(auth.CName.NameString, "/") + "@" + auth.CRealm
	a.rseq = uint64(auth.SeqNumber)
	a.sseq = uint64(time.Now().UnixNano() & 0x3fffffff)
	part := messages.EncAPRepPart{CTime: auth.CTime, Cusec: auth.Cusec, SequenceNumber: int64(a.sseq)}
	if a.k.AcceptorSubkey {
		sk, err := types.GenerateEncryptionKey(mustEtype(session.KeyType))
		if err != nil {
			return nil, err
		}
		part.Subkey, a.key, a.subkey = sk, sk, true
	}
	pb, err := asn1.Marshal(part)
	if err != nil {
		return nil, err
	}
	pb = asn1tools.AddASNAppTag(pb, asnAppTag.EncAPRepPart)
	encKey := session
	if a.k.ForgeAPRep {
		if encKey, err = types.GenerateEncryptionKey(mustEtype(session.KeyType)); err != nil {
			return nil, err
		}
	}
	ed, err := crypto.GetEncryptedData(pb, encKey, keyusage.AP_REP_ENCPART, 0)
	if err != nil {
		return nil, err
	}
	rep := messages.APRep{PVNO: 5, MsgType: msgtype.KRB_AP_REP, EncPart: ed}
	rb, err := asn1.Marshal(rep)
	if err != nil {
		return nil, err
	}
	rb = asn1tools.AddASNAppTag(rb, asnAppTag.APREP)
	oid, _ := asn1.Marshal(gssapi.OIDKRB5.OID())
	inner := append(append(oid, 0x02, 0x00), rb...)
	return asn1.Marshal(asn1.RawValue{Class: asn1.ClassApplication, Tag: 0, IsCompound: true, Bytes: inner})
}

func mustEtype(id int32) etype.EType {
	e, _ := crypto.GetEtype(id)
	return e
}

// offer is the security layer offer: layers allowed by QOP and our maximum message size.
func (a *gssAcceptor) offer() ([]byte, error) {
	var bits byte
	for _, q := range a.k.qops() {
		bits |= gssBit(q)
	}
	msg := make([]byte, 4)
	binary.BigEndian.PutUint32(msg, 65536)
	msg[0] = bits
	return a.wrapToken(msg, false)
}

// choice reads the client's answer to the offer.
func (a *gssAcceptor) choice(tok []byte) error {
	msg, err := a.unwrap(tok)
	if err != nil {
		return saslFailure("GSSAPI: " + err.Error())
	}
	if len(msg) < 4 {
		return saslFailure("GSSAPI: security layer choice too short")
	}
	for _, q := range a.k.qops() {
		if msg[0] == gssBit(q) {
			a.chosen = q
			return nil
		}
	}
	return saslFailure(fmt.Sprintf("GSSAPI: client chose layer %#x, not offered", msg[0]))
}

func (k *Kerberos) qops() []string {
	if k.QOP == nil {
		return []string{"auth"}
	}
	return k.QOP
}

func gssBit(q string) byte {
	switch q {
	case "auth-int":
		return 2
	case "auth-conf":
		return 4
	}
	return 1
}

func (a *gssAcceptor) wrap(msg []byte) ([]byte, error) {
	return a.wrapToken(msg, a.chosen == "auth-conf")
}

// wrapToken makes an acceptor wrap token; sealed ones are rotated by 28 bytes the way Windows does,
// to check that clients undo the rotation.
func (a *gssAcceptor) wrapToken(msg []byte, seal bool) ([]byte, error) {
	fl := byte(0x01)
	if a.subkey {
		fl |= 0x04
	}
	seq := a.sseq
	a.sseq++
	et := mustEtype(a.key.KeyType)
	if !seal {
		wt := gssapi.WrapToken{Flags: fl, EC: uint16(et.GetHMACBitLength() / 8), SndSeqNum: seq, Payload: msg}
		if err := wt.SetCheckSum(a.key, keyusage.GSSAPI_ACCEPTOR_SEAL); err != nil {
			return nil, err
		}
		return wt.Marshal()
	}
	fl |= 0x02
	hdr := func(rrc uint16) []byte {
		h := []byte{0x05, 0x04, fl, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
		binary.BigEndian.PutUint16(h[6:], rrc)
		binary.BigEndian.PutUint64(h[8:], seq)
		return h
	}
	_, enc, err := et.EncryptMessage(a.key.KeyValue, append(append([]byte{}, msg...), hdr(0)...), keyusage.GSSAPI_ACCEPTOR_SEAL)
	if err != nil {
		return nil, err
	}
	const rrc = 28
	r := rrc % len(enc)
	rot := append(append([]byte{}, enc[len(enc)-r:]...), enc[:len(enc)-r]...)
	return append(hdr(rrc), rot...), nil
}

func (a *gssAcceptor) unwrap(tok []byte) ([]byte, error) {
	if len(tok) < 16 || tok[0] != 0x05 || tok[1] != 0x04 || tok[3] != 0xff {
		return nil, errors.New("not a wrap token")
	}
	fl := tok[2]
	if fl&0x01 != 0 {
		return nil, errors.New("wrap token claims to come from the acceptor")
	}
	if (fl&0x04 != 0) != a.subkey {
		return nil, errors.New("acceptor subkey flag is wrong")
	}
	seq := binary.BigEndian.Uint64(tok[8:16])
	if seq != a.rseq {
		return nil, fmt.Errorf("sequence number %d, want %d", seq, a.rseq)
	}
	if binary.BigEndian.Uint16(tok[6:8]) != 0 {
		return nil, errors.New("this fake expects RRC 0 from clients")
	}
	a.rseq++
	if sealed := fl&0x02 != 0; a.chosen != "" && sealed != (a.chosen == "auth-conf") {
		return nil, fmt.Errorf("wrap token sealed=%v under QOP %s", sealed, a.chosen)
	}
	if fl&0x02 == 0 {
		var wt gssapi.WrapToken
		if err := wt.Unmarshal(tok, false); err != nil {
			return nil, err
		}
		if ok, err := wt.Verify(a.key, keyusage.GSSAPI_INITIATOR_SEAL); !ok {
			return nil, err
		}
		return wt.Payload, nil
	}
	plain, err := mustEtype(a.key.KeyType).DecryptMessage(a.key.KeyValue, tok[16:], keyusage.GSSAPI_INITIATOR_SEAL)
	if err != nil {
		return nil, err
	}
	ec := int(binary.BigEndian.Uint16(tok[4:6]))
	if len(plain) < 16+ec || !bytes.Equal(plain[len(plain)-16:], tok[:16]) {
		return nil, errors.New("sealed token's header copy does not match")
	}
	return plain[:len(plain)-16-ec], nil
}
