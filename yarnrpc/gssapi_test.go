package yarnrpc

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jcmturner/gokrb5/v8/client"
	"github.com/jcmturner/gokrb5/v8/config"
	"github.com/jcmturner/gokrb5/v8/messages"
	"github.com/jcmturner/gokrb5/v8/test/testdata"
	"github.com/jcmturner/gokrb5/v8/types"
	"github.com/sirupsen/logrus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/yarnrpc/rpctest"
)

// fakeLogin is a Kerberos login of user@EXAMPLE.COM whose service tickets svc mints (no KDC); it
// counts the tickets asked for.
func fakeLogin(t *testing.T, svc *rpctest.Kerberos, user string) (*Kerberos, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	k := newKerberos(client.NewWithPassword(user, "EXAMPLE.COM", "unused", config.New()), time.Time{})
	k.tickets = func(spn string) (messages.Ticket, types.EncryptionKey, error) {
		n.Add(1)
		assert.Equal(t, svc.Service+"/"+svc.Host, spn, "the ticket is for the server's principal")
		return svc.Ticket(user)
	}
	return k, &n
}

func kerberosServer(t *testing.T, qop []string, mod func(*rpctest.Kerberos)) (*rpctest.Server, *rpctest.Kerberos) {
	t.Helper()
	svc, err := rpctest.NewKerberos("rm", "localhost", "EXAMPLE.COM")
	require.NoError(t, err)
	svc.QOP = qop
	if mod != nil {
		mod(svc)
	}
	srv := newServer(t, rpctest.Options{Kerberos: svc})
	echo(srv)
	return srv, svc
}

// SASL GSSAPI end to end against the fake acceptor, at each protection level, with and without an
// acceptor subkey: mutual authentication, the connection context with only the short user name,
// and (for integrity and privacy) every message wrapped both ways, a large one included.
func TestKerberosAuthWithQOP(t *testing.T) {
	for _, tc := range []struct{ protection, qop string }{
		{"authentication", qopAuth}, {"integrity", qopAuthInt}, {"privacy", qopAuthConf},
	} {
		for _, subkey := range []bool{false, true} {
			name := tc.protection
			if subkey {
				name += "/acceptor-subkey"
			}
			t.Run(name, func(t *testing.T) {
				srv, svc := kerberosServer(t, []string{"auth", "auth-int", "auth-conf"}, func(k *rpctest.Kerberos) { k.AcceptorSubkey = subkey })
				login, _ := fakeLogin(t, svc, "alice/worker1")
				conn, err := Dial(ctx(t), srv.Addr(), ConnOptions{Protocol: testProtocol, Protection: tc.protection,
					Auth: KerberosAuth(login, "rm/_HOST@EXAMPLE.COM")})
				require.NoError(t, err)
				defer conn.Close()
				assert.Equal(t, AuthKerberos, conn.AuthMethod())
				assert.Equal(t, tc.qop, conn.QOP())

				assert.Equal(t, "hi", callEcho(t, conn, "hi"))
				big := strings.Repeat("kerberos", 30000)
				assert.Equal(t, big, callEcho(t, conn, big))
				var wg sync.WaitGroup
				for i := 0; i < 10; i++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						s := strings.Repeat("k", i*300)
						assert.Equal(t, s, callEcho(t, conn, s))
					}()
				}
				wg.Wait()

				infos := srv.Connections()
				require.Len(t, infos, 1)
				assert.Equal(t, "KERBEROS", infos[0].Auth)
				assert.Equal(t, "alice/worker1@EXAMPLE.COM", infos[0].Principal)
				assert.Equal(t, "alice/worker1@EXAMPLE.COM", infos[0].User, "KERBEROS sends the full principal as the effective user, as Hadoop's UGI does")
				assert.Empty(t, infos[0].RealUser)
				assert.Equal(t, tc.qop, infos[0].QOP)
			})
		}
	}
}

