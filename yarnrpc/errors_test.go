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

func TestRemoteErrorSentinels(t *testing.T) {
	cases := map[string]error{
		"org.apache.hadoop.yarn.exceptions.ApplicationNotFoundException":             ErrApplicationNotFound,
		"org.apache.hadoop.yarn.exceptions.ApplicationAttemptNotFoundException":      ErrApplicationAttemptNotFound,
		"org.apache.hadoop.yarn.exceptions.InvalidResourceRequestException":          ErrInvalidResourceRequest,
		"org.apache.hadoop.yarn.exceptions.ResourceNotFoundException":                ErrResourceNotFound,
		"org.apache.hadoop.yarn.exceptions.ApplicationMasterNotRegisteredException":  ErrApplicationMasterNotRegistered,
		"org.apache.hadoop.yarn.exceptions.InvalidApplicationMasterRequestException": ErrInvalidApplicationMasterRequest,
		"org.apache.hadoop.ipc.StandbyException":                                     ErrStandby,
		"org.apache.hadoop.security.AccessControlException":                          ErrAccessControl,
		"org.apache.hadoop.security.token.SecretManager$InvalidToken":                ErrAccessControl,
		"javax.security.sasl.SaslException":                                          ErrAccessControl,
		"org.apache.hadoop.ipc.RetriableException":                                   ErrRetriable,
	}
	for class, want := range cases {
		e := &RemoteError{Class: class, Message: "m"}
		assert.True(t, errors.Is(e, want), "%s should match %v", class, want)
		assert.True(t, errors.Is(fmt.Errorf("wrapped: %w", e), want))
		assert.False(t, errors.Is(e, ErrConnection))
		for _, other := range cases {
			if other != want {
				assert.False(t, errors.Is(e, other), "%s must not match %v", class, other)
			}
		}
	}
	unknown := &RemoteError{Class: "org.apache.hadoop.yarn.exceptions.YarnException"}
	assert.False(t, errors.Is(unknown, ErrApplicationNotFound))
	assert.True(t, errors.Is(&RemoteError{Code: hadooppb.RpcResponseHeaderProto_ERROR_NO_SUCH_METHOD}, ErrNoSuchMethod))
}

func TestRemoteErrorMessage(t *testing.T) {
	h := &hadooppb.RpcResponseHeaderProto{
		CallId:             proto.Uint32(1),
		Status:             hadooppb.RpcResponseHeaderProto_ERROR.Enum(),
		ExceptionClassName: proto.String("org.apache.hadoop.yarn.exceptions.ApplicationNotFoundException"),
		ErrorMsg: proto.String("org.apache.hadoop.yarn.exceptions.ApplicationNotFoundException: Application with id " +
			"'application_1_0001' doesn't exist in RM.\n\tat org.apache.hadoop.yarn.server.X.y(X.java:1)\n" +
			"Caused by: java.lang.Foo\n\tat z"),
	}
	e := newRemoteError(h, "getApplicationReport")
	assert.Equal(t, "getApplicationReport: ApplicationNotFoundException: Application with id 'application_1_0001' doesn't exist in RM.", e.Error())
	assert.False(t, e.Fatal)
	assert.Equal(t, "InvalidToken", (&RemoteError{Class: "org.apache.hadoop.security.token.SecretManager$InvalidToken"}).ShortClass()[len("SecretManager$"):])
	// Multi-line messages without a stack trace are kept whole.
	assert.Equal(t, "line one\nline two", cleanJavaMessage("", "line one\nline two\n"))
}

// Through the wire: the fake server's exception reaches errors.Is and errors.As.
func TestRemoteExceptionOverTheWire(t *testing.T) {
	srv := newServer(t, rpctest.Options{})
	srv.Handle(testProtocol, "getApplicationReport", func(context.Context, *rpctest.Request) (proto.Message, error) {
		return nil, &rpctest.Exception{Class: "org.apache.hadoop.yarn.exceptions.ApplicationNotFoundException",
			Message: "Application with id 'application_1_0001' doesn't exist in RM."}
	})
	echo(srv)
	conn, err := Dial(ctx(t), srv.Addr(), simpleOpts())
	require.NoError(t, err)
	defer conn.Close()

	err = conn.Call(ctx(t), "getApplicationReport", userMsg("x"), userMsg(""))
	require.Error(t, err)
	assert.True(t, errors.Is(err, ErrApplicationNotFound))
	var re *RemoteError
	require.True(t, errors.As(err, &re))
	assert.Equal(t, "org.apache.hadoop.yarn.exceptions.ApplicationNotFoundException", re.Class)
	assert.NotContains(t, err.Error(), "\tat ")
	assert.Equal(t, "ok", callEcho(t, conn, "ok"), "an ERROR response leaves the connection usable")

	err = conn.Call(ctx(t), "noSuchMethod", userMsg("x"), userMsg(""))
	assert.True(t, errors.Is(err, ErrNoSuchMethod), "got %v", err)
}

func TestFatalResponseClosesConnection(t *testing.T) {
	srv := newServer(t, rpctest.Options{})
	srv.Handle(testProtocol, "fatal", func(context.Context, *rpctest.Request) (proto.Message, error) {
		return nil, &rpctest.Exception{Class: "org.apache.hadoop.ipc.IpcException", Message: "bad", Fatal: true}
	})
	conn, err := Dial(ctx(t), srv.Addr(), simpleOpts())
	require.NoError(t, err)
	defer conn.Close()
	err = conn.Call(ctx(t), "fatal", userMsg("x"), userMsg(""))
	var re *RemoteError
	require.True(t, errors.As(err, &re))
	assert.True(t, re.Fatal)
	require.Eventually(t, conn.isClosed, 5e9, 1e7)
	err = conn.Call(ctx(t), "fatal", userMsg("x"), userMsg(""))
	assert.True(t, errors.Is(err, ErrConnection))
	assert.True(t, notProcessed(err), "a call on a closed connection was never sent")
}
