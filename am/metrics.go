package am

import (
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/yarn-am/yarn-am/contract"
)

// This file is the AM's Prometheus /metrics. The official client library gives the exposition format
// (text and OpenMetrics by content negotiation), histograms and the Go runtime collectors without us
// re-implementing any of it. Each AM has its own registry (no global state, tests can run several).

// metrics holds the AM's Prometheus collectors.
type metrics struct {
	reg          *prometheus.Registry
	containers   *prometheus.GaugeVec
	asksPending  prometheus.Gauge
	required     prometheus.Gauge
	excluded     prometheus.Gauge
	allocLatency prometheus.Histogram
	failures     *prometheus.CounterVec
	exits        *prometheus.CounterVec
	events       *prometheus.CounterVec
	rpcLatency   *prometheus.HistogramVec
	rpcErrors    *prometheus.CounterVec
	gpu          gpuGauges // per container and GPU, from the first sample on (gpuusage.go)
}

// newMetrics registers the AM's collectors on a registry of their own.
func newMetrics() *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		containers: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "yarn_am_containers",
			Help: "TaskExecutor containers by state (launching, running, stopping, completed)."}, []string{"state"}),
		asksPending: prometheus.NewGauge(prometheus.GaugeOpts{Name: "yarn_am_asks_pending",
			Help: "Containers asked for and not yet allocated."}),
		required: prometheus.NewGauge(prometheus.GaugeOpts{Name: "yarn_am_required_taskexecutors",
			Help: "The declared number of TaskExecutors."}),
		excluded: prometheus.NewGauge(prometheus.GaugeOpts{Name: "yarn_am_excluded_nodes",
			Help: "Nodes currently excluded (blacklisted) for this application."}),
		allocLatency: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "yarn_am_allocation_latency_seconds",
			Help:    "Time from asking for a container to its allocation.",
			Buckets: []float64{0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600}}),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "yarn_am_container_failures_total",
			Help: "TaskExecutor ends that count as failures, by exit class."}, []string{"class"}),
		exits: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "yarn_am_container_exits_total",
			Help: "TaskExecutor ends by exit class (including those that do not count as failures)."}, []string{"class"}),
		events: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "yarn_am_events_total",
			Help: "Events emitted, by type."}, []string{"type"}),
		rpcLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "yarn_am_rpc_duration_seconds",
			Help:    "Latency of calls to the ResourceManager and NodeManagers, by protocol method.",
			Buckets: prometheus.DefBuckets}, []string{"method"}),
		rpcErrors: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "yarn_am_rpc_errors_total",
			Help: "Failed calls to the ResourceManager and NodeManagers, by protocol method."}, []string{"method"}),
	}
	m.reg.MustRegister(m.containers, m.asksPending, m.required, m.excluded, m.allocLatency, m.failures, m.exits, m.events,
		m.rpcLatency, m.rpcErrors, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	for _, s := range []contract.Phase{contract.Launching, contract.Running, contract.Stopping, contract.Completed} {
		m.containers.WithLabelValues(stateLabel(s)).Set(0)
	}
	return m
}

func stateLabel(p contract.Phase) string {
	switch p {
	case contract.Launching:
		return "launching"
	case contract.Running:
		return "running"
	case contract.Stopping:
		return "stopping"
	case contract.Completed:
		return "completed"
	}
	return string(p)
}

// Handler serves the registry in Prometheus exposition format.
func (m *metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// SetContainers sets the container gauges from a count per phase.
func (m *metrics) SetContainers(byPhase map[contract.Phase]int, asksPending, required, excluded int) {
	if m == nil {
		return
	}
	for _, s := range []contract.Phase{contract.Launching, contract.Running, contract.Stopping, contract.Completed} {
		m.containers.WithLabelValues(stateLabel(s)).Set(float64(byPhase[s]))
	}
	m.asksPending.Set(float64(asksPending))
	m.required.Set(float64(required))
	m.excluded.Set(float64(excluded))
}

// ObserveAllocation records the time from ask to allocation.
func (m *metrics) ObserveAllocation(d time.Duration) {
	if m == nil {
		return
	}
	m.allocLatency.Observe(d.Seconds())
}

// ObserveExit counts a container's end by class (and as a failure if the class counts).
func (m *metrics) ObserveExit(c contract.ExitClass) {
	if m == nil {
		return
	}
	m.exits.WithLabelValues(string(c)).Inc()
	if c.Counts() {
		m.failures.WithLabelValues(string(c)).Inc()
	}
}

// ObserveEvent counts an event by type (EventLog.OnAdd hook).
func (m *metrics) ObserveEvent(e contract.Event) {
	if m == nil {
		return
	}
	m.events.WithLabelValues(string(e.Type)).Inc()
}

// ObserveRPC is the hook the loop calls around each RM or NM call: method is the protocol method
// ("allocate", "startContainers", ...), start when the call began, err its result.
func (m *metrics) ObserveRPC(method string, start time.Time, err error) {
	if m == nil {
		return
	}
	m.rpcLatency.WithLabelValues(method).Observe(time.Since(start).Seconds())
	if err != nil {
		m.rpcErrors.WithLabelValues(method).Inc()
	}
}

// gpuGauges are the per-container, per-GPU gauges, registered on the AM's registry at the first sample.
type gpuGauges struct {
	once                sync.Once
	util, memory, power *prometheus.GaugeVec
}

func (m *metrics) gpuGauges() *gpuGauges {
	g := &m.gpu
	g.once.Do(func() {
		labels := []string{"container", "gpu"}
		g.util = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "yarn_am_gpu_utilization_ratio",
			Help: "A TaskExecutor's GPU's utilisation in its latest sample, 0 to 1 (docs/running.md#gpu-utilisation)."}, labels)
		g.memory = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "yarn_am_gpu_memory_used_bytes",
			Help: "A TaskExecutor's GPU's memory in use in its latest sample."}, labels)
		g.power = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "yarn_am_gpu_power_watts",
			Help: "A TaskExecutor's GPU's power draw in its latest sample (absent where the GPU reports none)."}, labels)
		m.reg.MustRegister(g.util, g.memory, g.power)
	})
	return g
}

// SetGPUs sets container id's gauges from its latest readings.
func (m *metrics) SetGPUs(id string, gpus []contract.GPUStatus) {
	if m == nil || len(gpus) == 0 {
		return
	}
	g := m.gpuGauges()
	for _, s := range gpus {
		if s.Util != nil {
			g.util.WithLabelValues(id, s.UUID).Set(*s.Util / 100)
		} else if s.Problem != "" {
			g.util.DeleteLabelValues(id, s.UUID) // a sick GPU's values are unknown, not the last ones
		}
		if s.Problem != "" {
			g.memory.DeleteLabelValues(id, s.UUID)
		} else {
			g.memory.WithLabelValues(id, s.UUID).Set(float64(s.MemUsedMiB) * (1 << 20))
		}
		if s.PowerW != nil {
			g.power.WithLabelValues(id, s.UUID).Set(*s.PowerW)
		} else {
			g.power.DeleteLabelValues(id, s.UUID)
		}
	}
}

// DropGPUs removes container id's gauges (it ended).
func (m *metrics) DropGPUs(id string) {
	if m == nil {
		return
	}
	g := m.gpuGauges()
	for _, v := range []*prometheus.GaugeVec{g.util, g.memory, g.power} {
		v.DeletePartialMatch(prometheus.Labels{"container": id})
	}
}
