package yarnrpc

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
	"github.com/yarn-am/yarn-am/yarnrpc/rpctest"
)

// BenchmarkCallParallel measures concurrent calls on one connection against the fake server, the set
// up the AM's scale simulation uses.
func BenchmarkCallParallel(b *testing.B) {
	srv, err := rpctest.NewServer(rpctest.Options{})
	require.NoError(b, err)
	defer srv.Close()
	echo(srv)
	conn, err := Dial(context.Background(), srv.Addr(), simpleOpts())
	require.NoError(b, err)
	defer conn.Close()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		resp := &hadooppb.UserInformationProto{}
		req := userMsg("container_e01_1700000000000_0001_01_000001")
		for pb.Next() {
			if err := conn.Call(context.Background(), "echo", req, resp); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
