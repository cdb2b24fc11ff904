package rpctest

import (
	"crypto/hmac"
	"crypto/md5"
	"crypto/rc4"
	"encoding/binary"
	"errors"
	"fmt"
)

// Server side of the SASL security layers (auth-int, auth-conf) that Hadoop puts around every message
// once a connection negotiated them. Written from RFC 2831 and RFC 4121, independently of yarnrpc's
// client code, so that each checks the other.

// layer wraps the server's outgoing messages and unwraps the client's.
type layer interface {
	wrap(msg []byte) ([]byte, error)
	unwrap(tok []byte) ([]byte, error)
}

// digestServerLayer is DIGEST-MD5 integrity, or confidentiality with rc4 (the one cipher this fake
// server offers; yarnrpc's other ciphers are checked against the JDK).
type digestServerLayer struct {
	kis, kic []byte // server→client and client→server integrity keys
	sseq     uint32
	rseq     uint32
	out, in  *rc4.Cipher // nil for integrity
}

func newDigestServerLayer(ha1 []byte, conf bool) *digestServerLayer {
	derive := func(k []byte, magic string) []byte {
		h := md5.New()
		h.Write(k)
		h.Write([]byte(magic))
		return h.Sum(nil)
	}
	l := &digestServerLayer{
		kic: derive(ha1, "Digest session key to client-to-server signing key magic constant"),
		kis: derive(ha1, "Digest session key to server-to-client signing key magic constant"),
	}
	if conf {
		l.out, _ = rc4.NewCipher(derive(ha1, "Digest H(A1) to server-to-client sealing key magic constant"))
		l.in, _ = rc4.NewCipher(derive(ha1, "Digest H(A1) to client-to-server sealing key magic constant"))
	}
	return l
}

func digestHMAC(key []byte, seq uint32, msg []byte) []byte {
	m := hmac.New(md5.New, key)
	_ = binary.Write(m, binary.BigEndian, seq)
	m.Write(msg)
	return m.Sum(nil)[:10]
}

func (l *digestServerLayer) wrap(msg []byte) ([]byte, error) {
	body := append(append([]byte{}, msg...), digestHMAC(l.kis, l.sseq, msg)...)
	if l.out != nil {
		l.out.XORKeyStream(body, body)
	}
	tail := make([]byte, 6)
	tail[1] = 1
	binary.BigEndian.PutUint32(tail[2:], l.sseq)
	l.sseq++
	return append(body, tail...), nil
}

func (l *digestServerLayer) unwrap(tok []byte) ([]byte, error) {
	if len(tok) < 16 {
		return nil, errors.New("DIGEST-MD5: wrapped message too short")
	}
	n := len(tok) - 6
	if seq := binary.BigEndian.Uint32(tok[n+2:]); seq != l.rseq || tok[n] != 0 || tok[n+1] != 1 {
		return nil, fmt.Errorf("DIGEST-MD5: bad trailer (sequence number %d, want %d)", seq, l.rseq)
	}
	body := append([]byte{}, tok[:n]...)
	if l.in != nil {
		l.in.XORKeyStream(body, body)
	}
	msg, mac := body[:len(body)-10], body[len(body)-10:]
	if !hmac.Equal(mac, digestHMAC(l.kic, l.rseq, msg)) {
		return nil, errors.New("DIGEST-MD5: integrity check failed")
	}
	l.rseq++
	return msg, nil
}
