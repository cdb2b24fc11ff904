//go:build integration

package yarnrpc_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/yarnrpc"
)

// TestQueueTreeOfTheMiniCluster: the mini cluster's CapacityScheduler has root (a parent) and
// root.default (a leaf); a queue it does not know comes back without a name.
func TestQueueTreeOfTheMiniCluster(t *testing.T) {
	_, rm := miniRM(t)
	ctx := ctxT(t, 30*time.Second)

	root, err := rm.GetQueueTree(ctx, "root", true)
	require.NoError(t, err)
	assert.Equal(t, "root", root.GetQueueName())
	assert.NotEmpty(t, root.GetChildQueues(), "root is a parent queue")
	leaves := yarnrpc.LeafQueues(root)
	assert.Contains(t, leaves, "root.default", "leaves by path (Hadoop 3.3+)")
	assert.NotContains(t, leaves, "root")

	def, err := rm.GetQueueTree(ctx, "default", false)
	require.NoError(t, err)
	assert.Equal(t, "default", def.GetQueueName())
	assert.Empty(t, def.GetChildQueues(), "default is a leaf")

	unknown, err := rm.GetQueueTree(ctx, "defualt", false)
	require.NoError(t, err)
	assert.Equal(t, "", unknown.GetQueueName())
}
