package client

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/yarn-am/yarn-am/jobfile"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

type fakeLabelRM struct {
	labels     []string
	accessible []string
	labelsErr  error
	calls      int
}

func (f *fakeLabelRM) GetClusterNodeLabels(context.Context) ([]*hadooppb.NodeLabelProto, error) {
	f.calls++
	var out []*hadooppb.NodeLabelProto
	for _, l := range f.labels {
		out = append(out, &hadooppb.NodeLabelProto{Name: proto.String(l)})
	}
	return out, f.labelsErr
}

func (f *fakeLabelRM) GetQueueInfo(_ context.Context, q string, _ bool) (*hadooppb.QueueInfoProto, error) {
	f.calls++
	return &hadooppb.QueueInfoProto{QueueName: proto.String(q), AccessibleNodeLabels: f.accessible}, nil
}

func labelJob(te, am string) *jobfile.Job {
	j := &jobfile.Job{}
	j.TaskExecutor.NodeLabel, j.AM.NodeLabel = te, am
	return j
}

// TestCheckNodeLabels: an unknown label is refused with a did-you-mean and the cluster's labels; a
// label the queue may not use names the ones it may; a job without labels asks the RM nothing.
func TestCheckNodeLabels(t *testing.T) {
	ctx := context.Background()
	rm := &fakeLabelRM{labels: []string{"gpu", "fpga"}, accessible: []string{"gpu"}}
	require.NoError(t, checkNodeLabels(ctx, rm, labelJob("", ""), "default"))
	assert.Zero(t, rm.calls, "no labels, no calls")

	require.NoError(t, checkNodeLabels(ctx, rm, labelJob("gpu", "gpu"), "default"))

	err := checkNodeLabels(ctx, rm, labelJob("gpus", ""), "default")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `taskexecutor.node-label = "gpus": the cluster has no such node label (did you mean "gpu"?); its labels are gpu, fpga`)

	err = checkNodeLabels(ctx, rm, labelJob("", "fpga"), "default")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `am.node-label = "fpga": queue "default" may not use it`)
	assert.Contains(t, err.Error(), "the labels it may use are gpu")

	rm.accessible = []string{"*"}
	require.NoError(t, checkNodeLabels(ctx, rm, labelJob("fpga", ""), "default"), `"*" is every label`)

	err = checkNodeLabels(ctx, &fakeLabelRM{}, labelJob("gpu", ""), "default")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the cluster has no node labels")

	boom := errors.New("boom")
	err = checkNodeLabels(ctx, &fakeLabelRM{labelsErr: boom}, labelJob("gpu", ""), "default")
	assert.ErrorIs(t, err, boom)
}
