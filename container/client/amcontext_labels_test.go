package client

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSubmissionContextAMNodeLabel: am.node-label goes on the AM container's own "*" request, of the
// AM's size; the application-wide node_label_expression stays unset so that the TaskExecutors'
// requests are not moved into the AM's partition. Without am.node-label nothing is added.
func TestSubmissionContextAMNodeLabel(t *testing.T) {
	o := testAMOptions(t)
	sc, err := SubmissionContext(o)
	require.NoError(t, err)
	assert.Empty(t, sc.GetAmContainerResourceRequest())
	assert.Nil(t, sc.NodeLabelExpression)

	o.Job.AM.NodeLabel = "gpu"
	sc, err = SubmissionContext(o)
	require.NoError(t, err)
	require.Len(t, sc.GetAmContainerResourceRequest(), 1)
	r := sc.GetAmContainerResourceRequest()[0]
	assert.Equal(t, "gpu", r.GetNodeLabelExpression())
	assert.Equal(t, "*", r.GetResourceName())
	assert.Equal(t, int32(1), r.GetNumContainers())
	assert.Equal(t, int64(300), r.GetCapability().GetMemory())
	assert.Equal(t, int32(2), r.GetCapability().GetVirtualCores())
	assert.Nil(t, sc.NodeLabelExpression, "the application-wide default would apply to the TaskExecutors too")
}
