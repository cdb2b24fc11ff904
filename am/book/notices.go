package book

import (
	"fmt"
	"slices"
	"time"

	"github.com/yarn-am/yarn-am/am/events"
	"github.com/yarn-am/yarn-am/contract"
)

// Notices are the warnings the launchers' long polls wait for (GET /api/v1/containers/{id}/notices,
// am/preemption.go): a container's notice (Container.Notice) and the channel closed at the next
// warning. Its verbs: Warnable (who may be warned), Preempted (the ResourceManager's warnings),
// Post (notices just set are handed out), Changed. The AM's mutex guards it (package
// doc).
type Notices struct {
	// changed is closed, and replaced, when containers are warned: the long polls wait on it.
	changed chan struct{}
}

// NewNotices returns notices with no warning yet.
func NewNotices() Notices { return Notices{changed: make(chan struct{})} }

// Changed is the channel closed at the next warning.
func (n *Notices) Changed() <-chan struct{} { return n.changed }

// Post hands out the notices just set on warned: it wakes every long poll (each finds its own
// notice, or goes back to waiting). It returns the warned containers' ids and the notices' reason
// (one warning's notices share it) for the framework (config.OnPreemption).
func (n *Notices) Post(warned []*Container) (ids []string, reason string) {
	close(n.changed)
	n.changed = make(chan struct{})
	ids = make([]string, len(warned))
	for i, t := range warned {
		ids[i] = t.ID
		if t.Notice != nil {
			reason = t.Notice.Reason
		}
	}
	return ids, reason
}

// Warnable says whether t has a worker to warn: launched or being launched, not yet warned.
func Warnable(t *Container) bool {
	return t != nil && t.Notice == nil && (t.Phase == contract.Running || t.Phase == contract.Launching)
}

// Preempted books the ResourceManager's preemption warning of the containers named (either
// contract of its message, each once) at now, the kill expected wait later: every named container
// among r not warned yet, and in gang mode (gang, round: the gang's current round) every rank of
// that round with it, gets its notice (its worker checkpoints: docs/running.md#preemption). It returns the containers warned now and
// one preemption-warning event each; the AM posts the notices (Notices.Post).
func (n *Notices) Preempted(r *Records, named []string, gang bool, round int, now time.Time, wait time.Duration) (warned []*Container, evs []contract.Event) {
	var ids []string
	for _, id := range named {
		t := r.Get(id)
		if t == nil || t.Phase == contract.Completed {
			continue // released by us, already ended, or not a TaskExecutor (the AM's own container)
		}
		ids = append(ids, id)
		if Warnable(t) {
			warned = append(warned, t)
		}
	}
	if len(warned) == 0 {
		return nil, nil
	}
	var gangRound *int
	if gang {
		gangRound = &round
		for _, t := range r.All() {
			if t.Round == round && Warnable(t) && !slices.Contains(warned, t) {
				warned = append(warned, t)
			}
		}
	}
	deadline := now.Add(wait)
	for _, t := range warned {
		t.Notice = &contract.PreemptionNotice{Container: t.ID, Containers: ids, WarnedAt: now, Deadline: deadline, Round: gangRound}
		why := "the ResourceManager named it"
		if !slices.Contains(ids, t.ID) {
			why = fmt.Sprintf("a rank of its gang round %d was named", round)
		}
		evs = append(evs, events.PreemptionWarning(t.ID, t.Node, deadline, wait, why))
	}
	return warned, evs
}
