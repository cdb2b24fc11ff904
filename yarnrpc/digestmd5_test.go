package yarnrpc

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/yarnrpc/rpctest"
)

// RFC 2831 §4: the IMAP example.
func TestDigestMD5RFC2831Vector(t *testing.T) {
	p := digestParams{
		username:  "chris",
		realm:     "elwood.innosoft.com",
		password:  "secret",
		nonce:     "OA6MG9tEQGm2hh",
		cnonce:    "OA6MHXh6VqTrRk",
		nc:        "00000001",
		qop:       "auth",
		digestURI: "imap/elwood.innosoft.com",
	}
	assert.Equal(t, "d388dad90d4bbd760a152321f2143af7", p.response(false))
	assert.Equal(t, "ea40f60335c427b5527b84dbabcdfffd", p.response(true))
}

// The client's whole exchange with the RFC's challenge, with the cnonce fixed.
func TestDigestMD5ClientExchange(t *testing.T) {
	d := &digestMD5Client{username: "chris", password: "secret", digestURI: "imap/elwood.innosoft.com",
		wantQOP: []string{qopAuth}, rand: bytes.NewReader(make([]byte, 64))}
	resp, err := d.step([]byte(`realm="elwood.innosoft.com",nonce="OA6MG9tEQGm2hh",qop="auth",algorithm=md5-sess,charset=utf-8`))
	require.NoError(t, err)
	dirs, err := parseDirectives(string(resp))
	require.NoError(t, err)
	assert.Equal(t, "chris", dirs.get("username"))
	assert.Equal(t, "elwood.innosoft.com", dirs.get("realm"))
	assert.Equal(t, "imap/elwood.innosoft.com", dirs.get("digest-uri"))
	assert.Equal(t, "00000001", dirs.get("nc"))
	assert.Equal(t, "auth", dirs.get("qop"))
	assert.Equal(t, "utf-8", dirs.get("charset"))
	assert.False(t, d.complete())

	_, err = d.step([]byte("rspauth=00000000000000000000000000000000"))
	require.Error(t, err, "a wrong rspauth must fail: the server does not know the password")
	assert.Contains(t, err.Error(), "rspauth does not match")

	_, err = d.step([]byte("rspauth=" + d.rspauth))
	require.NoError(t, err)
	assert.True(t, d.complete())
	assert.Equal(t, qopAuth, d.qop())
}

func TestDigestMD5ChallengeErrors(t *testing.T) {
	cases := map[string]struct {
		challenge string
		want      []string
		errPart   string
	}{
		"no nonce":         {`realm="x",algorithm=md5-sess`, []string{qopAuth}, "no nonce"},
		"wrong algorithm":  {`nonce="n",algorithm=md5`, []string{qopAuth}, "md5-sess"},
		"no common qop":    {`nonce="n",qop="auth-conf",algorithm=md5-sess`, []string{qopAuth}, "no common quality of protection"},
		"no common cipher": {`nonce="n",qop="auth-conf",cipher="rc2",algorithm=md5-sess`, []string{qopAuthConf}, "no common cipher"},
		"bad maxbuf":       {`nonce="n",qop="auth-int",maxbuf=10,algorithm=md5-sess`, []string{qopAuthInt}, "maxbuf"},
		"unterminated":     {`nonce="n`, []string{qopAuth}, "unterminated"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			d := newDigestMD5Client(Token{Identifier: []byte("id"), Password: []byte("pw")}, "", "default", tc.want, false)
			_, err := d.step([]byte(tc.challenge))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.errPart)
		})
	}
}

func TestParseDirectives(t *testing.T) {
	d, err := parseDirectives(` realm="a",realm="b" , nonce="x\"y\\z",qop="auth,auth-int",maxbuf=65536`)
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b"}, d.all("realm"))
	assert.Equal(t, `x"y\z`, d.get("nonce"))
	assert.Equal(t, []string{"auth", "auth-int"}, splitList(d.get("qop")))
	assert.Equal(t, "65536", d.get("maxbuf"))
	_, err = parseDirectives("novalue")
	assert.Error(t, err)
}

const testProtocol = "org.apache.hadoop.yarn.api.ApplicationClientProtocolPB"

// Hadoop's parameters (protocol "", server id "default", base64 identifier and password) against the
// fake server's own DIGEST-MD5.
func TestTokenAuthAgainstFakeServer(t *testing.T) {
	id, pw := []byte("\x00\x01appattempt_1_0001_000001\xff"), []byte("s3cr3t\x00")
	srv := newServer(t, rpctest.Options{Tokens: map[string][]byte{string(id): pw}})
	echo(srv)

	conn, err := Dial(ctx(t), srv.Addr(), ConnOptions{Protocol: testProtocol,
		Auth: TokenAuth(Token{Identifier: id, Password: pw, Kind: "YARN_AM_RM_TOKEN"}, "alice")})
	require.NoError(t, err)
	defer conn.Close()
	assert.Equal(t, AuthToken, conn.AuthMethod())
	assert.Equal(t, "hello", callEcho(t, conn, "hello"))

	infos := srv.Connections()
	require.Len(t, infos, 1)
	assert.Equal(t, "TOKEN", infos[0].Auth)
	assert.Equal(t, id, infos[0].TokenIdentifier)
	assert.Empty(t, infos[0].User, "TOKEN connections send no user in the connection context")
	assert.Equal(t, testProtocol, infos[0].Protocol)
}

