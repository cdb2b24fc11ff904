//go:build integration

package am_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/testkit/e2e"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// floodStreams is how many event streams the flood opens and never reads.
const floodStreams = 2000

// amRSS reads process_resident_memory_bytes from the AM's /metrics (the Prometheus process
// collector): the AM's own resident memory, whatever node it runs on.
func amRSS(t *testing.T, base string) float64 {
	t.Helper()
	c := &http.Client{Timeout: 20 * time.Second}
	resp, err := c.Get(base + "metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "process_resident_memory_bytes "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			require.NoError(t, err)
			return f
		}
	}
	t.Fatalf("%smetrics has no process_resident_memory_bytes", base)
	return 0
}

// 2,000 clients from 200 loopback addresses open GET /api/v1/events and never read a byte. The AM
// keeps answering /api/v1/status, its resident memory stays bounded, and the job completes
// (docs/design.md#faults).
func TestAMEventStreamFloodStaysBounded(t *testing.T) {
	c := e2e.MiniCluster(t)
	a := c.Submit(t, fmt.Sprintf(gpuJob, 2, `sleep 45`, 1))
	base := c.PlainBase(t, a)
	require.Eventually(t, func() bool { s := c.AMStatus(t, a); return s != nil && s.Counts.Running == 2 }, 2*time.Minute, 200*time.Millisecond)
	before := amRSS(t, base)

	host := strings.TrimSuffix(strings.TrimPrefix(base, "http://"), "/")
	var (
		mu    sync.Mutex
		conns []net.Conn
		wg    sync.WaitGroup
		dialF atomic.Int64
	)
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, cn := range conns {
			_ = cn.Close()
		}
	})
	start := time.Now()
	sem := make(chan struct{}, 64)
	for i := 0; i < floodStreams; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func(i int) {
			defer wg.Done()
			defer func() { <-sem }()
			d := net.Dialer{Timeout: 10 * time.Second, LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 1, byte(i/10/250), byte(1+(i/10)%250))}}
			cn, err := d.Dial("tcp", host)
			if err != nil {
				dialF.Add(1)
				return
			}
			if tc, ok := cn.(*net.TCPConn); ok {
				_ = tc.SetReadBuffer(4096) // a client that never reads: the AM's writes pile up on its side
			}
			_, err = io.WriteString(cn, "GET /api/v1/events HTTP/1.1\r\nHost: "+host+"\r\nAccept: text/event-stream\r\n\r\n")
			if err != nil {
				dialF.Add(1)
			}
			mu.Lock()
			conns = append(conns, cn)
			mu.Unlock()
		}(i)
	}
	wg.Wait()
	t.Logf("%d streams opened in %s (%d failed to connect or write)", floodStreams, time.Since(start).Round(time.Millisecond), dialF.Load())

	// Under the flood: status still answers, within a generous bound.
	var peak float64
	for i := 0; i < 10; i++ {
		sc := &http.Client{Timeout: 20 * time.Second}
		t0 := time.Now()
		resp, err := sc.Get(base + "api/v1/status")
		require.NoError(t, err, "GET /api/v1/status under the flood")
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		assert.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Less(t, time.Since(t0), 10*time.Second, "status answers under the flood")
		if r := amRSS(t, base); r > peak {
			peak = r
		}
		time.Sleep(time.Second)
	}
	t.Logf("AM RSS: %.1f MiB before the flood, %.1f MiB peak under %d unread event streams", before/(1<<20), peak/(1<<20), floodStreams)
	// Measured: +65 MiB without the stream caps, +19 MiB with them (256 streams, refused
	// connections closed).
	assert.Less(t, peak, before+32*(1<<20), "the flood grows the AM by less than 32 MiB (before %.1f MiB, peak %.1f MiB)", before/(1<<20), peak/(1<<20))

	// One more stream is refused with 503 and Retry-After: the cap is reached.
	resp, err := (&http.Client{Timeout: 20 * time.Second}).Do(func() *http.Request {
		req, _ := http.NewRequest(http.MethodGet, base+"api/v1/events", nil)
		req.Header.Set("Accept", "text/event-stream")
		return req
	}())
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "a stream beyond the cap")
	assert.NotEmpty(t, resp.Header.Get("Retry-After"))

	r := c.Wait(t, a, 3*time.Minute)
	assert.Equal(t, hadooppb.FinalApplicationStatusProto_APP_SUCCEEDED, r.GetFinalApplicationStatus(), "diagnostics: %s", r.GetDiagnostics())
}
