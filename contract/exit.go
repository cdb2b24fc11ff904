package contract

// Exit codes of `yarn-am launch` when the worker's own code cannot be passed on. They are above the
// range workers commonly use and below 128 (128+N means "killed by signal N"), so the AM can tell a
// launcher failure from a worker failure by the container's exit status alone, and YARN shows them.
const (
	// LauncherDiscoveryFailed: a resource driver could not deliver (too few GPUs, script failed or
	// timed out). The worker was NOT started; stderr has a line starting with DiscoveryFailedPrefix.
	LauncherDiscoveryFailed = 90
	// LauncherConfigError: the external-resource configuration (job file, flink-conf, -D) is invalid,
	// or the command line is. The worker was not started.
	LauncherConfigError = 91
	// LauncherWorkerStartFailed: the worker command could not be started (not found, not executable)
	// or the resource info file could not be written.
	LauncherWorkerStartFailed = 92
)

// DiscoveryFailedPrefix starts the stderr line that says why discovery failed, so the AM (and a user
// reading the container's stderr) can find it: `yarn-am launch: discovery failed for resource "gpu": ...`.
const DiscoveryFailedPrefix = "yarn-am launch: discovery failed for resource "

// YARN's container exit statuses (ContainerStatusProto.exit_status) other than the process's own
// code. docs/design.md#wire-facts says which count against the worker.
const (
	ExitStatusSuccess                    = 0
	ExitStatusInvalid                    = -1000 // the NodeManager did not know the exit status
	ExitStatusAborted                    = -100  // released by the AM, or its node was lost
	ExitStatusDisksFailed                = -101
	ExitStatusPreempted                  = -102
	ExitStatusKilledExceededVMem         = -103
	ExitStatusKilledExceededPMem         = -104
	ExitStatusKilledByAppMaster          = -105
	ExitStatusKilledByResourceManager    = -106
	ExitStatusKilledAfterAppCompletion   = -107
	ExitStatusKilledByContainerScheduler = -108
	ExitStatusKilledForExcessLogs        = -109 // Hadoop 3.3+
)

// ExitClass says why a TaskExecutor container ended: whose fault it was and whether it counts against
// taskexecutor.max-failures (Counts).
type ExitClass string

// Exit classes. The launcher's own exit codes (90, 91, 92) get classes of their own so the user sees
// "discovery failed" rather than "exit code 90".
const (
	ExitSucceeded         ExitClass = "succeeded"           // exit 0
	ExitFailed            ExitClass = "failed"              // the worker exited non-zero
	ExitDiscoveryFailed   ExitClass = "discovery-failed"    // launcher exit 90: too few devices, script failed
	ExitConfigError       ExitClass = "config-error"        // launcher exit 91: invalid external-resource configuration
	ExitStartFailed       ExitClass = "start-failed"        // launcher exit 92: the worker command could not start
	ExitMemoryExceeded    ExitClass = "memory-exceeded"     // -103 (virtual) / -104 (physical)
	ExitExcessLogs        ExitClass = "excess-logs"         // -109
	ExitLaunchFailed      ExitClass = "launch-failed"       // the NodeManager refused startContainers
	ExitPreempted         ExitClass = "preempted"           // -102
	ExitAborted           ExitClass = "aborted"             // -100: released, or its node was lost
	ExitDisksFailed       ExitClass = "disks-failed"        // -101
	ExitKilledByAM        ExitClass = "killed-by-am"        // -105
	ExitKilledByRM        ExitClass = "killed-by-rm"        // -106
	ExitKilledAfterFinish ExitClass = "killed-after-finish" // -107
	ExitKilledByScheduler ExitClass = "killed-by-scheduler" // -108
	ExitInvalid           ExitClass = "invalid"             // -1000: the NM did not know the exit status
)

// Counts reports whether the class counts against taskexecutor.max-failures: the worker's (or its
// configuration's) fault. Preemption, lost nodes and disks, and kills by the AM or the RM do not.
func (c ExitClass) Counts() bool {
	switch c {
	case ExitFailed, ExitDiscoveryFailed, ExitConfigError, ExitStartFailed, ExitMemoryExceeded,
		ExitExcessLogs, ExitLaunchFailed, ExitInvalid:
		return true
	}
	return false
}

// Exit codes of every yarn-am command (the launcher's own 90-92 above stay as they are: YARN shows
// them as the container's exit status). docs/running.md has the table; each command's usage names the
// codes it uses.
const (
	// ExitOK: the command did what was asked (for submit: the application SUCCEEDED, or --detach
	// submitted it).
	ExitOK = 0
	// ExitAppFailed: the application failed or was killed (submit while following), or an operation
	// on the cluster failed for a reason of its own (kill could not kill; discovery failed).
	ExitAppFailed = 1
	// ExitUsage: bad flags or arguments (unknown flag, extra or missing argument, a flag value of the
	// wrong form, flags that exclude each other). Nothing was read or sent.
	ExitUsage = 2
	// ExitInvalidInput: the input is wrong (job file, external-resource keys, flink-conf, -D, --name,
	// --queue, the environment such as HADOOP_CONF_DIR, a local file such as --keytab or KRB5_CONFIG
	// that is missing or unreadable). Found before any network use.
	ExitInvalidInput = 3
	// ExitUnreachable: the cluster could not be asked: connection refused, name not resolved, timed
	// out (--timeout), a login the cluster refused.
	ExitUnreachable = 4
	// ExitRejected: the cluster answered no: the job does not fit (resource types, maximum
	// allocation, node capacities, unknown queue), or the ResourceManager refused the request.
	ExitRejected = 5
	// ExitInterrupted: SIGINT/SIGTERM (128+2).
	ExitInterrupted = 130
)
