package yarnrpc

import (
	"bytes"
	"crypto/cipher"
	"crypto/des"
	"crypto/hmac"
	"crypto/md5"
	"crypto/rc4"
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"fmt"
)

// The DIGEST-MD5 security layer (RFC 2831 §2.3 integrity, §2.4 confidentiality) that Hadoop's
// auth-int and auth-conf qualities of protection put around every RPC message after the handshake.
//
// Keys derive from H(A1), the binary MD5 of A1 computed during authentication; each direction has
// its own integrity key (Kic client→server, Kis server→client), its own sealing key (Kcc, Kcs) and its
// own sequence number starting at 0. A wrapped message is
//
//	integrity:        msg | HMAC-MD5(Ki, seq | msg)[0:10] | 0x0001 | seq
//	confidentiality:  CIPHER(Kc, msg | pad | HMAC-MD5(Ki, seq | msg)[0:10]) | 0x0001 | seq
//
// Cipher state (the rc4 key stream, the CBC chain of des/3des) continues from message to message.

// digestCiphers are the DIGEST-MD5 ciphers this client can use, strongest first; the JDK's server
// (which Hadoop's servers are) offers "3des,rc4,des,rc4-56,rc4-40".
var digestCiphers = []string{"3des", "rc4", "des", "rc4-56", "rc4-40"}

const (
	digestMACLen     = 10
	digestTrailerLen = digestMACLen + 2 + 4 // MAC, message type, sequence number (integrity)
	// digestLayerOverhead is the most a wrap adds to a message (trailer plus block padding).
	digestLayerOverhead = digestTrailerLen + des.BlockSize

	kicMagic = "Digest session key to client-to-server signing key magic constant"
	kisMagic = "Digest session key to server-to-client signing key magic constant"
	kccMagic = "Digest H(A1) to client-to-server sealing key magic constant"
	kcsMagic = "Digest H(A1) to server-to-client sealing key magic constant"
)

// digestLayer protects one direction pair of a DIGEST-MD5 connection; wrap and unwrap must each be
// called by one goroutine at a time (Conn serializes writes, and has one reader).
type digestLayer struct {
	sendKi, recvKi []byte
	sendSeq        uint32
	recvSeq        uint32
	enc, dec       streamOrBlock // nil for integrity only
}

// streamOrBlock is a cipher of the confidentiality layer: rc4 (block size 1) or des/3des CBC.
type streamOrBlock interface {
	blockSize() int
	crypt(dst, src []byte)
}

type rc4Stream struct{ c *rc4.Cipher }

func (s rc4Stream) blockSize() int        { return 1 }
func (s rc4Stream) crypt(dst, src []byte) { s.c.XORKeyStream(dst, src) }

type cbcBlocks struct{ m cipher.BlockMode }

func (b cbcBlocks) blockSize() int        { return b.m.BlockSize() }
func (b cbcBlocks) crypt(dst, src []byte) { b.m.CryptBlocks(dst, src) }

// newDigestLayer derives the keys of qop (auth-int or auth-conf with cipherName) from H(A1).
// client says which side we are: it picks the send and receive keys.
func newDigestLayer(ha1 []byte, qop, cipherName string, client bool) (*digestLayer, error) {
	kic := md5.Sum(append(append([]byte{}, ha1...), kicMagic...))
	kis := md5.Sum(append(append([]byte{}, ha1...), kisMagic...))
	l := &digestLayer{sendKi: kic[:], recvKi: kis[:]}
	if !client {
		l.sendKi, l.recvKi = l.recvKi, l.sendKi
	}
	if qop != qopAuthConf {
		return l, nil
	}
	n := 16
	switch cipherName {
	case "rc4-40":
		n = 5
	case "rc4-56":
		n = 7
	}
	kcc := md5.Sum(append(append([]byte{}, ha1[:n]...), kccMagic...))
	kcs := md5.Sum(append(append([]byte{}, ha1[:n]...), kcsMagic...))
	sendKc, recvKc := kcc[:], kcs[:]
	if !client {
		sendKc, recvKc = recvKc, sendKc
	}
	var err error
	if l.enc, err = newDigestCipher(cipherName, sendKc, true); err != nil {
		return nil, err
	}
	if l.dec, err = newDigestCipher(cipherName, recvKc, false); err != nil {
		return nil, err
	}
	return l, nil
}

