package yarnrpc

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
	"github.com/yarn-am/yarn-am/yarnrpc/rpctest"
)

func TestSimpleConnectionContext(t *testing.T) {
	srv := newServer(t, rpctest.Options{})
	echo(srv)
	o := simpleOpts()
	o.Auth.RealUser = "oozie"
	conn, err := Dial(ctx(t), srv.Addr(), o)
	require.NoError(t, err)
	defer conn.Close()
	assert.Equal(t, "a", callEcho(t, conn, "a"))
	infos := srv.Connections()
	require.Len(t, infos, 1)
	assert.Equal(t, rpctest.ConnInfo{Auth: "SIMPLE", User: "alice", RealUser: "oozie", Protocol: testProtocol}, infos[0])
}

// 200 concurrent calls on one connection, answered after random delays and in reverse batches: every
// caller gets its own answer.
func TestConcurrentCallsOutOfOrder(t *testing.T) {
	srv := newServer(t, rpctest.Options{})
	echo(srv)
	srv.SetReorder(10)
	srv.SetFaults(func(*rpctest.Request) rpctest.Fault {
		return rpctest.Fault{Delay: time.Duration(rand.IntN(20)) * time.Millisecond}
	})
	conn, err := Dial(ctx(t), srv.Addr(), simpleOpts())
	require.NoError(t, err)
	defer conn.Close()

	const n = 200
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			want := fmt.Sprintf("call-%d", i)
			resp := &hadooppb.UserInformationProto{}
			if err := conn.Call(ctx(t), "echo", userMsg(want), resp); err != nil {
				errs <- err
				return
			}
			if resp.GetEffectiveUser() != want {
				errs <- fmt.Errorf("call %s got %s", want, resp.GetEffectiveUser())
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	assert.Equal(t, n, srv.Calls("echo"))
	assert.Equal(t, 0, conn.Outstanding())
	assert.Equal(t, 1, srv.Accepted(), "all calls share one connection")
}

// A call past its deadline returns context.DeadlineExceeded and is forgotten; its late response is
// dropped and the connection goes on serving.
func TestDeadlineAndLateResponse(t *testing.T) {
	srv := newServer(t, rpctest.Options{})
	echo(srv)
	release := make(chan struct{})
	srv.Handle(testProtocol, "slow", func(ctx context.Context, r *rpctest.Request) (proto.Message, error) {
		<-release
		return userMsg("late"), nil
	})
	conn, err := Dial(ctx(t), srv.Addr(), simpleOpts())
	require.NoError(t, err)
	defer conn.Close()

	c, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err = conn.Call(c, "slow", userMsg("x"), userMsg(""))
	require.Error(t, err)
	assert.True(t, errors.Is(err, context.DeadlineExceeded))
	assert.Contains(t, err.Error(), "slow on "+srv.Addr())
	assert.Equal(t, 0, conn.Outstanding())

	close(release) // the server answers now; the client drops the answer
	require.Eventually(t, func() bool { return conn.dropped.Load() == 1 }, 5*time.Second, time.Millisecond)
	assert.Equal(t, "fast", callEcho(t, conn, "fast"))
	assert.False(t, conn.isClosed())

	// Dropped responses too: only the deadline ends the wait.
	srv.SetFaults(func(*rpctest.Request) rpctest.Fault { return rpctest.Fault{Drop: true} })
	c2, cancel2 := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel2()
	assert.True(t, errors.Is(conn.Call(c2, "echo", userMsg("x"), userMsg("")), context.DeadlineExceeded))
}

func TestPingWhileWaiting(t *testing.T) {
	srv := newServer(t, rpctest.Options{})
	echo(srv)
	// The server stays silent until it has been pinged twice.
	srv.Handle(testProtocol, "waitForPings", func(ctx context.Context, r *rpctest.Request) (proto.Message, error) {
		for srv.Pings() < 2 {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(time.Millisecond):
			}
		}
		return userMsg("pinged"), nil
	})
	// The test is the monitor's clock: each tick is an hour after the last ping or read, so every
	// check while a call waits is due for a ping.
	ticks := make(chan time.Time)
	later := func() time.Time { return time.Now().Add(time.Hour) }
	o := simpleOpts()
	o.PingInterval = 20 * time.Millisecond
	o.MaxIdle = -1
	o.ticks = ticks
	conn, err := Dial(ctx(t), srv.Addr(), o)
	require.NoError(t, err)
	defer conn.Close()
	resp := userMsg("")
	called := make(chan error, 1)
	go func() { called <- conn.Call(ctx(t), "waitForPings", userMsg("x"), resp) }()
	for waiting := true; waiting; {
		select {
		case err := <-called:
			require.NoError(t, err)
			waiting = false
		case ticks <- later():
		}
	}
	assert.Equal(t, "pinged", resp.GetEffectiveUser())
	assert.GreaterOrEqual(t, conn.pingsSent.Load(), int64(2))

	// Without outstanding calls, checks that are due find nothing to ping for. The monitor takes a
	// tick only after it has finished the one before, so after the third send the first two checks
	// are complete, and a ping they sent would have been counted.
	ticks <- later() // taken once the checks made while the call waited are done
	before := conn.pingsSent.Load()
	for range 3 {
		ticks <- later()
	}
	assert.Equal(t, before, conn.pingsSent.Load(), "no pings without outstanding calls")
}

