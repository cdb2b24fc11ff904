package contract

import "time"

// Preemption warnings (docs/running.md#preemption): the ResourceManager names the containers it
// is about to take back in an allocate response (PreemptionMessage), and kills them
// yarn.resourcemanager.monitor.capacity.preemption.max_wait_before_kill later. The AM turns that into
// a PreemptionNotice per container; each launcher long-polls for its own and hands it to the worker
// as PreemptionFileName and a signal (taskexecutor.preemption-signal).

// NoticesPath is appended to EnvReportURL and the container id: GET <EnvReportURL><id>/notices with
// "Authorization: Bearer <secret>" answers 200 with the container's PreemptionNotice once it is
// warned, at once if it already is, else 204 after at most MaxNoticeWait (the "maxWait" query parameter,
// a Go duration, asks for less); 404 when the container is not a TaskExecutor of this application.
const NoticesPath = "/notices"

// NoticeWaitParam is the query parameter of NoticesPath that bounds the long poll.
const NoticeWaitParam = "maxWait"

// MaxNoticeWait bounds one long poll of NoticesPath; DefaultNoticeWait is what the launcher asks for.
const (
	MaxNoticeWait     = 60 * time.Second
	DefaultNoticeWait = 30 * time.Second
)

// DefaultPreemptionWait is the CapacityScheduler's default
// yarn.resourcemanager.monitor.capacity.preemption.max_wait_before_kill (15 s): the AM's deadline
// when the site files it was given do not set the key.
const DefaultPreemptionWait = 15 * time.Second

// PreemptionWaitKey is the ResourceManager's setting the AM reads the wait from, in milliseconds.
const PreemptionWaitKey = "yarn.resourcemanager.monitor.capacity.preemption.max_wait_before_kill"

// PreemptionNotice is the body of a 200 from NoticesPath, the content of PreemptionFileName and the
// preemption-warning event's deadline.
type PreemptionNotice struct {
	// Container is the container the notice is for.
	Container string `json:"container"`
	// Containers are the application's containers the ResourceManager named in its warning: the
	// container itself, or, in a gang, possibly other ranks only (the whole round is warned, since
	// the gang restarts when any rank is taken).
	Containers []string `json:"containers"`
	// WarnedAt is when the AM read the warning; Deadline is WarnedAt plus the wait the AM knows
	// (PreemptionWaitKey from its site files, else DefaultPreemptionWait). The ResourceManager's own
	// setting may differ: the deadline is an estimate, not a promise.
	WarnedAt time.Time `json:"warnedAt"`
	Deadline time.Time `json:"deadline"`
	// Round is the gang round the warning ended (gang mode only).
	Round *int `json:"round,omitempty"`
	// Reason is NoticeIdleGPURelease when the AM itself gives the container back for its idle GPUs
	// (taskexecutor.idle-gpu-release), absent for the ResourceManager's preemption.
	Reason string `json:"reason,omitempty"`
}

// NoticeIdleGPURelease is PreemptionNotice.Reason when the AM releases a container whose GPUs stayed
// idle (docs/gpus.md#idle-gpus-given-back): Deadline is when the AM releases it.
const NoticeIdleGPURelease = "idle-gpu-release"

// The worker's side of a notice.
const (
	// PreemptionFileName is the notice as JSON in the container's working directory, written
	// (atomically, mode 0600) when the warning arrives; EnvPreemptionFile holds its absolute path
	// from the worker's start, before the file exists.
	PreemptionFileName = "preemption.json"
	EnvPreemptionFile  = "YARN_AM_PREEMPTION_FILE"
	// EnvPreemptionSignal is taskexecutor.preemption-signal, set by the AM in every TaskExecutor's
	// environment: the signal the launcher sends the worker on a notice (a name such as SIGUSR1, or
	// PreemptionSignalNone).
	EnvPreemptionSignal     = "YARN_AM_PREEMPTION_SIGNAL"
	DefaultPreemptionSignal = "SIGUSR1"
	PreemptionSignalNone    = "none"
)

// PreemptionSignals are the valid values of taskexecutor.preemption-signal besides
// PreemptionSignalNone: signals a worker can catch and that YARN does not use to stop a container.
var PreemptionSignals = []string{"SIGUSR1", "SIGUSR2", "SIGHUP", "SIGINT", "SIGWINCH", "SIGURG"}
