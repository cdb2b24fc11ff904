package am

// Scale simulation (docs/performance.md): the AM's real allocation loop (newAM + Run) against the tests'
// fake cluster (testkit/fakecluster: its RM scheduler port over rpctest, TOKEN auth, real Hadoop RPC
// framing) with 1,000 nodes, and its NodeManagers in process. Run:
//
//	go test -run '^$' -bench 'AMHeartbeat|AMRampUp' -benchtime 200x ./am/
//
// Metrics beside ns/op and the allocation counts (which include the fake RM's share: it runs in the same
// process; at steady state it answers an empty response):
//
//	cpu-ms/heartbeat   process CPU (user+sys) per allocate round trip, AM and fake RM together
//	ns/container       ns/op divided by the number of containers: flat when the cost is linear
//	rss-MiB, heap-MiB  VmRSS of the test process and the Go heap in use, after GC, at steady state
//	goroutines         of the whole test process at steady state: flat, none per container
//
// Benchmarks only report; nothing here asserts a time (docs/performance.md).

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/yarn-am/yarn-am/am/decision"
	"github.com/yarn-am/yarn-am/am/gpuuse"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/testkit/fakecluster"
	"github.com/yarn-am/yarn-am/yarnrpc"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// scaleSizes are the simulated application sizes.
var scaleSizes = []int{1_000, 10_000, 50_000, 100_000}

const (
	scaleNodes = 1000
	// scalePerBeat is how many containers the fake RM hands out per allocate: 1,000 NMs heartbeating
	// every second with one assignment each, seen by an AM that heartbeats every 200 ms.
	scalePerBeat = 200
)

// newScaleCluster is the tests' fake cluster (testkit/fakecluster) as a large one: it grants asks
// round-robin over scaleNodes nodes, at most scalePerBeat containers per allocate; its containers
// never end, and it keeps nothing per container (the memory measured is the AM's).
func newScaleCluster(tb testing.TB) *fakecluster.Cluster {
	c := fakecluster.New(tb)
	c.SpreadNodes(scaleNodes)
	c.PerAllocate, c.KeepRunning, c.Lean = scalePerBeat, true, true
	return c
}

// scaleRun is one simulated application: an AM in service mode (it never finishes by itself) running
// its loop with back-to-back heartbeats against a scaleRM.
type scaleRun struct {
	c      *fakecluster.Cluster
	am     *am
	cancel context.CancelFunc
	done   chan struct{}
}

func startScaleRun(tb testing.TB, n int) *scaleRun {
	tb.Helper()
	c := newScaleCluster(tb)
	log := logrus.New()
	log.SetOutput(io.Discard)
	log.SetLevel(logrus.WarnLevel)
	client, err := yarnrpc.NewAMClientAt([]string{c.Scheduler.Addr()}, yarnrpc.ConnOptions{Logger: log}, fakecluster.AMToken(), "alice")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { client.Close() })
	m, err := newAM(config{App: yarnrpc.FormatApplicationID(c.App), Host: "127.0.0.1", RPCPort: 1, TrackingURL: "http://127.0.0.1:1/",
		Spec:          decision.Spec{Instances: n, Mode: decision.Service, Capability: contract.Capability{"memory-mb": 1024, "vcores": 1, "yarn.io/gpu": 1}},
		HeartbeatFast: time.Nanosecond, HeartbeatSlow: time.Nanosecond,
		LaunchContext: &hadooppb.ContainerLaunchContextProto{Command: []string{"true"}}, RM: client, NM: c.InProcessNM(), Log: log})
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &scaleRun{c: c, am: m, cancel: cancel, done: make(chan struct{})}
	go func() { defer close(r.done); _, _ = m.Run(ctx) }()
	tb.Cleanup(r.stop)
	return r
}

func (r *scaleRun) stop() {
	r.cancel()
	<-r.done
}