// A server presenting another principal than the configured one gets no ticket.
func TestKerberosServerPrincipalMismatch(t *testing.T) {
	srv, svc := kerberosServer(t, nil, nil)
	login, tickets := fakeLogin(t, svc, "alice")
	_, err := Dial(ctx(t), srv.Addr(), ConnOptions{Protocol: testProtocol, Auth: KerberosAuth(login, "yarn/_HOST@EXAMPLE.COM")})
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrAccessControl)
	assert.Contains(t, err.Error(), "has Kerberos principal rm/localhost@EXAMPLE.COM, but yarn.resourcemanager.principal=yarn/_HOST@EXAMPLE.COM expects yarn/localhost@EXAMPLE.COM")
	assert.Zero(t, tickets.Load(), "no ticket may be sent to a server with the wrong principal")

	// A principal without _HOST must match as it is.
	_, err = Dial(ctx(t), srv.Addr(), ConnOptions{Protocol: testProtocol, Auth: KerberosAuth(login, "rm/other.example.com@EXAMPLE.COM")})
	assert.ErrorContains(t, err, "expects rm/other.example.com@EXAMPLE.COM")
	assert.Zero(t, tickets.Load())

	// Hadoop's <key>.pattern replaces the exact check.
	c := NewConfig(map[string]string{KeyRMPrincipal + ".pattern": "rm/*@EXAMPLE.COM"})
	auth, err := c.KerberosAuth(login, testProtocol)
	require.NoError(t, err)
	conn, err := Dial(ctx(t), srv.Addr(), ConnOptions{Protocol: testProtocol, Auth: auth})
	require.NoError(t, err)
	_ = conn.Close()
	c.Set(KeyRMPrincipal+".pattern", "{nn,yarn}/*@EXAMPLE.COM")
	auth, err = c.KerberosAuth(login, testProtocol)
	require.NoError(t, err)
	_, err = Dial(ctx(t), srv.Addr(), ConnOptions{Protocol: testProtocol, Auth: auth})
	assert.ErrorContains(t, err, "rm/localhost@EXAMPLE.COM, which does not match yarn.resourcemanager.principal.pattern={nn,yarn}/*@EXAMPLE.COM")
}

// _HOST is the canonical name of the dialed address, as Java's getCanonicalHostName gives it.
func TestCanonicalHost(t *testing.T) {
	c := canonicalHost(ctx(t), "127.0.0.1:8032")
	assert.Equal(t, "localhost", c, "127.0.0.1 reverse-resolves to localhost via /etc/hosts")
	assert.Equal(t, "no-such-host.invalid", canonicalHost(ctx(t), "No-Such-Host.invalid:1"), "unresolvable hosts stay as dialed, lower-cased")
	assert.True(t, globMatch("rm/*@EXAMPLE.COM", "rm/host.a.b@EXAMPLE.COM"))
	assert.False(t, globMatch("rm/*@EXAMPLE.COM", "nn/host@EXAMPLE.COM"))
	assert.True(t, globMatch("{rm,nm}/h?st@R", "nm/host@R"))
	assert.True(t, globMatch("rm/[a-c]1@R", "rm/b1@R"))
	assert.False(t, globMatch("rm/x.y@R", "rm/xzy@R"), "dots are literal")
}

