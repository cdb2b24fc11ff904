package am

// What the launchers' liveness messages cost the AM (docs/performance.md#liveness-messages): the
// AM of the scale simulation (bench_test.go) with 1,000 running containers and its default allocate
// intervals serves its real HTTPS API (the AM's TLS set-up: contract/amtls), and 1,000 simulated
// launchers in a child process (this test binary again, so their CPU is not counted as the AM's)
// POST .../alive, each over its own connection, every interval with the launchers' jitter. Run:
//
//	go test -run '^$' -bench AMAliveMessages -benchtime 1x ./am/
//
// One op is a fixed wall-clock window (YARN_AM_BENCH_ALIVE_WINDOW, a Go duration; 20s unless set)
// after every launcher posted once; -benchtime 1x runs each case once. Metrics:
//
//	cpu-s/s    CPU seconds (user+sys) of the AM's process per wall second over the window: the AM's
//	           HTTP side, its allocate loop and the in-process fake RM and NMs (launchers=0 is that floor)
//	posts/s    liveness messages the AM answered per second
//	heap-MiB   Go heap in use after GC at the end of the window (the launchers' connections included)
//	rss-MiB    VmRSS of the AM's process at the same moment
//	goroutines of the AM's process then: one per launcher's connection (net/http's server)

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/contract/amtls/amtlstest"
)

const (
	aliveLaunchers = 1000
	// aliveLaunchersEnv names the child's spec file: set, the test binary is the launchers (TestMain).
	aliveLaunchersEnv = "YARN_AM_BENCH_ALIVE_LAUNCHERS"
	aliveSecret       = "bench-secret"
)

// aliveSpec is what the child process of simulated launchers is told.
type aliveSpec struct {
	URL      string        `json:"url"` // the API's base, https://127.0.0.1:PORT
	CA       []byte        `json:"ca"`  // the application's authority, PEM
	Interval time.Duration `json:"interval"`
	IDs      []string      `json:"ids"`
}

func TestMain(m *testing.M) {
	if f := os.Getenv(aliveLaunchersEnv); f != "" {
		if err := runAliveLaunchers(f); err != nil {
			fmt.Fprintln(os.Stderr, "alive launchers:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// runAliveLaunchers is the child: one goroutine and one TLS connection per container, posting its
// liveness message as a launcher does (every interval within contract.LivenessJitter, the first one
// at a random point of the first interval), until the parent kills the process.
func runAliveLaunchers(specFile string) error {
	b, err := os.ReadFile(specFile)
	if err != nil {
		return err
	}
	var s aliveSpec
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(s.CA) {
		return fmt.Errorf("no certificate in the spec's ca")
	}
	for _, id := range s.IDs {
		go func() {
			c := &http.Client{Timeout: 2 * s.Interval, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
			time.Sleep(rand.N(s.Interval))
			for {
				sent := time.Now()
				if req, err := http.NewRequest(http.MethodPost, s.URL+"/api/v1/containers/"+id+contract.AlivePath, http.NoBody); err == nil {
					req.Header.Set("Authorization", "Bearer "+aliveSecret)
					if resp, err := c.Do(req); err == nil {
						resp.Body.Close()
					}
				}
				wait := time.Duration(float64(s.Interval) * (1 + contract.LivenessJitter*(2*rand.Float64()-1)))
				time.Sleep(max(wait-time.Since(sent), 0))
			}
		}()
	}
	select {}
}

// startAliveRun is the scale simulation's AM with n running containers, started with back-to-back
// heartbeats (startScaleRun) and then at its default allocate intervals: the idle AM of a long job.
func startAliveRun(tb testing.TB, n int) *scaleRun {
	tb.Helper()
	r := startScaleRun(tb, n)
	r.waitRunning(tb, n)
	r.am.mu.Lock() // the loop reads them under mu (interval)
	r.am.cfg.HeartbeatFast, r.am.cfg.HeartbeatSlow = DefaultHeartbeatFast, DefaultHeartbeatSlow
	r.am.mu.Unlock()
	return r
}

// startAliveLaunchers starts the child process of launchers posting to url for ids; it is killed
// when the benchmark ends.
func startAliveLaunchers(b *testing.B, url string, ca []byte, ids []string, interval time.Duration) {
	spec, err := json.Marshal(aliveSpec{URL: url, CA: ca, Interval: interval, IDs: ids})
	if err != nil {
		b.Fatal(err)
	}
	f := filepath.Join(b.TempDir(), "launchers.json")
	if err := os.WriteFile(f, spec, 0o600); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), aliveLaunchersEnv+"="+f)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		cancel()
		b.Fatal(err)
	}
	b.Cleanup(func() { cancel(); _ = cmd.Wait() })
}

// BenchmarkAMAliveMessages: one op is a fixed window of 1,000 launchers saying they are alive every
// 5 s (the interval before it became 2 s), every contract.LivenessInterval, and never (the floor).
func BenchmarkAMAliveMessages(b *testing.B) {
	window := 20 * time.Second
	if w, err := time.ParseDuration(os.Getenv("YARN_AM_BENCH_ALIVE_WINDOW")); err == nil && w > 0 {
		window = w
	}
	for _, c := range []struct {
		name     string
		interval time.Duration
	}{{"launchers=0", 0}, {"interval=5s", 5 * time.Second}, {"interval=" + contract.LivenessInterval.String(), contract.LivenessInterval}} {
		b.Run(c.name, func(b *testing.B) {
			r := startAliveRun(b, aliveLaunchers)
			var posts atomic.Int64
			h := r.am.Handler(aliveSecret)
			srv, ca := amtlstest.Server(b, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
				h.ServeHTTP(w, req)
				posts.Add(1)
			}))
			if c.interval > 0 {
				var ids []string
				r.am.mu.Lock()
				for _, t := range r.am.rec.All() {
					if t.Phase == contract.Running {
						ids = append(ids, t.ID)
					}
				}
				r.am.mu.Unlock()
				startAliveLaunchers(b, srv.URL, ca, ids, c.interval)
				// Warm: every launcher has its connection and posted once or more.
				deadline := time.Now().Add(time.Minute)
				for posts.Load() < int64(2*len(ids)) {
					if time.Now().After(deadline) {
						b.Fatalf("the launchers posted %d times in a minute, fewer than twice each", posts.Load())
					}
					time.Sleep(50 * time.Millisecond)
				}
			}
			for range b.N {
				p0, cpu0, t0 := posts.Load(), cpuTime(), time.Now()
				time.Sleep(window)
				wall := time.Since(t0).Seconds()
				b.ReportMetric((cpuTime()-cpu0).Seconds()/wall, "cpu-s/s")
				b.ReportMetric(float64(posts.Load()-p0)/wall, "posts/s")
			}
			rss, heap := memoryMiB()
			b.ReportMetric(heap, "heap-MiB")
			b.ReportMetric(rss, "rss-MiB")
			b.ReportMetric(float64(runtime.NumGoroutine()), "goroutines")
		})
	}
}
