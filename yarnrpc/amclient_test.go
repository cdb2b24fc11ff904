package yarnrpc

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
	"github.com/yarn-am/yarn-am/yarnrpc/rpctest"
)

func TestAMClientTokenAuthAndRollover(t *testing.T) {
	srv := newServer(t, rpctest.Options{Tokens: map[string][]byte{"id1": []byte("pw1"), "id2": []byte("pw2")}})
	srv.Handle(ApplicationMasterProtocol, "registerApplicationMaster", func(_ context.Context, r *rpctest.Request) (proto.Message, error) {
		var req hadooppb.RegisterApplicationMasterRequestProto
		require.NoError(t, r.Decode(&req))
		return &hadooppb.RegisterApplicationMasterResponseProto{Queue: proto.String("q-" + req.GetHost())}, nil
	})
	srv.Handle(ApplicationMasterProtocol, "allocate", func(_ context.Context, r *rpctest.Request) (proto.Message, error) {
		var req hadooppb.AllocateRequestProto
		require.NoError(t, r.Decode(&req))
		if req.GetResponseId() == 99 {
			return nil, &rpctest.Exception{Class: "org.apache.hadoop.yarn.exceptions.ApplicationMasterNotRegisteredException", Message: "not registered"}
		}
		return &hadooppb.AllocateResponseProto{ResponseId: proto.Int32(req.GetResponseId() + 1)}, nil
	})
	srv.Handle(ApplicationMasterProtocol, "finishApplicationMaster", func(context.Context, *rpctest.Request) (proto.Message, error) {
		return &hadooppb.FinishApplicationMasterResponseProto{IsUnregistered: proto.Bool(true)}, nil
	})
	c, err := NewAMClientAt([]string{srv.Addr()}, ConnOptions{}, Token{Identifier: []byte("id1"), Password: []byte("pw1"), Kind: AMRMTokenKind}, "alice")
	require.NoError(t, err)
	defer c.Close()

	reg, err := c.Register(ctx(t), &hadooppb.RegisterApplicationMasterRequestProto{Host: proto.String("h")})
	require.NoError(t, err)
	assert.Equal(t, "q-h", reg.GetQueue())
	resp, err := c.Allocate(ctx(t), &hadooppb.AllocateRequestProto{ResponseId: proto.Int32(4)})
	require.NoError(t, err)
	assert.EqualValues(t, 5, resp.GetResponseId())
	_, err = c.Allocate(ctx(t), &hadooppb.AllocateRequestProto{ResponseId: proto.Int32(99)})
	assert.True(t, errors.Is(err, ErrApplicationMasterNotRegistered), "%v", err)

	require.NoError(t, c.SetToken(Token{Identifier: []byte("id2"), Password: []byte("pw2")}))
	srv.CloseConnections()
	done, err := c.Finish(ctx(t), &hadooppb.FinishApplicationMasterRequestProto{})
	require.NoError(t, err)
	assert.True(t, done)
	conns := srv.Connections()
	require.Len(t, conns, 2)
	assert.Equal(t, "TOKEN", conns[0].Auth)
	assert.Equal(t, []byte("id1"), conns[0].TokenIdentifier)
	assert.Equal(t, []byte("id2"), conns[1].TokenIdentifier, "a rolled token is used by new connections")
	assert.Equal(t, ApplicationMasterProtocol, conns[1].Protocol)

	_, err = NewAMClientAt([]string{srv.Addr()}, ConnOptions{}, Token{Identifier: []byte("x"), Kind: "HDFS_DELEGATION_TOKEN"}, "alice")
	assert.ErrorContains(t, err, `AM-RM token has kind "HDFS_DELEGATION_TOKEN"; want YARN_AM_RM_TOKEN`)
}

func TestNMClientTokensPerNode(t *testing.T) {
	nm1 := newServer(t, rpctest.Options{Tokens: map[string][]byte{"nm1": []byte("p1")}})
	nm2 := newServer(t, rpctest.Options{Tokens: map[string][]byte{"nm2": []byte("p2")}})
	for _, s := range []*rpctest.Server{nm1, nm2} {
		s.Handle(ContainerManagementProtocol, "startContainers", func(_ context.Context, r *rpctest.Request) (proto.Message, error) {
			var req hadooppb.StartContainersRequestProto
			require.NoError(t, r.Decode(&req))
			resp := &hadooppb.StartContainersResponseProto{}
			for range req.GetStartContainerRequest() {
				resp.SucceededRequests = append(resp.SucceededRequests, &hadooppb.ContainerIdProto{Id: proto.Int64(1)})
			}
			return resp, nil
		})
		s.Handle(ContainerManagementProtocol, "stopContainers", func(context.Context, *rpctest.Request) (proto.Message, error) {
			return &hadooppb.StopContainersResponseProto{}, nil
		})
		s.Handle(ContainerManagementProtocol, "getContainerStatuses", func(context.Context, *rpctest.Request) (proto.Message, error) {
			return &hadooppb.GetContainerStatusesResponseProto{}, nil
		})
	}
	n := NewNMClient(ConnOptions{}, "appattempt_1_0001_000001")
	defer n.Close()
	_, err := n.StartContainers(ctx(t), nm1.Addr(), &hadooppb.StartContainerRequestProto{})
	assert.ErrorContains(t, err, "no NMToken for node "+nm1.Addr())
	require.NoError(t, n.SetToken(nm1.Addr(), Token{Identifier: []byte("nm1"), Password: []byte("p1")}))
	require.NoError(t, n.SetToken(nm2.Addr(), Token{Identifier: []byte("nm2"), Password: []byte("p2")}))
	assert.ElementsMatch(t, []string{nm1.Addr(), nm2.Addr()}, n.Nodes())
	resp, err := n.StartContainers(ctx(t), nm1.Addr(), &hadooppb.StartContainerRequestProto{}, &hadooppb.StartContainerRequestProto{})
	require.NoError(t, err)
	assert.Len(t, resp.GetSucceededRequests(), 2)
	_, err = n.StopContainers(ctx(t), nm2.Addr(), &hadooppb.ContainerIdProto{Id: proto.Int64(1)})
	require.NoError(t, err)
	_, err = n.GetContainerStatuses(ctx(t), nm2.Addr(), &hadooppb.ContainerIdProto{Id: proto.Int64(1)})
	require.NoError(t, err)
	assert.Equal(t, []byte("nm1"), nm1.Connections()[0].TokenIdentifier)
	assert.Equal(t, []byte("nm2"), nm2.Connections()[0].TokenIdentifier, "each node gets its own NMToken")
	assert.Equal(t, ContainerManagementProtocol, nm2.Connections()[0].Protocol)
}

