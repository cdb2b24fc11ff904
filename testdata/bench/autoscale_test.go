package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stepOf is the rate-step test's model: 175 → 525 → 175 records a second, 250 a subtask, 3 slots,
// a 40 s rescale, the rate down 10 minutes after the step.
func stepOf() stepModel {
	return stepModel{Low: 175, High: 525, Step: time.Hour, Down: time.Hour + 10*time.Minute, PerSubtask: 250, Slots: 3, Bound: 1050,
		RescaleTime: 40 * time.Second, Horizon: 3*time.Hour + 10*time.Minute}
}

func TestReplayYarnAMDefaultsFollowTheStep(t *testing.T) {
	r := replay(stepOf(), yarnAMDefaults)
	// The window (1 min) fills with the step's load within a minute; the rescale takes 40 s.
	assert.Greater(t, r.ToRescale, 40*time.Second)
	assert.LessOrEqual(t, r.ToRescale, 2*time.Minute+40*time.Second)
	assert.Positive(t, r.ToUnder)
	assert.Less(t, r.ToUnder, 10*time.Minute)
	assert.Equal(t, 3, r.Max, "held by the 3 slots")
	assert.Equal(t, 1, r.FinalParallelism, "scaled in after the rate went down")
	assert.GreaterOrEqual(t, r.ToScaleIn, 5*time.Minute, "not before the scale-down grace")
	assert.Less(t, r.ToScaleIn, 8*time.Minute)
}

func TestReplayOperatorDefaultsAreSlower(t *testing.T) {
	ya, op := replay(stepOf(), yarnAMDefaults), replay(stepOf(), operatorDefaults)
	require.Positive(t, op.ToRescale, "the operator's defaults scale out too, within the horizon")
	assert.Greater(t, op.ToRescale, ya.ToRescale)
	assert.Greater(t, op.Peak, ya.Peak)
	// No scale-down within its hour after the scale-up.
	assert.True(t, op.ToScaleIn < 0 || op.ToScaleIn >= time.Hour-10*time.Minute, "%v", op.ToScaleIn)
}

func TestReplaySteadyRateNeverRescales(t *testing.T) {
	m := stepOf()
	m.High = m.Low
	for _, pc := range []pacing{yarnAMDefaults, operatorDefaults} {
		r := replay(m, pc)
		assert.Zero(t, r.Rescales, pc.Name)
		assert.Zero(t, r.Peak, pc.Name)
	}
}

func TestAutoscaleRowReadsTheTestsTrace(t *testing.T) {
	dir := t.TempDir()
	busy, in := 700.0, 175.0
	tr := map[string]any{"line": "2.3.0", "grace": "5m", "stepAt": 120.0, "decidedAt": 180.0, "appliedAt": 220.0, "backlogUnderAt": 400.0,
		"peakBacklog": 20000.0, "downAt": 500.0, "scaledInAt": 860.0, "rescales": 2, "backlogBound": 1050.0, "lowRate": 175.0,
		"highRate": 525.0, "taskManagerMax": 3,
		"samples": []any{map[string]any{"at": 60.0, "rate": 175.0, "vertices": []any{
			map[string]any{"name": "Source: rated", "parallelism": 1, "busy": nil, "in": nil, "pending": 3.0},
			map[string]any{"name": "Cost -> Sink: Writer", "parallelism": 1, "busy": busy, "in": in, "pending": nil}}}}}
	b, err := json.Marshal(tr)
	require.NoError(t, err)
	p := filepath.Join(dir, "rate-step-2.3.0.json")
	require.NoError(t, os.WriteFile(p, b, 0o644))
	var out strings.Builder
	require.NoError(t, autoscaleRow(p, dir, &out))
	assert.Contains(t, out.String(), "Cost map 250 records/s a subtask")
	assert.Contains(t, out.String(), "| measured (yarn-am, mini cluster) | 100 s (decided 60 s) | 280 s | 20000 | 2 | 360 s |")
	assert.Contains(t, out.String(), "| replay, yarn-am defaults |")
	assert.Contains(t, out.String(), "| replay, Flink operator defaults |")
	t.Log(out.String())
	written, err := os.ReadFile(filepath.Join(dir, "autoscale.md"))
	require.NoError(t, err)
	assert.Equal(t, out.String(), string(written))
}
