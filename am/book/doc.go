// Package book is the ApplicationMaster's bookkeeping (package am): what it remembers between
// heartbeats, each concern a type whose verbs are the only writers of its fields. The AM decides
// nothing here that package decision (am/decision) decides, and does no I/O here: book imports
// nothing of am, and am holds one Book and calls its verbs.
//
// # Files
//
// One concept each; every non-test file of the package is listed here (TestDocNamesEveryFile).
//
//   - book.go: Book, one value of each type below but Records (the AM holds those beside it), New,
//     and the verbs that tie its concerns together: a plan's moment and input (Moment, Tick, Observed, Inputs,
//     Settled, Planned, WouldAsk) and the next heartbeat's time (Interval), a TaskExecutor's end
//     judged (Judge), the count declared (Declare), the durable state gathered (State) and the
//     gauges' values (Gauges).
//   - records.go: Records, the containers the AM accepted (Container: what it needs to launch and
//     stop one, and the marks the AM's other bookkeeping leaves on it), with a vocabulary of
//     transitions that return the events to emit (Accepted, Adopted, StartHeld, ReleasedHeld,
//     Launched, LaunchFailed, Stopping, StoppedBeforeStart, Completed, Ended, Reported) and the
//     application's progress (Progress); bounded: every
//     active container and the latest history finished ones are kept, older ones dropped with their
//     counts kept (Forgotten), so a long-running service does not grow without limit.
//   - want.go: Want, how many TaskExecutors the AM wants: the one place that decides the count, fed
//     by its sources (the job file, a framework's demand, an earlier attempt, `yarn-am scale`, a
//     framework's Scale, an idle release) through its verbs (NewWant, Restore, Set; Book.Declare); the
//     spec Reconcile gets and the requirement the API shows (Spec, Requirement).
//   - asks.go: Asks, the outstanding asks, what is still to send of them, when each was first sent
//     and the next allocationRequestId (Apply a plan, MarkSent, Registered, ResendAll, CancelAll).
//   - exclusions.go: Exclusions, the blacklist additions and removals still to send (Exclude, Lift,
//     Next, Drain), and the status's list of excluded nodes with why (ExclusionStatus).
//   - end.go: End, how the application comes to its end: the AM finishing, the failure policy's
//     verdict (Finish, Fail, Failed, Ending).
//   - judge.go: Verdict, what the failure policy made of a TaskExecutor's end (Book.Judge): the
//     nodes it excluded (NodeLacksEvent, LacksText) and the application's end.
//   - nodes.go: Nodes, the memory of the RM's node listings: the status document's node capacities
//     (listed only while the status is read, at most every NodesRefresh: Due, Listed, Failed) and
//     when locality may ask again after a failure (SpreadDue, SpreadFailed); an allocate's node
//     reports read (NodeUpdate).
//   - idle.go: Idle, the memory of taskexecutor.idle-gpu-release: a container's idle spell judged
//     (Judge: kept with an event once per spell, or its release warned of, the notices set), the
//     warned container and its deadline, the framework's give-back in flight and its release
//     (GivingBack, GiveBackRefused, ScaledDown), the idle spells said to be kept, and the GPU time
//     given back (Warned, Due, TakeGivingBack, Kept, Given, Retake, Hours).
//   - gpus.go: the records' GPU verbs: the GPU time the containers held (GPUHours) and no GPU held
//     by two live containers of one node (CheckSharedGPUs: the later is stopped, its end counted as
//     a failure past SharedGPUFreeStops on its node, with a gpu-shared event).
//   - locality.go: taskexecutor.locality = "spread" planned: the nodes' room for a container
//     (RoomsOf), an ask spread over the hosts with room (PlanLocality) and its node-local, rack and
//     "*" requests (LocalityRequests, RacksOf), what the containers hold and the excluded hosts
//     (Records.Held, HostsOf), and the plain "*" request of an ask (AnyRequest).
//   - plan.go: Plans, the loop's memory between plans (new allocations, news, the restart
//     backoff, the last idle plan's inputs: PlanInputs, what identifies Reconcile's input when no
//     allocation is new), and Moment, what a plan takes from outside the book.
//   - placement.go: Placement, taskexecutor.placement's memory: whether the asks go as
//     SchedulingRequests (Request, with PlacementConstraint and TaskExecutorTag) until the
//     ResourceManager refuses them (Refused), and the nodes blacklisted for running max-per-node
//     TaskExecutors (Fill) and the asks whose rejection was said (Rejected).
//   - gang.go: Gang, gang mode's rounds (taskexecutor.gang) and its elastic gangs
//     (taskexecutor.min-instances): the round, its start, its forming and rendezvous and the wait
//     after a timeout (Begin, Start, Form, Next, NewRound, GiveUp, TimedOut, Wait, Rank; it alone
//     writes a member's rank), what time decides for an elastic round (Elastic, Carry) and the
//     status document's gang section (Status).
//   - liveness.go: Liveness, the memory of the liveness check (Heard: a launcher's message; Due,
//     Silent: the TaskExecutors to probe; Probed: a verdict; Lost: one declared lost, its node
//     excluded; LostNodesDue, NodeProbeDone, NodeBack: nodes excluded for a loss; it alone writes a
//     record's liveness marks).
//   - notices.go: Notices, the preemption notices the launchers' long polls wait for (Preempted: the
//     ResourceManager's warning; Warnable; Post: notices handed out; Changed).
//   - sick.go: SickGPUs, the GPUs of each node that read unhealthy under the job: the reading that
//     says so (Unhealthy), booked with the container's end and its gpu-unhealthy event (Read, Sick).
//   - state.go: State, the durable state a later attempt of the AM takes over, what is saved
//     (Book.State) and its encoding within MaxStateBytes (EncodeState, DecodeState).
//
// # Locking
//
// None of book's types locks anything: their verbs are bookkeeping that the AM calls with its
// mutex held (am's package doc, "Locking"), and they never block.
package book
