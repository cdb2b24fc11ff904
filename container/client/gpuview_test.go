package client

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/yarn-am/yarn-am/contract"
)

func TestStatusShowsGPUMeansAndTheIdleShare(t *testing.T) {
	st := &contract.Status{State: contract.StateRunning, GPUUsage: &contract.GPUUsage{ReservedGPUHours: 0.5, UsedShare: 0.47, IdleShare: 0.5, Samples: 40},
		Containers: []contract.ContainerStatus{
			{ID: "c1", Node: "n1:1", State: contract.Running, GPUs: []contract.GPUStatus{{UUID: "GPU-a", MeanUtil: 93, Samples: 20}}},
			{ID: "c2", Node: "n1:1", State: contract.Running, GPUs: []contract.GPUStatus{{UUID: "GPU-b", MeanUtil: 0, IdleShare: 1, Samples: 20}}},
			{ID: "c3", Node: "n2:1", State: contract.Launching},
		}}
	var b bytes.Buffer
	PrintAMStatus(&b, st)
	out := b.String()
	assert.Contains(t, out, "GPU time:     0.500 GPU-hours reserved, 47% used (mean utilisation of 40 samples), 50% idle\n")
	assert.Regexp(t, `CONTAINER\s+NODE\s+STATE\s+RESOURCES\s+INFOS\s+GPU UTIL\s+EXIT`, out)
	assert.Regexp(t, `c1\s+n1:1\s+RUNNING\s+.*93%`, out)
	assert.Regexp(t, `c2\s+n1:1\s+RUNNING\s+.*0%`, out)
	b.Reset()
	PrintAMStatus(&b, &contract.Status{Containers: []contract.ContainerStatus{{ID: "c1"}}})
	assert.NotContains(t, b.String(), "GPU", "a job without GPU samples: the table as before")
}
