//go:build integration && secure

package flink_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/container/client"
	"github.com/yarn-am/yarn-am/testkit/e2e"
	"github.com/yarn-am/yarn-am/yarnrpc"
)

// TestFlinkHDFSKerberized is TestFlinkHDFSCheckpointsAndSavepoint on the Kerberized mini cluster:
// the job is submitted with a keytab, and Flink's processes reach HDFS with nothing but their
// containers' delegation tokens. make test-secure-flink runs it, after Flink is in place (the name
// has no "Secure": make test-secure, which runs before Flink is downloaded, selects by that word).
// On each tested Flink line, subtests 1.20.5 and 2.3.0.
func TestFlinkHDFSKerberized(t *testing.T) {
	t.Parallel() // beside TestFlinkTokensOutliveTheirLifetime, in make test-secure-flink
	fsys, submitArgs := kerberizedFlink(t)
	eachFlinkAtOnce(t, func(t *testing.T, v flinkVersion) {
		flinkHDFSCheckpointsAndSavepoint(t, v, fsys, submitArgs, shortTokensRefresh)
	})
}

// shortTokensRefresh is the token-refresh of the Kerberized Flink tests: the cluster's tokens live
// 60 s, the AM replaces them at 45 s and renews the old ones to 60 s, so the JVMs must read the new
// ones within 15 s; the default (30 s, read again at 3/4 of it) is for tokens of days
// (docs/flink.md#tokens-past-their-lifetime).
const shortTokensRefresh = `token-refresh = "5s"`

// kerberizedFlink is what the Kerberized Flink tests share: the cluster's env, a ticket cache of
// the test process's own (status and stop log in from it; one for the tests that run at once), an HDFS client logged in from the test keytab
// (closed when the test's subtests have ended), and submit's keytab arguments.
func kerberizedFlink(t *testing.T) (*client.HDFS, []string) {
	t.Helper()
	e2e.Env(t)
	require.Equal(t, "1", os.Getenv("YARN_AM_SECURE"), "the Kerberized mini cluster's env is needed (make test-secure-flink)")
	principal, keytab := os.Getenv("YARN_AM_TEST_PRINCIPAL"), os.Getenv("YARN_AM_TEST_KEYTAB")
	require.NotEmpty(t, principal, "YARN_AM_TEST_PRINCIPAL")
	require.NotEmpty(t, keytab, "YARN_AM_TEST_KEYTAB")
	kinitOnce.Do(func() { kinitErr = kinitTestCache(principal, keytab) })
	require.NoError(t, kinitErr)

	conf, err := yarnrpc.LoadConfigFromEnv()
	require.NoError(t, err)
	login, err := yarnrpc.LoginKerberos(yarnrpc.KerberosOptions{Principal: principal, Keytab: keytab})
	require.NoError(t, err)
	fsys, err := client.DialHDFSKerberos(conf, login)
	require.NoError(t, err)
	// Closed when the subtests, which run at once after the test function returns, have ended.
	t.Cleanup(func() { _ = fsys.Close() })
	return fsys, []string{"--principal", principal, "--keytab", keytab}
}

var (
	kinitOnce sync.Once
	kinitErr  error
)

// kinitTestCache logs principal in from keytab into a ticket cache of this test process's own and
// names it in KRB5CCNAME for the yarn-am commands the tests run. Once per process: the Kerberized
// Flink tests run at once (t.Parallel), which t.Setenv would refuse.
func kinitTestCache(principal, keytab string) error {
	kinit, err := exec.LookPath("kinit")
	if err != nil {
		return fmt.Errorf("kinit is needed (testdata/minicluster/install-kinit.sh installs it): %w", err)
	}
	dir, err := os.MkdirTemp("", "yarn-am-krb5cc-")
	if err != nil {
		return err
	}
	cc := filepath.Join(dir, "krb5cc")
	k := exec.Command(kinit, "-k", "-t", keytab, principal)
	k.Env = append(os.Environ(), "KRB5CCNAME="+cc)
	if out, err := k.CombinedOutput(); err != nil {
		return fmt.Errorf("kinit: %w: %s", err, out)
	}
	return os.Setenv("KRB5CCNAME", cc)
}
