package am

import (
	"context"
	"sync"
	"time"

	"github.com/sirupsen/logrus"
	"google.golang.org/protobuf/proto"

	"github.com/yarn-am/yarn-am/am/book"
	"github.com/yarn-am/yarn-am/yarnrpc"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// This file is the NodeManager side: launchPool, a bounded pool of workers that start
// TaskExecutors (startContainers), and the stops (stopContainers), none of which holds the AM's
// mutex during the call. The AM books a start's answer (allocate.go, bookStart).

// launchPool starts TaskExecutors on their NodeManagers and stops them. Its workers (work,
// config.LaunchWorkers of them) take the containers to start from queue; a start's answer goes to
// answered, the AM's booking under its mutex (bookStart). Stops run at once (stopAll: the AM
// finishing) or in the background (stopInBackground: a scale-down), which Run waits for (wait). Its
// fields are set by newAM and never changed afterwards; the queue and the WaitGroup are safe for
// concurrent use.
type launchPool struct {
	nms     nodeManagers
	timeout time.Duration                         // bounds each startContainers (callTimeout)
	clc     *hadooppb.ContainerLaunchContextProto // config.LaunchContext
	// tokens, when set, returns the current credentials of new TaskExecutors (config.LaunchTokens).
	tokens  func() []byte
	now     func() time.Time
	metrics *metrics
	log     logrus.FieldLogger
	queue   chan launchJob
	stops   sync.WaitGroup
	// answered books the answer of t's start, sent at sent and answered after took (the AM's
	// bookStart, allocate.go).
	answered func(t *book.Container, sent time.Time, took time.Duration, err error)
}

// nodeManagers is what the launches need of the NodeManagers (the AM's nm).
type nodeManagers interface {
	StartContainers(ctx context.Context, node string, reqs ...*hadooppb.StartContainerRequestProto) (*hadooppb.StartContainersResponseProto, error)
	StopContainers(ctx context.Context, node string, ids ...*hadooppb.ContainerIdProto) (*hadooppb.StopContainersResponseProto, error)
}

// launchJob is a container to start with its container token, read under the AM's mutex when the
// container was queued (the records drop it when the container ends).
type launchJob struct {
	t     *book.Container
	token *hadooppb.TokenProto
}

// work starts queued containers on their NodeManagers until ctx ends; several workers run at once.
func (l *launchPool) work(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case j := <-l.queue:
			l.start(ctx, j)
		}
	}
}

// start sends one startContainers and hands its answer to answered.
func (l *launchPool) start(ctx context.Context, j launchJob) {
	start := time.Now()
	c, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	req := &hadooppb.StartContainerRequestProto{ContainerLaunchContext: l.clc, ContainerToken: j.token}
	if l.tokens != nil {
		if tok := l.tokens(); len(tok) > 0 {
			clc := proto.Clone(l.clc).(*hadooppb.ContainerLaunchContextProto)
			clc.Tokens = tok
			req.ContainerLaunchContext = clc
		}
	}
	sent := l.now()
	resp, err := l.nms.StartContainers(c, j.t.Node, req)
	l.metrics.ObserveRPC("startContainers", start, err)
	if err == nil {
		for _, f := range resp.GetFailedRequests() {
			err = yarnrpc.ContainerFailure(f)
		}
	}
	l.answered(j.t, sent, time.Since(start), err)
}

// stopInBackground stops containers without holding up the caller (which may hold the AM's mutex);
// wait waits for it.
func (l *launchPool) stopInBackground(ts []*book.Container) {
	l.stops.Add(1)
	go func() {
		defer l.stops.Done()
		l.stopAll(context.Background(), ts)
	}()
}

// wait waits for the stops in the background.
func (l *launchPool) wait() { l.stops.Wait() }

// stopAll stops containers on their NMs, every node at once. A container's id (CID) is set when it
// is recorded and never changed: it is read without the AM's mutex.
func (l *launchPool) stopAll(ctx context.Context, ts []*book.Container) {
	byNode := map[string][]*hadooppb.ContainerIdProto{}
	for _, t := range ts {
		byNode[t.Node] = append(byNode[t.Node], t.CID)
	}
	var wg sync.WaitGroup
	for node, ids := range byNode {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			start := time.Now()
			_, err := l.nms.StopContainers(c, node, ids...)
			l.metrics.ObserveRPC("stopContainers", start, err)
			if err != nil {
				l.log.WithError(err).WithField("node", node).Warn("am: stopping TaskExecutors failed (the RM kills them when the application ends)")
			}
		}()
	}
	wg.Wait()
}