func TestIdleConnectionCloses(t *testing.T) {
	srv := newServer(t, rpctest.Options{})
	echo(srv)
	o := simpleOpts()
	o.MaxIdle = 50 * time.Millisecond
	conn, err := Dial(ctx(t), srv.Addr(), o)
	require.NoError(t, err)
	defer conn.Close()
	assert.Equal(t, "i", callEcho(t, conn, "i"))
	require.Eventually(t, conn.isClosed, 2*time.Second, 5*time.Millisecond)
	require.Eventually(t, func() bool { return srv.OpenConnections() == 0 }, 2*time.Second, 5*time.Millisecond)
	err = conn.Call(ctx(t), "echo", userMsg("x"), userMsg(""))
	assert.True(t, errors.Is(err, ErrConnection))
	assert.True(t, notProcessed(err))
}

func TestCloseFailsOutstandingCalls(t *testing.T) {
	srv := newServer(t, rpctest.Options{})
	echo(srv)
	srv.SetFaults(func(*rpctest.Request) rpctest.Fault { return rpctest.Fault{Drop: true} })
	conn, err := Dial(ctx(t), srv.Addr(), simpleOpts())
	require.NoError(t, err)
	errs := make(chan error, 5)
	for i := 0; i < 5; i++ {
		go func() { errs <- conn.Call(ctx(t), "echo", userMsg("x"), userMsg("")) }()
	}
	require.Eventually(t, func() bool { return srv.Calls("echo") == 5 }, 2*time.Second, time.Millisecond)
	require.NoError(t, conn.Close())
	for i := 0; i < 5; i++ {
		err := <-errs
		assert.True(t, errors.Is(err, ErrClosed), "got %v", err)
		assert.True(t, errors.Is(err, ErrConnection))
		assert.False(t, notProcessed(err), "the calls were on the wire")
		assert.Contains(t, err.Error(), "closed by its owner")
	}
}

func TestServerFaultsBreakTheConnection(t *testing.T) {
	for name, f := range map[string]rpctest.Fault{
		"malformed": {Malformed: true},
		"oversize":  {Oversize: true},
		"close":     {CloseConn: true},
	} {
		t.Run(name, func(t *testing.T) {
			srv := newServer(t, rpctest.Options{})
			echo(srv)
			srv.SetFaults(func(*rpctest.Request) rpctest.Fault { return f })
			conn, err := Dial(ctx(t), srv.Addr(), simpleOpts())
			require.NoError(t, err)
			defer conn.Close()
			err = conn.Call(ctx(t), "echo", userMsg("x"), userMsg(""))
			require.Error(t, err)
			var ce *ConnError
			require.True(t, errors.As(err, &ce), "got %v", err)
			assert.Equal(t, srv.Addr(), ce.Addr)
			assert.False(t, notProcessed(err))
			if name == "oversize" {
				assert.Contains(t, err.Error(), "maximum response length")
			}
			assert.True(t, conn.isClosed())
		})
	}
}

func TestDialErrors(t *testing.T) {
	srv := newServer(t, rpctest.Options{})
	addr := srv.Addr()
	require.NoError(t, srv.Close())
	_, err := Dial(ctx(t), addr, simpleOpts())
	require.Error(t, err)
	assert.True(t, errors.Is(err, ErrConnection))
	assert.True(t, notProcessed(err))
	assert.Contains(t, err.Error(), "dial "+addr)

	_, err = Dial(ctx(t), addr, ConnOptions{Auth: SimpleAuth("a")})
	assert.ErrorContains(t, err, "Protocol is empty")
	_, err = Dial(ctx(t), addr, ConnOptions{Protocol: testProtocol, Auth: Auth{Method: AuthToken}})
	assert.ErrorContains(t, err, "needs a token")
}

// TestCallIDsGoOnAcrossConnections: a second connection of a client (after the server closed an idle
// one) does not number its calls from 0 again: the NameNode's retry cache, keyed by client id and call
// id, would answer an at-most-once call (setXAttr) from the first connection's "done" without doing it.
func TestCallIDsGoOnAcrossConnections(t *testing.T) {
	srv := newServer(t, rpctest.Options{})
	echo(srv)
	var mu sync.Mutex
	var ids []int32
	srv.SetFaults(func(r *rpctest.Request) rpctest.Fault {
		mu.Lock()
		ids = append(ids, r.CallID)
		mu.Unlock()
		return rpctest.Fault{}
	})
	o := simpleOpts()
	o.ClientID = []byte("0123456789abcdef")
	for range 2 {
		conn, err := Dial(ctx(t), srv.Addr(), o)
		require.NoError(t, err)
		callEcho(t, conn, "a")
		callEcho(t, conn, "b")
		conn.Close()
	}
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, ids, 4)
	seen := map[int32]bool{}
	for _, id := range ids {
		assert.False(t, seen[id], "call id %d used twice by one client id: %v", id, ids)
		seen[id] = true
	}
}
