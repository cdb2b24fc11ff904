//go:build integration

package yarnrpc

import (
	"bufio"
	"encoding/base64"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDigestMD5AgainstJDKServer runs the client against the JDK's DIGEST-MD5 server (the one Hadoop
// servers use) with Hadoop's token parameters; a wrong password must be refused by the JDK and a
// forged rspauth by us.
func TestDigestMD5AgainstJDKServer(t *testing.T) {
	java := "java"
	if h := os.Getenv("JAVA_HOME"); h != "" {
		java = filepath.Join(h, "bin", "java")
	}
	tok := Token{Identifier: []byte("\x00\x01appattempt_1700000000000_0001_000001\x7f"), Password: []byte("s3cr3t\x00\xff")}
	b64 := base64.StdEncoding.EncodeToString

	run := func(t *testing.T, serverPassword []byte) (*digestMD5Client, string) {
		cmd := exec.Command(java, "testdata/digestmd5/DigestServer.java", b64(tok.Identifier), b64(serverPassword))
		stdin, err := cmd.StdinPipe()
		require.NoError(t, err)
		stdout, err := cmd.StdoutPipe()
		require.NoError(t, err)
		cmd.Stderr = os.Stderr
		require.NoError(t, cmd.Start(), "the JDK is needed (JAVA_HOME or java on PATH)")
		defer func() { _ = cmd.Wait() }()
		out := bufio.NewScanner(stdout)
		require.True(t, out.Scan(), "no challenge from the JDK server")
		challenge, err := base64.StdEncoding.DecodeString(out.Text())
		require.NoError(t, err)
		t.Logf("JDK challenge: %s", challenge)

		client := newDigestMD5Client(tok, "", "default", []string{qopAuth})
		resp, err := client.step(challenge)
		require.NoError(t, err)
		_, err = stdin.Write([]byte(b64(resp) + "\n"))
		require.NoError(t, err)
		require.NoError(t, stdin.Close())
		require.True(t, out.Scan(), "no final message from the JDK server")
		return client, out.Text()
	}

	t.Run("accepted", func(t *testing.T) {
		client, final := run(t, tok.Password)
		require.False(t, strings.HasPrefix(final, "ERR"), "JDK refused our response: %s", final)
		fields := strings.Fields(final)
		require.Len(t, fields, 2)
		assert.Equal(t, "auth", fields[1])
		rspauth, err := base64.StdEncoding.DecodeString(fields[0])
		require.NoError(t, err)
		_, err = client.step(rspauth)
		require.NoError(t, err, "the JDK's rspauth must verify")
		assert.True(t, client.complete())
	})
	t.Run("wrong password", func(t *testing.T) {
		_, final := run(t, []byte("other"))
		assert.True(t, strings.HasPrefix(final, "ERR"), "JDK accepted a wrong password: %s", final)
	})
}
