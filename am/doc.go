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
//   - classify.go: container exit statuses → classes (DESIGN §4) and whether they count as failures.
//   - am.go: the loop around Reconcile that does the I/O: register, allocate with response_id, fast and
//     slow heartbeats, AM-RM token rollover, re-registration after ApplicationMasterNotRegistered,
//     a bounded pool of NM launches, completion tracking, unregistration, staging cleanup.
//   - driver.go: driver mode (a user program in the AM container decides the final status).
//   - api.go: the HTTP API (status, the launcher's report).
//   - launchctx.go: the TaskExecutors' launch context (local resources, env, command, credentials).
//   - staging.go: the staging directory on HDFS (manifest, staged files, deletion).
//
// Seams: the RM, NM and Cleaner interfaces (yarnrpc.AMClient, yarnrpc.NMClient and *Staging in
// production, fakes or rpctest servers in tests); Spec is the declared requirement that the driver
// API's PUT requirements will change; the HTTP mux in Handler is where events (SSE), the web UI and
// /metrics are added.
package am
