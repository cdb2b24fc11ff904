package web

import (
	"context"
	"errors"
	"net/http"

	"github.com/yarn-am/yarn-am/contract"
)

// State is what the HTTP side reads and changes of the AM. Package am's *am implements it; every
// method takes the AM's lock itself and returns copies, so no handler touches the AM's fields or its
// mutex.
type State interface {
	// Status is the status document as the secret's holder sees it; the handlers hide from anonymous
	// readers what visibility.go says.
	Status() contract.Status
	// WantNodes says that the status is being read for the page's device map: the AM lists the
	// cluster's nodes in the background when its listing is stale. It never blocks.
	WantNodes()
	// Requirement is the declared requirement (GET /api/v1/requirements).
	Requirement() contract.Requirement
	// SetRequirements declares the number of TaskExecutors; by says who asked, for the event. An
	// error is a refusal (409).
	SetRequirements(instances int, by string) (contract.Requirement, error)
	// Report books a launcher's report; ErrUnknownContainer or ErrNotRunning (wrapped) refuse it.
	Report(id string, r contract.ContainerReport) error
	// Unknown returns those of ids that are not (or no longer) containers of the AM.
	Unknown(ids []string) []string
	// Alive books a launcher's liveness message; false if the container is not one of the AM's.
	Alive(id string) bool
	// Notice returns container id's preemption notice (nil while it is not warned), a channel closed
	// at the next warning, and whether the container is one of the AM's.
	Notice(id string) (*contract.PreemptionNotice, <-chan struct{}, bool)
	// Rendezvous is what the AM knows of container id's gang rendezvous.
	Rendezvous(id string) Rendezvous
}

// Errors of State.Report: the report endpoint answers 404 to ErrUnknownContainer and 409 to
// ErrNotRunning.
var (
	ErrUnknownContainer = errors.New("not a TaskExecutor of this application")
	ErrNotRunning       = errors.New("not running")
)

// Rendezvous is one container's view of the gang (State.Rendezvous); the rendezvous endpoint turns
// it into its answer and status code.
type Rendezvous struct {
	Gang    bool // the application runs a gang (else 409)
	Member  bool // the container is a TaskExecutor of this application (else 404)
	Current bool // it is part of the current round (else 410)
	Round   int  // the current round
	// Rank is the container's rendezvous, nil while ranks are missing (202); Reported of Size ranks
	// of the round have reported then.
	Rank           *contract.Rendezvous
	Reported, Size int
}

// EventLog is the AM's event log as the event stream reads it; safe for concurrent use.
type EventLog interface {
	// Latest returns the newest n events.
	Latest(n int) []contract.Event
	// Since returns the events after id after, at most limit of them (all if limit <= 0).
	Since(after uint64, limit int) []contract.Event
	// Subscribe follows the log from after on.
	Subscribe(after uint64) Subscription
}

// Subscription is one reader following the event log.
type Subscription interface {
	// Next waits for up to max events, or returns ctx's error.
	Next(ctx context.Context, max int) ([]contract.Event, error)
	Close()
}

// Tokens are the TaskExecutors' current delegation tokens (package am's *tokenRefresher), served on
// GET /api/v1/tokens.
type Tokens interface {
	LaunchTokens() []byte // HDTS bytes
}

// Backend is everything one AM serves: its state, its event log and its /metrics.
type Backend struct {
	State   State
	Events  EventLog
	Metrics http.Handler
}