// An impostor that cannot produce the AP-REP under the session key is refused (mutual
// authentication), and a protection level the server does not offer fails with both sides named.
func TestKerberosRefusals(t *testing.T) {
	srv, svc := kerberosServer(t, nil, func(k *rpctest.Kerberos) { k.ForgeAPRep = true })
	login, _ := fakeLogin(t, svc, "alice")
	_, err := Dial(ctx(t), srv.Addr(), ConnOptions{Protocol: testProtocol, Auth: KerberosAuth(login, "rm/_HOST@EXAMPLE.COM")})
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrAccessControl)
	assert.Contains(t, err.Error(), "does not decrypt with the session key")

	srv, svc = kerberosServer(t, []string{"auth-conf"}, nil)
	login, _ = fakeLogin(t, svc, "alice")
	_, err = Dial(ctx(t), srv.Addr(), ConnOptions{Protocol: testProtocol, Auth: KerberosAuth(login, "rm/_HOST@EXAMPLE.COM"), Protection: "integrity"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no common quality of protection: the server offers [auth-conf], hadoop.rpc.protection allows [auth-int]")

	// A client without Kerberos is told what to do.
	_, err = Dial(ctx(t), srv.Addr(), ConnOptions{Protocol: testProtocol, Auth: TokenAuth(Token{Identifier: []byte("x")}, "alice")})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the cluster uses Kerberos: log in with kinit or --principal/--keytab")
}

func TestKerberosAuthValidation(t *testing.T) {
	_, err := Dial(ctx(t), "127.0.0.1:1", ConnOptions{Protocol: testProtocol, Auth: KerberosAuth(nil, "rm/_HOST@X")})
	assert.ErrorContains(t, err, "needs a Kerberos login")
	login := newKerberos(client.NewWithPassword("a", "X", "p", config.New()), time.Time{})
	_, err = Dial(ctx(t), "127.0.0.1:1", ConnOptions{Protocol: testProtocol, Auth: KerberosAuth(login, "")})
	assert.ErrorContains(t, err, "yarn.resourcemanager.principal")
}

func TestResolvePrincipal(t *testing.T) {
	assert.Equal(t, "rm/rm1.example.com@EXAMPLE.COM", ResolvePrincipal("rm/_HOST@EXAMPLE.COM", "RM1.Example.COM:8032"))
	assert.Equal(t, "rm/rm1.example.com@EXAMPLE.COM", ResolvePrincipal("rm/_HOST@EXAMPLE.COM", "RM1.Example.COM"))
	assert.Equal(t, "nn/127.0.0.1@R", ResolvePrincipal("nn/_HOST@R", "127.0.0.1:8020"))
	assert.Equal(t, "nn/::1@R", ResolvePrincipal("nn/_HOST@R", "[::1]:8020"))
	assert.Equal(t, "rm/fixed.host@R", ResolvePrincipal("rm/fixed.host@R", "other:1"))
	assert.Equal(t, "rm/h", ResolvePrincipal("rm/_HOST", "h:1"))
	assert.Equal(t, "alice", shortName("alice@EXAMPLE.COM"))
	assert.Equal(t, "alice", shortName("alice/host.example.com@EXAMPLE.COM"))
	assert.Equal(t, "alice", shortName("alice"))
}

func TestServerPrincipalKeys(t *testing.T) {
	c := NewConfig(map[string]string{KeyRMPrincipal: "rm/_HOST@EXAMPLE.COM"})
	p, err := c.ServerPrincipal(testProtocol)
	require.NoError(t, err)
	assert.Equal(t, "rm/_HOST@EXAMPLE.COM", p)
	_, err = c.ServerPrincipal("org.apache.hadoop.hdfs.protocol.ClientProtocol")
	assert.ErrorContains(t, err, "dfs.namenode.kerberos.principal is not set")
	_, err = c.ServerPrincipal("some.Protocol")
	assert.ErrorContains(t, err, "no server principal key is known for protocol some.Protocol")
}

// Login errors are one line and say to run kinit or pass a keytab.
func TestLoginKerberosErrors(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "krb5.conf")
	require.NoError(t, os.WriteFile(conf, []byte(testdata.KRB5_CONF), 0o600))

	oneLineKinit := func(t *testing.T, err error, parts ...string) {
		t.Helper()
		require.Error(t, err)
		assert.NotContains(t, err.Error(), "\n", "login errors are one line")
		assert.Contains(t, err.Error(), "run `kinit ")
		assert.Contains(t, err.Error(), "or pass --principal and --keytab")
		for _, p := range parts {
			assert.Contains(t, err.Error(), p)
		}
	}

	_, err := LoginKerberos(KerberosOptions{Krb5Config: conf, CCache: filepath.Join(dir, "none")})
	oneLineKinit(t, err, "no Kerberos ticket", filepath.Join(dir, "none"), "kinit <principal>")

	t.Setenv("KRB5CCNAME", "FILE:"+filepath.Join(dir, "none2"))
	_, err = LoginKerberos(KerberosOptions{Krb5Config: conf, Principal: "bob@TEST.GOKRB5"})
	oneLineKinit(t, err, filepath.Join(dir, "none2"), "kinit bob@TEST.GOKRB5")

	t.Setenv("KRB5CCNAME", "KEYRING:persistent:1000")
	_, err = LoginKerberos(KerberosOptions{Krb5Config: conf})
	oneLineKinit(t, err, "only FILE caches can be read")

	// gokrb5's test ticket cache holds a TGT of testuser1 that expired long ago.
	b, err := hex.DecodeString(testdata.CCACHE_TEST)
	require.NoError(t, err)
	cc := filepath.Join(dir, "cc")
	require.NoError(t, os.WriteFile(cc, b, 0o600))
	_, err = LoginKerberos(KerberosOptions{Krb5Config: conf, CCache: cc})
	oneLineKinit(t, err, "testuser1@TEST.GOKRB5 in "+cc+" expired at", "kinit testuser1@TEST.GOKRB5")

	_, err = LoginKerberos(KerberosOptions{Krb5Config: conf, CCache: cc, Principal: "bob"})
	oneLineKinit(t, err, "holds testuser1@TEST.GOKRB5, not bob")

	_, err = LoginKerberos(KerberosOptions{Krb5Config: conf, Keytab: filepath.Join(dir, "kt")})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--keytab needs --principal")

	_, err = LoginKerberos(KerberosOptions{Krb5Config: conf, Keytab: filepath.Join(dir, "kt"), Principal: "bob"})
	oneLineKinit(t, err, "keytab "+filepath.Join(dir, "kt"))
	assert.ErrorIs(t, err, fs.ErrNotExist, "the one-line message keeps its cause for errors.Is")

	_, err = LoginKerberos(KerberosOptions{Krb5Config: filepath.Join(dir, "missing.conf")})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "missing.conf")
}

