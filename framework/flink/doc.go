// Package flink runs Apache Flink on yarn-am (docs/flink.md#integration-design): a [flink] job's
// JobManager is the AM's driver, its TaskExecutors are Flink TaskManagers. It registers itself with
// the framework registry (framework.Register); no package but framework/builtin imports it. The
// Flink process library it drives (configuration, memory, REST, the processes) is framework/flink/flinkdist.
//
// # Files
//
// Every non-test file of the package is listed here (TestDocNamesEveryFile), doc.go itself being
// this map. The files stand on floors, so a reader can start at the bottom: the ground holds the
// package-wide names and what several features share, and names nothing of the files above it
// (TestGroundNamesNothingAbove); each feature stands on it, and framework.go and commands.go, which
// wire the features, stand at the top.
//
// The ground, which every other file may name:
//
//   - ground.go: the shared names: frameworkName, flinkFramework (the type the registry holds),
//     eventJob and a job's name in a message, flinkSetup, flinkDuration, bounded, the savepoint keys.
//   - spec.go: flinkSpec, the [flink] table as a job carries it, its values, the names in a Flink
//     job's containers, and specOf.
//   - layered.go: the job's Flink configuration as the client sees it, with where each key was set.
//   - defines.go: the environment the AM gives the driver and the TaskManagers, the -D keys encoded.
//   - kept.go: the record the AM keeps of a job across its attempts (recovery), read and encoded.
//   - livejob.go: the JobManager's one live job, and a savepoint asked again while tasks start.
//   - pack.go: a directory packed once per content into the client's private, bounded archive cache.
//
// The client's side: the job file, the pre-flight and what submit stages:
//
//   - jobfile.go: tableReader, which reads the [flink] table with each feature's reader below, and
//     the Flink keys yarn-am sets itself.
//   - check.go: preflight, the pre-flight of a [flink] job (memory, slots, keys), as the client
//     sees it, and its warnings.
//   - flink2.go: Flink 2's own rules in the pre-flight (keys it no longer reads).
//   - jar.go: the job jar's main class, read from the jar before anything is staged.
//   - ship.go: what submit stages: the Flink home's archive, the jar, a JDK.
//   - javahome.go: [flink] java-home, a JDK shipped with the job, and the java version check.
//   - jit.go: [flink] jit-late-c2, the JIT flags the JobManager's and TaskManagers' JVMs start with.
//   - cds.go: class-data sharing: the archive the first run makes, who may make one, who maps it.
//   - cdsrpc.go: the classes of Flink's RPC jar in the archive: their names from the JobManager's class-loading log, their supertypes from flink-dist's copy of the jar.
//
// The processes in the containers (the commands):
//
//   - commands.go: flink-jobmanager and flink-taskmanager, their shared start and the JobManager's
//     supervision.
//   - taskmanager.go: how a TaskManager learns the JobManager's address from the AM.
//   - bound.go: how the JobManager's bound ports become known, to the driver and then the AM.
//   - ports.go: the JobManager's ports a job may name.
//   - listening_linux.go, listening_other.go: the JVM's listening sockets, read from /proc.
//   - parentdeath_linux.go, parentdeath_other.go: the JobManager ends with its AM.
//   - privatedirs.go: the processes' files under the container's own directories, never /tmp.
//   - hadoopcp.go: the cluster's Hadoop on the processes' classpath, and their Kerberos settings.
//   - resttls.go: the JobManager's REST API closed to all but the AM (mutual TLS).
//   - userresttls.go: a job's own REST TLS, and the AM's client of it.
//   - internaltls.go: the job's internal connections under mutual TLS of the application's authority.
//   - pkcs12bound.go: a PKCS12 store's key-derivation rounds bounded before it is read.
//   - logroll.go: [flink] log-max-size and log-max-files, the rolling stdout and stderr files, and
//     the rolled-logs pattern of the job's log aggregation.
//   - tmprocess.go: the TaskManager's JVM run as flink-taskmanager's child, its output bounded.
//
// The AM's side of a running job, under framework.go, which wires it in StartAM:
//
//   - framework.go: flinkFramework's hooks (Table, Check, Stage, Driver, StartAM, Commands), the
//     seam the registry calls, and StartAM's wiring of the AM-side parts below.
//   - watch.go: the details status and the page show, and the flink-job events of what changed.
//   - proxyaccess.go: who may reach which path of the JobManager's UI and REST API through the AM.
//   - scale.go: whether a change of the number of TaskManagers is safe for the job.
//   - demand.go: TaskManagers sized from Flink's own slot demand (taskmanagers = "demand").
//   - autoscale.go: [flink] autoscale and its bounds and pacing keys, read and checked, and check's
//     rule for "on" (the demand and the adaptive scheduler).
//   - autoscaledecide.go: the autoscaler's decision from what was measured (DS2), a pure function.
//   - autoscalewatch.go: the autoscaler in the AM: the vertices' metrics read and averaged over the
//     window, each decision told as an event and in the details, and applied with "on".
//   - autoscalegauges.go: the autoscaler's gauges at the AM's /metrics.
//   - preempt.go: a checkpoint or savepoint when YARN warns of a preemption.
//   - stop.go: yarn-am stop, a stop with a savepoint.
//   - savepoints.go: savepoints on a schedule (the oldest beyond the count deleted) and yarn-am
//     savepoint's, each kept for a later start.
//   - recover.go: the latest checkpoint kept across AM attempts, and the checkpointing defaults.
//   - restorefrom.go: which checkpoint or savepoint a new JobManager starts from: the newest that
//     exists.
//   - restart.go: a lost JobManager restarted in place.
//   - progress.go: a job that stops making progress is noticed (and restarted, when asked).
//   - tokens.go: a keytab job's new delegation tokens carried to the JobManager's and TaskManagers'
//     JVMs by Flink's own token framework (token-refresh, the token jar on their classpath).
package flink
