//go:build integration

package yarnrpc

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// Integration tests against the Kerberized mini cluster (make minicluster-up SECURE=1
// RPC_PROTECTION=...; source its env). They run only with YARN_AM_SECURE=1, which that env sets;
// the cluster's hadoop.rpc.protection (YARN_AM_RPC_PROTECTION) is the level under test.

// secureCluster returns the cluster's configuration and the test user's keytab login.
func secureCluster(t *testing.T) (*Config, *Kerberos) {
	t.Helper()
	if os.Getenv("YARN_AM_SECURE") != "1" {
		t.Skip("YARN_AM_SECURE is not 1: these tests need the Kerberized mini cluster (make minicluster-up SECURE=1; source its env)")
	}
	for _, k := range []string{"HADOOP_CONF_DIR", "KRB5_CONFIG", "YARN_AM_TEST_PRINCIPAL", "YARN_AM_TEST_KEYTAB"} {
		if os.Getenv(k) == "" {
			t.Fatalf("YARN_AM_SECURE=1 but %s is not set: source the secure cluster's env", k)
		}
	}
	conf, err := LoadConfigFromEnv()
	require.NoError(t, err)
	on, err := conf.SecurityEnabled()
	require.NoError(t, err)
	require.True(t, on, "the secure cluster's configuration must say hadoop.security.authentication=kerberos")
	login, err := LoginKerberos(KerberosOptions{Principal: os.Getenv("YARN_AM_TEST_PRINCIPAL"), Keytab: os.Getenv("YARN_AM_TEST_KEYTAB")})
	require.NoError(t, err)
	t.Cleanup(login.Destroy)
	return conf, login
}

// wantQOP is the SASL QOP the cluster's hadoop.rpc.protection leads to.
func wantQOP(t *testing.T, conf *Config) string {
	p, err := conf.Protection()
	require.NoError(t, err)
	qops, err := protectionQOPs(p)
	require.NoError(t, err)
	if e := os.Getenv("YARN_AM_RPC_PROTECTION"); e != "" {
		want, err := protectionQOPs(e)
		require.NoError(t, err)
		require.Equal(t, want[0], qops[0], "hadoop.rpc.protection of the config and YARN_AM_RPC_PROTECTION of the env disagree")
	}
	return qops[0]
}

// KERBEROS to the RM's client port at the cluster's protection level: getClusterMetrics and
// getClusterNodes through the typed client, and on a bare Conn the negotiated QOP.
func TestKerberosAgainstSecureRM(t *testing.T) {
	conf, login := secureCluster(t)
	qop := wantQOP(t, conf)
	auth, err := conf.KerberosAuth(login, ApplicationClientProtocol)
	require.NoError(t, err)

	rm, err := NewApplicationClient(conf, auth)
	require.NoError(t, err)
	defer rm.Close()
	m, err := rm.GetClusterMetrics(ctx(t))
	require.NoError(t, err, "getClusterMetrics over KERBEROS/%s", qop)
	assert.Positive(t, m.GetNumNodeManagers())
	nodes, err := rm.GetClusterNodes(ctx(t), hadooppb.NodeStateProto_NS_RUNNING)
	require.NoError(t, err)
	assert.Len(t, nodes, int(m.GetNumActiveNms()))

	addrs, err := conf.RMAddresses(RMClient)
	require.NoError(t, err)
	co, err := conf.ConnDefaults()
	require.NoError(t, err)
	co.Protocol, co.Auth = ApplicationClientProtocol, auth
	conn, err := Dial(ctx(t), addrs[0], co)
	require.NoError(t, err)
	defer conn.Close()
	assert.Equal(t, AuthKerberos, conn.AuthMethod())
	assert.Equal(t, qop, conn.QOP(), "negotiated QOP")
	resp := &hadooppb.GetClusterMetricsResponseProto{}
	require.NoError(t, conn.Call(ctx(t), "getClusterMetrics", &hadooppb.GetClusterMetricsRequestProto{}, resp))
	assert.Equal(t, m.GetNumNodeManagers(), resp.GetClusterMetrics().GetNumNodeManagers())
	t.Logf("KERBEROS as %s (short name %s) to %s: QOP %s, %d node managers", login.Principal(), login.ShortName(), addrs[0], qop, resp.GetClusterMetrics().GetNumNodeManagers())

	// A protection level the server does not allow fails the handshake, naming both sides.
	if qop != qopAuth {
		co.Protection = "authentication"
		_, err = Dial(ctx(t), addrs[0], co)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "no common quality of protection")
	}

	// A configured principal the server does not have: refused before any ticket goes out.
	co.Protection = ""
	co.Auth = KerberosAuth(login, "nobody/_HOST@"+strings.SplitN(login.Principal(), "@", 2)[1])
	_, err = Dial(ctx(t), addrs[0], co)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "has Kerberos principal")
}

