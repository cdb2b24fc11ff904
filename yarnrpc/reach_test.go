package yarnrpc

import (
	"context"
	"errors"
	"io"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/yarnrpc/rpctest"
)

// refusedAddr returns a local address nothing listens on.
func refusedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	a := ln.Addr().String()
	require.NoError(t, ln.Close())
	return a
}

// fakeListener accepts connections and hands each to serve; it stops at the end of the test.
func fakeListener(t *testing.T, serve func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Add(1)
			go func() { defer wg.Done(); serve(c) }()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		for _, c := range conns {
			_ = c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return ln.Addr().String()
}

// httpAnswer answers whatever arrives as a web server answers a request it cannot parse.
func httpAnswer(c net.Conn) {
	buf := make([]byte, 512)
	if _, err := c.Read(buf); err != nil {
		return
	}
	_, _ = io.WriteString(c, "HTTP/1.1 400 Bad Request\r\nContent-Type: text/html\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
	_ = c.Close()
}

// silent accepts and reads, never answering.
func silent(c net.Conn) { _, _ = io.Copy(io.Discard, c) }

func siteDir(t *testing.T, addr string) (*Config, string) {
	t.Helper()
	dir := t.TempDir()
	writeSite(t, dir, "yarn-site.xml", map[string]string{"yarn.resourcemanager.address": addr})
	conf, err := LoadConfig(dir)
	require.NoError(t, err)
	return conf, filepath.Join(dir, "yarn-site.xml")
}

func callMetrics(t *testing.T, conf *Config, auth Auth, timeout time.Duration, progress func(string)) (error, time.Duration) {
	t.Helper()
	rm, err := NewApplicationClient(conf, auth, FailFast(progress))
	require.NoError(t, err)
	defer rm.Close()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	start := time.Now()
	_, err = rm.GetClusterMetrics(ctx)
	return err, time.Since(start)
}

// A refused connection is named in seconds, with the address, the file it came from and the fix;
// no retry lines, no "context deadline exceeded".
func TestFailFastRefused(t *testing.T) {
	addr := refusedAddr(t)
	conf, site := siteDir(t, addr)
	err, took := callMetrics(t, conf, Auth{}, 60*time.Second, nil)
	require.Error(t, err)
	assert.Less(t, took, 10*time.Second, "gives up within 10 s")
	msg := err.Error()
	assert.Contains(t, msg, "cannot reach the ResourceManager at "+addr+" (yarn.resourcemanager.address in "+site+")")
	assert.Contains(t, msg, "connection refused")
	assert.Contains(t, msg, "Is the ResourceManager running there")
	assert.NotContains(t, msg, "deadline")
	var ue *UnreachableError
	require.True(t, errors.As(err, &ue))
	assert.True(t, errors.Is(err, ErrConnection))

	// The same for TOKEN (SASL) connections.
	err, took = callMetrics(t, conf, TokenAuth(Token{Identifier: []byte("id"), Password: []byte("pw")}, "alice"), 60*time.Second, nil)
	require.Error(t, err)
	assert.Less(t, took, 10*time.Second)
	assert.Contains(t, err.Error(), "connection refused")
}

func TestFailFastUnknownHost(t *testing.T) {
	conf := NewConfig(map[string]string{"yarn.resourcemanager.address": "no-such-host.invalid:8032"})
	err, took := callMetrics(t, conf, Auth{}, 60*time.Second, nil)
	require.Error(t, err)
	assert.Less(t, took, 10*time.Second, "gives up within 10 s")
	msg := err.Error()
	assert.Contains(t, msg, "no-such-host.invalid:8032 (yarn.resourcemanager.address as set)")
	assert.Contains(t, msg, `host "no-such-host.invalid"`)
	assert.Contains(t, msg, "Check the host name in yarn.resourcemanager.address as set")
}

// An HTTP server on the RPC port (the web port configured by mistake) is recognised, for SIMPLE
// connections (the answer comes to the first call) and SASL ones (to the handshake).
func TestFailFastHTTPServer(t *testing.T) {
	addr := fakeListener(t, httpAnswer)
	conf, site := siteDir(t, addr)
	for _, auth := range []Auth{{}, TokenAuth(Token{Identifier: []byte("id"), Password: []byte("pw")}, "alice")} {
		err, took := callMetrics(t, conf, auth, 60*time.Second, nil)
		require.Error(t, err)
		assert.Less(t, took, 10*time.Second, "gives up within 10 s")
		msg := err.Error()
		assert.Contains(t, msg, addr+" (yarn.resourcemanager.address in "+site+")")
		assert.Contains(t, msg, "this is an HTTP server — is this the web port (8088) instead of the RPC port (8032)?")
		assert.True(t, errors.Is(err, ErrHTTPServer))
	}
}

// A server that accepts the connection and never answers: one progress line after ProgressAfter
// saying what the call waits for, and the caller's context bounds the wait.
func TestClientSilentServerReportsProgress(t *testing.T) {
	addr := fakeListener(t, silent)
	conf, _ := siteDir(t, addr)
	for _, auth := range []Auth{{}, TokenAuth(Token{Identifier: []byte("id"), Password: []byte("pw")}, "alice")} {
		var mu sync.Mutex
		var lines []string
		rm, err := NewApplicationClient(conf, auth, FailFast(func(m string) { mu.Lock(); lines = append(lines, m); mu.Unlock() }),
			func(o *ClientOptions) { o.ProgressAfter = 500 * time.Millisecond })
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		start := time.Now()
		_, err = rm.GetClusterMetrics(ctx)
		took := time.Since(start)
		cancel()
		_ = rm.Close()
		require.Error(t, err)
		assert.True(t, errors.Is(err, context.DeadlineExceeded), "got %v", err)
		assert.GreaterOrEqual(t, took, 2900*time.Millisecond, "waits for its context")
		assert.Less(t, took, 10*time.Second, "gives up within 10 s")
		mu.Lock()
		require.Len(t, lines, 1, "one progress line: %q", lines)
		assert.Contains(t, lines[0], "getClusterMetrics: still waiting")
		assert.Contains(t, lines[0], "ResourceManager at "+addr)
		if auth.Method == AuthSimple {
			assert.Contains(t, lines[0], "accepted the connection but has not answered")
		} else {
			assert.Contains(t, lines[0], "has not completed the connection handshake")
		}
		assert.Contains(t, lines[0], "giving up in")
		mu.Unlock()
	}
}

// With RM HA each RM is named with what happened to it.
func TestFailFastHANamesEachRM(t *testing.T) {
	down := refusedAddr(t)
	standby := newServer(t, rpctest.Options{})
	standby.SetStandby(true)
	conf := NewConfig(map[string]string{
		"yarn.resourcemanager.ha.enabled":       "true",
		"yarn.resourcemanager.ha.rm-ids":        "rm1,rm2",
		"yarn.resourcemanager.address.rm1":      down,
		"yarn.resourcemanager.hostname.rm2":     "127.0.0.1",
		"yarn.resourcemanager.address.rm2":      standby.Addr(),
		"yarn.resourcemanager.connect.max-wait": "1",
	})
	err, took := callMetrics(t, conf, Auth{}, 60*time.Second, nil)
	require.Error(t, err)
	assert.Less(t, took, 10*time.Second, "gives up within 10 s")
	msg := err.Error()
	assert.Contains(t, msg, "cannot reach any ResourceManager: ")
	assert.Contains(t, msg, "rm1 ("+down+", yarn.resourcemanager.address.rm1 as set): connection refused")
	assert.Contains(t, msg, "rm2 ("+standby.Addr()+", yarn.resourcemanager.address.rm2 as set): standby")
	assert.True(t, errors.Is(err, ErrStandby))
}

// The AM's patient client keeps retrying a refused RM until its context ends.
func TestPatientClientKeepsRetrying(t *testing.T) {
	conf, _ := siteDir(t, refusedAddr(t))
	rm, err := NewApplicationClient(conf, Auth{})
	require.NoError(t, err)
	defer rm.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	start := time.Now()
	_, err = rm.GetClusterMetrics(ctx)
	require.Error(t, err)
	assert.True(t, errors.Is(err, context.DeadlineExceeded), "got %v", err)
	assert.GreaterOrEqual(t, time.Since(start), 1900*time.Millisecond)
}

func TestRMEndpointOrigins(t *testing.T) {
	eps, err := NewConfig(nil).RMEndpoints(RMClient)
	require.NoError(t, err)
	assert.Equal(t, []Endpoint{{Addr: "0.0.0.0:8032",
		Origin: "the default 0.0.0.0:8032, because yarn.resourcemanager.address is not set in any configuration file"}}, eps)

	dir := t.TempDir()
	writeSite(t, dir, "yarn-site.xml", map[string]string{"yarn.resourcemanager.hostname": "rm.example"})
	conf, err := LoadConfig(dir)
	require.NoError(t, err)
	eps, err = conf.RMEndpoints(RMClient)
	require.NoError(t, err)
	assert.Equal(t, "rm.example:8032", eps[0].Addr)
	assert.Equal(t, "yarn.resourcemanager.hostname in "+filepath.Join(dir, "yarn-site.xml")+" (yarn.resourcemanager.address is not set)", eps[0].Origin)
	assert.True(t, strings.HasPrefix(conf.Source("yarn.resourcemanager.hostname"), dir))
}

// The NameNode client names the NameNode's ports when it meets an HTTP server.
func TestFailFastHTTPServerNameNode(t *testing.T) {
	addr := fakeListener(t, httpAnswer)
	nn, err := NewNameNodeClient(NewConfig(nil), addr, SimpleAuth("alice"), FailFast(nil))
	require.NoError(t, err)
	defer nn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	start := time.Now()
	_, err = nn.GetDelegationToken(ctx, "yarn")
	require.Error(t, err)
	assert.Less(t, time.Since(start), 10*time.Second, "gives up within 10 s")
	assert.Contains(t, err.Error(), "cannot reach the NameNode at "+addr+": this is an HTTP server — is this the web port (9870) instead of the RPC port (8020)?")
	assert.True(t, errors.Is(err, ErrHTTPServer))
}
