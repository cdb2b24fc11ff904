package am

import (
	"context"
	"sync"
	"time"

	"github.com/sirupsen/logrus"
	"google.golang.org/protobuf/proto"

	"github.com/yarn-am/yarn-am/am/book"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/yarnrpc"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// This file is the NodeManager side: launchPool, a bounded pool of workers that start
// TaskExecutors (startContainers), and the stops (stopContainers), none of which holds the AM's
// mutex during the call; and the AM's booking of a start's answer (bookStart).

// launchPool starts TaskExecutors on their NodeManagers and stops them. Its workers (work,
// config.LaunchWorkers of them) take the containers to start from queue; a start's answer goes to
// started, the AM's booking under its mutex (bookStart). Stops run at once (stopAll: the AM finishing) or in the
// background (stopInBackground: a scale-down), which Run waits for (wait). Its fields are set by newAM
// and never changed afterwards; the queue and the WaitGroup are safe for concurrent use.
type launchPool struct {
	nm  nm
	clc *hadooppb.ContainerLaunchContextProto // config.LaunchContext
	// tokens, when set, returns the current credentials of new TaskExecutors (config.LaunchTokens).
	tokens  func() []byte
	now     func() time.Time
	metrics *metrics
	log     logrus.FieldLogger
	queue   chan launchJob
	stops   sync.WaitGroup
	// started books the answer of t's start, sent at sent and answered after took (am.bookStart).
	started func(t *book.Container, sent time.Time, took time.Duration, err error)
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

// start sends one startContainers and hands its answer to started.
func (l *launchPool) start(ctx context.Context, j launchJob) {
	start := time.Now()
	c, cancel := callCtx(ctx)
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
	resp, err := l.nm.StartContainers(c, j.t.Node, req)
	l.metrics.ObserveRPC("startContainers", start, err)
	if err == nil {
		for _, f := range resp.GetFailedRequests() {
			err = yarnrpc.ContainerFailure(f)
		}
	}
	l.started(j.t, sent, time.Since(start), err)
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
			_, err := l.nm.StopContainers(c, node, ids...)
			l.metrics.ObserveRPC("stopContainers", start, err)
			if err != nil {
				l.log.WithError(err).WithField("node", node).Warn("am: stopping TaskExecutors failed (the RM kills them when the application ends)")
			}
		}()
	}
	wg.Wait()
}

// bookStart books the answer of t's start (launchPool.started): a container stopped while its launch was
// in flight is stopped now, or given back if it never started; a refused start releases the
// container; else it runs.
func (a *am) bookStart(t *book.Container, sent time.Time, took time.Duration, err error) {
	log := a.log.WithFields(logrus.Fields{"container": t.ID, "node": t.Node})
	a.mu.Lock()
	defer a.mu.Unlock()
	defer a.wake.poke()
	t.Token = nil // used: a container is started once
	if t.Phase == contract.Stopping && t.StopAfterLaunch {
		t.StopAfterLaunch = false
		if err != nil { // it never started: give the allocation back
			if t.CID != nil {
				a.release[t.ID] = t.CID
			}
			a.exitedLocked(t, a.rec.StoppedBeforeStart(t))
			return
		}
		a.launch.stopInBackground([]*book.Container{t})
		return
	}
	if t.Phase != contract.Launching {
		if err == nil && t.Phase == contract.Completed && t.LaunchedAt.IsZero() {
			// It started and ended before this start call returned: the timeline still shows it ran.
			t.LaunchedAt = sent
		}
		return // completed (or stopped) while the launch was in flight
	}
	if err != nil {
		log.WithError(err).Warn("am: starting the TaskExecutor failed; releasing the container")
		if t.CID != nil {
			a.release[t.ID] = t.CID
		}
		a.exitedLocked(t, a.rec.LaunchFailed(t, err.Error()))
		return
	}
	log.WithField("took", took.Round(time.Millisecond)).Info("am: TaskExecutor started")
	a.events.AddAll(a.rec.Launched(t))
}
