// Package container is everything about a YARN container's life that is not the AM's bookkeeping: the
// job file schema (job.go), the launch contexts and staging of files to HDFS, and the in-container
// launcher (launcher.go) that `yarn-am launch` runs in every TaskExecutor container.
//
// The launcher (DESIGN.md §1, §7): it runs each configured external-resource driver for its amount
// (DiscoverAll), writes external-resources.json and the worker's environment (WorkerEnv), reports to
// the AM, starts the worker with stdin/stdout/stderr passed through, forwards SIGTERM/SIGINT/SIGHUP,
// releases the drivers' device claims when the worker exits (ReleaseAll) and exits with the worker's
// code. When it cannot pass the worker's code on it uses the documented Exit* codes
// (ExitDiscoveryFailed, ExitConfigError, ExitWorkerStartFailed); a worker is never started without the
// devices it asked for.
//
// Seams: drivers come in as resources.Driver values (tests use fakes); the report to the AM goes
// through the Reporter interface (NopReporter by default; the AM's HTTP reporter plugs in there).
//
// Kerberized clusters: DialHDFSKerberos stages with a yarnrpc.Kerberos login, DelegationTokens gathers
// the application's RM and HDFS tokens for AMOptions.Tokens, StageKeytab ships a keytab to the AM only,
// and TokenFileRefresher keeps a running container's token file in step with the AM's tokens.
package container
