package flink

import (
	"math"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/yarn-am/yarn-am/internal/text"
)

// This file is the autoscaler's gauges at the AM's /metrics (docs/flink.md#autoscaling): per
// vertex of the running job, by its id and its name, what the last decision was made of and what
// it decided.

// autoscaleGauges are the autoscaler's Prometheus gauges.
type autoscaleGauges struct {
	parallelism, decided, busy, trueRate, targetRate, lag *prometheus.GaugeVec
}

// maxVertexLabel bounds a vertex's name as a label.
const maxVertexLabel = 120

func newAutoscaleGauges() *autoscaleGauges {
	vec := func(name, help string) *prometheus.GaugeVec {
		return prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "yarn_am_flink_autoscale_" + name, Help: help}, []string{"vertex_id", "vertex"})
	}
	return &autoscaleGauges{
		parallelism: vec("parallelism", "The vertex's parallelism when the autoscaler last decided."),
		decided:     vec("decided_parallelism", "The parallelism the autoscaler last decided for the vertex."),
		busy:        vec("busy_ratio", "The vertex's subtasks' average busy fraction over the metrics window."),
		trueRate:    vec("true_rate", "Records per second one subtask of the vertex takes in when busy all the time."),
		targetRate:  vec("target_rate", "Records per second the vertex is to take in: the sources' rate and backlog carried down."),
		lag:         vec("lag_records", "A source vertex's backlog (pendingRecords), where the source reports one."),
	}
}

// collectors are the gauges, for framework.AM.Collectors.
func (g *autoscaleGauges) collectors() []prometheus.Collector {
	return []prometheus.Collector{g.parallelism, g.decided, g.busy, g.trueRate, g.targetRate, g.lag}
}

// set shows a decision: each vertex's values; what was not measured is left out, not 0.
func (g *autoscaleGauges) set(d *autoscaleDecision) {
	if g == nil {
		return
	}
	for _, v := range g.collectors() {
		v.(*prometheus.GaugeVec).Reset() // a vertex of an earlier job goes
	}
	for _, v := range d.Vertices {
		labels := prometheus.Labels{"vertex_id": v.ID, "vertex": text.Cut(v.Name, maxVertexLabel)}
		g.parallelism.With(labels).Set(float64(v.From))
		g.decided.With(labels).Set(float64(v.To))
		for vec, x := range map[*prometheus.GaugeVec]float64{g.busy: v.Busy, g.trueRate: v.TrueRate, g.targetRate: v.TargetRate, g.lag: v.Lag} {
			if !math.IsNaN(x) {
				vec.With(labels).Set(x)
			}
		}
	}
}
