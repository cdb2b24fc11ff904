package client

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/yarn-am/yarn-am/internal/text"
	"github.com/yarn-am/yarn-am/jobfile"
	"github.com/yarn-am/yarn-am/resources"
	"github.com/yarn-am/yarn-am/yarnrpc"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// LabelRM is what the node-label pre-flight asks the ResourceManager (yarnrpc.ApplicationClient).
type LabelRM interface {
	GetClusterNodeLabels(ctx context.Context) ([]*hadooppb.NodeLabelProto, error)
	GetQueueInfo(ctx context.Context, queue string, includeApps bool) (*hadooppb.QueueInfoProto, error)
}

// checkNodeLabels refuses a taskexecutor.node-label or am.node-label that the cluster does not have
// (naming the labels it has) or that queue may not use (naming the ones it may). A job without
// node labels asks the RM nothing (docs/job-file.md#node-labels).
func checkNodeLabels(ctx context.Context, rm LabelRM, job *jobfile.Job, queue string) error {
	keys := map[string]string{}
	if l := job.TaskExecutor.NodeLabel; l != "" {
		keys["taskexecutor.node-label"] = l
	}
	if l := job.AM.NodeLabel; l != "" {
		keys["am.node-label"] = l
	}
	if len(keys) == 0 {
		return nil
	}
	labels, err := rm.GetClusterNodeLabels(ctx)
	if err != nil {
		return fmt.Errorf("asking the ResourceManager for its node labels (the job sets %s): %w", strings.Join(slices.Sorted(maps.Keys(keys)), " and "), err)
	}
	var names []string
	for _, l := range labels {
		names = append(names, l.GetName())
	}
	// The queue's accessible labels: "*" is every label. A queue the RM does not know is reported by
	// the queue check; an RM that does not answer is not held against the job.
	var accessible []string
	queueAnswered := false
	if qi, err := rm.GetQueueInfo(ctx, queue, false); err == nil && qi.GetQueueName() != "" {
		accessible, queueAnswered = qi.GetAccessibleNodeLabels(), true
	}
	var probs []string
	for _, key := range slices.Sorted(maps.Keys(keys)) {
		l := keys[key]
		switch {
		case len(names) == 0:
			probs = append(probs, fmt.Sprintf("%s = %q: the cluster has no node labels (yarn.node-labels.enabled is off, or no label was added with `yarn rmadmin -addToClusterNodeLabels`); remove the key to run in the default partition", key, l))
		case !slices.Contains(names, l):
			probs = append(probs, fmt.Sprintf("%s = %q: the cluster has no such node label%s; its labels are %s", key, l, text.DidYouMean(l, names), strings.Join(names, ", ")))
		case queueAnswered && !slices.Contains(accessible, "*") && !slices.Contains(accessible, l):
			can := "none"
			if len(accessible) > 0 {
				can = strings.Join(slices.Sorted(slices.Values(accessible)), ", ")
			}
			probs = append(probs, fmt.Sprintf("%s = %q: queue %q may not use it (yarn.scheduler.capacity.<queue-path>.accessible-node-labels); the labels it may use are %s; pick one of them or another queue", key, l, queue, can))
		}
	}
	if len(probs) > 0 {
		return &resources.PreflightError{Problems: probs}
	}
	return nil
}

var _ LabelRM = (*yarnrpc.ApplicationClient)(nil)
