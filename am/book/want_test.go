package book

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/yarn-am/yarn-am/am/decision"
	"github.com/yarn-am/yarn-am/contract"
)

// TestWantIsTheOneCountWithItsSource: the count starts from its source, every change says who made
// it and returns the count before, the containers to stop first last until the next change, and an
// earlier attempt's count replaces the start's only when it differs.
func TestWantIsTheOneCountWithItsSource(t *testing.T) {
	w := NewWant(1, WantDemand)
	assert.Equal(t, 1, w.Count())
	assert.Equal(t, WantDemand, w.By())

	assert.Equal(t, 1, w.Set(4, nil, "scale"))
	assert.Equal(t, 4, w.Count())
	assert.Equal(t, "scale", w.By())
	assert.Nil(t, w.StopFirst())

	assert.Equal(t, 4, w.Set(2, []string{"c3", "c4"}, "flink demand"))
	assert.Equal(t, map[string]bool{"c3": true, "c4": true}, w.StopFirst())
	w.Set(3, nil, "scale")
	assert.Nil(t, w.StopFirst(), "the next change forgets them")

	assert.False(t, w.Restore(3), "the same count: nothing restored")
	assert.Equal(t, "scale", w.By())
	assert.True(t, w.Restore(5))
	assert.Equal(t, 5, w.Count())
	assert.Equal(t, WantRestored, w.By())
}

// TestWantIsTheSpecsAndTheRequirementsCount: the spec Reconcile gets and the requirement the API
// shows carry the count wanted, not the job file's, and leave the job's spec as configured.
func TestWantIsTheSpecsAndTheRequirementsCount(t *testing.T) {
	job := decision.Spec{Instances: 2, Capability: te, MaxFailures: 3, Mode: decision.Service}
	w := NewWant(job.Instances, WantJobFile)
	w.Set(5, nil, "scale")
	s := w.Spec(job)
	assert.Equal(t, 5, s.Instances)
	assert.Equal(t, 2, job.Instances, "the job's spec stays as configured")
	assert.Equal(t, contract.Requirement{Instances: 5, Resources: te, MaxFailures: 3, Mode: "service",
		ExternalResources: map[string]string{"gpu": "yarn.io/gpu"}}, w.Requirement(job, map[string]string{"gpu": "yarn.io/gpu"}))
}
