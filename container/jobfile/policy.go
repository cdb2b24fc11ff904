package jobfile

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// This file reads the [policy] table of a job file and turns it into the AM flags of the same names
// (the client passes them on the AM's command line, so `yarn-am am --help` documents one set of
// names for both; docs/job-file.md#the-policy-table).
//
//	[policy]
//	max-failure-rate = 10          # counted failures allowed within failure-window
//	failure-window = "5m"
//	restart-backoff = "1s"
//	restart-backoff-max = "1m"
//	node-max-failures = 3           # failures on one node within failure-window that exclude it
//	node-exclusion-timeout = "10m"
//	pending-timeout = "1m"          # asks pending without an allocation → not-enough-resources
//	on-pending-timeout = "wait"     # or "fail"

// PolicyKeys are the keys of the job file's [policy] table (and the AM flags of the same names,
// TestPolicyFlagsParseWhatPolicyArgsWrites in am).
var PolicyKeys = []string{"max-failure-rate", "failure-window", "restart-backoff", "restart-backoff-max",
	"node-max-failures", "node-exclusion-timeout", "pending-timeout", "on-pending-timeout"}

// The values of policy.on-pending-timeout (am.PendingWait and am.PendingFail).
const (
	PendingWait = "wait"
	PendingFail = "fail"
)

// PolicyArgs returns the [policy] table as AM flags ("--pending-timeout=30s", ...), sorted by key.
// Every problem names the key, its value and what is valid. A job file without [policy] gives no
// flags.
func (f *File) PolicyArgs() ([]string, error) {
	var args, problems []string
	r := reader{add: func(format string, a ...any) { problems = append(problems, sprintf(format, a...)) }}
	policy := r.table(f.doc, "policy", "policy")
	for _, k := range slices.Sorted(maps.Keys(policy)) {
		v := policy[k]
		switch k {
		case "max-failure-rate", "node-max-failures":
			n, ok := v.(int64)
			if !ok || n < -1 || n > 1000000 {
				problems = append(problems, sprintf("policy.%s = %v: want an integer from -1 (off) to 1000000", k, v))
				continue
			}
			args = append(args, fmt.Sprintf("--%s=%d", k, n))
		case "failure-window", "restart-backoff", "restart-backoff-max", "node-exclusion-timeout", "pending-timeout":
			s, ok := v.(string)
			d, err := time.ParseDuration(s)
			if !ok || err != nil || d <= 0 {
				problems = append(problems, sprintf("policy.%s = %v: want a positive duration in quotes, like \"30s\" or \"5m\"", k, v))
				continue
			}
			args = append(args, fmt.Sprintf("--%s=%s", k, d))
		case "on-pending-timeout":
			s, _ := v.(string)
			if s != PendingWait && s != PendingFail {
				problems = append(problems, sprintf("policy.on-pending-timeout = %v: want %q or %q", v, PendingWait, PendingFail))
				continue
			}
			args = append(args, "--on-pending-timeout="+s)
		default:
			problems = append(problems, sprintf("policy.%s: unknown key; valid keys are %s", k, strings.Join(PolicyKeys, ", ")))
		}
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("job file %s: %s", f.Path, strings.Join(problems, "; "))
	}
	return args, nil
}
