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

// The messages of the RM's refusals as Hadoop 3.1 to 3.4 word them (SchedulerUtils' validation and
// ResourceNotFoundException); the RM sends the rejected type and the maximum only inside this text.
func TestResourceRejectionOfRealMessages(t *testing.T) {
	const (
		irr     = "org.apache.hadoop.yarn.exceptions.InvalidResourceRequestException"
		notNote = ", please note that maximum allowed allocation is calculated by scheduler based on maximum resource of registered NodeManagers, which might be less than configured maximum allocation="
	)
	cases := []struct {
		name, class, msg string
		typ              string
		max              map[string]int64 // nil: the message prints no maximum
	}{
		{"3.1 memory", irr, "Invalid resource request, requested resource type=[memory-mb] < 0 or greater than maximum allowed allocation. " +
			"Requested resource=<memory:2048, vCores:1>, maximum allowed allocation=<memory:1024, vCores:2>" + notNote + "<memory:2048, vCores:2>",
			"memory-mb", map[string]int64{"memory-mb": 1024, "vcores": 2}},
		{"3.2 vcores", irr, "Invalid resource request, requested resource type=[vcores] < 0 or greater than maximum allowed allocation. " +
			"Requested resource=<memory:1024, vCores:4>, maximum allowed allocation=<memory:6656, vCores:3>" + notNote + "<memory:6656, vCores:3>",
			"vcores", map[string]int64{"memory-mb": 6656, "vcores": 3}},
		{"3.3 gpu", irr, "Invalid resource request! Cannot allocate containers as requested resource is greater than maximum allowed allocation. " +
			"Requested resource type=[yarn.io/gpu], Requested resource=<memory:512, vCores:1, yarn.io/gpu: 5>, " +
			"maximum allowed allocation=<memory:8192, vCores:4, yarn.io/gpu: 4>" + notNote + "<memory:8192, vCores:4, yarn.io/gpu: 8>",
			"yarn.io/gpu", map[string]int64{"memory-mb": 8192, "vcores": 4, "yarn.io/gpu": 4}},
		// No NodeManager has a GPU: Resource.toString leaves the zero out of the maximum.
		{"3.4 gpu, none registered", irr, "Invalid resource request! Cannot allocate containers as requested resource is greater than maximum allowed allocation. " +
			"Requested resource type=[yarn.io/gpu], Requested resource=<memory:512, vCores:1, yarn.io/gpu: 1>, " +
			"maximum allowed allocation=<memory:8192, vCores:4>" + notNote + "<memory:8192, vCores:4, yarn.io/gpu: 4>",
			"yarn.io/gpu", map[string]int64{"memory-mb": 8192, "vcores": 4, "yarn.io/gpu": 0}},
		{"units are dropped", irr, "Invalid resource request! Cannot allocate containers as requested resource is greater than maximum allowed allocation. " +
			"Requested resource type=[example.com/disk], Requested resource=<memory:512, vCores:1, example.com/disk: 9Gi>, " +
			"maximum allowed allocation=<memory:8192, vCores:4, example.com/disk: 4Gi>" + notNote + "<memory:8192, vCores:4, example.com/disk: 4Gi>",
			"example.com/disk", map[string]int64{"memory-mb": 8192, "vcores": 4, "example.com/disk": 4}},
		{"3.4 below zero", irr, "Invalid resource request! Cannot allocate containers as requested resource is less than 0! " +
			"Requested resource type=[vcores], Requested resource=<memory:512, vCores:-1>", "vcores", nil},
		{"unknown type", "org.apache.hadoop.yarn.exceptions.ResourceNotFoundException",
			"The resource manager encountered a problem that should not occur under normal circumstances. Please report this error to the Hadoop " +
				"community by opening a JIRA ticket at http://issues.apache.org/jira and including the following information:\n" +
				"* Resource type requested: example.com/tpu\n* Resource object: <memory:512, vCores:1>\n* The stack trace for this exception: x",
			"example.com/tpu", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := &hadooppb.RpcResponseHeaderProto{CallId: proto.Uint32(1), Status: hadooppb.RpcResponseHeaderProto_ERROR.Enum(),
				ExceptionClassName: proto.String(c.class), ErrorMsg: proto.String(c.class + ": " + c.msg + "\n\tat org.apache.hadoop.X.y(X.java:1)")}
			err := fmt.Errorf("allocate: %w", newRemoteError(h, "allocate"))
			r, ok := RejectedResource(err)
			require.True(t, ok)
			assert.Equal(t, c.typ, r.Type)
			assert.Equal(t, c.max, r.Maximum)
			max, known := r.MaximumOfType()
			assert.Equal(t, c.max != nil, known)
			assert.Equal(t, c.max[c.typ], max)
		})
	}

	for _, err := range []error{
		errors.New("connection reset"),
		&RemoteError{Class: "org.apache.hadoop.yarn.exceptions.YarnException", Message: "Requested resource type=[vcores]"},
		&RemoteError{Class: irr, Message: "Invalid resource request, node label not enabled but request contains label expression"},
	} {
		_, ok := RejectedResource(err)
		assert.False(t, ok, "%v names no rejected resource type", err)
	}
}