func newDigestCipher(name string, kc []byte, encrypt bool) (streamOrBlock, error) {
	switch name {
	case "rc4", "rc4-56", "rc4-40":
		c, err := rc4.NewCipher(kc)
		if err != nil {
			return nil, err
		}
		return rc4Stream{c}, nil
	case "des", "3des":
		var b cipher.Block
		var err error
		if name == "des" {
			b, err = des.NewCipher(desKey(kc[0:7]))
		} else {
			k1, k2 := desKey(kc[0:7]), desKey(kc[7:14])
			b, err = des.NewTripleDESCipher(bytes.Join([][]byte{k1, k2, k1}, nil))
		}
		if err != nil {
			return nil, err
		}
		iv := kc[8:16]
		if encrypt {
			return cbcBlocks{cipher.NewCBCEncrypter(b, iv)}, nil
		}
		return cbcBlocks{cipher.NewCBCDecrypter(b, iv)}, nil
	}
	return nil, fmt.Errorf("DIGEST-MD5: cipher %q is not supported; supported: %v", name, digestCiphers)
}

// desKey spreads 56 key bits over 8 bytes, 7 bits each in the high bits (the parity bit, which
// crypto/des ignores, is left 0).
func desKey(k7 []byte) []byte {
	var v uint64
	for _, b := range k7 {
		v = v<<8 | uint64(b)
	}
	out := make([]byte, 8)
	for i := range out {
		out[i] = byte(v>>(49-7*uint(i))) << 1
	}
	return out
}

func digestMAC(ki []byte, seq uint32, msg []byte) []byte {
	h := hmac.New(md5.New, ki)
	var sb [4]byte
	binary.BigEndian.PutUint32(sb[:], seq)
	h.Write(sb[:])
	h.Write(msg)
	return h.Sum(nil)[:digestMACLen]
}

// wrap protects one message.
func (l *digestLayer) wrap(msg []byte) ([]byte, error) {
	seq := l.sendSeq
	l.sendSeq++
	mac := digestMAC(l.sendKi, seq, msg)
	var out []byte
	if l.enc == nil {
		out = make([]byte, 0, len(msg)+digestTrailerLen)
		out = append(append(out, msg...), mac...)
	} else {
		bs := l.enc.blockSize()
		pad := 0
		if bs > 1 {
			pad = bs - (len(msg)+digestMACLen)%bs
		}
		plain := make([]byte, 0, len(msg)+pad+digestMACLen)
		plain = append(plain, msg...)
		for i := 0; i < pad; i++ {
			plain = append(plain, byte(pad))
		}
		plain = append(plain, mac...)
		out = make([]byte, len(plain), len(plain)+6)
		l.enc.crypt(out, plain)
	}
	out = append(out, 0, 1)
	return binary.BigEndian.AppendUint32(out, seq), nil
}

var errDigestLayer = errors.New("DIGEST-MD5 security layer")

// unwrap checks (and decrypts) one message from the peer.
func (l *digestLayer) unwrap(tok []byte) ([]byte, error) {
	if len(tok) < digestTrailerLen {
		return nil, fmt.Errorf("%w: wrapped message of %d bytes is shorter than its %d-byte trailer", errDigestLayer, len(tok), digestTrailerLen)
	}
	body, trailer := tok[:len(tok)-6], tok[len(tok)-6:]
	if trailer[0] != 0 || trailer[1] != 1 {
		return nil, fmt.Errorf("%w: message type %#x, want 1", errDigestLayer, trailer[:2])
	}
	seq := binary.BigEndian.Uint32(trailer[2:])
	if seq != l.recvSeq {
		return nil, fmt.Errorf("%w: sequence number %d, want %d (a message was lost, replayed or reordered)", errDigestLayer, seq, l.recvSeq)
	}
	var msg, mac []byte
	if l.dec == nil {
		msg, mac = body[:len(body)-digestMACLen], body[len(body)-digestMACLen:]
	} else {
		bs := l.dec.blockSize()
		if len(body)%bs != 0 {
			return nil, fmt.Errorf("%w: encrypted part of %d bytes is not a multiple of the %d-byte block", errDigestLayer, len(body), bs)
		}
		plain := make([]byte, len(body))
		l.dec.crypt(plain, body)
		msg, mac = plain[:len(plain)-digestMACLen], plain[len(plain)-digestMACLen:]
		if bs > 1 {
			if len(msg) == 0 {
				return nil, fmt.Errorf("%w: no padding in a block cipher message", errDigestLayer)
			}
			pad := int(msg[len(msg)-1])
			if pad < 1 || pad > bs || pad > len(msg) {
				return nil, fmt.Errorf("%w: bad padding length %d", errDigestLayer, pad)
			}
			msg = msg[:len(msg)-pad]
		}
	}
	if subtle.ConstantTimeCompare(mac, digestMAC(l.recvKi, seq, msg)) != 1 {
		return nil, fmt.Errorf("%w: message %d fails its integrity check (tampered, or keys differ)", errDigestLayer, seq)
	}
	l.recvSeq++
	return msg, nil
}
