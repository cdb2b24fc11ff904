package am

import (
	"fmt"
	"sort"
	"strings"

	"github.com/yarn-am/yarn-am/container/contract"
)

// CheckAsk compares the TaskExecutor capability with what the RM said at registration: the resource
// types it knows (nil: not sent, not checked) and its maximum allocation. It returns why the ask can
// never be satisfied ("" if it can), so the AM fails at once with a reason instead of waiting forever
// or being refused at every heartbeat.
func CheckAsk(want contract.Capability, types []string, maximum contract.Capability) string {
	var problems []string
	keys := make([]string, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	known := map[string]bool{"memory-mb": true, "vcores": true}
	for _, t := range types {
		known[t] = true
	}
	for _, k := range keys {
		if want[k] <= 0 {
			continue
		}
		if len(types) > 0 && !known[k] {
			sorted := append([]string(nil), types...)
			sort.Strings(sorted)
			problems = append(problems, fmt.Sprintf("resource type %s is not defined on this cluster (it knows %s); check external-resource.<name>.yarn.config-key",
				k, strings.Join(sorted, ", ")))
			continue
		}
		if m, ok := maximum[k]; ok && len(maximum) > 0 && want[k] > m {
			problems = append(problems, fmt.Sprintf("a TaskExecutor asks for %s=%d but the cluster's maximum allocation is %d", k, want[k], m))
		}
	}
	return strings.Join(problems, "; ")
}
