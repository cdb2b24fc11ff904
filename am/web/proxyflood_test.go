package web

import (
	"bufio"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/framework"
)

// heldFramework is a framework's server whose /x answers once release is called (each request first
// says it arrived), and whose /big answers 64 MiB; with its proxy under /flink/, every path public.
func heldFramework(t *testing.T) (p *framework.Proxy, arrived chan string, release func()) {
	t.Helper()
	arrived = make(chan string, 64)
	released := make(chan struct{})
	var once sync.Once
	release = func() { once.Do(func() { close(released) }) }
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- r.URL.Path
		if r.URL.Path == "/big" {
			chunk := []byte(strings.Repeat("x", 64<<10))
			for i := 0; i < 1024; i++ {
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
			return
		}
		select {
		case <-released:
		case <-r.Context().Done():
		}
		_, _ = io.WriteString(w, `{"jobs":[]}`)
	}))
	t.Cleanup(target.Close)
	t.Cleanup(release)
	tu, err := url.Parse(target.URL)
	require.NoError(t, err)
	access := func(string) framework.Access { return framework.Access{Level: framework.Public} }
	return &framework.Proxy{Path: "flink", Name: "Flink UI", Target: tu, Access: access}, arrived, release
}

// startRead sends GET path on a new connection from the loopback address from (over TLS with
// tlsConf, with the secret when auth) and returns the connection, the response unread.
func startRead(t *testing.T, from, addr string, tlsConf *tls.Config, path string, auth bool) net.Conn {
	t.Helper()
	c := dialFrom(t, from, addr)
	if tlsConf != nil {
		c = tls.Client(c, tlsConf)
	}
	req := "GET " + path + " HTTP/1.1\r\nHost: am\r\n"
	if auth {
		req += "Authorization: Bearer " + testSecret + "\r\n"
	}
	_ = c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	_, err := io.WriteString(c, req+"\r\n")
	require.NoError(t, err)
	return c
}

// answer reads the response on c.
func answer(t *testing.T, c net.Conn) *http.Response {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body = io.NopCloser(strings.NewReader(string(body)))
	return resp
}

// waitConns waits until cond holds, woken by every change of the AM's connections (no polling);
// it fails after 20 s.
func waitConns(t *testing.T, s *Server, what string, cond func() bool) {
	t.Helper()
	deadline := time.NewTimer(20 * time.Second)
	defer deadline.Stop()
	for {
		changed := s.conns.changes()
		if cond() {
			return
		}
		select {
		case <-changed:
		case <-deadline.C:
			t.Fatalf("never: %s", what)
		}
	}
}

// servingFrom is how many connections of host a handler serves.
func servingFrom(s *Server, host string) int {
	s.conns.mu.Lock()
	defer s.conns.mu.Unlock()
	n := 0
	for c := range s.conns.anon[host] {
		if c.serving > 0 {
			n++
		}
	}
	return n
}

// Anonymous exchanges with the framework's pages are bounded per address and in total, both ports
// together (503 with Retry-After beyond, the connection closed), as event streams are; the owner's
// are not counted; a slot is free again when its exchange ends (docs/security.md#flood-bounds).
// Before, every one was forwarded and held as long as the framework took.
func TestProxiedExchangesAreBounded(t *testing.T) {
	proxy, arrived, release := heldFramework(t)
	s, plain, secure, tlsConf := servedAPIWith(t, fakeBackend(newFakeEvents()), Options{Secret: testSecret, Proxy: proxy},
		Limits{MaxProxied: 3, MaxProxiedPerClient: 2})
	held := []net.Conn{startRead(t, "127.0.0.10", plain, nil, "/flink/x", false)}
	<-arrived
	held = append(held, startRead(t, "127.0.0.10", secure, tlsConf, "/flink/x", false))
	<-arrived
	resp := answer(t, startRead(t, "127.0.0.10", plain, nil, "/flink/x", false))
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "a third from one address")
	assert.NotEmpty(t, resp.Header.Get("Retry-After"))
	body, _ := io.ReadAll(resp.Body)
	assert.Contains(t, string(body), "at most 2 anonymous requests to the framework's pages at once from one address")
	held = append(held, startRead(t, "127.0.0.11", plain, nil, "/flink/x", false))
	<-arrived
	resp = answer(t, startRead(t, "127.0.0.12", secure, tlsConf, "/flink/x", false))
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "a fourth in all, on the other port")
	body, _ = io.ReadAll(resp.Body)
	assert.Contains(t, string(body), "at most 3 anonymous requests to the framework's pages at once;")
	assert.Equal(t, 3, s.proxied.Open())

	owner := startRead(t, "127.0.0.12", secure, tlsConf, "/flink/x", true)
	<-arrived
	release()
	for _, c := range append(held, owner) {
		assert.Equal(t, http.StatusOK, answer(t, c).StatusCode, "a held exchange, then the owner's beyond the bound")
	}
	waitConns(t, s, "the slots are free", func() bool { return servingFrom(s, "127.0.0.10")+servingFrom(s, "127.0.0.11") == 0 })
	assert.Equal(t, 0, s.proxied.Open())
	assert.Equal(t, http.StatusOK, answer(t, startRead(t, "127.0.0.10", plain, nil, "/flink/x", false)).StatusCode)
}

