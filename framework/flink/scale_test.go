package flink

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
)

// yarn-am scale on a [flink] job changes the TaskManagers only where Flink follows: a reactive job
// both ways, a session cluster up; a job whose parallelism is fixed is refused with what would work.
func TestScalePolicy(t *testing.T) {
	ctx := context.Background()
	assert.NoError(t, scalePolicy(true, false)(ctx, 2, 3))
	assert.NoError(t, scalePolicy(true, false)(ctx, 3, 1))
	assert.NoError(t, scalePolicy(false, true)(ctx, 1, 2))
	assert.ErrorContains(t, scalePolicy(false, true)(ctx, 2, 1), "would stop the tasks")
	err := scalePolicy(false, false)(ctx, 2, 1)
	assert.ErrorContains(t, err, "2 → 1 TaskManagers would fail the job")
	assert.ErrorContains(t, err, `"scheduler-mode" = "reactive"`)
	assert.ErrorContains(t, scalePolicy(false, false)(ctx, 2, 3), "would add slots no task uses")
}

// The AM reads scheduler-mode as the processes will: the job file's key and -D (the latter wins).
func TestIsReactive(t *testing.T) {
	t.Chdir(t.TempDir()) // no localised home here
	assert.True(t, isReactive(&flinkSpec{Config: map[string]string{"scheduler-mode": "reactive"}}))
	assert.False(t, isReactive(&flinkSpec{Config: map[string]string{}}))
	assert.True(t, isReactive(&flinkSpec{Config: map[string]string{}, Defines: []string{"scheduler-mode=REACTIVE"}}))
	assert.False(t, isReactive(&flinkSpec{Config: map[string]string{"scheduler-mode": "reactive"}, Defines: []string{"scheduler-mode=default"}}))
}
