package contract

import "time"

// The launcher's liveness messages (docs/running.md#liveness): every launcher POSTs an empty body to
// EnvReportURL + its CONTAINER_ID + AlivePath every LivenessInterval, with the application secret,
// over the same pinned HTTPS channel as its report. The AM declares a TaskExecutor lost only when
// its launcher has been silent for the job's taskexecutor.liveness-timeout and its NodeManager does
// not answer or no longer knows the container.
const (
	AlivePath = "/alive"
	// LivenessInterval is how often a launcher says it is alive.
	LivenessInterval = 5 * time.Second
	// DefaultLivenessTimeout is taskexecutor.liveness-timeout's default: six missed messages.
	DefaultLivenessTimeout = 30 * time.Second
	// MinLivenessTimeout is the shortest taskexecutor.liveness-timeout: two intervals, so that one
	// late message is never a loss.
	MinLivenessTimeout = 2 * LivenessInterval
)
