//go:build integration

package yarnrpc

import (
	"bufio"
	"encoding/base64"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// jdkDigest is one run of testdata/digestmd5/DigestServer.java: the JDK's own DIGEST-MD5 server (the
// one Hadoop servers use) with Hadoop's token parameters, driven over stdin/stdout.
type jdkDigest struct {
	client *digestMD5Client
	final  string // "<base64 rspauth> <qop>" or "ERR ..."
	stdin  io.WriteCloser
	out    *bufio.Scanner
}

var jdkToken = Token{Identifier: []byte("\x00\x01appattempt_1700000000000_0001_000001\x7f"), Password: []byte("s3cr3t\x00\xff")}

func runJDKDigest(t *testing.T, classpath string, serverPassword []byte, serverQOP string, want []string, ciphers []string) *jdkDigest {
	t.Helper()
	b64 := base64.StdEncoding.EncodeToString
	cmd := exec.Command(jdkTool("java"), "-cp", classpath, "DigestServer", b64(jdkToken.Identifier), b64(serverPassword), serverQOP)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start(), "the JDK is needed (JAVA_HOME or java on PATH)")
	t.Cleanup(func() { _ = stdin.Close(); _ = cmd.Wait() })
	out := bufio.NewScanner(stdout)
	out.Buffer(nil, 1<<20)
	require.True(t, out.Scan(), "no challenge from the JDK server")
	challenge, err := base64.StdEncoding.DecodeString(out.Text())
	require.NoError(t, err)
	t.Logf("JDK challenge: %s", challenge)

	// The weak ciphers are tested too, as with yarn-am.sasl.digest-md5.weak-ciphers-allowed=true.
	client := newDigestMD5Client(jdkToken, "", "default", want, true)
	if ciphers != nil {
		client.ciphers = ciphers
	}
	resp, err := client.step(challenge)
	require.NoError(t, err)
	_, err = stdin.Write([]byte(b64(resp) + "\n"))
	require.NoError(t, err)
	require.True(t, out.Scan(), "no final message from the JDK server")
	return &jdkDigest{client: client, final: out.Text(), stdin: stdin, out: out}
}

// TestDigestMD5AgainstJDKServer runs the client against the JDK's DIGEST-MD5 server; a wrong
// password must be refused by the JDK and a forged rspauth by us.
func TestDigestMD5AgainstJDKServer(t *testing.T) {
	classpath := compileJDKServer(t, "testdata/digestmd5/DigestServer.java", nil)
	t.Run("accepted", func(t *testing.T) {
		j := runJDKDigest(t, classpath, jdkToken.Password, "auth", []string{qopAuth}, nil)
		require.False(t, strings.HasPrefix(j.final, "ERR"), "JDK refused our response: %s", j.final)
		fields := strings.Fields(j.final)
		require.Len(t, fields, 2)
		assert.Equal(t, "auth", fields[1])
		rspauth, err := base64.StdEncoding.DecodeString(fields[0])
		require.NoError(t, err)
		_, err = j.client.step(rspauth)
		require.NoError(t, err, "the JDK's rspauth must verify")
		assert.True(t, j.client.complete())
	})
	t.Run("wrong password", func(t *testing.T) {
		j := runJDKDigest(t, classpath, []byte("other"), "auth", []string{qopAuth}, nil)
		assert.True(t, strings.HasPrefix(j.final, "ERR"), "JDK accepted a wrong password: %s", j.final)
	})
}

// TestDigestMD5SecurityLayerAgainstJDKServer negotiates auth-int and auth-conf with every cipher the
// JDK offers, and exchanges wrapped messages both ways: the JDK must unwrap what we wrap (so it
// checks our MACs, sequence numbers and encryption) and we must unwrap its answers.
func TestDigestMD5SecurityLayerAgainstJDKServer(t *testing.T) {
	classpath := compileJDKServer(t, "testdata/digestmd5/DigestServer.java", nil)
	cases := []struct {
		serverQOP, want, cipher string
	}{
		{"auth-int", qopAuthInt, ""},
		{"auth-conf", qopAuthConf, "3des"},
		{"auth-conf", qopAuthConf, "rc4"},
		{"auth-conf", qopAuthConf, "des"},
		{"auth-conf", qopAuthConf, "rc4-56"},
		{"auth-conf", qopAuthConf, "rc4-40"},
		{"auth-conf,auth-int", qopAuthConf, ""}, // our own choice: the strongest cipher
	}
	for _, tc := range cases {
		t.Run(tc.want+"/"+tc.cipher, func(t *testing.T) {
			var ciphers []string
			if tc.cipher != "" {
				ciphers = []string{tc.cipher}
			}
			j := runJDKDigest(t, classpath, jdkToken.Password, tc.serverQOP, []string{tc.want}, ciphers)
			require.False(t, strings.HasPrefix(j.final, "ERR"), "JDK refused our response: %s", j.final)
			fields := strings.Fields(j.final)
			require.Len(t, fields, 2)
			assert.Equal(t, tc.want, fields[1])
			if tc.want == qopAuthConf {
				want := tc.cipher
				if want == "" {
					want = "3des"
				}
				assert.Equal(t, want, j.client.cipher, "the cipher we chose from the JDK's offer")
			}
			rspauth, err := base64.StdEncoding.DecodeString(fields[0])
			require.NoError(t, err)
			_, err = j.client.step(rspauth)
			require.NoError(t, err)
			require.True(t, j.client.complete())

			for _, m := range []string{"first", "", "a longer message of several cipher blocks, " + strings.Repeat("z", 1000), "last"} {
				tok, err := j.client.wrap([]byte(m))
				require.NoError(t, err)
				_, err = j.stdin.Write([]byte(base64.StdEncoding.EncodeToString(tok) + "\n"))
				require.NoError(t, err)
				require.True(t, j.out.Scan())
				require.False(t, strings.HasPrefix(j.out.Text(), "ERR"), "the JDK could not unwrap our message: %s", j.out.Text())
				back, err := base64.StdEncoding.DecodeString(j.out.Text())
				require.NoError(t, err)
				got, err := j.client.unwrap(back)
				require.NoError(t, err, "we could not unwrap the JDK's message")
				assert.Equal(t, "echo:"+m, string(got))
			}
		})
	}
}
