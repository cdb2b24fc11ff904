//go:build integration

package yarnrpc

import (
	"bufio"
	"encoding/base64"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// kerbyJars are the jars of Hadoop's MiniKdc (Apache Kerby), which the mini cluster's Maven build
// downloads.
var kerbyJars = []string{
	"org/apache/hadoop/hadoop-minikdc/3.4.3/hadoop-minikdc-3.4.3.jar",
	"org/slf4j/slf4j-api/1.7.36/slf4j-api-1.7.36.jar",
}

func init() {
	for _, a := range []string{"kerb-admin", "kerb-client", "kerb-common", "kerb-core", "kerb-crypto", "kerb-identity",
		"kerb-server", "kerb-simplekdc", "kerb-util", "kerby-asn1", "kerby-config", "kerby-pkix", "kerby-util", "kerby-xdr", "token-provider"} {
		kerbyJars = append(kerbyJars, fmt.Sprintf("org/apache/kerby/%s/2.0.3/%s-2.0.3.jar", a, a))
	}
}

// jdkGSS is one run of testdata/gssapi/GssServer.java: a KDC and the JDK's GSSAPI SASL server.
type jdkGSS struct {
	krb5conf, keytab, ccache, realm string
	stdin                           io.WriteCloser
	out                             *bufio.Scanner
}

// gssClasspath is GssServer compiled, with MiniKdc's jars.
func gssClasspath(t *testing.T) string {
	t.Helper()
	home, err := os.UserHomeDir()
	require.NoError(t, err)
	var cp []string
	for _, j := range kerbyJars {
		p := filepath.Join(home, ".m2", "repository", j)
		_, err := os.Stat(p)
		require.NoError(t, err, "MiniKdc's jars come with the mini cluster's Maven build (make minicluster-build)")
		cp = append(cp, p)
	}
	return compileJDKServer(t, "testdata/gssapi/GssServer.java", cp)
}

func startJDKGSS(t *testing.T, classpath, qop string, jvmArgs ...string) *jdkGSS {
	t.Helper()
	dir := t.TempDir()
	args := append(append([]string{}, jvmArgs...), "-cp", classpath, "GssServer", dir, qop)
	cmd := exec.Command(jdkTool("java"), args...)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = stdin.Close()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("GssServer stderr:\n%s", stderr.String())
		}
	})
	out := bufio.NewScanner(stdout)
	out.Buffer(nil, 1<<20)
	for out.Scan() {
		if f := strings.Fields(out.Text()); len(f) == 5 && f[0] == "READY" {
			return &jdkGSS{krb5conf: f[1], keytab: f[2], ccache: f[3], realm: f[4], stdin: stdin, out: out}
		}
	}
	t.Fatalf("GssServer did not start: %s", stderr.String())
	return nil
}

func (j *jdkGSS) send(t *testing.T, b []byte) string {
	t.Helper()
	_, err := j.stdin.Write([]byte(base64.StdEncoding.EncodeToString(b) + "\n"))
	require.NoError(t, err)
	require.True(t, j.out.Scan(), "GssServer ended")
	return j.out.Text()
}

// handshake runs the SASL exchange of mech with the JDK server and returns its DONE line.
func (j *jdkGSS) handshake(t *testing.T, mech *gssapiClient) string {
	t.Helper()
	tok, err := mech.start()
	require.NoError(t, err)
	for i := 0; i < 5; i++ {
		line := j.send(t, tok)
		require.False(t, strings.HasPrefix(line, "ERR"), "the JDK refused our token: %s", line)
		if strings.HasPrefix(line, "DONE ") {
			return line
		}
		require.True(t, strings.HasPrefix(line, "C "), line)
		ch, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(line, "C "))
		require.NoError(t, err)
		tok, err = mech.step(ch)
		require.NoError(t, err)
	}
	t.Fatal("no outcome after 5 rounds")
	return ""
}

// TestGSSAPIAgainstJDKServer logs in with gokrb5 at a real KDC (keytab, and the ticket cache that
// Kerby's kinit wrote), gets a service ticket, authenticates to the JDK's GSSAPI SASL server
// (mutual authentication included) at each protection level, and exchanges wrapped messages both
// ways: the JDK must unwrap what we wrap and we must unwrap what it wraps (sealed for auth-conf),
// also when the JDK acceptor sends a subkey in its AP-REP.
func TestGSSAPIAgainstJDKServer(t *testing.T) {
	classpath := gssClasspath(t)
	for _, tc := range []struct {
		serverQOP, want, source string
		subkey                  bool
	}{
		{"auth", qopAuth, "keytab", false},
		{"auth-int", qopAuthInt, "keytab", false},
		{"auth-conf", qopAuthConf, "keytab", false},
		{"auth-conf,auth-int,auth", qopAuthConf, "ccache", false},
		{"auth-int", qopAuthInt, "ccache", true},
		{"auth-conf", qopAuthConf, "keytab", true},
	} {
		name := tc.serverQOP + "/" + tc.source
		if tc.subkey {
			name += "/acceptor-subkey"
		}
		t.Run(name, func(t *testing.T) {
			var jvm []string
			if tc.subkey {
				jvm = append(jvm, "-Dsun.security.krb5.acceptor.subkey=true")
			}
			j := startJDKGSS(t, classpath, tc.serverQOP, jvm...)
			o := KerberosOptions{Krb5Config: j.krb5conf}
			if tc.source == "keytab" {
				o.Principal, o.Keytab = "alice@"+j.realm, j.keytab
			} else {
				o.CCache = j.ccache
			}
			login, err := LoginKerberos(o)
			require.NoError(t, err)
			defer login.Destroy()
			assert.Equal(t, "alice@"+j.realm, login.Principal())
			assert.Equal(t, "alice", login.ShortName())

			mech := newGSSAPIClient(login, "rm/localhost", []string{qopAuthConf, qopAuthInt, qopAuth})
			done := j.handshake(t, mech)
			assert.Equal(t, "DONE "+tc.want+" alice@"+j.realm, done)
			require.True(t, mech.complete())
			assert.Equal(t, tc.want, mech.qop())
			t.Logf("JDK: %s (wrap key type %d, acceptor subkey %v)", done, mech.key.KeyType, mech.subkey)
			assert.Equal(t, tc.subkey, mech.subkey, "the AP-REP's acceptor subkey keys the wrap tokens")
			if tc.want == qopAuth {
				return
			}
			for _, m := range []string{"first", "", strings.Repeat("payload ", 2000), "last"} {
				tok, err := mech.wrap([]byte(m))
				require.NoError(t, err)
				line := j.send(t, tok)
				require.False(t, strings.HasPrefix(line, "ERR"), "the JDK could not unwrap our message: %s", line)
				back, err := base64.StdEncoding.DecodeString(line)
				require.NoError(t, err)
				got, err := mech.unwrap(back)
				require.NoError(t, err, "we could not unwrap the JDK's message")
				assert.Equal(t, "echo:"+m, string(got))
			}
		})
	}
}
