package client

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/jobfile"
)

func TestPlacementPlanSaysWhatTheHandlerDoes(t *testing.T) {
	job := &jobfile.Job{}
	line, err := PlacementPlan(mapConf{}, job)
	require.NoError(t, err)
	assert.Empty(t, line, "no placement: nothing to say")

	job.TaskExecutor.Placement = jobfile.Placement{MaxPerNode: 1}
	line, err = PlacementPlan(mapConf{}, job)
	require.NoError(t, err)
	assert.Contains(t, line, "kept by the ApplicationMaster (yarn.resourcemanager.placement-constraints.handler = disabled in the client's site files")

	line, err = PlacementPlan(mapConf{"yarn.resourcemanager.placement-constraints.handler": "placement-processor"}, job)
	require.NoError(t, err)
	assert.Contains(t, line, "sent as SchedulingRequests with placement constraints (yarn.resourcemanager.placement-constraints.handler = placement-processor")

	job.TaskExecutor.Placement.NodeAttributes = []jobfile.NodeAttribute{{Name: "gpu_model", Value: "H200"}}
	_, err = PlacementPlan(mapConf{"yarn.resourcemanager.placement-constraints.handler": "disabled"}, job)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "node attributes cannot be honoured")

	_, err = PlacementPlan(mapConf{"yarn.resourcemanager.placement-constraints.handler": "bogus"}, job)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"bogus": not a handler YARN knows`)
}
