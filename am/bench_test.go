package am

// Scale simulation (docs/performance.md): the AM's real allocation loop (New + Run) against the in-process
// fake RM (rpctest, TOKEN auth, real Hadoop RPC framing) with 1,000 nodes, and an in-process NM. Run:
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
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"google.golang.org/protobuf/proto"

	"github.com/yarn-am/yarn-am/container/contract"
	"github.com/yarn-am/yarn-am/yarnrpc"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
	"github.com/yarn-am/yarn-am/yarnrpc/rpctest"
)

var (
	scaleTokID = []byte("scale-amrm-id")
	scaleTokPW = []byte("scale-amrm-pw")
)

// scaleSizes are the simulated application sizes.
var scaleSizes = []int{1_000, 10_000, 50_000, 100_000}

const (
	scaleNodes = 1000
	// scalePerBeat is how many containers the fake RM hands out per allocate: 1,000 NMs heartbeating
	// every second with one assignment each, seen by an AM that heartbeats every 200 ms.
	scalePerBeat = 200
)

// scaleRM is a fake ResourceManager scheduler port over rpctest: it grants asks round-robin over
// scaleNodes nodes, at most perBeat containers per allocate, and counts allocate calls.
type scaleRM struct {
	srv     *rpctest.Server
	perBeat int

	mu       sync.Mutex
	nodes    []*hadooppb.NodeIdProto
	app      *hadooppb.ApplicationIdProto
	att      *hadooppb.ApplicationAttemptIdProto
	pending  map[int64]int32
	capab    map[int64]*hadooppb.ResourceProto
	nextNode int
	nextCID  int64
	respID   int32

	allocates atomic.Int64
}

func newScaleRM(tb testing.TB, perBeat int) *scaleRM {
	tb.Helper()
	srv, err := rpctest.NewServer(rpctest.Options{Tokens: map[string][]byte{string(scaleTokID): scaleTokPW}})
	if err != nil {
		tb.Fatal(err)
	}
	app := &hadooppb.ApplicationIdProto{ClusterTimestamp: proto.Int64(1700000000000), Id: proto.Int32(42)}
	s := &scaleRM{srv: srv, perBeat: perBeat, app: app, nextCID: 2,
		att:     &hadooppb.ApplicationAttemptIdProto{ApplicationId: app, AttemptId: proto.Int32(1)},
		pending: map[int64]int32{}, capab: map[int64]*hadooppb.ResourceProto{}}
	for i := 0; i < scaleNodes; i++ {
		s.nodes = append(s.nodes, &hadooppb.NodeIdProto{Host: proto.String(fmt.Sprintf("node-%04d.example", i)), Port: proto.Int32(8041)})
	}
	srv.Handle(yarnrpc.ApplicationMasterProtocol, "registerApplicationMaster", func(context.Context, *rpctest.Request) (proto.Message, error) {
		return &hadooppb.RegisterApplicationMasterResponseProto{Queue: proto.String("default")}, nil
	})
	srv.Handle(yarnrpc.ApplicationMasterProtocol, "allocate", s.allocate)
	srv.Handle(yarnrpc.ApplicationMasterProtocol, "finishApplicationMaster", func(context.Context, *rpctest.Request) (proto.Message, error) {
		return &hadooppb.FinishApplicationMasterResponseProto{IsUnregistered: proto.Bool(true)}, nil
	})
	tb.Cleanup(func() { srv.Close() })
	return s
}

func (s *scaleRM) allocate(_ context.Context, r *rpctest.Request) (proto.Message, error) {
	var req hadooppb.AllocateRequestProto
	if err := r.Decode(&req); err != nil {
		return nil, err
	}
	s.allocates.Add(1)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.respID++
	resp := &hadooppb.AllocateResponseProto{ResponseId: proto.Int32(s.respID)}
	for _, a := range req.GetAsk() {
		s.pending[a.GetAllocationRequestId()] = a.GetNumContainers()
		s.capab[a.GetAllocationRequestId()] = a.GetCapability()
	}
	budget := s.perBeat
	for id, n := range s.pending {
		for ; n > 0 && budget > 0; n, budget = n-1, budget-1 {
			node := s.nodes[s.nextNode%len(s.nodes)]
			s.nextNode++
			cid := &hadooppb.ContainerIdProto{AppId: s.app, AppAttemptId: s.att, Id: proto.Int64(s.nextCID)}
			s.nextCID++
			resp.AllocatedContainers = append(resp.AllocatedContainers, &hadooppb.ContainerProto{
				Id: cid, NodeId: node, Resource: s.capab[id], AllocationRequestId: proto.Int64(id),
				ContainerToken: &hadooppb.TokenProto{Identifier: []byte("ct"), Password: []byte("x"), Kind: proto.String("ContainerToken"), Service: proto.String("")},
			})
		}
		s.pending[id] = n
	}
	return resp, nil
}

