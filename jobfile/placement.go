package jobfile

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/yarn-am/yarn-am/internal/hadoop"
)

// Placement is taskexecutor.placement: where the TaskExecutors may run (docs/job-file.md#placement).
// The AM sends it to the ResourceManager as placement constraints of SchedulingRequests where the RM
// has a placement handler, and enforces MaxPerNode itself where it has none (package am,
// placement.go).
type Placement struct {
	// MaxPerNode: at most this many of the job's TaskExecutors on one node (0: no limit).
	MaxPerNode int
	// NodeAttributes: every TaskExecutor's node has each of these node attributes (YARN node
	// attributes, Hadoop 3.2+), in the order written.
	NodeAttributes []NodeAttribute
}

// Set says whether the job file sets a placement.
func (p Placement) Set() bool { return p.MaxPerNode > 0 || len(p.NodeAttributes) > 0 }

// NodeAttribute is one condition of placement.node-attributes: the node attribute Name (with its
// prefix when one was written, e.g. "rm.yarn.io/gpu_model") equals Value, or with Not differs from
// it.
type NodeAttribute struct {
	Name, Value string
	Not         bool
}

// String is the condition as the job file writes it.
func (a NodeAttribute) String() string {
	op := "="
	if a.Not {
		op = "!="
	}
	return a.Name + op + a.Value
}

// Limits of taskexecutor.placement.
const (
	maxPlacementAttributes = 16
	maxAttributePart       = 255 // the longest node attribute prefix, name or value YARN accepts
)

var (
	placementKeys = []string{"max-per-node", "node-attributes"}
	// attributeNameRe: an optional prefix (a DNS-like name and '/') and a name; attributeValueRe:
	// the value (docs/job-file.md#placement).
	attributeNameRe  = regexp.MustCompile(`^([A-Za-z0-9][A-Za-z0-9._-]*/)?[A-Za-z0-9][A-Za-z0-9_-]*$`)
	attributeValueRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)
)

// placement reads the [taskexecutor.placement] table.
func (r reader) placement(te map[string]any, add func(string, ...any)) Placement {
	if _, set := te["placement"]; !set {
		return Placement{}
	}
	t := r.table(te, "placement", "taskexecutor.placement")
	var p Placement
	for _, k := range slices.Sorted(maps.Keys(t)) {
		if !slices.Contains(placementKeys, k) {
			add("unknown key %q%s; valid keys of [taskexecutor.placement] are max-per-node, node-attributes", "taskexecutor.placement."+bounded(k),
				didYouMean("taskexecutor.placement."+k, []string{"taskexecutor.placement.max-per-node", "taskexecutor.placement.node-attributes"}))
		}
	}
	if v, ok := r.integer(t, "max-per-node", "taskexecutor.placement.max-per-node", 1, 100000, " (at most that many TaskExecutors on one node)"); ok {
		p.MaxPerNode = int(v)
	}
	attrs := r.strings(t, "node-attributes", "taskexecutor.placement.node-attributes")
	if len(attrs) > maxPlacementAttributes {
		add("taskexecutor.placement.node-attributes: %d conditions; at most %d", len(attrs), maxPlacementAttributes)
		attrs = attrs[:maxPlacementAttributes]
	}
	seen := map[string]bool{}
	for _, s := range attrs {
		a, why := parseNodeAttribute(s)
		switch {
		case why != "":
			add("taskexecutor.placement.node-attributes: %q: %s; write name=value or name!=value, e.g. \"gpu_model=H200\" or \"rm.yarn.io/os!=windows\"", bounded(s), why)
		case seen[a.Name]:
			add("taskexecutor.placement.node-attributes: %q: a second condition on node attribute %s; give each attribute once", bounded(s), a.Name)
		default:
			seen[a.Name] = true
			p.NodeAttributes = append(p.NodeAttributes, a)
		}
	}
	if _, isTable := te["placement"].(map[string]any); isTable && len(t) == 0 {
		add("taskexecutor.placement is empty: set max-per-node (e.g. max-per-node = 1) or node-attributes (e.g. [\"gpu_model=H200\"]), or remove the table")
	}
	return p
}

// parseNodeAttribute reads one placement.node-attributes condition; why says what is wrong with it.
func parseNodeAttribute(s string) (a NodeAttribute, why string) {
	name, value, found := strings.Cut(s, "!=")
	if found {
		a.Not = true
	} else if name, value, found = strings.Cut(s, "="); !found {
		return a, "no = or !="
	}
	a.Name, a.Value = strings.TrimSpace(name), strings.TrimSpace(value)
	switch {
	case a.Name == "":
		return a, "no attribute name before the operator"
	case a.Value == "":
		return a, "no value after the operator"
	case len(a.Name) > 2*maxAttributePart+1 || len(a.Value) > maxAttributePart:
		return a, "longer than YARN takes (a prefix, a name and a value of at most 255 characters each)"
	case !attributeNameRe.MatchString(a.Name):
		return a, "the attribute name is letters, digits, '_' and '-' (no '.': YARN refuses one in a name), starting with a letter or digit, after an optional prefix of letters, digits, '.', '_' and '-' ending in '/'"
	case !attributeValueRe.MatchString(a.Value):
		return a, "the value is letters, digits, '.', '_' and '-', starting with a letter or digit (one value per condition)"
	}
	return a, ""
}

// Handled says how an RM whose yarn.resourcemanager.placement-constraints.handler is handler ("" =
// YARN's default, disabled) keeps p: schedulingRequests when it takes SchedulingRequests with
// placement constraints, else the AM keeps MaxPerNode itself. It refuses what cannot be honoured:
// node attributes without a handler, a node label with one (a SchedulingRequest carries no node-label
// expression), and a handler YARN does not know (docs/job-file.md#placement).
func (p Placement) Handled(handler, nodeLabel string) (schedulingRequests bool, err error) {
	sr, err := hadoop.PlacementSchedulingRequests(handler)
	if err != nil || !p.Set() {
		return false, err
	}
	switch {
	case !sr && len(p.NodeAttributes) > 0:
		return false, fmt.Errorf("taskexecutor.placement.node-attributes = %s: the ResourceManager's %s is %q, so it takes no placement constraints and node attributes cannot be honoured; ask the cluster's administrators for the placement-processor handler, or remove node-attributes (docs/job-file.md#placement)",
			AttributeList(p.NodeAttributes), hadoop.KeyPlacementHandler, hadoop.HandlerName(handler))
	case sr && nodeLabel != "":
		return false, fmt.Errorf("taskexecutor.node-label = %q with taskexecutor.placement: the ResourceManager's %s is %q, so the TaskExecutors are asked for by SchedulingRequests, which carry no node label; remove one of the two (docs/job-file.md#placement)",
			nodeLabel, hadoop.KeyPlacementHandler, hadoop.HandlerName(handler))
	}
	return sr, nil
}

// AttributeList writes node-attribute conditions as the job file lists them: ["a=b", "c!=d"].
func AttributeList(as []NodeAttribute) string {
	q := make([]string, len(as))
	for i, a := range as {
		q[i] = fmt.Sprintf("%q", a.String())
	}
	return "[" + strings.Join(q, ", ") + "]"
}
