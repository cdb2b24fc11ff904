package flink

import (
	"archive/zip"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/framework/flink/flinkdist"
)

// With a keytab the AM's refreshed tokens reach Flink's JVMs (docs/flink.md#tokens-past-their-lifetime):
// the JobManager when the AM gives its driver the token file, a TaskManager when the AM refreshes
// tokens; Flink's framework on and its own Hadoop providers off, unless the job has a keytab of its
// own or set the keys itself; the token jar last on the classpath, and the provider's variables in
// the JobManager's JVM only.
func TestTokensReachFlinksJVMs(t *testing.T) {
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	assert.False(t, tokensRefreshed(getenv), "no keytab: nothing is refreshed")

	conf := flinkdist.NewConfig()
	refreshedTokenDefaults(conf)
	hadoopSecurityDefaults(conf)
	for k, want := range map[string]string{keyDelegationToken: "true", keyHadoopFSProvider: "false", keyHBaseProvider: "false", keyUseTicketCache: "false"} {
		got, _ := conf.Get(k)
		assert.Equal(t, want, got, k)
	}
	own := flinkdist.NewConfig()
	own.Set(keyKeytab, "/home/alice/alice.keytab")
	refreshedTokenDefaults(own)
	_, set := own.Get(keyDelegationToken)
	assert.False(t, set, "a job that logs Flink in itself keeps Flink's own providers")
	off := flinkdist.NewConfig()
	off.Set(keyDelegationToken, "false")
	refreshedTokenDefaults(off)
	v, _ := off.Get(keyDelegationToken)
	assert.Equal(t, "false", v, "the job's own setting stays")

	dir := t.TempDir()
	s := &flinkSetup{dir: dir, conf: conf, spec: &flinkSpec{TokenRefresh: 5 * time.Second}}
	var out bytes.Buffer
	jars, jvmEnv, err := tokensOnClasspath(s, true, getenv, &out, "flink-jobmanager")
	require.NoError(t, err)
	assert.Empty(t, jars, "no token file from the AM: no jar")
	assert.Empty(t, jvmEnv)

	env[contract.EnvDelegationTokens] = filepath.Join(dir, "yarn-am-delegation-tokens")
	require.True(t, tokensRefreshed(getenv))
	jars, jvmEnv, err = tokensOnClasspath(s, true, getenv, &out, "flink-jobmanager")
	require.NoError(t, err)
	require.Equal(t, []string{filepath.Join(dir, flinkdist.TokenJarName)}, jars)
	assert.Equal(t, []string{flinkdist.EnvTokens + "=" + env[contract.EnvDelegationTokens], flinkdist.EnvTokensEvery + "=5000"}, jvmEnv)
	assert.Contains(t, out.String(), "yarn-am flink-jobmanager: the JobManager reads the AM's delegation tokens at least every 5s and hands them to its TaskManagers (yarn-am-flink-tokens.jar)")
	data, err := os.ReadFile(jars[0])
	require.NoError(t, err)
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	require.NoError(t, err)
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
	}
	assert.Contains(t, strings.Join(names, " "), "META-INF/services/org.apache.flink.core.security.token.DelegationTokenProvider")

	tm := map[string]string{contract.EnvTokensURL: "https://am:1/api/v1/tokens"}
	out.Reset()
	jars, jvmEnv, err = tokensOnClasspath(s, false, func(k string) string { return tm[k] }, &out, "flink-taskmanager")
	require.NoError(t, err)
	assert.Len(t, jars, 1)
	assert.Empty(t, jvmEnv, "a TaskManager's receiver takes what the JobManager pushes")
	assert.Contains(t, out.String(), "the JobManager hands this JVM the AM's refreshed delegation tokens")

	out.Reset()
	s.conf = off
	jars, _, err = tokensOnClasspath(s, true, getenv, &out, "flink-jobmanager")
	require.NoError(t, err)
	assert.Empty(t, jars)
	assert.Contains(t, out.String(), `security.delegation.tokens.enabled = "false": the AM's refreshed delegation tokens do not reach this JVM`)
}
