package contract

import "time"

// The launcher's liveness messages (docs/running.md#liveness): every launcher POSTs an empty body to
// EnvReportURL + its CONTAINER_ID + AlivePath every LivenessInterval, with the application secret,
// over the same pinned HTTPS channel as its report. The AM declares a TaskExecutor lost only when
// its launcher has been silent for the job's taskexecutor.liveness-timeout and its NodeManager does
// not answer or no longer knows the container.
const (
	AlivePath = "/alive"
	// LivenessInterval is how often a launcher says it is alive, on average: each wait is drawn within
	// LivenessJitter of it. Short, so that a lost worker is replaced within 15 s (docs/running.md#liveness); 1,000
	// launchers at this interval cost the AM little (docs/performance.md#liveness-messages).
	LivenessInterval = 2 * time.Second
	// LivenessJitter is the largest share of LivenessInterval by which one wait is drawn shorter or
	// longer: launchers that start or find a new attempt together do not post in step.
	LivenessJitter = 0.2
	// DefaultLivenessTimeout is taskexecutor.liveness-timeout's default: four jittered intervals
	// (about five messages) missed.
	DefaultLivenessTimeout = 10 * time.Second
	// MinLivenessTimeout is the shortest taskexecutor.liveness-timeout: three intervals, so that a
	// failed message and a late one are never a loss.
	MinLivenessTimeout = 3 * LivenessInterval
)
