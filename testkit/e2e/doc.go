//go:build integration

// Package e2e holds the helpers the end-to-end tests of more than one package share (build tag
// integration, as their tests): am's (package am_test) and Flink's (framework/flink, package
// flink_test). They drive the real bin/yarn-am (YARN_AM_BIN, testkit/itest) against the mini cluster
// of the environment (make minicluster-up; source .minicluster/env) and read the outcome through
// yarn-am's own commands, the ResourceManager, HDFS and the NodeManagers' log directories.
//
// Files:
//
//   - cli.go: the yarn-am binary run as a user would (YarnAM, SubmitDetached, Status, WaitFor,
//     KillQuietly) and what they return (Result, StatusDoc); the GPU coordination directory of the
//     cluster the tests run on (CoordinationDir).
//   - cluster.go: the AM submitted without yarn-am submit, straight through the ResourceManager and
//     HDFS (MiniCluster, Cluster.Submit, App), its logs, reports and status.
//   - api.go, events.go: the AM's HTTP address once registered (Cluster.PlainBase), a driver-API
//     client of its HTTPS API (Cluster.Driver) and its event stream recorded (Recorder).
//   - rm.go: the ResourceManager's report of an application (RMReport).
//   - logs.go, procs.go: the containers' stdout and stderr (ContainerLogs) and their processes
//     (ProcsOfContainer).
//   - gpuutil.go: the status' GPU samples (GPUUtilStatus) and a plain HTTP read (HTTPGet).
//   - quickstart.go: the quick-start pages read block by block and their commands run from the
//     repository's root (QSBlocks, QSPageCommands, QSRun, QSLogSections).
//   - chromium.go: Debian's chromium for the web UI tests (ChromiumPath, UpdateShotEnv).
//   - preemption.go (build tag preemption too): the status' events as the preemption tests read them
//     (AMEvents).
package e2e
