package launcher

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/yarn-am/yarn-am/contract"
)

// TestAliveWaitIsJitteredAroundTheInterval: the waits between liveness messages spread over
// contract.LivenessJitter of the interval either way, never longer (the AM's timeout is counted in
// intervals: docs/running.md#liveness), and a slow message shortens the next wait.
func TestAliveWaitIsJitteredAroundTheInterval(t *testing.T) {
	iv := contract.LivenessInterval
	lo := time.Duration(float64(iv) * (1 - contract.LivenessJitter))
	hi := time.Duration(float64(iv) * (1 + contract.LivenessJitter))
	assert.Equal(t, lo, aliveWait(iv, 0, 0))
	assert.Equal(t, iv, aliveWait(iv, 0, 0.5))
	assert.InDelta(t, float64(hi), float64(aliveWait(iv, 0, 0.999999)), float64(time.Millisecond))
	for r := 0.0; r < 1; r += 0.01 {
		w := aliveWait(iv, 0, r)
		assert.True(t, w >= lo && w < hi, "r=%v: %s outside [%s, %s)", r, w, lo, hi)
	}
	assert.Equal(t, iv-500*time.Millisecond, aliveWait(iv, 500*time.Millisecond, 0.5), "counted from the last message's start")
	assert.Zero(t, aliveWait(iv, 3*iv, 0.5), "a message slower than the interval: the next goes at once")
	assert.Less(t, 2*hi, contract.MinLivenessTimeout, "one lost message between two of the longest waits is no silence of the shortest timeout")
}