// scaleNM is an in-process NodeManager fleet: every start succeeds at once.
type scaleNM struct{ started atomic.Int64 }

func (n *scaleNM) SetToken(string, yarnrpc.Token) error { return nil }

func (n *scaleNM) StartContainers(_ context.Context, _ string, reqs ...*hadooppb.StartContainerRequestProto) (*hadooppb.StartContainersResponseProto, error) {
	n.started.Add(int64(len(reqs)))
	return &hadooppb.StartContainersResponseProto{}, nil
}

func (n *scaleNM) StopContainers(_ context.Context, _ string, ids ...*hadooppb.ContainerIdProto) (*hadooppb.StopContainersResponseProto, error) {
	return &hadooppb.StopContainersResponseProto{SucceededRequests: ids}, nil
}

// scaleRun is one simulated application: an AM in service mode (it never finishes by itself) running
// its loop with back-to-back heartbeats against a scaleRM.
type scaleRun struct {
	rm     *scaleRM
	nm     *scaleNM
	am     *AM
	cancel context.CancelFunc
	done   chan struct{}
}

func startScaleRun(tb testing.TB, n int) *scaleRun {
	tb.Helper()
	rm := newScaleRM(tb, scalePerBeat)
	log := logrus.New()
	log.SetOutput(io.Discard)
	log.SetLevel(logrus.WarnLevel)
	client, err := yarnrpc.NewAMClientAt([]string{rm.srv.Addr()}, yarnrpc.ConnOptions{Logger: log},
		yarnrpc.Token{Identifier: scaleTokID, Password: scaleTokPW, Kind: yarnrpc.AMRMTokenKind}, "alice")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { client.Close() })
	nm := &scaleNM{}
	m, err := New(Config{App: yarnrpc.FormatApplicationID(rm.app), Host: "127.0.0.1", RPCPort: 1, TrackingURL: "http://127.0.0.1:1/",
		Spec:          Spec{Instances: n, Mode: Service, Capability: contract.Capability{"memory-mb": 1024, "vcores": 1, "yarn.io/gpu": 1}},
		HeartbeatFast: time.Nanosecond, HeartbeatSlow: time.Nanosecond,
		LaunchContext: &hadooppb.ContainerLaunchContextProto{Command: []string{"true"}}, RM: client, NM: nm, Log: log})
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &scaleRun{rm: rm, nm: nm, am: m, cancel: cancel, done: make(chan struct{})}
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
		if r.nm.started.Load() >= int64(n) && r.am.Status().Counts.Running == n {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	tb.Fatalf("%d containers: only %d started, %d running after 5 minutes", n, r.nm.started.Load(), r.am.Status().Counts.Running)
}

// waitHeartbeats waits until the fake RM has answered k more allocates than at from.
func (r *scaleRun) waitHeartbeats(from, k int64) {
	for r.rm.allocates.Load() < from+k {
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
			from := r.rm.allocates.Load()
			cpu0 := cpuTime()
			b.ResetTimer()
			r.waitHeartbeats(from, int64(b.N))
			b.StopTimer()
			cpu := cpuTime() - cpu0
			beats := r.rm.allocates.Load() - from
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
			var beats int64
			var cpu time.Duration
			for i := 0; i < b.N; i++ {
				cpu0 := cpuTime()
				r := startScaleRun(b, n)
				r.waitRunning(b, n)
				cpu += cpuTime() - cpu0
				beats += r.rm.allocates.Load()
				r.stop()
			}
			b.ReportMetric(float64(beats)/float64(b.N), "heartbeats/op")
			b.ReportMetric(float64(cpu.Microseconds())/1000/float64(beats), "cpu-ms/heartbeat")
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N)/float64(n), "cpu-ns/container")
		})
	}
}
