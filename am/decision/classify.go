package decision

import (
	"fmt"

	"github.com/yarn-am/yarn-am/contract"
)

// classify maps a container exit status (ContainerStatusProto.exit_status) to its class.
func Classify(exit int32) contract.ExitClass {
	switch exit {
	case contract.ExitStatusSuccess:
		return contract.ExitSucceeded
	case contract.ExitStatusAborted:
		return contract.ExitAborted
	case contract.ExitStatusDisksFailed:
		return contract.ExitDisksFailed
	case contract.ExitStatusPreempted:
		return contract.ExitPreempted
	case contract.ExitStatusKilledExceededVMem, contract.ExitStatusKilledExceededPMem:
		return contract.ExitMemoryExceeded
	case contract.ExitStatusKilledByAppMaster:
		return contract.ExitKilledByAM
	case contract.ExitStatusKilledByResourceManager:
		return contract.ExitKilledByRM
	case contract.ExitStatusKilledAfterAppCompletion:
		return contract.ExitKilledAfterFinish
	case contract.ExitStatusKilledByContainerScheduler:
		return contract.ExitKilledByScheduler
	case contract.ExitStatusKilledForExcessLogs:
		return contract.ExitExcessLogs
	case contract.ExitStatusInvalid:
		return contract.ExitInvalid
	case contract.LauncherDiscoveryFailed:
		return contract.ExitDiscoveryFailed
	case contract.LauncherConfigError:
		return contract.ExitConfigError
	case contract.LauncherWorkerStartFailed:
		return contract.ExitStartFailed
	}
	return contract.ExitFailed
}

// describe says in words a user can act on how a container ended.
func Describe(exit int32, class contract.ExitClass) string {
	switch class {
	case contract.ExitSucceeded:
		return "exited with code 0"
	case contract.ExitFailed:
		if exit > 128 && exit < 160 {
			return fmt.Sprintf("exited with code %d (killed by signal %d)", exit, exit-128)
		}
		return fmt.Sprintf("exited with code %d", exit)
	case contract.ExitDiscoveryFailed:
		return "exited with code 90: resource discovery failed, the worker was not started (see the container's stderr)"
	case contract.ExitConfigError:
		return "exited with code 91: invalid external-resource configuration, the worker was not started"
	case contract.ExitStartFailed:
		return "exited with code 92: the worker command could not be started (not found or not executable?)"
	case contract.ExitMemoryExceeded:
		if exit == contract.ExitStatusKilledExceededVMem {
			return "exit status -103: killed for exceeding its virtual memory limit; raise taskexecutor.memory or the cluster's yarn.nodemanager.vmem-pmem-ratio"
		}
		return "exit status -104: killed for exceeding its physical memory limit; raise taskexecutor.memory"
	case contract.ExitExcessLogs:
		return "exit status -109: killed for writing too many logs"
	case contract.ExitLaunchFailed:
		return "the NodeManager could not start the container"
	case contract.ExitPreempted:
		return "exit status -102: preempted by the scheduler (not counted as a failure)"
	case contract.ExitAborted:
		return "exit status -100: aborted (released, or its node was lost; not counted as a failure)"
	case contract.ExitDisksFailed:
		return "exit status -101: the node's disks failed (not counted as a failure)"
	case contract.ExitKilledByAM:
		return "exit status -105: stopped by the ApplicationMaster"
	case contract.ExitKilledByRM:
		return "exit status -106: killed by the ResourceManager (not counted as a failure)"
	case contract.ExitKilledAfterFinish:
		return "exit status -107: killed after the application finished"
	case contract.ExitKilledByScheduler:
		return "exit status -108: killed by the container scheduler (not counted as a failure)"
	case contract.ExitInvalid:
		return "exit status -1000: the NodeManager did not report an exit status"
	}
	return fmt.Sprintf("exit status %d", exit)
}
