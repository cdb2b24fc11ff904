// Package events is the AM's event log (docs/running.md#http-api): typed events, each with a message
// a user can act on (Requested, Allocated, Launched, Completed, NodeExcluded, GangFormed, Finished,
// ...), and Log, a bounded ring of them with increasing ids whose subscriptions never block the
// writer (a reader that falls behind gets a "gap" event).
//
// It imports nothing of package am but the decision's types an event carries (am/decision), so the
// AM's files reach it downwards. Log is safe for concurrent use and has a mutex of its own, taken
// only inside its methods: the AM emits with its own mutex held (am/doc.go, lock order AM.mu →
// Log's mu), and the HTTP side reads and subscribes without it.
package events
