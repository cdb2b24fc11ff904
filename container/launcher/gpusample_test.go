package launcher

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/sirupsen/logrus/hooks/test"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/contract/amtls/amtlstest"
	"github.com/yarn-am/yarn-am/gpu"
)

func TestSampleQueueKeepsTheNewestAndDropsWhatWasSent(t *testing.T) {
	var q SampleQueue
	now := time.Unix(1000, 0)
	r, _ := q.Pending(now)
	assert.Nil(t, r, "nothing to say: an empty body")
	for i := range contract.MaxAliveSamples + 3 {
		q.Add(now.Add(time.Duration(i)*time.Second), []contract.GPUReading{{UUID: "GPU-1", Index: i}})
	}
	r, mark := q.Pending(now.Add(40 * time.Second))
	require.Len(t, r.GPUSamples, contract.MaxAliveSamples, "bounded")
	assert.Equal(t, 3, r.GPUSamples[0].GPUs[0].Index, "the oldest went first")
	assert.Equal(t, int64(37000), r.GPUSamples[0].AgoMs)
	q.Add(now.Add(41*time.Second), []contract.GPUReading{{UUID: "GPU-1", Index: 99}})
	q.Fail("nvidia-smi: gone")
	q.Fail("a second error is never sent")
	q.Sent(mark)
	r, mark = q.Pending(now.Add(42 * time.Second))
	require.Len(t, r.GPUSamples, 1, "a sample taken while the message was in flight waits for the next")
	assert.Equal(t, "nvidia-smi: gone", r.GPUSampleError)
	q.Sent(mark)
	r, _ = q.Pending(now.Add(43 * time.Second))
	assert.Nil(t, r, "the error is sent once")
}

type fakeSampler struct {
	calls atomic.Int32
	err   error
	block chan struct{}
}

func (f *fakeSampler) Sample(ctx context.Context) ([]contract.GPUReading, error) {
	f.calls.Add(1)
	if f.block != nil {
		select {
		case <-f.block:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if f.err != nil {
		return nil, f.err
	}
	u := 42.0
	return []contract.GPUReading{{UUID: "GPU-1", Util: &u}}, nil
}

// A sampler that fails is logged once, not every interval, and its error queued once.
func TestSampleGPUsReportsAFailureOnce(t *testing.T) {
	log, hook := test.NewNullLogger()
	f := &fakeSampler{err: errors.New("nvidia-smi: driver gone")}
	var q SampleQueue
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); SampleGPUs(ctx, f, time.Millisecond, &q, log, nil) }()
	require.Eventually(t, func() bool { return f.calls.Load() >= 5 }, 10*time.Second, time.Millisecond)
	cancel()
	<-done
	assert.Len(t, hook.AllEntries(), 1)
	r, _ := q.Pending(time.Now())
	assert.Equal(t, "nvidia-smi: driver gone", r.GPUSampleError)
	assert.Empty(t, r.GPUSamples)
}

// The worker runs while the sampler hangs, and ends without waiting for it.
func TestAHungSamplerNeverHoldsTheWorker(t *testing.T) {
	f := &fakeSampler{block: make(chan struct{})}
	q := &SampleQueue{}
	l := &Launcher{GPUSampling: &GPUSampling{Interval: time.Millisecond, Sampler: f, Queue: q}, WorkDir: t.TempDir(), Env: []string{}, Log: logrus.New()}
	start := time.Now()
	code := l.Run(context.Background(), []string{"true"})
	assert.Equal(t, 0, code)
	assert.Less(t, time.Since(start), 5*time.Second)
	assert.EqualValues(t, 1, f.calls.Load(), "one call, still hanging when the worker ended")
}

// The liveness message carries the queued samples; a refused one keeps them for the next.
func TestAliveCarriesTheSamples(t *testing.T) {
	var mu sync.Mutex
	var bodies []contract.AliveReport
	refuse := true
	srv, ca := amtlstest.Server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		b, _ := io.ReadAll(r.Body)
		var a contract.AliveReport
		if len(b) > 0 {
			assert.NoError(t, json.Unmarshal(b, &a))
		}
		bodies = append(bodies, a)
		if refuse {
			refuse = false
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	hr := pinnedReporter(t, srv.URL+"/api/v1/containers", ca)
	hr.Samples = &SampleQueue{}
	u := 7.0
	hr.Samples.Add(time.Now(), []contract.GPUReading{{UUID: "GPU-1", Util: &u, MemTotalMiB: 143771}})
	require.Error(t, hr.Alive(context.Background(), "container_1_0001_01_000002"))
	require.NoError(t, hr.Alive(context.Background(), "container_1_0001_01_000002"))
	require.NoError(t, hr.Alive(context.Background(), "container_1_0001_01_000002"))
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, bodies, 3)
	require.Len(t, bodies[0].GPUSamples, 1)
	require.Len(t, bodies[1].GPUSamples, 1, "the refused message's samples went with the next")
	assert.Equal(t, int64(143771), bodies[1].GPUSamples[0].GPUs[0].MemTotalMiB)
	assert.Empty(t, bodies[2].GPUSamples, "then an empty body")
}

