package am

import (
	"errors"
	"io"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/yarn-am/yarn-am/am/events"
	"github.com/yarn-am/yarn-am/contract"
)

func TestMetricsExposition(t *testing.T) {
	m := newMetrics()
	m.SetContainers(map[contract.Phase]int{contract.Running: 2, contract.Completed: 1}, 1, 3, 0)
	m.ObserveAllocation(1500 * time.Millisecond)
	m.ObserveExit(contract.ExitFailed)
	m.ObserveExit(contract.ExitPreempted)
	m.ObserveEvent(events.Launched("c", "n"))
	m.ObserveRPC("allocate", time.Now().Add(-10*time.Millisecond), nil)
	m.ObserveRPC("startContainers", time.Now(), errors.New("refused"))

	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	text := string(body)
	for _, want := range []string{
		`yarn_am_containers{state="running"} 2`,
		`yarn_am_containers{state="launching"} 0`,
		`yarn_am_asks_pending 1`,
		`yarn_am_required_taskexecutors 3`,
		`yarn_am_allocation_latency_seconds_count 1`,
		`yarn_am_allocation_latency_seconds_bucket{le="2.5"} 1`,
		`yarn_am_container_failures_total{class="failed"} 1`,
		`yarn_am_container_exits_total{class="preempted"} 1`,
		`yarn_am_events_total{type="launched"} 1`,
		`yarn_am_rpc_duration_seconds_count{method="allocate"} 1`,
		`yarn_am_rpc_errors_total{method="startContainers"} 1`,
		`go_goroutines`,
	} {
		assert.Contains(t, text, want)
	}
	assert.NotContains(t, text, `yarn_am_container_failures_total{class="preempted"}`, "preemption is not a failure")

	var nilM *metrics
	assert.NotPanics(t, func() { nilM.ObserveRPC("x", time.Now(), nil); nilM.ObserveExit(contract.ExitFailed) }, "a nil *Metrics is a no-op")
}

// A GPU whose latest reading could not be read (its Problem) has no utilisation, memory or power
// gauge: its values are unknown, not the last ones, nor zero.
func TestMetricsDropASickGPUsGauges(t *testing.T) {
	m := newMetrics()
	u, w := 60.0, 111.43
	m.SetGPUs("c1", []contract.GPUStatus{{UUID: "GPU-a", Util: &u, MemUsedMiB: 10, PowerW: &w}, {UUID: "GPU-b", Util: &u, MemUsedMiB: 10, PowerW: &w}})
	m.SetGPUs("c1", []contract.GPUStatus{{UUID: "GPU-a", Util: &u, MemUsedMiB: 10, PowerW: &w}, {UUID: "GPU-b", Problem: "lost"}})
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, g := range []string{"yarn_am_gpu_utilization_ratio", "yarn_am_gpu_memory_used_bytes", "yarn_am_gpu_power_watts"} {
		assert.Contains(t, string(body), g+`{container="c1",gpu="GPU-a"}`)
		assert.NotContains(t, string(body), g+`{container="c1",gpu="GPU-b"}`)
	}
}
