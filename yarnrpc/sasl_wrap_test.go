package yarnrpc

import (
	"bytes"
	"context"
	"crypto/md5"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
	"github.com/yarn-am/yarn-am/yarnrpc/rpctest"
)

// RFC 2831 §2.3 and §2.4: the keys derive from H(A1) with the RFC's magic strings; the sealing keys
// of rc4-40 and rc4-56 use only the first 5 and 7 bytes of H(A1).
func TestDigestLayerKeyDerivation(t *testing.T) {
	p := digestParams{username: "chris", realm: "elwood.innosoft.com", password: "secret",
		nonce: "OA6MG9tEQGm2hh", cnonce: "OA6MHXh6VqTrRk", nc: "00000001", qop: "auth-int",
		digestURI: "imap/elwood.innosoft.com"}
	ha1 := p.ha1()
	inner := md5.Sum([]byte("chris:elwood.innosoft.com:secret"))
	want := md5.Sum([]byte(string(inner[:]) + ":OA6MG9tEQGm2hh:OA6MHXh6VqTrRk"))
	require.Equal(t, want[:], ha1)

	l, err := newDigestLayer(ha1, qopAuthInt, "", true)
	require.NoError(t, err)
	kic := md5.Sum(append(append([]byte{}, ha1...), "Digest session key to client-to-server signing key magic constant"...))
	kis := md5.Sum(append(append([]byte{}, ha1...), "Digest session key to server-to-client signing key magic constant"...))
	assert.Equal(t, kic[:], l.sendKi)
	assert.Equal(t, kis[:], l.recvKi)

	// The integrity layout: msg | HMAC(Kic, seq|msg)[0:10] | 00 01 | seq.
	tok, err := l.wrap([]byte("hello"))
	require.NoError(t, err)
	require.Len(t, tok, 5+16)
	assert.Equal(t, "hello", string(tok[:5]))
	assert.Equal(t, digestMAC(kic[:], 0, []byte("hello")), tok[5:15])
	assert.Equal(t, []byte{0, 1, 0, 0, 0, 0}, tok[15:])

	// rc4-40: Kcc = MD5(H(A1)[0:5] | magic); the first message's key stream is rc4(Kcc).
	for name, n := range map[string]int{"rc4-40": 5, "rc4-56": 7, "rc4": 16} {
		l, err := newDigestLayer(ha1, qopAuthConf, name, true)
		require.NoError(t, err)
		tok, err := l.wrap([]byte("hello"))
		require.NoError(t, err)
		kcc := md5.Sum(append(append([]byte{}, ha1[:n]...), "Digest H(A1) to client-to-server sealing key magic constant"...))
		ref, err := newDigestCipher("rc4", kcc[:], true)
		require.NoError(t, err)
		plain := append([]byte("hello"), digestMAC(kic[:], 0, []byte("hello"))...)
		enc := make([]byte, len(plain))
		ref.crypt(enc, plain)
		assert.Equal(t, enc, tok[:len(enc)], name)
	}
}

// Both ends of every cipher, with the CBC chain and rc4 stream carried across messages, and the
// checks that catch tampering, replay and loss.
func TestDigestLayerRoundTrips(t *testing.T) {
	ha1 := bytes.Repeat([]byte{7}, 16)
	for _, c := range append([]string{""}, digestCiphers...) {
		qop := qopAuthConf
		if c == "" {
			qop = qopAuthInt
		}
		t.Run(qop+"/"+c, func(t *testing.T) {
			cl, err := newDigestLayer(ha1, qop, c, true)
			require.NoError(t, err)
			sv, err := newDigestLayer(ha1, qop, c, false)
			require.NoError(t, err)
			for i, m := range []string{"", "a", "exactly8", strings.Repeat("x", 1000), "last"} {
				tok, err := cl.wrap([]byte(m))
				require.NoError(t, err)
				if qop == qopAuthConf && len(m) > 4 {
					assert.NotContains(t, string(tok), m, "auth-conf must not send the message in clear")
				}
				got, err := sv.unwrap(tok)
				require.NoError(t, err, "message %d", i)
				assert.Equal(t, m, string(got))
				back, err := sv.wrap([]byte("re:" + m))
				require.NoError(t, err)
				got, err = cl.unwrap(back)
				require.NoError(t, err)
				assert.Equal(t, "re:"+m, string(got))
			}
			tok, err := cl.wrap([]byte("payload"))
			require.NoError(t, err)
			bad := append([]byte{}, tok...)
			bad[0] ^= 1
			_, err = sv.unwrap(bad)
			assert.ErrorContains(t, err, "integrity check", "a flipped bit must be caught")

			sv2, _ := newDigestLayer(ha1, qop, c, false)
			_, err = sv2.unwrap(tok)
			assert.ErrorContains(t, err, "sequence number", "a message out of sequence must be refused")
		})
	}
}

