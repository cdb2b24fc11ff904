package am

import (
	"context"
	"errors"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/yarn-am/yarn-am/am/book"
	"github.com/yarn-am/yarn-am/am/events"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/yarnrpc"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// This file is the AM's durable state: what a later attempt of the AM needs of an earlier one
// (docs/design.md#faults). YARN hands the new attempt the containers that still run and their
// NodeManager tokens (the register response); the rest — the requirement as the driver last set it,
// the counts of finished containers, the failure policy's memory (counted failures, excluded nodes),
// the resource infos the launchers reported, the nodes' sick GPUs, the GPU time given back for
// idleness and the tail of the event history — the AM keeps in a
// stateStore (an extended attribute of the staging directory: one atomic NameNode call, which works
// with a delegation token too). It is small by construction: book.MaxStateBytes bounds it, dropping old
// events first, resource infos next, then the nodes' sick GPUs.

// adopt takes over what an earlier attempt left, on this attempt's first registration: the
// NodeManager tokens and running containers YARN hands over (with
// keep_containers_across_application_attempts) become TaskExecutors of this attempt, and the saved
// state restores the requirement, the counts, the failure policy's memory, the containers' resource
// infos, the event history, the nodes' sick GPUs and the GPU time given back for idleness. Reconcile
// then asks only for what is missing.
func (a *am) adopt(ctx context.Context, resp *hadooppb.RegisterApplicationMasterResponseProto) {
	a.mu.Lock()
	first := !a.adopted
	a.adopted = true
	a.mu.Unlock()
	if !first {
		return // a re-registration (RM restart or failover): nothing is handed over again
	}
	var st *book.State
	if a.cfg.State != nil {
		c, cancel := context.WithTimeout(ctx, 30*time.Second)
		data, err := a.cfg.State.LoadState(c)
		cancel()
		switch {
		case errors.Is(err, book.ErrNoState):
		case err != nil:
			a.log.WithError(err).Warn("am: the previous attempt's state could not be read; starting from the running containers only")
		default:
			if st, err = book.DecodeState(data); err != nil {
				a.log.WithError(err).Warn("am: starting from the running containers only")
			}
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, nt := range resp.GetNmTokensFromPreviousAttempts() {
		node := yarnrpc.NodeAddress(nt.GetNodeId())
		if err := a.cfg.NM.SetToken(node, yarnrpc.TokenFromProto(nt.GetToken())); err != nil {
			a.log.WithError(err).WithField("node", node).Warn("am: unusable NMToken from the previous attempt")
		}
	}
	prev := resp.GetContainersFromPreviousAttempts()
	if st == nil && len(prev) == 0 {
		return
	}
	var adopted []string
	for _, c := range prev {
		id := yarnrpc.FormatContainerID(c.GetId())
		if a.rec.Get(id) != nil {
			continue
		}
		t := a.rec.Adopted(id, yarnrpc.NodeAddress(c.GetNodeId()), contract.Capability(yarnrpc.ResourceAmounts(c.GetResource())), c.GetId())
		if st != nil {
			t.Infos = st.Infos[id]
		}
		adopted = append(adopted, id)
	}
	if st != nil {
		for _, e := range st.Events {
			e.ID = 0
			a.events.Add(e)
		}
		if job := a.book.Want.Count(); a.book.Want.Restore(st.Instances) {
			a.log.WithFields(logrus.Fields{"job": job, "declared": st.Instances}).Info("am: the requirement the driver declared carries over")
		}
		a.rec.RestoreCounts(st)
		a.policy.Restore(st.Policy)
		for _, n := range a.policy.Excluded() {
			a.book.Excl.Exclude(n)
		}
		if len(st.Sick) > 0 && a.book.Sick == nil {
			a.book.Sick = book.SickGPUs{}
		}
		for node, uuids := range st.Sick {
			for _, u := range uuids {
				a.book.Sick.Sick(node, u)
			}
		}
		if g := st.GivenBack; g != nil {
			a.book.Idle.RestoreGiven(*g)
		}
	}
	ev := events.AMRestarted(a.cfg.Attempt, adopted, st != nil)
	a.log.WithFields(logrus.Fields{"adopted": len(adopted), "state": st != nil}).Info("am: " + ev.Message)
	a.events.Add(ev)
}

// saveState writes the durable state if it changed since the last save.
func (a *am) saveState(ctx context.Context) {
	if a.cfg.State == nil {
		return
	}
	a.mu.Lock()
	last := a.events.LastID()
	if last == a.savedAt {
		a.mu.Unlock()
		return
	}
	s := a.book.State(&a.rec, a.policy, a.cfg.Attempt, a.events.Latest(book.StateEvents), a.cfg.Now())
	a.mu.Unlock()
	data, err := book.EncodeState(s)
	if err == nil {
		c, cancel := context.WithTimeout(ctx, 10*time.Second)
		err = a.cfg.State.SaveState(c, data)
		cancel()
	}
	if err != nil {
		a.log.WithError(err).Warn("am: could not save the AM's state for a later attempt")
		return
	}
	a.mu.Lock()
	a.savedAt = last
	a.mu.Unlock()
}

// stateXAttr is the extended attribute of the staging directory that holds the state
// (user.yarn-am.state).
const stateXAttr = "yarn-am.state"

// xattrState is a stateStore in an extended attribute of the staging directory.
type xattrState struct {
	nn  *yarnrpc.NameNodeClient
	dir string
}

func (x xattrState) LoadState(ctx context.Context) ([]byte, error) {
	data, err := x.nn.GetXAttr(ctx, x.dir, stateXAttr)
	if errors.Is(err, yarnrpc.ErrNoXAttr) {
		return nil, book.ErrNoState
	}
	return data, err
}

func (x xattrState) SaveState(ctx context.Context, data []byte) error {
	return x.nn.SetXAttr(ctx, x.dir, stateXAttr, data)
}

// LoadState and SaveState make the staging directory the AM's stateStore.
func (s *tokenStaging) LoadState(ctx context.Context) ([]byte, error) {
	return xattrState{s.nn, s.dir.Path}.LoadState(ctx)
}

// SaveState: see LoadState.
func (s *tokenStaging) SaveState(ctx context.Context, data []byte) error {
	return xattrState{s.nn, s.dir.Path}.SaveState(ctx, data)
}

// LoadState and SaveState make the staging directory the AM's stateStore (through a NameNode
// connection of our own: colinmarc/hdfs has no extended attributes).
func (s *staging) LoadState(ctx context.Context) ([]byte, error) {
	if s.nn == nil {
		return nil, errors.New("the staging directory was opened without a NameNode connection for the AM's state")
	}
	return xattrState{s.nn, s.dir.Path}.LoadState(ctx)
}

// SaveState: see LoadState.
func (s *staging) SaveState(ctx context.Context, data []byte) error {
	if s.nn == nil {
		return errors.New("the staging directory was opened without a NameNode connection for the AM's state")
	}
	return xattrState{s.nn, s.dir.Path}.SaveState(ctx, data)
}
