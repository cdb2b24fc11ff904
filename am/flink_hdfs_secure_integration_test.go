//go:build integration && secure

package am_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/container/client"
	"github.com/yarn-am/yarn-am/yarnrpc"
)

// TestFlinkHDFSKerberized is TestFlinkHDFSCheckpointsAndSavepoint on the Kerberized mini cluster:
// the job is submitted with a keytab, and Flink's processes reach HDFS with nothing but their
// containers' delegation tokens. make test-secure-flink runs it, after Flink is in place (the name
// has no "Secure": make test-secure, which runs before Flink is downloaded, selects by that word).
// On each tested Flink line, subtests 1.20.5 and 2.3.0.
func TestFlinkHDFSKerberized(t *testing.T) {
	e2eEnv(t)
	require.Equal(t, "1", os.Getenv("YARN_AM_SECURE"), "the Kerberized mini cluster's env is needed (make test-secure-flink)")
	principal, keytab := os.Getenv("YARN_AM_TEST_PRINCIPAL"), os.Getenv("YARN_AM_TEST_KEYTAB")
	require.NotEmpty(t, principal, "YARN_AM_TEST_PRINCIPAL")
	require.NotEmpty(t, keytab, "YARN_AM_TEST_KEYTAB")
	// status and stop log in from a ticket cache of this test's own.
	kinit, err := exec.LookPath("kinit")
	require.NoError(t, err, "kinit is needed: testdata/minicluster/install-kinit.sh installs it")
	cc := filepath.Join(t.TempDir(), "krb5cc")
	k := exec.Command(kinit, "-k", "-t", keytab, principal)
	k.Env = append(os.Environ(), "KRB5CCNAME="+cc)
	out, err := k.CombinedOutput()
	require.NoError(t, err, "kinit: %s", out)
	t.Setenv("KRB5CCNAME", cc)

	conf, err := yarnrpc.LoadConfigFromEnv()
	require.NoError(t, err)
	login, err := yarnrpc.LoginKerberos(yarnrpc.KerberosOptions{Principal: principal, Keytab: keytab})
	require.NoError(t, err)
	fsys, err := client.DialHDFSKerberos(conf, login)
	require.NoError(t, err)
	// Closed when the subtests, which run at once after this function returns, have ended.
	t.Cleanup(func() { _ = fsys.Close() })
	eachFlinkAtOnce(t, func(t *testing.T, v flinkVersion) {
		flinkHDFSCheckpointsAndSavepoint(t, v, fsys, []string{"--principal", principal, "--keytab", keytab})
	})
}
