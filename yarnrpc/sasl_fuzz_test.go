package yarnrpc

import (
	"bytes"
	"testing"

	"github.com/jcmturner/gokrb5/v8/crypto"
	"github.com/jcmturner/gokrb5/v8/iana/etypeID"
	"github.com/jcmturner/gokrb5/v8/types"
)

// The security layers read what the network sends: no input may panic them, and none but a
// correctly protected message may pass.

func FuzzDigestUnwrap(f *testing.F) {
	ha1 := bytes.Repeat([]byte{3}, 16)
	for _, c := range []string{"", "3des", "rc4"} {
		qop := qopAuthConf
		if c == "" {
			qop = qopAuthInt
		}
		l, _ := newDigestLayer(ha1, qop, c, false)
		tok, _ := l.wrap([]byte("seed message"))
		f.Add(tok, uint8(len(c)))
	}
	f.Add([]byte{}, uint8(0))
	f.Fuzz(func(t *testing.T, tok []byte, sel uint8) {
		c := []string{"", "", "", "3des", "rc4"}[int(sel)%5]
		qop := qopAuthConf
		if c == "" {
			qop = qopAuthInt
		}
		l, err := newDigestLayer(ha1, qop, c, true)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = l.unwrap(tok)
	})
}

func FuzzGSSUnwrap(f *testing.F) {
	et, err := crypto.GetEtype(etypeID.AES128_CTS_HMAC_SHA1_96)
	if err != nil {
		f.Fatal(err)
	}
	key, err := types.GenerateEncryptionKey(et)
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte{0x05, 0x04, 0x03, 0xff, 0, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3})
	f.Add(append([]byte{0x05, 0x04, 0x07, 0xff, 0, 0, 0, 28, 0, 0, 0, 0, 0, 0, 0, 0}, bytes.Repeat([]byte{9}, 40)...))
	f.Fuzz(func(t *testing.T, tok []byte) {
		for _, subkey := range []bool{false, true} {
			g := &gssapiClient{stage: 3, chosen: qopAuthConf, key: key, subkey: subkey}
			_, _ = g.unwrap(tok)
		}
	})
}
