package am

import "fmt"

// ExitClass says why a TaskExecutor container ended, in the classes of DESIGN §4: whose fault it was
// and whether it counts against taskexecutor.max-failures.
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
	launcherDiscoveryCode           = 90
	launcherConfigCode              = 91
	launcherStartCode               = 92
)

// Classify maps a container exit status (ContainerStatusProto.exit_status) to its class.
func Classify(exit int32) ExitClass {
	switch exit {
	case 0:
		return ExitSucceeded
	case -100:
		return ExitAborted
	case -101:
		return ExitDisksFailed
	case -102:
		return ExitPreempted
	case -103, -104:
		return ExitMemoryExceeded
	case -105:
		return ExitKilledByAM
	case -106:
		return ExitKilledByRM
	case -107:
		return ExitKilledAfterFinish
	case -108:
		return ExitKilledByScheduler
	case -109:
		return ExitExcessLogs
	case -1000:
		return ExitInvalid
	case launcherDiscoveryCode:
		return ExitDiscoveryFailed
	case launcherConfigCode:
		return ExitConfigError
	case launcherStartCode:
		return ExitStartFailed
	}
	return ExitFailed
}

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

// Describe says in words a user can act on how a container ended.
func Describe(exit int32, class ExitClass) string {
	switch class {
	case ExitSucceeded:
		return "exited with code 0"
	case ExitFailed:
		if exit > 128 && exit < 160 {
			return fmt.Sprintf("exited with code %d (killed by signal %d)", exit, exit-128)
		}
		return fmt.Sprintf("exited with code %d", exit)
	case ExitDiscoveryFailed:
		return "exited with code 90: resource discovery failed, the worker was not started (see the container's stderr)"
	case ExitConfigError:
		return "exited with code 91: invalid external-resource configuration, the worker was not started"
	case ExitStartFailed:
		return "exited with code 92: the worker command could not be started (not found or not executable?)"
	case ExitMemoryExceeded:
		if exit == -103 {
			return "exit status -103: killed for exceeding its virtual memory limit; raise taskexecutor.memory or the cluster's yarn.nodemanager.vmem-pmem-ratio"
		}
		return "exit status -104: killed for exceeding its physical memory limit; raise taskexecutor.memory"
	case ExitExcessLogs:
		return "exit status -109: killed for writing too many logs"
	case ExitLaunchFailed:
		return "the NodeManager could not start the container"
	case ExitPreempted:
		return "exit status -102: preempted by the scheduler (not counted as a failure)"
	case ExitAborted:
		return "exit status -100: aborted (released, or its node was lost; not counted as a failure)"
	case ExitDisksFailed:
		return "exit status -101: the node's disks failed (not counted as a failure)"
	case ExitKilledByAM:
		return "exit status -105: stopped by the ApplicationMaster"
	case ExitKilledByRM:
		return "exit status -106: killed by the ResourceManager (not counted as a failure)"
	case ExitKilledAfterFinish:
		return "exit status -107: killed after the application finished"
	case ExitKilledByScheduler:
		return "exit status -108: killed by the container scheduler (not counted as a failure)"
	case ExitInvalid:
		return "exit status -1000: the NodeManager did not report an exit status"
	}
	return fmt.Sprintf("exit status %d", exit)
}
