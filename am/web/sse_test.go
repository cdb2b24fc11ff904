package web

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/yarn-am/yarn-am/contract"
)

// sseFrame is one parsed SSE message (or comment).
type sseFrame struct {
	id, event, data, comment string
}

func readFrame(t *testing.T, r *bufio.Reader) sseFrame {
	t.Helper()
	var f sseFrame
	for {
		line, err := r.ReadString('\n')
		require.NoError(t, err)
		line = strings.TrimRight(line, "\n")
		switch {
		case line == "":
			if f != (sseFrame{}) {
				return f
			}
		case strings.HasPrefix(line, ":"):
			f.comment = strings.TrimSpace(line[1:])
		case strings.HasPrefix(line, "id: "):
			f.id = line[4:]
		case strings.HasPrefix(line, "event: "):
			f.event = line[7:]
		case strings.HasPrefix(line, "data: "):
			f.data = line[6:]
		}
	}
}

func TestSSEStreamsResumesAndHeartbeats(t *testing.T) {
	l := newFakeEvents()
	l.Add(requested(2))
	l.Add(contract.Event{Type: contract.EventAllocated, Container: "c1", Node: "n1"})
	srv := httptest.NewServer(EventsHandler(l, 50*time.Millisecond))
	defer srv.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL, nil)
	req.Header.Set("Last-Event-ID", "1")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	r := bufio.NewReader(resp.Body)
	readFrame(t, r) // retry + hello comment

	f := readFrame(t, r)
	assert.Equal(t, "2", f.id, "resumes after Last-Event-ID")
	assert.Equal(t, "allocated", f.event)
	var e contract.Event
	require.NoError(t, json.Unmarshal([]byte(f.data), &e))
	assert.Equal(t, "c1", e.Container)

	// Nothing more is logged: the stream idles. The heartbeat shows the handler waiting for events, so
	// the next one is streamed as it is added. (Heartbeats may come at any time: the event is the next
	// frame that is not a comment.)
	f = readFrame(t, r)
	assert.Equal(t, "heartbeat", f.comment, "an idle stream gets comment lines")
	l.Add(contract.Event{Type: contract.EventLaunched, Container: "c1", Node: "n1"})
	f = readFrame(t, r)
	for f.comment == "heartbeat" && f.id == "" {
		f = readFrame(t, r)
	}
	assert.Equal(t, "3", f.id)
	assert.Equal(t, "launched", f.event)

	// ?since= for clients that cannot set headers.
	resp2, err := http.Get(srv.URL + "?since=2&format=json")
	require.NoError(t, err)
	defer resp2.Body.Close()
	var evs []contract.Event
	require.NoError(t, json.NewDecoder(resp2.Body).Decode(&evs))
	require.Len(t, evs, 1)
	assert.Equal(t, contract.EventLaunched, evs[0].Type)
}

func TestEventsJSONAndBadResume(t *testing.T) {
	l := newFakeEvents()
	for i := 0; i < 10; i++ {
		l.Add(requested(i + 1))
	}
	h := EventsHandler(l, time.Second)
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "/api/v1/events?limit=3", nil)
	req.Header.Set("Accept", "application/json")
	h(rec, req)
	require.Equal(t, 200, rec.Code)
	var evs []contract.Event
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &evs))
	assert.Equal(t, []uint64{8, 9, 10}, ids(evs), "limit without since: the latest")

	rec = httptest.NewRecorder()
	h(rec, httptest.NewRequest("GET", "/api/v1/events?since=abc", nil))
	assert.Equal(t, 400, rec.Code)
	assert.Contains(t, rec.Body.String(), `since=\"abc\"`)

	rec = httptest.NewRecorder()
	h(rec, httptest.NewRequest("GET", "/api/v1/events?format=json&since="+strconv.Itoa(10), nil))
	assert.Equal(t, "[]\n", rec.Body.String())
}

