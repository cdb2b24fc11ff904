package book

import (
	"github.com/yarn-am/yarn-am/am/decision"
	"github.com/yarn-am/yarn-am/am/events"
	"github.com/yarn-am/yarn-am/contract"
)

// End is how the application is coming to its end, as far as the bookkeeping knows: the AM
// finishing (Finish: it unregisters now) and the failure policy's verdict (Fail: the first reason
// wins, Failed). While either holds, the requirement no longer changes and nothing new is asked for
// (Ending). The third way, driver mode's driver exiting, is the driver's own state. The AM's mutex
// guards it (package doc).
type End struct {
	finishing bool
	failed    *decision.Outcome
}

// Finish: the AM unregisters now.
func (e *End) Finish() { e.finishing = true }

// Fail makes the failure policy end the application with reason and returns its event; ok is
// false, and nothing changes, when the policy ended it already (the first reason wins).
func (e *End) Fail(reason string) (ev contract.Event, ok bool) {
	if e.failed != nil {
		return contract.Event{}, false
	}
	e.failed = &decision.Outcome{Status: contract.Failed, Diagnostics: reason}
	return events.FailureLimitReached(reason), true
}

// Failed is the end the failure policy decided, a copy (nil while none).
func (e *End) Failed() *decision.Outcome {
	if e.failed == nil {
		return nil
	}
	out := *e.failed
	return &out
}

// Ending says the AM is finishing or the failure policy ended the application.
func (e *End) Ending() bool { return e.finishing || e.failed != nil }