func TestTokenAuthWrongPassword(t *testing.T) {
	srv := newServer(t, rpctest.Options{Tokens: map[string][]byte{"id": []byte("right")}})
	_, err := Dial(ctx(t), srv.Addr(), ConnOptions{Protocol: testProtocol,
		Auth: TokenAuth(Token{Identifier: []byte("id"), Password: []byte("wrong")}, "alice")})
	require.Error(t, err)
	assert.True(t, errors.Is(err, ErrAccessControl), "got %v", err)
	assert.True(t, errors.Is(err, ErrConnection))
	var re *RemoteError
	require.True(t, errors.As(err, &re))
	assert.Equal(t, "javax.security.sasl.SaslException", re.Class)
	assert.True(t, re.Fatal)

	_, err = Dial(ctx(t), srv.Addr(), ConnOptions{Protocol: testProtocol,
		Auth: TokenAuth(Token{Identifier: []byte("unknown"), Password: []byte("x")}, "alice")})
	require.Error(t, err)
	assert.True(t, errors.Is(err, ErrAccessControl))
	assert.Contains(t, err.Error(), "InvalidToken")
}

// On a cluster without Kerberos a server may switch a TOKEN connection to SIMPLE, as Hadoop's
// client allows; TestSimpleFallbackPolicy covers the secure cases.
func TestTokenAuthFallsBackToSimple(t *testing.T) {
	srv := newServer(t, rpctest.Options{Simple: true}) // no tokens: answers NEGOTIATE with SUCCESS
	echo(srv)
	conn, err := Dial(ctx(t), srv.Addr(), ConnOptions{Protocol: testProtocol, InsecureCluster: true,
		Auth: TokenAuth(Token{Identifier: []byte("id"), Password: []byte("pw")}, "alice")})
	require.NoError(t, err)
	defer conn.Close()
	assert.Equal(t, AuthSimple, conn.AuthMethod())
	assert.Equal(t, "x", callEcho(t, conn, "x"))
	require.Len(t, srv.Connections(), 1)
	assert.Equal(t, "SIMPLE", srv.Connections()[0].Auth)
	assert.Equal(t, "alice", srv.Connections()[0].User, "after fallback the user goes in the connection context")
}

func TestTokenAuthQOPMismatch(t *testing.T) {
	srv := newServer(t, rpctest.Options{Tokens: map[string][]byte{"id": []byte("pw")}, QOP: []string{"auth-conf"}})
	auth := TokenAuth(Token{Identifier: []byte("id"), Password: []byte("pw")}, "alice")
	_, err := Dial(ctx(t), srv.Addr(), ConnOptions{Protocol: testProtocol, Auth: auth})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no common quality of protection")

	_, err = Dial(ctx(t), srv.Addr(), ConnOptions{Protocol: testProtocol, Auth: auth, Protection: "secret"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `hadoop.rpc.protection="secret"`)
}

func TestSimpleRefusedBySecureServer(t *testing.T) {
	srv := newServer(t, rpctest.Options{Tokens: map[string][]byte{"id": []byte("pw")}})
	echo(srv)
	conn, err := Dial(ctx(t), srv.Addr(), ConnOptions{Protocol: testProtocol, Auth: SimpleAuth("alice")})
	if err == nil { // the refusal may arrive after Dial returned: then the first call gets it
		defer conn.Close()
		err = conn.Call(ctx(t), "echo", userMsg("x"), userMsg(""))
	}
	require.Error(t, err)
	assert.True(t, errors.Is(err, ErrAccessControl), "got %v", err)
	assert.Contains(t, err.Error(), "SIMPLE authentication is not enabled")
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return c
}

// The export-grade ciphers (keys of 56 bits or less) are refused unless
// yarn-am.sasl.digest-md5.weak-ciphers-allowed=true; strong ones are chosen whenever offered.
func TestDigestMD5WeakCiphers(t *testing.T) {
	step := func(ciphers string, weak bool) (*digestMD5Client, error) {
		d := newDigestMD5Client(Token{Identifier: []byte("id"), Password: []byte("pw")}, "", "default", []string{qopAuthConf}, weak)
		_, err := d.step([]byte(`nonce="n",qop="auth-conf",cipher="` + ciphers + `",algorithm=md5-sess`))
		return d, err
	}
	for _, offer := range []string{"des", "rc4-56", "rc4-40", "rc4-40,rc4-56,des"} {
		_, err := step(offer, false)
		require.Error(t, err, offer)
		assert.Contains(t, err.Error(), "yarn-am.sasl.digest-md5.weak-ciphers-allowed=true")
		assert.Contains(t, err.Error(), offer)
		d, err := step(offer, true)
		require.NoError(t, err, offer)
		assert.Contains(t, weakDigestCiphers, d.cipher)
	}
	d, err := step("3des,rc4,des,rc4-56,rc4-40", false)
	require.NoError(t, err)
	assert.Equal(t, "3des", d.cipher)
	d, err = step("rc4-40,rc4", false)
	require.NoError(t, err)
	assert.Equal(t, "rc4", d.cipher)

	o, err := NewConfig(nil).ConnDefaults()
	require.NoError(t, err)
	assert.False(t, o.WeakDigestCiphersAllowed)
	o, err = NewConfig(map[string]string{KeyWeakDigestCiphersAllowed: "true"}).ConnDefaults()
	require.NoError(t, err)
	assert.True(t, o.WeakDigestCiphersAllowed)
}
