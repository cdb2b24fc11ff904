package am

import (
	"flag"
	"fmt"
)

// PolicyFlagsUsage documents the policy flags for `yarn-am am --help` (the same names are the keys
// of the job file's [policy] table).
var PolicyFlagsUsage = fmt.Sprintf(`  --max-failure-rate N         counted TaskExecutor failures allowed within --failure-window before the
                               application fails; -1 turns the rule off (default %d)
  --failure-window DUR         sliding window of --max-failure-rate and --node-max-failures (default %s)
  --restart-backoff DUR        wait before replacing a failed TaskExecutor, doubling with each further
                               failure in the window (default %s)
  --restart-backoff-max DUR    cap of that wait (default %s)
  --node-max-failures N        failures on one node within the window that exclude the node (YARN
                               blacklist) for this application; -1 turns exclusion off (default %d)
  --node-exclusion-timeout DUR how long a node stays excluded (default %s)
  --pending-timeout DUR        containers asked for with no allocation this long → a not-enough-resources
                               event with the cluster's capacity, repeated at a doubling interval (default %s)
  --on-pending-timeout ACTION  wait (keep asking) or fail (end the application FAILED) (default %s)
  Failures that are not the worker's fault (preempted, node lost, disks failed, killed by the AM or RM)
  never count.`, DefaultMaxFailureRate, DefaultFailureWindow, DefaultRestartBackoff, DefaultRestartBackoffMax,
	DefaultNodeMaxFailures, DefaultNodeExclusionTimeout, DefaultPendingTimeout, PendingWait)

// RegisterFlags defines the policy flags on fs, storing into c (which should hold the defaults).
func (c *PolicyConfig) RegisterFlags(fs *flag.FlagSet) {
	fs.IntVar(&c.MaxFailureRate, "max-failure-rate", c.MaxFailureRate, "")
	fs.DurationVar(&c.FailureWindow, "failure-window", c.FailureWindow, "")
	fs.DurationVar(&c.RestartBackoff, "restart-backoff", c.RestartBackoff, "")
	fs.DurationVar(&c.RestartBackoffMax, "restart-backoff-max", c.RestartBackoffMax, "")
	fs.IntVar(&c.NodeMaxFailures, "node-max-failures", c.NodeMaxFailures, "")
	fs.DurationVar(&c.NodeExclusionTimeout, "node-exclusion-timeout", c.NodeExclusionTimeout, "")
	fs.DurationVar(&c.PendingTimeout, "pending-timeout", c.PendingTimeout, "")
	fs.StringVar(&c.OnPendingTimeout, "on-pending-timeout", c.OnPendingTimeout, "")
}
