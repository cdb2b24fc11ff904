package contract

import "time"

// EventType names what happened. The values are the SSE "event:" names and the JSON "type".
type EventType string

// Event types.
const (
	EventRequested           EventType = "requested"             // containers asked for
	EventAllocated           EventType = "allocated"             // a container was allocated and accepted
	EventLaunched            EventType = "launched"              // the NM started the TaskExecutor
	EventResourceInfo        EventType = "resource-info"         // the launcher reported its devices (GPU indexes)
	EventCompleted           EventType = "completed"             // a TaskExecutor ended, with its exit class
	EventAllocationRejected  EventType = "allocation-rejected"   // the RM refused the request (key, amount, maximum)
	EventNotEnoughResources  EventType = "not-enough-resources"  // asks pending past the timeout, with evidence
	EventResourcesAvailable  EventType = "resources-available"   // a not-enough-resources condition cleared
	EventLaunchFailed        EventType = "launch-failed"         // the NM refused startContainers
	EventDiscoveryFailed     EventType = "discovery-failed"      // launcher exit 90, with the script's reason
	EventNodeExcluded        EventType = "node-excluded"         // node added to the application's blacklist
	EventNodeExclusionLifted EventType = "node-exclusion-lifted" // node removed from it after the timeout
	EventNodeUnhealthy       EventType = "node-unhealthy"        // updated_nodes: node lost, unhealthy, decommissioned
	EventPreempted           EventType = "preempted"             // a container was preempted (not counted)
	EventLost                EventType = "lost"                  // a TaskExecutor's launcher fell silent and its NodeManager does not answer for it
	EventFailureLimitReached EventType = "failure-limit-reached" // the application fails: too many failures
	EventRequirementChanged  EventType = "requirement-changed"   // PUT requirements changed the declared count
	EventFinished            EventType = "finished"              // the application's final status
	EventGap                 EventType = "gap"                   // a reader fell behind; events were dropped for it
	EventAMRestarted         EventType = "am-restarted"          // a new attempt of the AM took over the running TaskExecutors
	EventGangFormed          EventType = "gang-formed"           // every member of a gang round is allocated; they start
	EventGangRestarted       EventType = "gang-restarted"        // a gang round ended early or timed out; the next round begins
	EventRendezvous          EventType = "rendezvous"            // every rank of a gang round reported; ranks and rounds are published (rank 0's address only over HTTPS with the secret)
	EventGPUShared           EventType = "gpu-shared"            // two live containers of one node reported the same GPU UUID; the later is stopped
	EventGPUTopology         EventType = "gpu-topology"          // a container's GPUs are linked worse than the node's best set (--topology prefer took what was free)
	EventPreemptionWarning   EventType = "preemption-warning"    // the RM will take the container back by Deadline; its worker is told (docs/running.md#preemption)
	EventPlacement           EventType = "placement"             // how taskexecutor.placement is kept, a node it filled, a request the RM could not place (docs/job-file.md#placement)
)

// Severity of an event.
const (
	SeverityInfo    = "info"
	SeverityWarning = "warning"
	SeverityError   = "error"
)

// Evidence is why the AM believes the cluster cannot serve its asks: what it asks per container,
// what the cluster has in total and free per resource type, and its largest node.
type Evidence struct {
	Asked      Capability `json:"asked"`      // per container
	Pending    int        `json:"pending"`    // containers still asked for
	PendingFor string     `json:"pendingFor"` // how long nothing was allocated, e.g. "30s"
	Nodes      int        `json:"nodes"`      // running NodeManagers (of Partition)
	// Partition is taskexecutor.node-label: only its nodes are counted ("" = every node).
	Partition    string     `json:"partition,omitempty"`
	ClusterTotal Capability `json:"clusterTotal,omitempty"` // sum of every running node's capability
	ClusterFree  Capability `json:"clusterFree,omitempty"`  // total minus used
	Headroom     Capability `json:"headroom,omitempty"`     // what the scheduler says this app may still get
	LargestNode  string     `json:"largestNode,omitempty"`  // node with the most of the scarcest asked type
	LargestCap   Capability `json:"largestNodeCapability,omitempty"`
	LargestFree  Capability `json:"largestNodeFree,omitempty"`
	Source       string     `json:"source,omitempty"` // where the numbers come from ("node reports", "allocate headroom")
}

// Event is one thing that happened, with a message a user can act on. Fields other than ID, Time,
// Type, Severity and Message are set when they apply.
type Event struct {
	ID         uint64            `json:"id"`
	Time       time.Time         `json:"time"`
	Type       EventType         `json:"type"`
	Severity   string            `json:"severity"`
	Message    string            `json:"message"`
	Container  string            `json:"container,omitempty"`
	Other      string            `json:"other,omitempty"` // gpu-shared: the live container that held the GPU first
	Node       string            `json:"node,omitempty"`
	Count      int               `json:"count,omitempty"`
	Resources  Capability        `json:"resources,omitempty"`
	Infos      map[string][]Info `json:"infos,omitempty"`
	ExitStatus *int32            `json:"exitStatus,omitempty"`
	ExitClass  ExitClass         `json:"exitClass,omitempty"`
	Key        string            `json:"key,omitempty"`       // the configuration key concerned
	Requested  int64             `json:"requested,omitempty"` // amount asked for Key
	Maximum    *int64            `json:"maximum,omitempty"`   // what the cluster allows for Key
	Evidence   *Evidence         `json:"evidence,omitempty"`
	Reason     string            `json:"reason,omitempty"`
	Status     FinalStatus       `json:"status,omitempty"` // finished
	// StderrTail (completed): the last lines of the worker's own stderr, when it exited non-zero;
	// (finished) the driver's, when it exited non-zero. Served to the secret's holders only.
	StderrTail string `json:"stderrTail,omitempty"`
	// Detail is what more of the event only the secret's holders read: the addresses a framework's
	// process bound (a Flink JobManager's ports), which Message leaves out
	// (docs/security.md#what-anonymous-readers-see); the CLI prints it after the message.
	Detail string `json:"detail,omitempty"`
	// Deadline (preemption-warning): when the AM expects the ResourceManager to kill the container
	// (PreemptionNotice.Deadline).
	Deadline time.Time `json:"deadline,omitzero"`
	// Link and BestLink (gpu-topology): the worst link among the container's GPUs and that of the
	// node's best set of as many, as nvidia-smi topo -m names them (SYS, NV12).
	Link     string `json:"link,omitempty"`
	BestLink string `json:"bestLink,omitempty"`
}
