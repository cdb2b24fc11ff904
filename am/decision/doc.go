// Package decision is the AM's reconcile decision, pure and clock-free: from the desired state (Spec)
// and the observed state (Observed: asks, containers, new allocations, what time decides for an
// elastic gang) Reconcile computes the actions (Plan: asks to send, allocations to launch, hold or
// release, containers to stop, a new round, the outcome), and the failure policy (Policy) turns exits
// and pending time into restarts, backoffs, node exclusions and not-enough-resources reports.
//
// It imports nothing of package am, so every arrow to it runs down: the AM feeds it copies of its
// state under AM.mu and books the plan it returns. Nothing here locks; a Policy belongs to one AM and
// is guarded by that AM's mutex (am/doc.go, Locking).
//
// Files: reconcile.go (Reconcile and its inputs and outputs, fits), classify.go (container exit
// statuses to classes, docs/design.md#wire-facts), requirements.go (scaleDown, newest first),
// elastic.go and gang.go (when a gang's round forms, grows, shrinks or restarts), diagnostics.go (a
// failed container's line in the application's diagnostics, cut at a word), policy.go (the failure
// policy and its snapshot for a later attempt).
package decision
