package yarnrpc

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
	"github.com/yarn-am/yarn-am/yarnrpc/rpctest"
)

// Tests use UserInformationProto as a small request and response message: "echo" returns the
// request, so a test can tell responses apart.

func newServer(t *testing.T, o rpctest.Options) *rpctest.Server {
	t.Helper()
	srv, err := rpctest.NewServer(o)
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Close() })
	return srv
}

func echo(srv *rpctest.Server) {
	srv.Handle(testProtocol, "echo", func(_ context.Context, r *rpctest.Request) (proto.Message, error) {
		m := &hadooppb.UserInformationProto{}
		if err := r.Decode(m); err != nil {
			return nil, err
		}
		return m, nil
	})
}

func userMsg(s string) *hadooppb.UserInformationProto {
	return &hadooppb.UserInformationProto{EffectiveUser: proto.String(s)}
}

func callEcho(t *testing.T, c interface {
	Call(context.Context, string, proto.Message, proto.Message) error
}, s string) string {
	t.Helper()
	resp := &hadooppb.UserInformationProto{}
	require.NoError(t, c.Call(ctx(t), "echo", userMsg(s), resp))
	return resp.GetEffectiveUser()
}

func simpleOpts() ConnOptions {
	return ConnOptions{Protocol: testProtocol, Auth: SimpleAuth("alice")}
}