// Event streams are capped per client address and in total; beyond, 503 with Retry-After and a
// message naming the flag; a closed stream frees its slot. JSON polls are not streams and pass.
func TestSSEStreamsAreBounded(t *testing.T) {
	l := newFakeEvents()
	l.Add(requested(1))
	lim := newStreamLimiter(3, 2)
	srv := httptest.NewServer(limitedEventsHandler(l, time.Second, lim, nil))
	defer srv.Close()
	open := func() (*http.Response, context.CancelFunc) {
		ctx, cancel := context.WithCancel(context.Background())
		req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL, nil)
		req.Header.Set("Accept", "text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		return resp, cancel
	}
	r1, c1 := open()
	defer c1()
	r2, c2 := open()
	defer c2()
	require.Equal(t, http.StatusOK, r1.StatusCode)
	require.Equal(t, http.StatusOK, r2.StatusCode)
	r3, c3 := open()
	defer c3()
	assert.Equal(t, http.StatusServiceUnavailable, r3.StatusCode, "a third stream from the same address")
	assert.Equal(t, "10", r3.Header.Get("Retry-After"))
	assert.True(t, r3.Close, "the refused connection is closed, not kept alive")
	var e map[string]string
	require.NoError(t, json.NewDecoder(r3.Body).Decode(&e))
	assert.Contains(t, e["error"], "--max-event-streams-per-client")
	assert.Equal(t, 2, lim.Open())

	poll, err := http.Get(srv.URL + "?format=json")
	require.NoError(t, err)
	poll.Body.Close()
	assert.Equal(t, http.StatusOK, poll.StatusCode, "JSON polls are not counted")

	c1()
	r1.Body.Close()
	require.Eventually(t, func() bool { return lim.Open() == 1 }, 5*time.Second, 10*time.Millisecond, "a closed stream frees its slot")
	r4, c4 := open()
	defer c4()
	assert.Equal(t, http.StatusOK, r4.StatusCode)

	// The total bound, across addresses.
	tl := newStreamLimiter(2, 2)
	rel1, err := tl.acquire("10.0.0.1")
	require.NoError(t, err)
	_, err = tl.acquire("10.0.0.2")
	require.NoError(t, err)
	_, err = tl.acquire("10.0.0.3")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--max-event-streams")
	rel1()
	rel1() // releasing twice frees one slot only
	_, err = tl.acquire("10.0.0.3")
	require.NoError(t, err)
	_, err = tl.acquire("10.0.0.4")
	require.Error(t, err)
}

// A reader that never reads is cut off once a write has waited sseWriteTimeout: its slot, goroutine
// and buffers are freed.
func TestSSEUnreadStreamIsClosedByTheWriteDeadline(t *testing.T) {
	old := sseWriteTimeout
	sseWriteTimeout = 300 * time.Millisecond
	defer func() { sseWriteTimeout = old }()
	l := newFakeEvents()
	for i := 0; i < 20000; i++ { // several MB of events: more than the sockets' buffers hold
		l.Add(requested(i))
	}
	lim := newStreamLimiter(10, 10)
	srv := httptest.NewServer(limitedEventsHandler(l, time.Hour, lim, nil))
	defer srv.Close()
	cn, err := net.Dial("tcp", srv.Listener.Addr().String())
	require.NoError(t, err)
	defer cn.Close()
	require.NoError(t, cn.(*net.TCPConn).SetReadBuffer(4096))
	_, err = io.WriteString(cn, "GET / HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n")
	require.NoError(t, err)
	require.Eventually(t, func() bool { return lim.Open() == 1 }, 5*time.Second, 10*time.Millisecond)
	require.Eventually(t, func() bool { return lim.Open() == 0 }, 20*time.Second, 50*time.Millisecond,
		"the stream ends within seconds of its reader stalling")
}

func ids(evs []contract.Event) []uint64 {
	var out []uint64
	for _, e := range evs {
		out = append(out, e.ID)
	}
	return out
}