func TestGPUSampleIntervalFromEnv(t *testing.T) {
	log := logrus.New()
	log.SetOutput(io.Discard)
	for v, want := range map[string]time.Duration{"": contract.DefaultGPUSampleInterval, "off": 0, "1s": time.Second, "2m": 2 * time.Minute, "10ms": contract.DefaultGPUSampleInterval, "soon": contract.DefaultGPUSampleInterval} {
		t.Setenv(contract.EnvGPUSampleInterval, v)
		assert.Equal(t, want, GPUSampleIntervalFromEnv(log), v)
	}
}

// The fake nvidia-smi reports one of the container's two GPUs as lost: every sample keeps the healthy
// GPU's values, gives the lost one its problem and no values, and the problem is logged and queued
// once, as a sampling failure is (issue 40 §7: one GPU's bad line used to fail the whole sample). The
// lost GPU is unhealthy: it is given to sick once, before any sample that says so is queued (the AM
// ends the container on that sample; docs/gpus.md#gpu-health-a-sick-gpu-is-taken-out-of-service).
func TestASickGPUCostsOnlyItsOwnValues(t *testing.T) {
	t.Setenv("FAKE_GPU_NODE", "sick-node")
	t.Setenv("FAKE_GPU_COUNT", "3")
	t.Setenv("FAKE_GPU_UTIL", "0=77")
	tool, err := filepath.Abs("../../testdata/fake-nvidia-smi/nvidia-smi")
	require.NoError(t, err)
	out, err := exec.Command(tool, gpu.NVIDIASampleArgs()...).Output()
	require.NoError(t, err)
	healthy, err := gpu.ParseNVIDIASample(out)
	require.NoError(t, err)
	require.Len(t, healthy.GPUs, 3)
	mine := []string{healthy.GPUs[0].UUID, healthy.GPUs[1].UUID}

	t.Setenv("FAKE_GPU_SICK", "1=[GPU is lost]")
	log, hook := test.NewNullLogger()
	var q SampleQueue
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	var marked []string
	var queuedAtMark int
	sick := func(g contract.GPUReading) {
		marked = append(marked, g.UUID)
		r, _ := q.Pending(time.Now())
		if r != nil {
			queuedAtMark = len(r.GPUSamples)
		}
	}
	go func() {
		defer close(done)
		SampleGPUs(ctx, &gpu.ToolSampler{Tool: tool, UUIDs: mine}, 10*time.Millisecond, &q, log, sick)
	}()
	require.Eventually(t, func() bool { r, _ := q.Pending(time.Now()); return r != nil && len(r.GPUSamples) >= 3 }, 20*time.Second, 5*time.Millisecond)
	cancel()
	<-done
	r, _ := q.Pending(time.Now())
	for i, s := range r.GPUSamples {
		require.Len(t, s.GPUs, 2, "sample %d", i)
		ok, sick := s.GPUs[0], s.GPUs[1]
		assert.Equal(t, 77.0, *ok.Util, "sample %d: the healthy GPU's values", i)
		assert.Equal(t, int64(143771), ok.MemTotalMiB)
		assert.Empty(t, ok.Problem)
		assert.Equal(t, mine[1], sick.UUID)
		assert.Nil(t, sick.Util, "sample %d: the lost GPU's values are unknown", i)
		assert.Zero(t, sick.MemTotalMiB)
		assert.Equal(t, `utilization.gpu: the tool reports "[GPU is lost]"`, sick.Problem)
		assert.NoError(t, sick.Check(), "the AM takes the reading")
	}
	assert.Equal(t, []string{mine[1]}, marked, "the lost GPU is marked sick once")
	assert.Zero(t, queuedAtMark, "marked before the first sample was queued")
	require.Len(t, hook.AllEntries(), 2, "logged once as unhealthy, once as a sampling failure")
	assert.Contains(t, hook.AllEntries()[0].Message, "unhealthy")
	assert.Contains(t, r.GPUSampleError, "GPU "+mine[1]+" (index 1): utilization.gpu: the tool reports \"[GPU is lost]\"; its values are unknown")
}
