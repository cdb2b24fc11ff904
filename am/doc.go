// Package am is yarn-am's ApplicationMaster: it registers with the ResourceManager, keeps the declared
// number of TaskExecutor containers (memory, vcores and every external resource such as yarn.io/gpu)
// running or done, launches `yarn-am launch -- <command>` in each on its NodeManager, classifies how
// containers end, serves the driver API, and unregisters with the final status.
//
// Files, one concept each:
//
//   - reconcile.go: Reconcile, a pure function from desired state (Spec) and observed state (asks,
//     containers, new allocations) to actions (asks to send, allocations to launch or release, the
//     outcome). Matching by allocationRequestId, checking every resource type (Fits), the failure
//     limit and batch/service/driver completion live here and are unit-tested without I/O.
//   - classify.go: container exit statuses → classes (docs/design.md#wire-facts) and whether they count as failures.
//   - am.go: the loop around Reconcile that does the I/O: register, allocate with response_id, fast and
//     slow heartbeats, AM-RM token rollover, re-registration after ApplicationMasterNotRegistered,
//     a bounded pool of NM launches, completion tracking, unregistration, staging cleanup.
//   - records.go: the bookkeeping of accepted containers with a vocabulary (accepted, launched,
//     launchFailed, stopping, completed, reported) whose transitions return the events to emit; bounded:
//     every active container and the latest Config.FinishedHistory
//     finished ones are kept, older ones dropped with their counts kept (Observed.Forgotten), so a
//     long-running service does not grow without limit.
//   - driver.go: driver mode (a user program in the AM container decides the final status).
//   - api.go: the HTTP API (status, containers, requirements, the launcher's report) on one mux with
//     the event stream, the status page and /metrics.
//   - events.go: typed events with user-facing messages; EventLog, a bounded ring with increasing ids
//     whose subscriptions never block the loop (a reader that falls behind gets a "gap" event).
//   - sse.go: GET /api/v1/events as Server-Sent Events (resumable) or a JSON array.
//   - policy.go: the failure policy, pure and clock-free: failure rate over a sliding window, restart
//     backoff, per-node exclusion, the pending timeout behind not-enough-resources events.
//     policyflags.go: its AM flags (container/jobfile reads the job file's [policy] table into them).
//   - surface.go: the loop's side of it: events from what the loop sees, policy decisions turned into
//     blacklist updates and outcomes, the pending check, gauges, SetRequirements.
//   - evidence.go: the evidence of a shortage (node reports) and the configuration key behind a
//     rejected request. requirements.go: PUT requirements' body and ScaleDown (newest first).
//   - metrics.go: Prometheus collectors on a registry of the AM's own. ui.go + ui/: the status page
//     (summary, device map, timeline, containers, events), drawn in the browser from GET
//     /api/v1/status. nodes.go: the status document's node capacities (node reports, listed only
//     while the status is read, at most every NodesRefresh).
//   - launchctx.go: the TaskExecutors' launch context (local resources, env, command, credentials).
//   - staging.go: the staging directory on HDFS (manifest, staged files, deletion).
//
// Seams: the RM, NM, Cleaner and ClusterNodes interfaces (yarnrpc.AMClient, yarnrpc.NMClient,
// *Staging and yarnrpc.ApplicationClient in production, fakes or rpctest servers in tests); Config.Now
// for the clock; Config.Events and Config.Metrics to share or inspect them; Spec.Instances is the
// declared requirement that PUT /api/v1/requirements changes. Drivers written in Go use the
// am/driverclient package.
//
// Kerberized clusters (tokens.go, tokens_refresh.go): StagingStore is the staging seam (*Staging with
// SIMPLE, *TokenStaging with the HDFS delegation token); TokenRefresher (with a shipped keytab) renews
// and replaces delegation tokens and feeds Config.LaunchTokens and GET /api/v1/tokens.
package am
