//go:build integration && secure

package yarnrpc

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// Integration tests against the Kerberized mini cluster (make minicluster-up SECURE=1
// RPC_PROTECTION=...; source its env). They run only with YARN_AM_SECURE=1, which that env sets;
// the cluster's hadoop.rpc.protection (YARN_AM_RPC_PROTECTION) is the level under test.

// secureCluster returns the cluster's configuration and the test user's keytab login.
func secureCluster(t *testing.T) (*Config, *Kerberos) {
	t.Helper()
	if os.Getenv("YARN_AM_SECURE") != "1" {
		t.Fatal("YARN_AM_SECURE is not 1: these tests (build tag secure) need the Kerberized mini cluster (make test-secure starts it; or make minicluster-up-secure and source its env)")
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

// TOKEN (DIGEST-MD5) at the cluster's protection level against the real RM: an RM delegation token
// got over KERBEROS then authenticates a token connection to the same port, with every call wrapped
// (auth-int, auth-conf) when the cluster asks for it; a wrong password is refused. (An unmanaged
// AM's AM-RM token is no way in here: on a Kerberized RM the report withholds it, as the RM compares
// the app's short user name with the caller's full principal.)
func TestTokenQOPAgainstSecureRM(t *testing.T) {
	conf, login := secureCluster(t)
	qop := wantQOP(t, conf)
	auth, err := conf.KerberosAuth(login, ApplicationClientProtocol)
	require.NoError(t, err)
	addrs, err := conf.RMAddresses(RMClient)
	require.NoError(t, err)
	co, err := conf.ConnDefaults()
	require.NoError(t, err)
	co.Protocol, co.Auth = ApplicationClientProtocol, auth
	kc, err := Dial(ctx(t), addrs[0], co)
	require.NoError(t, err)
	defer kc.Close()
	dt := &hadooppb.GetDelegationTokenResponseProto{}
	require.NoError(t, kc.Call(ctx(t), "getDelegationToken", &hadooppb.GetDelegationTokenRequestProto{Renewer: proto.String(login.ShortName())}, dt))
	tp := dt.GetToken()
	require.NotEmpty(t, tp.GetIdentifier())
	assert.Equal(t, "RM_DELEGATION_TOKEN", tp.GetKind())
	tok := Token{Identifier: tp.GetIdentifier(), Password: tp.GetPassword(), Kind: tp.GetKind(), Service: addrs[0]}

	bad := tok
	bad.Password = append([]byte("x"), tok.Password...)
	co.Auth = TokenAuth(bad, login.ShortName())
	_, err = Dial(ctx(t), addrs[0], co)
	require.Error(t, err, "the RM accepted a wrong token password")
	assert.ErrorIs(t, err, ErrAccessControl)

	co.Auth = TokenAuth(tok, login.ShortName())
	conn, err := Dial(ctx(t), addrs[0], co)
	require.NoError(t, err, "TOKEN at QOP %s", qop)
	defer conn.Close()
	assert.Equal(t, AuthToken, conn.AuthMethod())
	assert.Equal(t, qop, conn.QOP())
	for i := 0; i < 3; i++ { // several calls: sequence numbers and cipher state carry on
		resp := &hadooppb.GetClusterMetricsResponseProto{}
		require.NoError(t, conn.Call(ctx(t), "getClusterMetrics", &hadooppb.GetClusterMetricsRequestProto{}, resp))
		assert.Positive(t, resp.GetClusterMetrics().GetNumNodeManagers())
	}
	nodes := &hadooppb.GetClusterNodesResponseProto{}
	require.NoError(t, conn.Call(ctx(t), "getClusterNodes", &hadooppb.GetClusterNodesRequestProto{}, nodes))
	assert.NotEmpty(t, nodes.GetNodeReports())
	t.Logf("TOKEN (%s) to %s: QOP %s", tok, addrs[0], conn.QOP())
}

// KERBEROS to the NameNode (dfs.namenode.kerberos.principal, nn/_HOST) at the cluster's protection
// level: getServerDefaults answers, the QOP is the cluster's.
func TestKerberosAgainstSecureNameNode(t *testing.T) {
	conf, login := secureCluster(t)
	qop := wantQOP(t, conf)
	fs := conf.GetString("fs.defaultFS", "")
	require.True(t, strings.HasPrefix(fs, "hdfs://"), "fs.defaultFS=%q", fs)
	addr := strings.TrimSuffix(strings.TrimPrefix(fs, "hdfs://"), "/")
	const nnProtocol = "org.apache.hadoop.hdfs.protocol.ClientProtocol"
	auth, err := conf.KerberosAuth(login, nnProtocol)
	require.NoError(t, err)
	co, err := conf.ConnDefaults()
	require.NoError(t, err)
	co.Protocol, co.Auth = nnProtocol, auth
	conn, err := Dial(ctx(t), addr, co)
	require.NoError(t, err)
	defer conn.Close()
	assert.Equal(t, qop, conn.QOP())
	resp := &emptypb.Empty{} // FsServerDefaultsProto stays in the unknown fields: only the call matters
	require.NoError(t, conn.Call(ctx(t), "getServerDefaults", &emptypb.Empty{}, resp))
	assert.NotEmpty(t, resp.ProtoReflect().GetUnknown(), "the NameNode answered with its server defaults")
	t.Logf("KERBEROS to the NameNode %s (%s): QOP %s", addr, auth.ServerPrincipal, conn.QOP())
}
