package am

import (
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/resources"
)

// checkAsk is the pre-flight of the TaskExecutors at registration: the client's check
// (resources.Preflight, with the same wording) against what the RM said, the resource types it knows
// (nil: not sent, not checked) and its maximum allocation (nil: not sent). keys name the configuration
// key of each external resource type. It returns why the ask can never be satisfied (a
// *resources.PreflightError; nil if it can), so the AM fails at once with a reason instead of waiting
// forever or being refused at every heartbeat.
func checkAsk(want contract.Capability, keys configKeys, types []string, maximum contract.Capability) error {
	return resources.Preflight(resources.Ask{TaskExecutor: want, AmountKeys: keys},
		resources.ClusterInfo{ResourceTypes: types, Maximum: maximum})
}
