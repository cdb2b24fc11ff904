package yarnrpc

import (
	"bytes"
	"io"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/jcmturner/gokrb5/v8/crypto"
	"github.com/jcmturner/gokrb5/v8/iana/etypeID"
	"github.com/jcmturner/gokrb5/v8/types"

	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
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
		msg, err := l.unwrap(tok)
		if err != nil {
			return
		}
		// Only the server's own wrap of msg may pass: anything else is a forgery that got through.
		srv, _ := newDigestLayer(ha1, qop, c, false)
		if want, _ := srv.wrap(msg); !bytes.Equal(tok, want) {
			t.Fatalf("cipher %q: a token that is not the server's wrap of %q unwrapped", c, msg)
		}
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
			// The key is random and secret to the fuzzer: no token it makes may unwrap.
			if msg, err := g.unwrap(tok); err == nil {
				t.Fatalf("subkey %v: a token without the key unwrapped to %q", subkey, msg)
			}
		}
	})
}

// layerMech is a mechanism over a DIGEST-MD5 security layer that records what it unwrapped, for
// FuzzUnwrapReader.
type layerMech struct {
	l         *digestLayer
	qopName   string
	unwrapped []byte
}

func (m *layerMech) name() string                  { return "DIGEST-MD5" }
func (m *layerMech) start() ([]byte, error)        { return nil, nil }
func (m *layerMech) step([]byte) ([]byte, error)   { return nil, nil }
func (m *layerMech) complete() bool                { return true }
func (m *layerMech) qop() string                   { return m.qopName }
func (m *layerMech) wrap(p []byte) ([]byte, error) { return m.l.wrap(p) }
func (m *layerMech) maxWrap() int                  { return 1 << 16 }
func (m *layerMech) unwrap(p []byte) ([]byte, error) {
	b, err := m.l.unwrap(p)
	if err == nil {
		m.unwrapped = append(m.unwrapped, b...)
	}
	return b, err
}

// serverWrapStream is what a server sends for response frames over a DIGEST-MD5 auth-int layer.
func serverWrapStream(t testing.TB, frames ...[]byte) []byte {
	srv, err := newDigestLayer(bytes.Repeat([]byte{3}, 16), qopAuthInt, "", false)
	if err != nil {
		t.Fatal(err)
	}
	var out []byte
	for _, f := range frames {
		tok, err := srv.wrap(f)
		if err != nil {
			t.Fatal(err)
		}
		w, err := encodeFrame(responseHeaderForTest(callIDSASL), &hadooppb.RpcSaslProto{State: hadooppb.RpcSaslProto_WRAP.Enum(), Token: tok})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, w...)
	}
	return out
}

func responseHeaderForTest(id int32) *hadooppb.RpcResponseHeaderProto {
	return &hadooppb.RpcResponseHeaderProto{CallId: proto.Uint32(uint32(id)), Status: hadooppb.RpcResponseHeaderProto_SUCCESS.Enum()}
}

// The wrapped-stream reader hands up nothing but what the security layer unwrapped: no frame of the
// network stream, however made, passes around the layer (TestUnwrappedFrameIsFatal).
func FuzzUnwrapReader(f *testing.F) {
	resp, err := encodeFrame(responseHeaderForTest(7), &hadooppb.UserInformationProto{EffectiveUser: proto.String("alice")})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(serverWrapStream(f, resp))
	f.Add(serverWrapStream(f, resp[:5], resp[5:]))
	f.Add(resp) // a plain response where a WRAP must come
	f.Add(append(serverWrapStream(f, resp), resp...))
	f.Fuzz(func(t *testing.T, stream []byte) {
		l, err := newDigestLayer(bytes.Repeat([]byte{3}, 16), qopAuthInt, "", true)
		if err != nil {
			t.Fatal(err)
		}
		m := &layerMech{l: l, qopName: qopAuthInt}
		got, _ := io.ReadAll(&unwrapReader{r: bytes.NewReader(stream), mech: m, maxFrame: 1 << 20})
		if !bytes.Equal(got, m.unwrapped) {
			t.Fatalf("the reader delivered %d bytes, of which the security layer unwrapped only %d", len(got), len(m.unwrapped))
		}
	})
}
