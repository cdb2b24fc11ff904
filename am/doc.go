// Package am is yarn-am's ApplicationMaster: it registers with the ResourceManager, keeps the declared
// number of TaskExecutor containers (memory, vcores and every external resource such as yarn.io/gpu)
// running or done, launches `yarn-am launch -- <command>` in each on its NodeManager, classifies how
// containers end, serves the driver API, and unregisters with the final status.
//
// # Files
//
// One concept each; every non-test file of the package is listed here (TestDocNamesEveryFile), doc.go
// itself being this overview and the locking rule.
//
// The decision, pure and unit-tested without I/O, is package decision (am/decision), which imports
// nothing of am: Reconcile (desired state, Spec, and observed state, Observed, to a Plan of actions:
// asks, launches, releases, the outcome), the exit classes (Classify, Describe), which TaskExecutors
// a scale-down stops, the elastic gang's and the gang's restart rules, a failed container's diagnostics line, and the
// failure policy (Policy, PolicyConfig: rate, backoff, node exclusion, the pending timeout). The AM
// holds one Policy under mu like its other state types. Beside the decision, in am:
//
//   - preflight.go: checkAsk, the registration's check that the ask can ever be satisfied: the one
//     pre-flight of resources.Preflight, worded as the client's.
//
// The AM's bookkeeping that needs nothing of the AM is package book (am/book), which imports
// nothing of am: the container records (book.Records of book.Container, the AM's field rec: their
// transitions return the events to emit; every active container and the latest
// config.FinishedHistory finished ones are kept; their GPU time and the check that no GPU is held by
// two live containers of one node, book.Records.CheckSharedGPUs), the ask table (book.Asks), the blacklist changes
// still to send (book.Exclusions), the node view (book.Nodes), the locality planners
// (book.PlanLocality), the count of TaskExecutors wanted (book.Want), a plan's inputs
// (book.PlanInputs), the nodes' sick GPUs (book.SickGPUs), the memory of the idle GPUs' release
// (book.Idle), the placement's SchedulingRequests and full nodes (book.Placement), the gang's rounds
// (book.Gang), the liveness check's memory (book.Liveness), the preemption notices (book.Notices)
// and the durable state's encoding (book.State). The AM holds one book.Book under mu.
// The AM's other state and its bookkeeping, each a type with verbs:
//
//   - am.go: the am struct (which fields mu guards), config (the locality values beside it), its
//     seams (rm, nm, cleaner, stateStore) and newAM, and the helpers the other files use, kept here
//     so that they reach down to it: waker (Run's wake-up, poke), callCtx, setState. Events go
//     straight to the event log (a.events.Add, AddAll).
//   - gpuusage.go: the GPU samples of the liveness messages into the book (am/gpuuse), the status,
//     GET /api/v1/containers/<id>/gpus, the per-GPU gauges' values and the final diagnostics' GPU
//     time; a sample's unhealthy GPU (book.Unhealthy) and idle spell (book.Idle.Judge) acted on.
//   - gpuhealth.go: a sample that reads a container's GPU unhealthy ends and replaces the container
//     (gpu-unhealthy), and taskexecutor.sick-gpus-per-node sick GPUs exclude their node (book.SickGPUs).
//   - gang.go: gang mode (taskexecutor.gang) and its elastic gangs (taskexecutor.min-instances),
//     whose rounds and their verbs are book.Gang: the AM gives up a round not complete by the gang
//     timeout (checkGang: the held containers released, the shortage's evidence) and answers a
//     member's rendezvous (Rendezvous).
//   - liveness.go: the AM's side of the liveness check, whose memory is book.Liveness: the probes of
//     the NodeManagers outside the lock (askNM), and a silent TaskExecutor on a NodeManager that
//     does not answer for it declared lost (docs/running.md#liveness).
//   - apiaddr.go: the attempt's HTTPS address written into the staging directory for TaskExecutors kept
//     from an earlier attempt (publishAPIAddress).
//   - durable.go: the durable state a later attempt of the AM takes over: the AM's side (adopt,
//     saving, the stores); what is saved and its encoding are book's (Book.State, book.State).
//   - frameworkstate.go: the framework's own state across attempts (framework.AMStart.State), an
//     extended attribute of the staging directory beside the AM's; and the queue's headroom it
//     reads (framework.AMStart.Headroom).
//   - frameworkpublished.go: what the framework published for its TaskExecutors
//     (framework.AMStart.Publish: a Flink JobManager's RPC address once bound), served by the API.
//   - preemption.go: the ResourceManager's preemption warnings: each named container (a gang's
//     whole round) warned once (book.Notices), with an event, its deadline in the status, and the
//     launchers' long poll for the notice (docs/running.md#preemption).
//   - idlerelease.go: taskexecutor.idle-gpu-release: a container whose every GPU stayed idle is
//     warned through the same notices and released by lowering the declared count (an elastic gang
//     above its minimum) or through the framework's GiveBack (a demand-sized job: its work rescales,
//     then the framework's Scale names the container), or kept with one event per idle spell; the
//     GPU-hours given back (docs/gpus.md#idle-gpus-given-back). book.Idle remembers all of it.
//
// The I/O around them:
//
//   - loop.go: Run (the loop around Reconcile) and its timing: fast and slow heartbeats
//     (book.Interval), acting on news at once (book.Plans), the AM's state.
//   - allocate.go: one heartbeat: Reconcile on the current state (its input made by the book:
//     Book.Tick, Observed, Inputs, Settled, Planned; with taskexecutor.locality = "spread" a dry run,
//     Book.WouldAsk, says whether to ask how much of a new ask fits on the nodes now) and the
//     bookkeeping half of its plan, the launches queued and a start's answer booked (bookStart); the
//     allocate request (response_id, asks, releases, blacklist) and its response applied
//     (allocations, completions, updated nodes, AM-RM and NM tokens, AM_RESYNC, AM_SHUTDOWN).
//   - register.go: register (and resync after AM_RESYNC or ApplicationMasterNotRegistered), finish
//     (unregistration with the outcome), a kill, and the staging directory's deletion.
//   - launch.go: launchPool, the bounded pool of NodeManager launches and the stops, with its own
//     NodeManager interface, queue and stops in the background; the AM books a start's answer
//     (allocate.go's bookStart).
//   - locality.go: taskexecutor.locality = "spread": the node listing the node-local requests need
//     (nodeLister.rooms; book.PlanLocality plans them).
//   - placement.go: taskexecutor.placement: the check at the start and the ResourceManager's refusal
//     of SchedulingRequests read; the SchedulingRequests, the rejected ones asked again and the
//     blacklist of full nodes where the AM keeps max-per-node itself are book.Placement's.
//   - nodes.go: nodeLister, the cluster's nodes listed: the one bounded, measured getClusterNodes
//     call (list, running), and the refresher that lists the nodes while the status is read (wanted,
//     refresher); book.Nodes, under mu, remembers its answers.
//   - surface.go: the loop's side of failures: a TaskExecutor's end told and judged (book.Judge:
//     exclusions, the application's end, book.End), the pending check, SetRequirements and Scale
//     (book.Declare).
//   - evidence.go: the evidence of a shortage (node reports) and the configuration key behind a
//     rejected request.
//   - diagnostics.go: a container's end said once: the worker's stderr tail its launcher reported, the
//     launcher's discovery failure, text cut at a word, a node that lacks the job's devices excluded.
//   - driver.go: driver mode (a user program in the AM container decides the final status):
//     driverConfig, and driverProc, the driver's process with its own state (started, restarted in
//     place, stopped at the failure limit, its stderr tail, its outcome).
//   - launchctx.go: the TaskExecutors' launch context (local resources, env, command, credentials).
//   - staging.go: the staging directory on HDFS (manifest, staged files, deletion).
//   - tokens.go, tokens_refresh.go: Kerberized clusters. stagingStore is the staging seam (*staging
//     with SIMPLE, *tokenStaging with the HDFS delegation token); tokenRefresher (with a shipped
//     keytab) renews and replaces delegation tokens and feeds config.LaunchTokens and GET
//     /api/v1/tokens.
//   - process.go: RunProcess, the `yarn-am am` process (flags, environment, connections, HTTP server).
//   - processflags.go: ProcessFlags, the `yarn-am am` command line checked (bad usage) and turned into
//     ProcessOptions with the staged job read once (invalid input), before RunProcess registers.
//   - tls.go: the AM's HTTPS certificate from the application's authority.
//   - workersecrets.go: a framework's secrets for its processes (framework.AM.WorkerSecrets, a Flink
//     job's internal TLS certificate) into the driver's and the TaskExecutors' credentials and the
//     token refresher's.
//   - frameworkwatch.go: the job's framework's details (framework.AM.Details, a Flink job's state,
//     parallelism and checkpoints), asked every contract.FrameworkDetailsInterval from a goroutine
//     of its own outside mu and kept, bounded, for the status; the framework's events into the log.
//
// What users and drivers see:
//
//   - api.go: the AM's side of its HTTP API, which package web (am/web) serves: *am implements
//     web.State (Status, Report, Requirement, Unknown, WantNodes here; Alive, Notice, Rendezvous,
//     SetRequirements beside their state; a report's GPU shared with another live container stops
//     the later, with a gpu-shared event) and Web hands web the state, the events and /metrics;
//     EventsHandler serves an events.Log on its own (the clients' tests).
//   - metrics.go: Prometheus collectors on a registry of the AM's own (served by web at /metrics),
//     the per-GPU gauges among them.
//
// The events are package events (am/events), which imports nothing of am but the decision's types:
// typed events with user-facing messages, and events.Log, a bounded ring with increasing ids whose
// subscriptions never block the loop (a reader that falls behind gets a "gap" event).
//
// The HTTP side (routes, auth, what anonymous readers see, the event stream, the status page, the
// servers and their connection bounds) is package web, which knows nothing of am.
//
// # Locking
//
// One mutex, am.mu, guards the AM's mutable state: every field declared below it in the am struct,
// which includes records, the book (the ask table, the exclusion list, the node view), the failure
// policy's memory, the gang's rounds and the liveness check's memory. Those state types lock nothing
// themselves: their verbs are bookkeeping that the AM calls with mu held. The rule:
//
//   - A method whose name ends in Locked runs with mu held and never takes it; every other method
//     takes it itself, in scoped blocks or with a deferred unlock, and never releases a lock it did
//     not take.
//   - mu is never held across a call that can block: an RM, NM, HDFS, stateStore or node-listing call,
//     a channel send (the launch queue is fed after mu is released), or Run's wait. A function that
//     needs both (heartbeat, register, finish, checkPending, checkGang, nodeRooms) copies what it needs
//     under mu, calls without it, and takes mu again to book the answer.
//   - Fields above mu in the struct are set by newAM and only read afterwards, or are safe for
//     concurrent use themselves (the events.Log, the metrics, channels, the WaitGroup); savedTime
//     belongs to Run's goroutine.
//
// Goroutines: Run's (the loop: reconcile, heartbeat, checks, saving the state), the launch workers
// (launch.go, config.LaunchWorkers of them), the node refresher (nodes.go), the stops in the
// background (launch.go, launchPool.stopInBackground), the driver's watchers (driver.go, with a leaf mutex of its
// own, driverProc.mu), the framework's details
// (frameworkwatch.go, with a leaf mutex of its own) and the HTTP handlers
// (package web, through web.State). All of them meet only under mu or through the channels and the
// event log.
//
// Lock orders, the only three: am.mu → events.Log's mu (events are emitted under mu), am.mu →
// driverProc.mu (the status and the plan ask the driver's state with mu held; the driver takes no
// other lock) and reportCounter.mu → am.mu (web's report counter asks Unknown while it holds its own
// mutex). No other lock is taken with mu held.
//
// # Seams
//
// The rm, nm, cleaner and clusterNodes interfaces (yarnrpc.AMClient, yarnrpc.NMClient, *staging and
// yarnrpc.ApplicationClient in production, fakes or rpctest servers in tests); config.Now for the
// clock; config.Events and config.Metrics to share or inspect them. The job's requirement at the
// start is config.Spec.Instances; the declared count that PUT /api/v1/requirements, a framework's
// Scale and an earlier attempt's state change is the AM's state (book.Want, with who set it), not
// configuration. Drivers written in Go use the am/driverclient package.
//
// # Exported
//
// Only what is used outside the package: RunProcess and ProcessOptions with the defaults of its
// flags (DefaultHeartbeatFast, DefaultHeartbeatSlow, DefaultLaunchWorkers, DefaultFinishedHistory)
// for cmd/yarn-am, and EventsHandler, which the clients' tests (container/client, am/driverclient)
// serve an events.Log through. Everything else, the am struct and newAM included, is the package's
// own; the events and the decision's types are packages events and decision.
package am
