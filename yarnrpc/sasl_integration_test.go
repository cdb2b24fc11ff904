//go:build integration

package yarnrpc

import (
	"errors"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// TestTokenAuthAgainstRealScheduler proves SASL DIGEST-MD5 against a real ResourceManager: it submits
// an unmanaged AM (the RM then hands the AM-RM token to the client in the application report, as for
// Hadoop's UnmanagedAMLauncher), registers and unregisters on the scheduler port with that token, and
// checks that a wrong password is refused.
func TestTokenAuthAgainstRealScheduler(t *testing.T) {
	if os.Getenv("HADOOP_CONF_DIR") == "" {
		t.Fatal("HADOOP_CONF_DIR is not set: start the mini cluster with 'make minicluster-up' and source .minicluster/env")
	}
	conf, err := LoadConfigFromEnv()
	require.NoError(t, err)
	rm, err := NewApplicationClient(conf, Auth{})
	require.NoError(t, err)
	defer rm.Close()

	na, err := rm.GetNewApplication(ctx(t))
	require.NoError(t, err)
	id := na.GetApplicationId()
	require.NoError(t, rm.SubmitApplication(ctx(t), &hadooppb.ApplicationSubmissionContextProto{
		ApplicationId:   id,
		ApplicationName: proto.String("yarnrpc-unmanaged-am-sasl"),
		Queue:           proto.String("default"),
		UnmanagedAm:     proto.Bool(true),
		AmContainerSpec: &hadooppb.ContainerLaunchContextProto{},
		Resource:        &hadooppb.ResourceProto{Memory: proto.Int64(128), VirtualCores: proto.Int32(1)},
		MaxAppAttempts:  proto.Int32(1),
		ApplicationType: proto.String("YARN-AM-TEST"),
	}))
	defer func() { _, _ = rm.KillApplication(ctx(t), id, "yarnrpc SASL test cleanup") }()

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
	assert.Equal(t, AMRMTokenKind, tok.Kind)

	addrs, err := conf.RMAddresses(RMScheduler)
	require.NoError(t, err)
	co, err := conf.ConnDefaults()
	require.NoError(t, err)

	// The wrong password first: Hadoop refuses the SASL response.
	bad := tok
	bad.Password = append([]byte("x"), tok.Password...)
	co.Protocol = ApplicationMasterProtocol
	co.Auth = TokenAuth(bad, CurrentUser())
	_, err = Dial(ctx(t), addrs[0], co)
	require.Error(t, err, "the RM accepted a wrong token password")
	assert.True(t, errors.Is(err, ErrConnection))
	assert.True(t, errors.Is(err, ErrAccessControl), "got %v", err)
	t.Logf("wrong password: %v", err)

	// Then the real token, through the lead's AMClient (which runs on this package's Client).
	am, err := NewAMClient(conf, tok, CurrentUser())
	require.NoError(t, err)
	defer am.Close()
	reg, err := am.Register(ctx(t), &hadooppb.RegisterApplicationMasterRequestProto{
		Host: proto.String("127.0.0.1"), RpcPort: proto.Int32(0), TrackingUrl: proto.String(""),
	})
	require.NoError(t, err, "register with the AM-RM token over DIGEST-MD5")
	assert.Positive(t, reg.GetMaximumCapability().GetMemory())

	// Finish may answer "not yet unregistered" (false) at first; a successful call is what counts here.
	_, err = am.Finish(ctx(t), &hadooppb.FinishApplicationMasterRequestProto{
		FinalApplicationStatus: hadooppb.FinalApplicationStatusProto_APP_SUCCEEDED.Enum(),
		Diagnostics:            proto.String("yarnrpc SASL test"),
	})
	require.NoError(t, err)
}