// DIGEST-MD5 auth-int and auth-conf end to end: the connection context, concurrent calls and a
// request larger than the server's maxbuf (sent as several WRAP messages) all travel wrapped, and
// the server's wrapped responses come back in order.
func TestTokenAuthWithQOP(t *testing.T) {
	for _, tc := range []struct{ protection, qop string }{
		{"integrity", qopAuthInt}, {"privacy", qopAuthConf}, {"privacy,integrity", qopAuthConf},
	} {
		t.Run(tc.protection, func(t *testing.T) {
			id, pw := []byte("ident"), []byte("pw")
			srv := newServer(t, rpctest.Options{Tokens: map[string][]byte{string(id): pw}, QOP: []string{"auth-int", "auth-conf"}})
			echo(srv)
			conn, err := Dial(ctx(t), srv.Addr(), ConnOptions{Protocol: testProtocol, Protection: tc.protection,
				Auth: TokenAuth(Token{Identifier: id, Password: pw}, "alice")})
			require.NoError(t, err)
			defer conn.Close()
			assert.Equal(t, tc.qop, conn.QOP())

			big := strings.Repeat("0123456789", 20000) // 200 kB: over the 64 kB maxbuf
			assert.Equal(t, big, callEcho(t, conn, big))
			var wg sync.WaitGroup
			for i := 0; i < 20; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					s := strings.Repeat("c", i*100)
					assert.Equal(t, s, callEcho(t, conn, s))
				}()
			}
			wg.Wait()
			infos := srv.Connections()
			require.Len(t, infos, 1)
			assert.Equal(t, tc.qop, infos[0].QOP)
			assert.Equal(t, testProtocol, infos[0].Protocol, "the connection context arrived (wrapped)")
		})
	}
}

// Once auth-int or auth-conf is negotiated, a response outside the security layer may be forged by
// anyone on the path: it is a fatal connection error. Every waiting call fails with an error saying
// so, the connection is closed, and the forged response reaches no caller.
func TestUnwrappedFrameIsFatal(t *testing.T) {
	type setup func(t *testing.T) (*rpctest.Server, ConnOptions)
	token := func(qop, protection string) setup {
		return func(t *testing.T) (*rpctest.Server, ConnOptions) {
			srv := newServer(t, rpctest.Options{Tokens: map[string][]byte{"id": []byte("pw")}, QOP: []string{qop}})
			echo(srv)
			return srv, ConnOptions{Protocol: testProtocol, Protection: protection,
				Auth: TokenAuth(Token{Identifier: []byte("id"), Password: []byte("pw")}, "alice")}
		}
	}
	kerberos := func(protection string) setup {
		return func(t *testing.T) (*rpctest.Server, ConnOptions) {
			srv, svc := kerberosServer(t, []string{"auth-int", "auth-conf"}, nil)
			login, _ := fakeLogin(t, svc, "alice")
			return srv, ConnOptions{Protocol: testProtocol, Protection: protection, Auth: KerberosAuth(login, "rm/_HOST@EXAMPLE.COM")}
		}
	}
	for name, mk := range map[string]setup{
		"digest-md5/integrity": token("auth-int", "integrity"),
		"digest-md5/privacy":   token("auth-conf", "privacy"),
		"gssapi/integrity":     kerberos("integrity"),
		"gssapi/privacy":       kerberos("privacy"),
	} {
		t.Run(name, func(t *testing.T) {
			srv, opts := mk(t)
			srv.SetFaults(func(r *rpctest.Request) rpctest.Fault {
				switch r.Method {
				case "wait":
					return rpctest.Fault{Drop: true}
				case "forged":
					return rpctest.Fault{Unwrapped: true}
				}
				return rpctest.Fault{}
			})
			srv.Handle(testProtocol, "forged", func(context.Context, *rpctest.Request) (proto.Message, error) {
				return userMsg("forged"), nil
			})
			conn, err := Dial(ctx(t), srv.Addr(), opts)
			require.NoError(t, err)
			defer conn.Close()
			require.NotEqual(t, qopAuth, conn.QOP())
			assert.Equal(t, "before", callEcho(t, conn, "before"), "wrapped responses still work")

			waiting := make(chan error, 1)
			go func() { waiting <- conn.Call(ctx(t), "wait", userMsg("w"), userMsg("")) }()
			require.Eventually(t, func() bool { return srv.Calls("wait") == 1 }, 10*time.Second, 5*time.Millisecond)

			resp := &hadooppb.UserInformationProto{}
			err = conn.Call(ctx(t), "forged", userMsg("x"), resp)
			require.Error(t, err)
			assert.Empty(t, resp.GetEffectiveUser(), "the unwrapped response was not delivered")
			assert.Contains(t, err.Error(), "unwrapped frame arrived on a connection with integrity/privacy")
			assert.True(t, errors.Is(err, ErrConnection), "got %v", err)

			select {
			case werr := <-waiting:
				require.Error(t, werr)
				assert.Contains(t, werr.Error(), "unwrapped frame arrived on a connection with integrity/privacy")
			case <-time.After(10 * time.Second):
				t.Fatal("the waiting call did not fail within 10 s")
			}
			assert.True(t, conn.isClosed(), "the connection is closed")
		})
	}
}
