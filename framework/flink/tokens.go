package flink

import (
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/framework/flink/flinkdist"
	"github.com/yarn-am/yarn-am/jobfile"
)

// Tokens past their lifetime (docs/flink.md#tokens-past-their-lifetime). Hadoop reads a JVM's token
// file once, at its start, so the new delegation tokens a keytab job's AM obtains never reached
// Flink's JVMs, and a job that outlived its HDFS token's maximum lifetime lost HDFS. Flink's own
// delegation-token framework carries them now: the JobManager's token manager asks a provider for
// tokens, hands them to the receiver of the same service in its own JVM, and pushes them to every
// TaskManager's receiver over its RPC. yarn-am's provider (flinkdist.tokenJar, service "yarn-am") reads the
// token file the AM rewrites after every refresh (contract.EnvDelegationTokens: the delegation tokens
// alone), and its receiver adds them to the JVM's Hadoop user. Flink's own Hadoop providers stay off:
// they would log in with a keytab the JVMs do not have. The keytab stays in the AM.

// keyTokenRefresh is the [flink] key of how often the JobManager reads the AM's tokens again.
const keyTokenRefresh = "token-refresh"

// defaultTokenRefresh is token-refresh's default. Flink asks its providers again at its renewal
// time-ratio (security.delegation.tokens.renewal.time-ratio, 0.75) of it.
const defaultTokenRefresh = 30 * time.Second

// maxTokenRefresh bounds token-refresh: the AM replaces tokens at 3/4 of their maximum lifetime, and
// the old ones must not end before the JVMs have the new.
const maxTokenRefresh = time.Hour

// Flink's keys that refreshedTokenDefaults sets.
const (
	keyHadoopFSProvider = "security.delegation.token.provider.hadoopfs.enabled"
	keyHBaseProvider    = "security.delegation.token.provider.hbase.enabled"
)

// readTokenRefresh reads token-refresh into f.
func readTokenRefresh(t *jobfile.Table, f *flinkSpec) {
	f.TokenRefresh = defaultTokenRefresh
	d, set := t.Duration(keyTokenRefresh, time.Second, `"30s" (the default) or "10s"`)
	if !set {
		return
	}
	if d > maxTokenRefresh {
		t.Problem("flink.%s = %q: at most %s (the AM replaces tokens at 3/4 of their maximum lifetime, and the JVMs must have the new ones before the old end)", keyTokenRefresh, d, maxTokenRefresh)
		return
	}
	f.TokenRefresh = d
}

// tokensRefreshed says whether this container's Flink JVM gets the AM's refreshed tokens: the
// JobManager when the AM keeps a token file for its driver (contract.EnvDelegationTokens), a
// TaskManager when the AM refreshes tokens at all (contract.EnvTokensURL, its launcher's). Both are set
// only when the AM was given a keytab.
func tokensRefreshed(getenv func(string) string) bool {
	return getenv(contract.EnvDelegationTokens) != "" || getenv(contract.EnvTokensURL) != ""
}

// refreshedTokenDefaults turns on Flink's delegation-token framework for yarn-am's provider and
// receiver, and turns off Flink's own Hadoop providers, unless the job configures a keytab of its own
// (Flink then obtains its tokens itself) or sets the keys itself.
func refreshedTokenDefaults(conf *flinkdist.Config) {
	if v, ok := conf.Get(keyKeytab); ok && v != "" {
		return
	}
	for k, v := range map[string]string{keyDelegationToken: "true", keyHadoopFSProvider: "false", keyHBaseProvider: "false"} {
		if _, ok := conf.Get(k); !ok {
			conf.Set(k, v)
		}
	}
}

// tokensOnClasspath writes the token jar into the container's directory dir and returns it for the
// JVM's classpath, with the variables the JobManager's provider reads (none in a TaskManager, whose
// receiver only takes what the JobManager pushes). Nothing when the framework is off for this JVM.
func tokensOnClasspath(s *flinkSetup, jobManager bool, getenv func(string) string, stdout io.Writer, name string) (jars, env []string, err error) {
	if !tokensRefreshed(getenv) {
		return nil, nil, nil
	}
	if on, _ := s.conf.Get(keyDelegationToken); on != "true" {
		fmt.Fprintf(stdout, "yarn-am %s: %s = %q: the AM's refreshed delegation tokens do not reach this JVM (docs/flink.md#tokens-past-their-lifetime)\n", name, keyDelegationToken, on)
		return nil, nil, nil
	}
	jar, err := flinkdist.WriteTokenJar(s.dir)
	if err != nil {
		return nil, nil, fmt.Errorf("writing the token jar: %w", err)
	}
	if !jobManager {
		fmt.Fprintf(stdout, "yarn-am %s: the JobManager hands this JVM the AM's refreshed delegation tokens (%s)\n", name, flinkdist.TokenJarName)
		return []string{jar}, nil, nil
	}
	every := s.spec.TokenRefresh
	if every <= 0 {
		every = defaultTokenRefresh
	}
	fmt.Fprintf(stdout, "yarn-am %s: the JobManager reads the AM's delegation tokens at least every %s and hands them to its TaskManagers (%s)\n", name, every, flinkdist.TokenJarName)
	return []string{jar}, []string{
		flinkdist.EnvTokens + "=" + getenv(contract.EnvDelegationTokens),
		flinkdist.EnvTokensEvery + "=" + strconv.FormatInt(every.Milliseconds(), 10),
	}, nil
}
