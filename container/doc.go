// Package container holds, in sub-packages cut by the process they run in, the logic of yarn-am's
// processes besides the ApplicationMaster (package am):
//
//   - container/client: client-side submission: login (Session), the pre-flight against the live
//     cluster, staging to HDFS, the AM's launch context and credentials, stage-and-submit, the
//     attached follow view, status, cluster and kill-and-wait;
//   - container/launcher: the in-container launcher that `yarn-am launch` runs in every TaskExecutor:
//     resource discovery, the worker's environment and info file, the report to the AM, the job's
//     framework's PrepareWorker, the worker process and its signals;
//   - container/logs: `yarn-am logs`: aggregated container logs (TFile and IFile, the directory
//     layouts of Hadoop 3.1 to 3.4) and live ones from the NodeManagers' web services.
//
// What these processes agree on (environment names, staged files, exit codes, quoting, the HTTP
// documents) is in package contract, one floor below; the job file is package jobfile, and the
// workload frameworks are behind package framework (docs/design.md#floors).
package container
