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

// This file is the NodeManager side: the bounded pool of launch workers that start TaskExecutors
// (startContainers) and the stops (stopContainers), none of which holds the AM's mutex during the call.

// launchWorker starts queued containers on their NodeManagers; several workers run at once.
func (a *am) launchWorker(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case t := <-a.launchQ:
			a.launch(ctx, t)
		}
	}
}

func (a *am) launch(ctx context.Context, t *book.Container) {
	log := a.log.WithFields(logrus.Fields{"container": t.ID, "node": t.Node})
	start := time.Now()
	c, cancel := callCtx(ctx)
	defer cancel()
	req := &hadooppb.StartContainerRequestProto{ContainerLaunchContext: a.cfg.LaunchContext}
	if a.cfg.LaunchTokens != nil {
		if tok := a.cfg.LaunchTokens(); len(tok) > 0 {
			clc := proto.Clone(a.cfg.LaunchContext).(*hadooppb.ContainerLaunchContextProto)
			clc.Tokens = tok
			req.ContainerLaunchContext = clc
		}
	}
	a.mu.Lock()
	req.ContainerToken = t.Token
	sent := a.cfg.Now()
	a.mu.Unlock()
	resp, err := a.cfg.NM.StartContainers(c, t.Node, req)
	a.metrics.ObserveRPC("startContainers", start, err)
	if err == nil {
		for _, f := range resp.GetFailedRequests() {
			err = yarnrpc.ContainerFailure(f)
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	defer a.poke()
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
		a.stopInBackground([]*book.Container{t})
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
	log.WithField("took", time.Since(start).Round(time.Millisecond)).Info("am: TaskExecutor started")
	a.events.AddAll(a.rec.Launched(t))
}

// stopInBackground stops containers without holding up the caller (which may hold a.mu); Run waits
// for it before it returns.
func (a *am) stopInBackground(ts []*book.Container) {
	a.background.Add(1)
	go func() {
		defer a.background.Done()
		a.stopAll(context.Background(), ts)
	}()
}

// stopAll stops containers on their NMs, every node at once.
func (a *am) stopAll(ctx context.Context, ts []*book.Container) {
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
			_, err := a.cfg.NM.StopContainers(c, node, ids...)
			a.metrics.ObserveRPC("stopContainers", start, err)
			if err != nil {
				a.log.WithError(err).WithField("node", node).Warn("am: stopping TaskExecutors failed (the RM kills them when the application ends)")
			}
		}()
	}
	wg.Wait()
}
