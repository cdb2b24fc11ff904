// Package flinkdist starts Apache Flink's own processes the way Flink's scripts would, without the
// scripts (docs/flink.md): the JobManager (application or session cluster entry point) and the
// TaskManager (TaskManagerRunner) command lines from a Flink home, the merged configuration and the
// container's resources. It also reads a running JobManager's REST API (job states, registered
// TaskManagers, a failed job's root cause) for the AM's status and diagnostics.
//
// # Files
//
// Every non-test file of the package is listed here (TestDocNamesEveryFile), doc.go itself being
// this map. ground.go holds the names the files share and names nothing of the files above it
// (TestGroundNamesNothingAbove).
//
// What a process is started from:
//
//   - ground.go: the roles of Flink's processes, the Flink keys several files read, a process's
//     output kept bounded.
//   - config.go: Flink's configuration as Flink reads it (conf/config.yaml, else the legacy
//     flink-conf.yaml, else the default config.yaml flink-dist carries), layered with the job file's
//     keys and -D, and written back as the config.yaml the processes read.
//   - flink2.go: what Flink 2 changed in what a home reads: config.yaml only, and its major version.
//   - removedkeys.go: the keys Flink 2 no longer reads.
//   - home.go: a Flink home: its classpath, bash-java-utils.jar, plugins directory.
//   - keys.go: the configuration keys a Flink version declares, read from its *Options classes.
//   - java.go: the Java a Flink version needs, and the version of a JDK.
//   - memory.go: Flink's memory configuration checked against the container's size, as Flink's
//     calculator derives it.
//   - resources.go: what Flink's BashJavaUtils prints for a process (the JVM's memory flags and
//     dynamic properties), computed in Go.
//   - cds.go: the class-data-sharing archive a process maps, or writes on its first run.
//   - jit.go: the JIT flags of a process's start: HotSpot's C2 thresholds raised (jit-late-c2).
//   - logroll.go: the rolling log4j configuration of a process's logs.
//   - gpudriver.go: Flink's GPU plugin configured for the GPUs yarn-am assigned.
//   - assigned.go: the GPU indexes `yarn-am launch` assigned to a TaskExecutor container.
//   - hadoopcp.go: the cluster's Hadoop classpath: yarn.application.classpath, YARN's own default
//     when the site files leave it unset.
//   - tokenjar.go: the delegation-token jar yarn-am puts on a Flink JVM's classpath: a provider for
//     Flink's token framework that reads the token file the AM keeps current, and a receiver that hands
//     the tokens to the JVM's Hadoop user; its classes written by internal/classfile, not compiled.
//   - process.go: the JobManager and TaskManager command lines: memory flags from Flink's
//     BashJavaUtils, JVM options from env.java.opts.*, log4j, and the GPU plugin fed by the indexes
//     yarn-am assigned instead of a discovery of its own.
//   - failure.go: why a process ended before its job did, from the last exception of its log and its
//     JVM's stderr.
//
// A running JobManager's REST API:
//
//   - rest.go: the client (REST), its bounded calls, the jobs, TaskManagers and a failed job's root
//     cause.
//   - restjob.go: one job's details and its stop with a savepoint.
//   - restapplication.go: Flink 2.3's application layer (an application's status and root cause).
//   - restconfig.go: the JobManager's version and configuration.
//   - restdemand.go: the adaptive scheduler's parallelism bounds and the idle TaskManagers.
//   - restmetrics.go: the job graph's edges and its vertices' metrics aggregated over their subtasks,
//     which the AM's autoscaler measures.
//   - trigger.go: a checkpoint or savepoint of a job that goes on running.
//   - restwait.go: a job waited for, to its start and to its end (Outcome).
//   - supervise.go: an application cluster's JobManager run to its job's end, as the driver does.
//
// It imports the standard library, contract, internal/flinkconf (the one reader of Flink's
// configuration files, shared with resources) and the leaves internal/text, boundedread, stderrtail
// and classfile only, so the AM, the launcher and the client can all use it.
package flinkdist
