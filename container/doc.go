// Package container holds, in sub-packages cut by the process they run in, everything about a YARN
// container's life that is not the ApplicationMaster's bookkeeping:
//
//   - jobfile: the job file (job.toml) schema, loading and validation, used by the client
//     and by the AM and launchers that read the staged copy;
//   - container/client: client-side submission: login (Session), the pre-flight against the live
//     cluster, staging to HDFS, the AM's launch context and credentials, stage-and-submit, the
//     attached follow view, status, cluster and kill-and-wait;
//   - container/launcher: the in-container launcher that `yarn-am launch` runs in every TaskExecutor:
//     resource discovery, the worker's environment and info file, the report to the AM, the worker
//     process and its signals;
//   - container/logs: `yarn-am logs`: aggregated container logs (TFile and IFile, the directory
//     layouts of Hadoop 3.1 to 3.4) and live ones from the NodeManagers' web services;
//   - contract/launchctx: the one converter from the contract's manifest entries and environments to
//     YARN's launch-context protos, used by the client (for the AM) and the AM (for TaskExecutors).
//
// What these processes agree on (environment names, staged files, exit codes, quoting, the HTTP
// documents) is in package contract.
package container
