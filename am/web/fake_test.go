package web

import (
	"context"
	"net/http"
	"strconv"
	"sync"

	"github.com/yarn-am/yarn-am/contract"
)

// fakeState is a State of two TaskExecutors, c1 running and c2 completed, for the tests of what is
// HTTP alone; the tests of what the AM does with a request are in package am.
type fakeState struct{}

func (fakeState) Status() contract.Status {
	return contract.Status{App: "application_1_0001", State: "RUNNING", Containers: []contract.ContainerStatus{
		{ID: "c1", Node: "n1:1", State: contract.Running}, {ID: "c2", Node: "n2:1", State: contract.Completed}}}
}
func (fakeState) WantNodes()                        {}
func (fakeState) Requirement() contract.Requirement { return contract.Requirement{Instances: 2} }
func (fakeState) SetRequirements(n int, _ string) (contract.Requirement, error) {
	return contract.Requirement{Instances: n}, nil
}
func (fakeState) Report(id string, _ contract.ContainerReport) error {
	if id != "c1" {
		return ErrUnknownContainer
	}
	return nil
}
func (fakeState) Unknown(ids []string) []string { return nil }
func (fakeState) Alive(id string) bool          { return id == "c1" }
func (fakeState) Notice(id string) (*contract.PreemptionNotice, <-chan struct{}, bool) {
	return nil, make(chan struct{}), id == "c1"
}
func (fakeState) Rendezvous(id string) Rendezvous { return Rendezvous{} }

// fakeEvents is an event log: events get increasing ids from 1, subscribers wake on each Add.
type fakeEvents struct {
	mu    sync.Mutex
	evs   []contract.Event
	added chan struct{} // closed and replaced at each Add
}

func newFakeEvents() *fakeEvents { return &fakeEvents{added: make(chan struct{})} }

func (l *fakeEvents) Add(e contract.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e.ID = uint64(len(l.evs) + 1)
	l.evs = append(l.evs, e)
	close(l.added)
	l.added = make(chan struct{})
}

func (l *fakeEvents) Latest(n int) []contract.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]contract.Event(nil), l.evs[max(0, len(l.evs)-n):]...)
}

func (l *fakeEvents) Since(after uint64, limit int) []contract.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.sinceLocked(after, limit)
}

func (l *fakeEvents) sinceLocked(after uint64, limit int) []contract.Event {
	var out []contract.Event
	for _, e := range l.evs {
		if e.ID > after && (limit <= 0 || len(out) < limit) {
			out = append(out, e)
		}
	}
	return out
}

func (l *fakeEvents) Subscribe(after uint64) Subscription { return &fakeSub{l: l, after: after} }

type fakeSub struct {
	l     *fakeEvents
	after uint64
}

func (s *fakeSub) Next(ctx context.Context, max int) ([]contract.Event, error) {
	for {
		s.l.mu.Lock()
		evs, added := s.l.sinceLocked(s.after, max), s.l.added
		s.l.mu.Unlock()
		if len(evs) > 0 {
			s.after = evs[len(evs)-1].ID
			return evs, nil
		}
		select {
		case <-added:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

func (s *fakeSub) Close() {}

// fakeBackend serves fakeState and events, with a /metrics that answers 200.
func fakeBackend(events EventLog) Backend {
	return Backend{State: fakeState{}, Events: events, Metrics: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("# metrics\n"))
	})}
}

// requested is an event for the tests of the stream.
func requested(n int) contract.Event {
	return contract.Event{Type: contract.EventRequested, Severity: contract.SeverityInfo, Count: n, Resources: contract.Capability{"yarn.io/gpu": 1, "memory-mb": 4096},
		Message: "requested " + strconv.Itoa(n) + " TaskExecutor container(s) of memory-mb=4096, yarn.io/gpu=1"}
}