func TestContainerIDs(t *testing.T) {
	for _, s := range []string{
		"container_1700000000000_0001_01_000001",
		"container_1795313217816_0015_01_000002",
		"container_e17_1700000000000_12345_03_1234567",
	} {
		id, err := ParseContainerID(s)
		require.NoError(t, err, s)
		assert.Equal(t, s, FormatContainerID(id))
	}
	id, err := ParseContainerID("container_e17_1700000000000_0002_03_000004")
	require.NoError(t, err)
	assert.EqualValues(t, 17<<40|4, id.GetId())
	assert.EqualValues(t, 3, id.GetAppAttemptId().GetAttemptId())
	assert.Equal(t, "appattempt_1700000000000_0002_000003", FormatAttemptID(id.GetAppAttemptId()))
	assert.Equal(t, "application_1700000000000_0002", FormatApplicationID(id.GetAppAttemptId().GetApplicationId()))
	for _, bad := range []string{"", "container_1_2_3", "application_1_0001", "container_ex_1_2_3_4", "container_1_2_3_x"} {
		_, err := ParseContainerID(bad)
		assert.ErrorContains(t, err, "is not a container id", bad)
	}
}

// A NodeManager that refuses some containers of a successful call: one typed error per refused
// container, and the response still says which started.
func TestNMClientStartContainersTypedRefusals(t *testing.T) {
	nm := newServer(t, rpctest.Options{Tokens: map[string][]byte{"nm": []byte("p")}})
	cid := func(id int64) *hadooppb.ContainerIdProto {
		c, err := ParseContainerID(fmt.Sprintf("container_1700000000000_0001_01_%06d", id))
		require.NoError(t, err)
		return c
	}
	nm.Handle(ContainerManagementProtocol, "startContainers", func(context.Context, *rpctest.Request) (proto.Message, error) {
		return &hadooppb.StartContainersResponseProto{
			SucceededRequests: []*hadooppb.ContainerIdProto{cid(2)},
			FailedRequests: []*hadooppb.ContainerExceptionMapProto{
				{ContainerId: cid(3), Exception: &hadooppb.SerializedExceptionProto{
					ClassName: proto.String("org.apache.hadoop.yarn.exceptions.YarnException"),
					Message:   proto.String("org.apache.hadoop.yarn.exceptions.YarnException: Container container_1700000000000_0001_01_000003 already started\n\tat X.y(X.java:1)")}},
				{ContainerId: cid(4), Exception: &hadooppb.SerializedExceptionProto{
					ClassName: proto.String("org.apache.hadoop.security.token.SecretManager$InvalidToken"),
					Message:   proto.String("Invalid container token used for starting container on : nm:1")}},
			},
		}, nil
	})
	n := NewNMClient(ConnOptions{}, "appattempt_1_0001_000001")
	defer n.Close()
	require.NoError(t, n.SetToken(nm.Addr(), Token{Identifier: []byte("nm"), Password: []byte("p")}))
	resp, err := n.StartContainers(ctx(t), nm.Addr(), &hadooppb.StartContainerRequestProto{}, &hadooppb.StartContainerRequestProto{}, &hadooppb.StartContainerRequestProto{})
	require.Error(t, err)
	require.NotNil(t, resp)
	assert.Len(t, resp.GetSucceededRequests(), 1)
	var ce *ContainerError
	require.True(t, errors.As(err, &ce))
	assert.Equal(t, "container_1700000000000_0001_01_000003", ce.Container)
	assert.Equal(t, "container_1700000000000_0001_01_000003: YarnException: Container container_1700000000000_0001_01_000003 already started", ce.Error())
	assert.True(t, errors.Is(err, ErrAccessControl), "the second refusal (InvalidToken) is in the chain too: %v", err)
	var re *RemoteError
	require.True(t, errors.As(err, &re))
	assert.Equal(t, "org.apache.hadoop.yarn.exceptions.YarnException", re.Class)
	assert.False(t, errors.Is(err, ErrConnection))
}