// waitRunning waits until n containers run (the NM started them and the AM knows it).
func (r *scaleRun) waitRunning(tb testing.TB, n int) {
	tb.Helper()
	deadline := time.Now().Add(5 * time.Minute)
	for time.Now().Before(deadline) {
		if r.c.StartedCount() >= n && r.am.Status().Counts.Running == n {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	tb.Fatalf("%d containers: only %d started, %d running after 5 minutes", n, r.c.StartedCount(), r.am.Status().Counts.Running)
}

// waitHeartbeats waits until the fake RM has answered k more allocates than at from.
func (r *scaleRun) waitHeartbeats(from, k int) {
	for r.c.AllocateCount() < from+k {
		time.Sleep(50 * time.Microsecond)
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// memoryMiB returns VmRSS of this process and the Go heap in use, after a GC that returns what it can.
func memoryMiB() (rss, heap float64) {
	runtime.GC()
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	heap = float64(ms.HeapInuse) / (1 << 20)
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, heap
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmRSS:") {
			kb, _ := strconv.ParseFloat(strings.Fields(l)[1], 64)
			return kb / 1024, heap
		}
	}
	return 0, heap
}

// BenchmarkAMHeartbeat: one op is one heartbeat (reconcile + allocate round trip) of an AM whose n
// containers all run: the steady-state cost of a large application.
func BenchmarkAMHeartbeat(b *testing.B) {
	for _, n := range scaleSizes {
		b.Run(fmt.Sprintf("containers=%d", n), func(b *testing.B) {
			r := startScaleRun(b, n)
			r.waitRunning(b, n)
			rss, heap := memoryMiB()
			goroutines := runtime.NumGoroutine()
			b.ReportAllocs()
			from := r.c.AllocateCount()
			cpu0 := cpuTime()
			b.ResetTimer()
			r.waitHeartbeats(from, b.N)
			b.StopTimer()
			cpu := cpuTime() - cpu0
			beats := r.c.AllocateCount() - from
			b.ReportMetric(float64(cpu.Microseconds())/1000/float64(beats), "cpu-ms/heartbeat")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/container")
			b.ReportMetric(rss, "rss-MiB")
			b.ReportMetric(heap, "heap-MiB")
			b.ReportMetric(float64(goroutines), "goroutines")
			r.stop()
		})
	}
}

// BenchmarkAMRampUp: one op is a whole application start, from registering to n running containers
// (n / 200 heartbeats with at least one allocation each).
func BenchmarkAMRampUp(b *testing.B) {
	for _, n := range scaleSizes {
		b.Run(fmt.Sprintf("containers=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			var beats int
			var cpu time.Duration
			for i := 0; i < b.N; i++ {
				cpu0 := cpuTime()
				r := startScaleRun(b, n)
				r.waitRunning(b, n)
				cpu += cpuTime() - cpu0
				beats += r.c.AllocateCount()
				r.stop()
			}
			b.ReportMetric(float64(beats)/float64(b.N), "heartbeats/op")
			b.ReportMetric(float64(cpu.Microseconds())/1000/float64(beats), "cpu-ms/heartbeat")
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N)/float64(n), "cpu-ns/container")
		})
	}
}

// BenchmarkAMGPUBook measures the GPU book (am/gpuuse, docs/running.md#gpu-utilisation) of 10,000
// containers whose rings are full (gpuuse.SeriesLen samples each), with 1 and 8 GPUs per container:
// book-MB is the Go heap it holds, bytes/container the same per container; one op (status-ms) is
// the GPU part of one read of the status: every container's GPUs, and the histories of the newest
// contract.MaxHistoryGPUs GPUs (gpuuse.Book.NewestHistories).
// Reported, not asserted (docs/performance.md#the-gpu-book):
//
//	go test -run '^$' -bench AMGPUBook -benchtime 3x ./am/
func BenchmarkAMGPUBook(b *testing.B) {
	const containers = 10_000
	for _, gpus := range []int{1, 8} {
		b.Run(fmt.Sprintf("gpus=%d", gpus), func(b *testing.B) {
			uuids := make([]string, gpus)
			for i := range uuids {
				uuids[i] = fmt.Sprintf("GPU-%08d-0000-0000-0000-000000000000", i)
			}
			r := contract.AliveReport{GPUSamples: make([]contract.GPUSample, contract.MaxAliveSamples)}
			for i := range r.GPUSamples {
				r.GPUSamples[i].AgoMs = int64(contract.MaxAliveSamples-i) * 1000
				for k, u := range uuids {
					v, p := float64((i*7+k*13)%100), 690.74
					r.GPUSamples[i].GPUs = append(r.GPUSamples[i].GPUs, contract.GPUReading{UUID: u, Util: &v, MemUsedMiB: 1011, MemTotalMiB: 143771, PowerW: &p})
				}
			}
			ids := make([]string, containers)
			for c := range ids {
				ids[c] = fmt.Sprintf("container_1_0001_01_%06d", c)
			}
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			m := &am{}
			book := &m.gpus
			now := time.Unix(1_000_000, 0)
			for k := 0; k < gpuuse.SeriesLen; k += contract.MaxAliveSamples {
				now = now.Add(contract.MaxAliveSamples * time.Second)
				for _, id := range ids {
					if _, err := book.Add(id, "n1", uuids, r, now); err != nil {
						b.Fatal(err)
					}
				}
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			held := float64(after.HeapAlloc) - float64(before.HeapAlloc)
			cs := make([]contract.ContainerStatus, containers)
			b.ResetTimer()
			for range b.N {
				for i, id := range ids {
					cs[i] = contract.ContainerStatus{ID: id, GPUs: m.gpus.Status(id)}
				}
				m.gpus.NewestHistories(cs)
			}
			b.StopTimer()
			if cs[containers-1].GPUs[0].History == nil || cs[0].GPUs[0].History != nil {
				b.Fatal("histories for the newest containers' GPUs only")
			}
			b.ReportMetric(held/1e6, "book-MB")
			b.ReportMetric(held/containers, "bytes/container")
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "status-ms")
			runtime.KeepAlive(book)
		})
	}
}
