package yarnrpc

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/yarn-am/yarn-am/yarnrpc/rpctest"
)

func newClient(t *testing.T, addrs []string, mod func(*ClientOptions)) *Client {
	t.Helper()
	o := ClientOptions{Addresses: addrs, ConnOptions: simpleOpts(),
		Backoff: Backoff{Base: 5 * time.Millisecond, Max: 50 * time.Millisecond}}
	if mod != nil {
		mod(&o)
	}
	c, err := NewClient(o)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func TestClientSharesOneConnection(t *testing.T) {
	srv := newServer(t, rpctest.Options{})
	echo(srv)
	c := newClient(t, []string{srv.Addr()}, nil)
	var wg sync.WaitGroup
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); callEcho(t, c, "x") }()
	}
	wg.Wait()
	assert.Equal(t, 1, srv.Accepted(), "concurrent first calls dial once")
}

// The server goes away and comes back on the same port: the client backs off and reconnects.
func TestClientReconnectsWithBackoff(t *testing.T) {
	srv := newServer(t, rpctest.Options{})
	addr := srv.Addr()
	echo(srv)
	// echo is idempotent here: the first call after the shutdown may go out on the old connection
	// before the client has seen it close, and only idempotent calls are re-sent then.
	c := newClient(t, []string{addr}, func(o *ClientOptions) {
		o.MaxAttempts = 100
		o.IdempotentMethods = []string{"echo"}
	})
	assert.Equal(t, "1", callEcho(t, c, "1"))

	require.NoError(t, srv.Close())
	restarted := make(chan *rpctest.Server, 1)
	go func() {
		// An outage that lasts is what is under test (the client must back off and try again, up
		// to MaxAttempts = 100, far more than 150 ms needs); no signal stands in for it.
		time.Sleep(150 * time.Millisecond)
		s2, err := rpctest.NewServer(rpctest.Options{Addr: addr})
		if err != nil {
			restarted <- nil
			return
		}
		echo(s2)
		restarted <- s2
	}()
	assert.Equal(t, "2", callEcho(t, c, "2"))
	s2 := <-restarted
	require.NotNil(t, s2, "could not listen on %s again", addr)
	defer s2.Close()
	assert.Equal(t, 1, s2.Accepted())
}

func TestClientGivesUpAfterMaxAttempts(t *testing.T) {
	srv := newServer(t, rpctest.Options{})
	addr := srv.Addr()
	require.NoError(t, srv.Close())
	c := newClient(t, []string{addr}, func(o *ClientOptions) { o.MaxAttempts = 3 })
	err := c.Call(ctx(t), "echo", userMsg("x"), userMsg(""))
	require.Error(t, err)
	assert.True(t, errors.Is(err, ErrConnection))
	assert.Contains(t, err.Error(), "giving up after 3 attempts on "+addr)

	short, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	c2 := newClient(t, []string{addr}, func(o *ClientOptions) {
		o.MaxAttempts = 1000
		o.Backoff = Backoff{Base: 10 * time.Millisecond, Max: 10 * time.Millisecond}
	})
	err = c2.Call(short, "echo", userMsg("x"), userMsg(""))
	assert.True(t, errors.Is(err, context.DeadlineExceeded), "got %v", err)
}

func TestClientHAFailoverFromStandby(t *testing.T) {
	rm1 := newServer(t, rpctest.Options{})
	rm2 := newServer(t, rpctest.Options{})
	echo(rm1)
	echo(rm2)
	rm1.SetStandby(true)
	c := newClient(t, []string{rm1.Addr(), rm2.Addr()}, nil)
	assert.Equal(t, "x", callEcho(t, c, "x"))
	assert.Equal(t, rm2.Addr(), c.Active())
	assert.Equal(t, 1, rm1.Calls("echo"))
	assert.Equal(t, 1, rm2.Calls("echo"))

	// rm2 becomes standby, rm1 active again: back to rm1.
	rm2.SetStandby(true)
	rm1.SetStandby(false)
	assert.Equal(t, "y", callEcho(t, c, "y"))
	assert.Equal(t, rm1.Addr(), c.Active())
}

func TestClientHAFailoverFromDownRM(t *testing.T) {
	rm1 := newServer(t, rpctest.Options{})
	rm2 := newServer(t, rpctest.Options{})
	echo(rm2)
	require.NoError(t, rm1.Close())
	// Failing over to an RM not yet tried is immediate: with an hour of backoff the call would
	// otherwise miss its deadline.
	c := newClient(t, []string{rm1.Addr(), rm2.Addr()}, func(o *ClientOptions) { o.Backoff = Backoff{Base: time.Hour} })
	assert.Equal(t, "x", callEcho(t, c, "x"))
	assert.Equal(t, rm2.Addr(), c.Active())
	c = newClient(t, []string{rm1.Addr(), rm2.Addr()}, nil)
	callEcho(t, c, "x")

	// Both standby: the client keeps trying until MaxAttempts and says so.
	rm2.SetStandby(true)
	err := c.Call(ctx(t), "echo", userMsg("x"), userMsg(""))
	assert.True(t, errors.Is(err, ErrStandby) || errors.Is(err, ErrConnection), "got %v", err)
	assert.Contains(t, err.Error(), "giving up after")
}

