// Package flinkdist starts Apache Flink's own processes the way Flink's scripts would, without the
// scripts (docs/flink.md): the JobManager (application or session cluster entry point) and the
// TaskManager (TaskManagerRunner) command lines from a Flink home, the merged configuration and the
// container's resources. It also reads a running JobManager's REST API (job states, registered
// TaskManagers, a failed job's root cause) for the AM's status and diagnostics.
//
//   - config.go: Flink's configuration as Flink reads it (conf/config.yaml, else the legacy
//     flink-conf.yaml, else the default config.yaml flink-dist carries), layered with the job file's
//     keys and -D, and written back as the config.yaml the processes read;
//   - home.go: a Flink home: its classpath, bash-java-utils.jar, plugins directory;
//   - process.go: the JobManager and TaskManager command lines: memory flags from Flink's
//     BashJavaUtils, JVM options from env.java.opts.*, log4j, and the GPU plugin fed by the indexes
//     yarn-am assigned instead of a discovery of its own;
//   - rest.go: the JobManager's REST API;
//   - failure.go: why a process ended before its job did, from the last exception of its log and its
//     JVM's stderr;
//   - keys.go: the configuration keys a Flink version declares, read from its *Options classes;
//   - tokenjar.go: the delegation-token jar yarn-am puts on a Flink JVM's classpath: a provider for
//     Flink's token framework that reads the token file the AM keeps current, and a receiver that hands
//     the tokens to the JVM's Hadoop user; its classes written by internal/classfile, not compiled.
//
// It imports the standard library, contract, internal/flinkconf (the one reader of Flink's
// configuration files, shared with resources) and the leaves internal/text, boundedread, stderrtail
// and classfile only, so the AM, the launcher and the client can all use it.
package flinkdist
