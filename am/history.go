package am

import "github.com/yarn-am/yarn-am/am/contract"

// This file bounds the AM's records of finished containers. A long-running service that keeps
// replacing TaskExecutors would otherwise keep a record of every container it ever started. Active
// containers are always recorded; of the finished ones the latest Config.FinishedHistory are, for
// Status and the UI. The counts of finished, succeeded and failed containers are counters, and
// Reconcile gets the dropped ones' share as Observed.Forgotten, so nothing it decides depends on
// which records are still there. (The failure policy's window and rate keep their own records:
// Policy.RecordExit.) Methods ending in Locked run with a.mu held.

// finishedLocked counts a container that just finished and records it among the finished ones,
// dropping the oldest record beyond Config.FinishedHistory.
func (a *AM) finishedLocked(t *tracked) {
	t.token = nil
	a.completedN++
	switch {
	case t.Exit.Class == contract.ExitSucceeded:
		a.succeededN++
	case t.Exit.Class.Counts():
		a.failedN++
	}
	a.finished = append(a.finished, t)
	for len(a.finished) > a.cfg.FinishedHistory {
		old := a.finished[0]
		a.finished[0] = nil // the backing array must not keep it alive
		a.finished = a.finished[1:]
		a.forgetLocked(old)
	}
}

// forgetLocked drops a finished container's record, keeping what Reconcile needs of it.
func (a *AM) forgetLocked(t *tracked) {
	a.forgotten.add(t.Exit)
	delete(a.containers, t.ID)
	t.forgotten = true
	a.seqDirty = true
}

// compactLocked removes forgotten containers from seq, in one pass however many were dropped.
func (a *AM) compactLocked() {
	if !a.seqDirty {
		return
	}
	kept := a.seq[:0]
	for _, t := range a.seq {
		if !t.forgotten {
			kept = append(kept, t)
		}
	}
	clear(a.seq[len(kept):])
	a.seq = kept
	a.seqDirty = false
}