// A connection that breaks after the request was sent: a non-idempotent call is not re-sent (the
// server may have run it), an idempotent one is.
func TestClientNeverResendsNonIdempotentCalls(t *testing.T) {
	srv := newServer(t, rpctest.Options{})
	echo(srv)
	srv.Handle(testProtocol, "submit", func(ctx context.Context, r *rpctest.Request) (_ proto.Message, _ error) {
		return userMsg("done"), nil
	})
	first := true
	var mu sync.Mutex
	srv.SetFaults(func(*rpctest.Request) rpctest.Fault {
		mu.Lock()
		defer mu.Unlock()
		if first {
			first = false
			return rpctest.Fault{CloseConn: true}
		}
		return rpctest.Fault{}
	})
	c := newClient(t, []string{srv.Addr()}, func(o *ClientOptions) { o.IdempotentMethods = []string{"echo"} })

	err := c.Call(ctx(t), "submit", userMsg("x"), userMsg(""))
	require.Error(t, err)
	assert.True(t, errors.Is(err, ErrConnection))
	assert.Equal(t, 1, srv.Calls("submit"), "submit must not be re-sent")

	mu.Lock()
	first = true
	mu.Unlock()
	assert.Equal(t, "again", callEcho(t, c, "again"))
	assert.Equal(t, 2, srv.Calls("echo"), "echo is idempotent: re-sent once after the broken connection")
}

func TestClientRetriesRetriableAndStopsOnAccessControl(t *testing.T) {
	srv := newServer(t, rpctest.Options{})
	n := 0
	var mu sync.Mutex
	srv.Handle(testProtocol, "busy", func(context.Context, *rpctest.Request) (proto.Message, error) {
		mu.Lock()
		defer mu.Unlock()
		n++
		if n < 3 {
			return nil, &rpctest.Exception{Class: "org.apache.hadoop.ipc.RetriableException", Message: "try later"}
		}
		return userMsg("ok"), nil
	})
	srv.Handle(testProtocol, "denied", func(context.Context, *rpctest.Request) (proto.Message, error) {
		return nil, &rpctest.Exception{Class: "org.apache.hadoop.security.AccessControlException", Message: "User alice cannot submit"}
	})
	c := newClient(t, []string{srv.Addr()}, nil)
	resp := userMsg("")
	require.NoError(t, c.Call(ctx(t), "busy", userMsg("x"), resp))
	assert.Equal(t, "ok", resp.GetEffectiveUser())
	assert.Equal(t, 3, srv.Calls("busy"))

	err := c.Call(ctx(t), "denied", userMsg("x"), resp)
	assert.True(t, errors.Is(err, ErrAccessControl))
	assert.Equal(t, "denied: AccessControlException: User alice cannot submit", err.Error())
	assert.Equal(t, 1, srv.Calls("denied"))
}

func TestClientSetAuthAppliesToNewConnections(t *testing.T) {
	srv := newServer(t, rpctest.Options{Tokens: map[string][]byte{"old": []byte("p1"), "new": []byte("p2")}})
	echo(srv)
	c := newClient(t, []string{srv.Addr()}, func(o *ClientOptions) {
		o.Auth = TokenAuth(Token{Identifier: []byte("old"), Password: []byte("p1")}, "am")
	})
	callEcho(t, c, "1")
	require.NoError(t, c.SetAuth(TokenAuth(Token{Identifier: []byte("new"), Password: []byte("p2")}, "am")))
	srv.CloseConnections()
	require.Eventually(t, func() bool { return srv.OpenConnections() == 0 }, 2*time.Second, time.Millisecond)
	callEcho(t, c, "2")
	infos := srv.Connections()
	require.Len(t, infos, 2)
	assert.Equal(t, "old", string(infos[0].TokenIdentifier))
	assert.Equal(t, "new", string(infos[1].TokenIdentifier))
}

func TestClientClose(t *testing.T) {
	srv := newServer(t, rpctest.Options{})
	echo(srv)
	c := newClient(t, []string{srv.Addr()}, nil)
	callEcho(t, c, "x")
	require.NoError(t, c.Close())
	err := c.Call(ctx(t), "echo", userMsg("x"), userMsg(""))
	assert.True(t, errors.Is(err, ErrClosed))

	_, err = NewClient(ClientOptions{ConnOptions: simpleOpts()})
	assert.ErrorContains(t, err, "Addresses is empty")
	_, err = NewClient(ClientOptions{Addresses: []string{"rm1"}, ConnOptions: simpleOpts()})
	assert.ErrorContains(t, err, `"rm1" has no port`)
}

func TestBackoffDelays(t *testing.T) {
	b := Backoff{Base: 100 * time.Millisecond, Max: time.Second}
	for attempt, want := range []time.Duration{100, 200, 400, 800, 1000, 1000} {
		want *= time.Millisecond
		for i := 0; i < 20; i++ {
			d := b.Delay(attempt)
			assert.GreaterOrEqual(t, d, want/2)
			assert.LessOrEqual(t, d, want)
		}
	}
	assert.LessOrEqual(t, Backoff{}.Delay(100), 15*time.Second)
}
