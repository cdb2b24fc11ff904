package flink

import (
	"time"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/framework/flink/flinkdist"
	"github.com/yarn-am/yarn-am/jobfile"
)

// This file is the [flink] table as a job carries it (docs/flink.md#the-flink-table): jobfile.go
// reads it into a flinkSpec, every other file reads the flinkSpec.

// flinkSpec is the [flink] table, as the job carries it (jobfile.FrameworkPart.Spec).
type flinkSpec struct {
	// Home is the Flink distribution on the client (made absolute): staged by submit as the archive
	// homeAlias. "" when Provided names it.
	Home string
	// Provided is an hdfs:// URI of an archive (.tar, .tar.gz, .tgz, .zip) that holds a Flink home,
	// localised as it is, never uploaded.
	Provided string
	// JavaHome is [flink] java-home as a JDK directory on the client (made absolute), staged as the
	// archive javaHomeAlias; JavaProvided is it as an hdfs:// archive of one, localised as it is. Both
	// "": the containers' own java (docs/flink.md#a-jdk-for-the-containers).
	JavaHome     string
	JavaProvided string
	// Jar is the job's jar: a local path (made absolute) as read on the client, its base name as read
	// in a container (StagedJob), where it is localised under that name. "" = a session cluster.
	Jar       string
	MainClass string
	Args      []string
	// Config is the job file's Flink keys: [flink.config] and the top-level external-resource keys,
	// as strings, layered over the home's configuration (docs/flink.md#configuration).
	Config map[string]string
	// Defines are the -D Flink keys (key=value, in order; already in Config): the layer over the
	// job file's that the AM hands to the JobManager and the TaskManagers, whose staged job.toml
	// lacks them (contract.EnvDefines, docs/flink.md#configuration).
	Defines []string
	// WaitForJobManager is which TaskManagers start their JVM only once the JobManager has started
	// (docs/flink.md#taskmanagers-on-the-jobmanagers-host): waitSameHost (the default),
	// waitAlways or waitNever.
	WaitForJobManager string
	// TaskManagersMode is [flink] taskmanagers, the mode that sizes the TaskManagers, not their
	// count (docs/flink.md#taskmanagers-on-demand): taskManagersFixed (the default: the job file's
	// taskexecutor.instances) or taskManagersDemand (the job's demand; the AM's book.Want counts).
	TaskManagersMode string
	// OnPreemption is what the AM asks of the job when the ResourceManager warns that it will
	// preempt one of its TaskManagers (docs/flink.md#preemption): preemptCheckpoint (the default),
	// preemptSavepoint or preemptOff.
	OnPreemption string
	// hadoopClasspath is [flink] hadoop-classpath, when HadoopClasspathSet: the Hadoop classpath's
	// entries in place of yarn.application.classpath's; none turns it off (hadoopcp.go).
	HadoopClasspath    []string
	HadoopClasspathSet bool
	// WebSubmit turns on the JobManager's jar upload and run (Flink's web.submit.enable) for a session
	// cluster; off, the default, and refused for an application cluster
	// (docs/flink.md#who-can-reach-the-jobmanager).
	WebSubmit bool
	// ClassDataSharing is [flink] class-data-sharing (default true): the JVMs map a class-data-sharing
	// archive of the home's classes, made by the first run (docs/flink.md#class-data-sharing).
	ClassDataSharing bool
	// JITLateC2 is [flink] jit-late-c2 (default true): the JobManager's and TaskManagers' JVMs start
	// with HotSpot's C2 thresholds raised (flinkdist.LateC2Flags, docs/flink.md#the-jit-at-start).
	JITLateC2 bool
	// InternalTLS is [flink] internal-tls (default true): the job's internal connections (RPC, blob
	// server, data exchange) under mutual TLS with certificates of the application's authority
	// (internaltls.go, docs/flink.md#who-can-reach-the-jobmanager).
	InternalTLS bool
	// RESTWithoutClientAuth is [flink] rest-tls-without-client-auth (default false): the job accepts
	// its own REST TLS (security.ssl.rest.enabled) without client authentication, which leaves the
	// JobManager's REST API open to anyone who reaches its port (docs/flink.md#your-own-rest-tls);
	// without it check refuses that.
	RESTWithoutClientAuth bool
	// JobManagerRestarts and JobManagerRestartWindow are [flink] jobmanager-restarts (default 3; 0:
	// off) and jobmanager-restart-window (default 1h): how often a lost JobManager of an application
	// cluster is started again in place (restart.go, docs/flink.md#a-jobmanager-restarted-in-place).
	JobManagerRestarts      int
	JobManagerRestartWindow time.Duration
	// ProgressTimeout, ProgressOff and ProgressRestart are [flink] progress-timeout (0: the default,
	// by the checkpoint interval; ProgressOff: "off") and progress-restart (progress.go,
	// docs/flink.md#a-job-that-stops-making-progress).
	ProgressTimeout time.Duration
	ProgressOff     bool
	ProgressRestart bool
	// SavepointInterval and SavepointsKept are [flink] savepoint-interval (0: off, the default) and
	// savepoints-kept (default 3): a savepoint of the running job every interval, the oldest beyond
	// the count deleted (savepoints.go, docs/flink.md#savepoints-on-a-schedule).
	SavepointInterval time.Duration
	SavepointsKept    int
	// TokenRefresh is [flink] token-refresh (default 30s): with a keytab, how often the JobManager
	// reads the AM's new delegation tokens again and hands them to its TaskManagers (tokens.go,
	// docs/flink.md#tokens-past-their-lifetime).
	TokenRefresh time.Duration
	// Logs is [flink] log-max-size and log-max-files: how the JobManager's and TaskManagers' log,
	// stdout and stderr files roll (logroll.go, docs/flink.md#logs-that-roll).
	Logs flinkdist.LogRoll
	// Autoscale is [flink] autoscale and its bounds and pacing (autoscale.go,
	// docs/flink.md#autoscaling).
	Autoscale autoscaleSpec
}

