package flink

import (
	"os"
	"syscall"
)

// endWithParent asks the kernel for a SIGTERM to this process when its parent (the AM) dies
// (prctl PR_SET_PDEATHSIG), and sends it at once when the parent is already gone (the AM died before
// the call: this process was handed to init). A failure leaves the JobManager as before.
func endWithParent() {
	ppid := os.Getppid()
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_PDEATHSIG, uintptr(syscall.SIGTERM), 0); errno != 0 {
		return
	}
	if os.Getppid() != ppid {
		_ = syscall.Kill(os.Getpid(), syscall.SIGTERM)
	}
}
