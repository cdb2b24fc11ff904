package hadoop

import "fmt"

// KeyPlacementHandler is the ResourceManager's key that says who handles SchedulingRequests and their
// placement constraints (Hadoop 3.1+): "disabled" (the default: none are taken),
// "placement-processor" (the RM's placement processor places them) or "scheduler" (the
// CapacityScheduler does).
const KeyPlacementHandler = "yarn.resourcemanager.placement-constraints.handler"

// Values of KeyPlacementHandler.
const (
	PlacementDisabled  = "disabled"
	PlacementProcessor = "placement-processor"
	PlacementScheduler = "scheduler"
)

// HandlerName is the handler a value of KeyPlacementHandler names ("" is YARN's default, disabled).
func HandlerName(v string) string {
	if v == "" {
		return PlacementDisabled
	}
	return v
}

// PlacementSchedulingRequests says whether an RM with handler v takes SchedulingRequests; a value
// YARN does not know is an error naming it.
func PlacementSchedulingRequests(v string) (bool, error) {
	switch HandlerName(v) {
	case PlacementDisabled:
		return false, nil
	case PlacementProcessor, PlacementScheduler:
		return true, nil
	}
	return false, fmt.Errorf("%s = %q: not a handler YARN knows; it is %q (the default), %q or %q", KeyPlacementHandler, bound(v), PlacementDisabled, PlacementProcessor, PlacementScheduler)
}

func bound(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}