// Debug logs and errors of authenticated connections never carry secrets: token passwords (raw or
// base64), session keys, keytab keys.
func TestNoSecretsInLogsOrErrors(t *testing.T) {
	var buf bytes.Buffer
	log := logrus.New()
	log.SetOutput(&buf)
	log.SetLevel(logrus.TraceLevel)

	pw := []byte("TOKEN-PASSWORD-\x01\x02")
	srv := newServer(t, rpctest.Options{Tokens: map[string][]byte{"id": pw}, QOP: []string{"auth-conf"}})
	echo(srv)
	conn, err := Dial(ctx(t), srv.Addr(), ConnOptions{Protocol: testProtocol, Protection: "privacy", Logger: log,
		Auth: TokenAuth(Token{Identifier: []byte("id"), Password: pw, Kind: "K"}, "alice")})
	require.NoError(t, err)
	assert.Equal(t, "x", callEcho(t, conn, "x"))
	require.NoError(t, conn.Close())
	_, err = Dial(ctx(t), srv.Addr(), ConnOptions{Protocol: testProtocol, Protection: "privacy", Logger: log,
		Auth: TokenAuth(Token{Identifier: []byte("id"), Password: []byte("WRONG-PASSWORD")}, "alice")})
	require.Error(t, err)
	errs := err.Error()

	ksrv, svc := kerberosServer(t, []string{"auth-conf"}, nil)
	login, _ := fakeLogin(t, svc, "alice")
	var session []byte
	inner := login.tickets
	login.tickets = func(spn string) (messages.Ticket, types.EncryptionKey, error) {
		tkt, key, err := inner(spn)
		session = key.KeyValue
		return tkt, key, err
	}
	kc, err := Dial(ctx(t), ksrv.Addr(), ConnOptions{Protocol: testProtocol, Protection: "privacy", Logger: log,
		Auth: KerberosAuth(login, "rm/_HOST@EXAMPLE.COM")})
	require.NoError(t, err)
	assert.Equal(t, "y", callEcho(t, kc, "y"))
	require.NoError(t, kc.Close())
	require.NotEmpty(t, session)

	out := buf.String() + errs + fmt.Sprint(login) + Token{Password: pw}.String()
	require.NotEmpty(t, buf.String(), "debug logging was on")
	for _, secret := range [][]byte{pw, []byte(base64.StdEncoding.EncodeToString(pw)), []byte("WRONG-PASSWORD"),
		[]byte(base64.StdEncoding.EncodeToString([]byte("WRONG-PASSWORD"))), session,
		[]byte(hex.EncodeToString(session)), []byte(base64.StdEncoding.EncodeToString(session))} {
		assert.NotContains(t, out, string(secret))
	}
}

// TestLoginRefusesATicketCacheThatIsNotOurs: a ticket cache that another user owns or can write, or
// that is a symlink (to another's cache, or to /dev/zero), or not a regular file, is refused before
// it is read: using it would make yarn-am act as whoever put the ticket there. Needs root (it gives a
// file to another uid) and fails without it, as the multi-user GPU tests do.
func TestLoginRefusesATicketCacheThatIsNotOurs(t *testing.T) {
	if os.Getuid() != 0 {
		t.Fatalf("%s gives a file to another uid (chown): run it as root, e.g. sudo go test -run %s ./yarnrpc", t.Name(), t.Name())
	}
	dir := t.TempDir()
	conf := filepath.Join(dir, "krb5.conf")
	require.NoError(t, os.WriteFile(conf, []byte(testdata.KRB5_CONF), 0o600))
	b, err := hex.DecodeString(testdata.CCACHE_TEST)
	require.NoError(t, err)
	own := filepath.Join(dir, "own")
	require.NoError(t, os.WriteFile(own, b, 0o600))
	for _, tc := range []struct {
		name, want string
		make       func(p string) error
	}{
		{"owned by another uid", "is owned by uid 65534, not by you", func(p string) error {
			if err := os.WriteFile(p, b, 0o600); err != nil {
				return err
			}
			return os.Chown(p, 65534, 65534)
		}},
		{"writable by others", "is writable by others (mode 0666)", func(p string) error {
			if err := os.WriteFile(p, b, 0o600); err != nil {
				return err
			}
			return os.Chmod(p, 0o666)
		}},
		{"symlink to our own", "is a symbolic link", func(p string) error { return os.Symlink(own, p) }},
		{"symlink to /dev/zero", "is a symbolic link", func(p string) error { return os.Symlink("/dev/zero", p) }},
		{"named pipe", "named pipe, not a regular file", func(p string) error { return syscall.Mkfifo(p, 0o600) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "cc")
			require.NoError(t, tc.make(p))
			_, err := LoginKerberos(KerberosOptions{Krb5Config: conf, CCache: p})
			require.Error(t, err)
			assert.Contains(t, err.Error(), p)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	// Our own 0600 file is read (its ticket expired long ago: that is the error, not its owner).
	_, err = LoginKerberos(KerberosOptions{Krb5Config: conf, CCache: own})
	assert.ErrorContains(t, err, "expired at")
}