// autoscaleSpec is the autoscaler's part of the [flink] table (autoscale.go reads it).
type autoscaleSpec struct {
	// Mode is [flink] autoscale: autoscaleOff, autoscaleRecommend or autoscaleOn.
	Mode string
	// Utilisation is the busy fraction each vertex is sized for (autoscale-utilisation, 0 < u <= 1);
	// Band is how far its measured busy fraction may stray on either side before it is rescaled
	// (autoscale-band).
	Utilisation, Band float64
	// Min and Max bound every vertex's parallelism (autoscale-min-parallelism, default 1;
	// autoscale-max-parallelism, 0: the vertex's max parallelism and the slots the queue holds).
	Min, Max int
	// Window is how long the metrics are averaged before a decision (autoscale-window);
	// Stabilise, how long after a rescale its metrics are not used (autoscale-stabilisation);
	// Grace, how long a lower parallelism must be wanted before it is applied
	// (autoscale-scale-down-grace); CatchUp, the time a source's backlog is to be cleared in
	// (autoscale-catch-up).
	Window, Stabilise, Grace, CatchUp time.Duration
	// MaxStep is the most one decision multiplies or divides a vertex's parallelism by
	// (autoscale-max-step, at least 1).
	MaxStep float64
}

// The values of [flink] checkpoint-on-preemption.
const (
	preemptCheckpoint = "checkpoint" // a checkpoint, which Flink's restart restores
	preemptSavepoint  = "savepoint"  // a savepoint in state.savepoints.dir, the user's to restore
	preemptOff        = "off"
)

// preemptValues are the valid values of [flink] checkpoint-on-preemption, the default first.
var preemptValues = []string{preemptCheckpoint, preemptSavepoint, preemptOff}

// The values of [flink] wait-for-jobmanager.
const (
	waitSameHost = "same-host" // the TaskManagers on the JobManager's host: they share its CPUs
	waitAlways   = "always"
	waitNever    = "never"
)

// waitValues are the valid values of [flink] wait-for-jobmanager, the default first.
var waitValues = []string{waitSameHost, waitAlways, waitNever}

// Names in a Flink job's containers.
const (
	// homeAlias is the directory the Flink home is localised as, in the AM's and every
	// TaskExecutor's working directory.
	homeAlias = "flink"
	// taskManagerCommand is every TaskExecutor's command in a Flink job.
	taskManagerCommand = "./" + contract.StagedBinary + " flink-taskmanager"
	// jobManagerCommand is the AM's driver in a Flink job.
	jobManagerCommand = "./" + contract.StagedBinary + " flink-jobmanager"
	// amShareMB is what the AM keeps of [am] memory for itself; the JobManager's process size
	// is the rest.
	amShareMB = 256
	// minAMMemoryMB is the smallest [am] memory of a Flink job: a 768 MiB JobManager
	// (docs/flink.md#memory) and the AM's share.
	minAMMemoryMB = 768 + amShareMB
)

// keyRestore is Flink's key of the savepoint or checkpoint a job starts from, which [flink] restore
// sets (docs/flink.md#restoring-from-a-savepoint).
const keyRestore = "execution.savepoint.path"

// specOf is a job's [flink] table as ReadTable read it, with the -D Flink keys; nil when the job is not
// a Flink job.
func specOf(j *jobfile.Job) *flinkSpec {
	if j == nil || j.Framework == nil {
		return nil
	}
	s, ok := j.Framework.Spec.(*flinkSpec)
	if !ok {
		return nil
	}
	s.Defines = j.Framework.Defines
	return s
}
