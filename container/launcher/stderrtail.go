package launcher

import (
	"context"
	"io"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/internal/stderrtail"
)

// The worker's own stderr, apart from the launcher's log lines (docs/running.md#the-workers-own-error).
// The container's stderr file holds both: the worker's output and the launcher's logrus lines. So the
// launcher passes the worker's stderr through itself: every byte goes on to the container's stderr
// (the logs stay as they were) and a bounded tail is kept, which the launcher reports to the AM when
// the worker exits non-zero. The AM shows it in the container's event, its status entry and the
// application's diagnostics instead of YARN's "Last 4096 bytes of stderr", which ends in the
// launcher's own log lines (TestWorkerStderrTailExcludesTheLaunchersLogLines).

// workerStderrWaitDelay is how long the launcher waits, after the worker exited, for the pipe of its
// stderr to close: a child the worker left running may hold it open, and must not keep the launcher
// (and so the container) from ending.
const workerStderrWaitDelay = 2 * time.Second

// workerExitReportTimeout bounds the report of the worker's exit: the container's end waits for it.
const workerExitReportTimeout = 5 * time.Second

// teeWorkerStderr returns the writer the worker's stderr goes to (dst and the tail) and the tail.
func teeWorkerStderr(dst io.Writer) (io.Writer, *stderrtail.Tail) {
	t := &stderrtail.Tail{}
	return io.MultiWriter(dst, t), t
}

// reportWorkerExit tells the AM the worker exited, with its last stderr lines when it exited
// non-zero. The launcher's device claims are released after it (launcher.go's deferred ReleaseAll):
// the AM must know the worker is gone before a new container of the node can claim its GPUs, or it
// would take the two for live holders of one GPU. A report that fails is logged (the AM still learns
// the end from YARN, and has YARN's diagnostics).
func reportWorkerExit(ctx context.Context, reporter Reporter, containerID string, code int, tail *stderrtail.Tail, log logrus.FieldLogger) {
	if containerID == "" {
		return
	}
	rep := Report{ContainerID: containerID, Exited: true, ExitCode: code}
	if code != 0 && tail != nil {
		rep.WorkerStderr = tail.Lines()
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), workerExitReportTimeout)
	defer cancel()
	if err := reporter.Report(rctx, rep); err != nil {
		log.WithError(err).Warn("yarn-am launch: reporting the worker's exit to the AM failed; the container's stderr has its last lines")
	}
}

// workerExitReport is the report body of a worker's exit.
func workerExitReport(r Report) contract.ContainerReport {
	return contract.ContainerReport{Exited: true, WorkerStderr: r.WorkerStderr, ExitCode: r.ExitCode}
}
