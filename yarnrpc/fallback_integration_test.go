//go:build integration && secure

package yarnrpc

import (
	"os"
	"strings"
	"testing"

	"github.com/sirupsen/logrus"
	logtest "github.com/sirupsen/logrus/hooks/test"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// plainRMAddress is the client port of the plain (not Kerberized) mini cluster, which make
// test-secure runs beside the Kerberized one and passes as YARN_AM_PLAIN_RM_ADDRESS.
func plainRMAddress(t *testing.T) string {
	t.Helper()
	a := os.Getenv("YARN_AM_PLAIN_RM_ADDRESS")
	if a == "" {
		t.Fatal("YARN_AM_PLAIN_RM_ADDRESS is not set: this test needs the plain mini cluster too " +
			"(make test-secure starts it; or make minicluster-up and export YARN_AM_PLAIN_RM_ADDRESS=$YARN_AM_RM_ADDRESS from .minicluster/env)")
	}
	return a
}

// The Kerberized cluster's configuration and login pointed at an RM without security: that RM asks
// the client to fall back to SIMPLE, and the client refuses, naming the server and
// ipc.client.fallback-to-simple-auth-allowed; with that key set the calls go through, with a
// warning.
func TestSecureClientRefusesSimpleFallback(t *testing.T) {
	conf, login := secureCluster(t)
	plain := plainRMAddress(t)
	conf.Set("yarn.resourcemanager.address", plain)
	auth, err := conf.KerberosAuth(login, ApplicationClientProtocol)
	require.NoError(t, err)

	rm, err := NewApplicationClient(conf, auth)
	require.NoError(t, err)
	_, err = rm.GetClusterMetrics(ctx(t))
	require.NoError(t, rm.Close())
	require.Error(t, err, "the plain RM at %s must be refused", plain)
	msg := err.Error()
	assert.Contains(t, msg, plain)
	assert.Contains(t, msg, "fall back to SIMPLE")
	assert.Contains(t, msg, KeyFallbackToSimpleAllowed+"=true")
	assert.False(t, strings.Contains(msg, "giving up after"), "a refusal is not retried: %s", msg)

	hook := logtest.NewLocal(logrus.StandardLogger())
	defer hook.Reset()
	conf.Set(KeyFallbackToSimpleAllowed, "true")
	rm, err = NewApplicationClient(conf, auth)
	require.NoError(t, err)
	defer rm.Close()
	m, err := rm.GetClusterMetrics(ctx(t))
	require.NoError(t, err, "with %s=true the plain RM is accepted", KeyFallbackToSimpleAllowed)
	assert.Positive(t, m.GetNumNodeManagers())
	var warned bool
	for _, e := range hook.AllEntries() {
		if e.Level == logrus.WarnLevel && strings.Contains(e.Message, "fall back to SIMPLE") && e.Data["addr"] == plain {
			warned = true
		}
	}
	assert.True(t, warned, "the fallback is logged as a warning naming the server")
}