// Every exchange, on either port, has its deadlines: an answer whose reader takes none of it ends
// within the write deadline (a proxied 64 MiB page; a JSON array of 20,000 events), and a request
// whose body trickles within the read deadline, a GET's too; their connections are then no longer
// served. Before, each held its connection "served" for good: no write deadline (the proxy's 5-minute
// context does not unblock a write), no read deadline on a body the handler did not read.
func TestEveryExchangeHasAWriteDeadline(t *testing.T) {
	oldW, oldR := exchangeWriteTimeout, bodyReadTimeout
	exchangeWriteTimeout, bodyReadTimeout = 300*time.Millisecond, 300*time.Millisecond
	t.Cleanup(func() { exchangeWriteTimeout, bodyReadTimeout = oldW, oldR }) // after the servers' shutdown
	events := newFakeEvents()
	for i := 0; i < 8000; i++ { // 8 MiB of JSON, more than the sockets hold (the reader's is 4 KiB)
		events.Add(contract.Event{Type: contract.EventRequested, Message: strings.Repeat("m", 1000)})
	}
	proxy, arrived, _ := heldFramework(t)
	s, plain, secure, tlsConf := servedAPIWith(t, fakeBackend(events), Options{Secret: testSecret, Proxy: proxy}, Limits{})
	unread := []net.Conn{
		startRead(t, "127.0.0.20", plain, nil, "/flink/big", false),
		startRead(t, "127.0.0.21", plain, nil, "/api/v1/events?format=json", false),
		startRead(t, "127.0.0.22", secure, tlsConf, "/api/v1/events?format=json", true),
	}
	for _, c := range unread {
		if tc, ok := c.(*net.TCPConn); ok {
			require.NoError(t, tc.SetReadBuffer(4<<10))
		}
	}
	<-arrived
	for _, host := range []string{"127.0.0.20", "127.0.0.21", "127.0.0.22"} {
		waitConns(t, s, "the exchange of "+host+" that no one reads ends", func() bool {
			s.conns.mu.Lock()
			defer s.conns.mu.Unlock()
			busy := false
			for c := range s.conns.authed {
				busy = busy || c.host == host && c.serving > 0
			}
			for c := range s.conns.anon[host] {
				busy = busy || c.serving > 0
			}
			return !busy
		})
	}
	for _, c := range unread {
		c.Close()
	}

	// A GET whose body never comes: the AM does not wait for it past the read deadline.
	c := dialFrom(t, "127.0.0.23", plain)
	_, err := io.WriteString(c, "GET /api/v1/status HTTP/1.1\r\nHost: am\r\nContent-Length: 100000\r\n\r\nx")
	require.NoError(t, err)
	waitConns(t, s, "the trickled GET ends", func() bool {
		s.conns.mu.Lock()
		defer s.conns.mu.Unlock()
		for c := range s.conns.anon["127.0.0.23"] {
			if c.serving > 0 || c.fresh {
				return false
			}
		}
		return true
	})
}

// A node's neighbour holding every anonymous connection its address may have with exchanges it does
// not read locks no launcher of that node out: the oldest held exchange is closed to make room, and
// the launcher's liveness over HTTPS with the secret is answered. Before, a connection whose handler
// was serving was never closed for room, and the launcher's was closed at accept.
func TestHeldProxyExchangeMakesRoomForALauncher(t *testing.T) {
	proxy, arrived, _ := heldFramework(t)
	s, plain, secure, tlsConf := servedAPIWith(t, fakeBackend(newFakeEvents()), Options{Secret: testSecret, Proxy: proxy},
		Limits{MaxConnsPerClient: 4, MaxProxiedPerClient: 10})
	const node = "127.0.0.30"
	var held []net.Conn
	for i := 0; i < 4; i++ {
		held = append(held, startRead(t, node, plain, nil, "/flink/x", false))
		<-arrived
	}
	waitConns(t, s, "4 held exchanges", func() bool { return servingFrom(s, node) == 4 })
	req, err := http.NewRequest(http.MethodPost, "https://"+secure+"/api/v1/containers/c1"+contract.AlivePath, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+testSecret)
	resp, err := clientFrom(node, tlsConf).Do(req)
	require.NoError(t, err, "the launcher's liveness from the node")
	resp.Body.Close()
	assert.Equal(t, http.StatusNoContent, resp.StatusCode)
	assert.True(t, closedByAM(held[0]), "the oldest held exchange made room")
	assert.GreaterOrEqual(t, s.conns.Evicted(), uint64(1))
}