// TOKEN (DIGEST-MD5) at the cluster's protection level against the real scheduler: an unmanaged AM
// submitted over KERBEROS gets its AM-RM token, which then registers and finishes with every call
// wrapped (auth-int, auth-conf) when the cluster asks for it.
func TestTokenQOPAgainstSecureScheduler(t *testing.T) {
	conf, login := secureCluster(t)
	qop := wantQOP(t, conf)
	auth, err := conf.KerberosAuth(login, ApplicationClientProtocol)
	require.NoError(t, err)
	rm, err := NewApplicationClient(conf, auth)
	require.NoError(t, err)
	defer rm.Close()

	na, err := rm.GetNewApplication(ctx(t))
	require.NoError(t, err)
	id := na.GetApplicationId()
	require.NoError(t, rm.SubmitApplication(ctx(t), &hadooppb.ApplicationSubmissionContextProto{
		ApplicationId:   id,
		ApplicationName: proto.String("yarnrpc-secure-unmanaged-am"),
		Queue:           proto.String("default"),
		UnmanagedAm:     proto.Bool(true),
		AmContainerSpec: &hadooppb.ContainerLaunchContextProto{},
		Resource:        &hadooppb.ResourceProto{Memory: proto.Int64(128), VirtualCores: proto.Int32(1)},
		MaxAppAttempts:  proto.Int32(1),
		ApplicationType: proto.String("YARN-AM-TEST"),
	}))
	defer func() { _, _ = rm.KillApplication(ctx(t), id, "yarnrpc secure SASL test cleanup") }()

	var tp *hadooppb.TokenProto
	require.Eventually(t, func() bool {
		r, err := rm.GetApplicationReport(ctx(t), id)
		if err != nil {
			return false
		}
		tp = r.GetAmRmToken()
		return tp != nil
	}, time.Minute, 200*time.Millisecond, "the RM never issued an AM-RM token for the unmanaged AM")
	tok := Token{Identifier: tp.GetIdentifier(), Password: tp.GetPassword(), Kind: tp.GetKind()}

	addrs, err := conf.RMAddresses(RMScheduler)
	require.NoError(t, err)
	co, err := conf.ConnDefaults()
	require.NoError(t, err)
	co.Protocol, co.Auth = ApplicationMasterProtocol, TokenAuth(tok, login.ShortName())
	conn, err := Dial(ctx(t), addrs[0], co)
	require.NoError(t, err, "TOKEN at QOP %s", qop)
	defer conn.Close()
	assert.Equal(t, AuthToken, conn.AuthMethod())
	assert.Equal(t, qop, conn.QOP())

	reg := &hadooppb.RegisterApplicationMasterResponseProto{}
	require.NoError(t, conn.Call(ctx(t), "registerApplicationMaster", &hadooppb.RegisterApplicationMasterRequestProto{
		Host: proto.String("127.0.0.1"), RpcPort: proto.Int32(0), TrackingUrl: proto.String(""),
	}, reg))
	assert.Positive(t, reg.GetMaximumCapability().GetMemory())
	fin := &hadooppb.FinishApplicationMasterResponseProto{}
	require.NoError(t, conn.Call(ctx(t), "finishApplicationMaster", &hadooppb.FinishApplicationMasterRequestProto{
		FinalApplicationStatus: hadooppb.FinalApplicationStatusProto_APP_SUCCEEDED.Enum(),
		Diagnostics:            proto.String("yarnrpc secure SASL test"),
	}, fin))
}
