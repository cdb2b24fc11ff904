package contract

import (
	"fmt"
	"sort"
	"time"
)

// AMState is the AM's state in GET /api/v1/status: STARTING, RUNNING, FINISHING, then its final
// status (or SHUTDOWN).
type AMState string

// AM states before the final status.
const (
	StateStarting  AMState = "STARTING"
	StateRunning   AMState = "RUNNING"
	StateFinishing AMState = "FINISHING"
	// StateShutdown: the ResourceManager told the AM to shut down (AM_SHUTDOWN: it no longer knows
	// the attempt); the AM stops without unregistering.
	StateShutdown AMState = "SHUTDOWN"
)

// FinalStatus is how the application ends (the status of finishApplicationMaster).
type FinalStatus string

// Final statuses.
const (
	Succeeded FinalStatus = "SUCCEEDED"
	Failed    FinalStatus = "FAILED"
	Killed    FinalStatus = "KILLED"
)

// Status is the body of GET /api/v1/status.
type Status struct {
	App         string      `json:"app"`
	State       AMState     `json:"state"` // STARTING, RUNNING, FINISHING, SUCCEEDED, FAILED, KILLED
	Requirement Requirement `json:"requirement"`
	Counts      Counts      `json:"counts"`
	// Containers lists every active container and the latest finished ones (yarn-am am
	// --finished-history); Counts counts them all.
	Containers []ContainerStatus `json:"containers"`
	// FinishedNotListed is how many finished containers Containers leaves out (older than the
	// latest --finished-history).
	FinishedNotListed int    `json:"finishedNotListed,omitempty"`
	Diagnostics       string `json:"diagnostics"`
	// DriverStderrTail is the last lines of the driver's stderr when it exited non-zero, secrets
	// redacted; served only to readers with the secret over HTTPS (docs/running.md#the-workers-own-error).
	DriverStderrTail string `json:"driverStderrTail,omitempty"`
	// ExcludedNodes are the nodes excluded for this application, sorted: after repeated failures,
	// and those that lost a TaskExecutor (docs/running.md#liveness) until they are healthy again.
	ExcludedNodes []string `json:"excludedNodes,omitempty"`
	// Exclusions says why each of ExcludedNodes is excluded, in the same order.
	Exclusions []NodeExclusion `json:"exclusions,omitempty"`
	// Events are the latest events (at most StatusEvents), oldest first.
	Events []Event `json:"events,omitempty"`
	// Gang is the current gang round (taskexecutor.gang; absent for other applications).
	Gang *GangStatus `json:"gang,omitempty"`
	// SecureAPI is the AM's HTTPS API, https://host:port/api/v1/: the only place that accepts the
	// application secret (writes, reports, tokens). Its certificate is issued by the application's
	// authority (TLSCACertAlias).
	SecureAPI string `json:"secureAPI,omitempty"`
	// Links are the job's framework's pages (a Flink job's web UI): status and the web page show them.
	Links []Link `json:"links,omitempty"`
	// Now is the AM's clock when the document was made and Started when the AM attempt started: the
	// web UI's timeline measures from them, not from the browser's clock.
	Now     time.Time `json:"now,omitzero"`
	Started time.Time `json:"started,omitzero"`
	// Asks are the container requests still pending, with when each was first sent.
	Asks []AskStatus `json:"asks,omitempty"`
	// Nodes are the cluster's running nodes that have any of the job's device types (the types it
	// asks for besides memory-mb and vcores, e.g. yarn.io/gpu), with their capacity and use of those
	// types, from the RM's node reports as of NodesAt (listed while the status is being read, at most
	// every 10 s; absent when the AM cannot list the nodes or the job asks for no device).
	Nodes   []NodeStatus `json:"nodes,omitempty"`
	NodesAt time.Time    `json:"nodesAt,omitzero"`
	// GPUUsage is the job's GPU time so far (absent for a job that holds no GPU).
	GPUUsage *GPUUsage `json:"gpuUsage,omitempty"`
	// Framework is what the job's framework says of its own work (a Flink job's id, state,
	// parallelism, last checkpoint); absent for a framework that says nothing (framework.AM.Details).
	Framework *FrameworkStatus `json:"framework,omitempty"`
}

// AskStatus is one pending container request (an allocationRequestId).
type AskStatus struct {
	ID      int64     `json:"id"`
	Pending int       `json:"pending"` // containers still wanted from it
	Since   time.Time `json:"since,omitzero"`
}

// NodeStatus is one node as the RM reports it, limited to the job's device types.
type NodeStatus struct {
	Node       string     `json:"node"` // host:port, as in ContainerStatus.Node
	Capability Capability `json:"capability"`
	Used       Capability `json:"used"` // by every application, not only this one
}

// StatusEvents is how many of the latest events GET /api/v1/status includes.
const StatusEvents = 20

// GangStatus is a gang's current round (docs/running.md#elastic-gangs).
type GangStatus struct {
	Round  int  `json:"round"`  // from 0
	Formed bool `json:"formed"` // its members were started
	// Size is how many members the round started with (its WORLD_SIZE; 0 until it formed).
	Size int `json:"size"`
	// Held counts the containers allocated and kept unstarted: the round's members until it forms,
	// then (an elastic gang) the ones the gang grows with after taskexecutor.elastic-interval.
	Held int `json:"held"`
	// MinInstances and MaxInstances bound a round's size (taskexecutor.min-instances and instances;
	// equal for a rigid gang).
	MinInstances int `json:"minInstances"`
	MaxInstances int `json:"maxInstances"`
}

// Requirement is the declared TaskExecutor requirement.
type Requirement struct {
	Instances   int        `json:"instances"`
	Resources   Capability `json:"resources"`
	MaxFailures int        `json:"maxFailures"`
	Mode        string     `json:"mode"` // batch, service, driver
	// ExternalResources maps each external resource's name (the key of ContainerStatus.Infos, e.g.
	// "gpu") to its YARN resource type ("yarn.io/gpu").
	ExternalResources map[string]string `json:"externalResources,omitempty"`
	// Note is what the job's framework said of a change it carries out itself, later (a Flink job
	// that rescales before its TaskManagers go; docs/design.md#adding-a-framework); "" otherwise.
	Note string `json:"note,omitempty"`
}

// Counts summarises the containers. Requested: asked for and not yet allocated. Allocated: accepted and
// being launched. Running: started on their NM. Stopping: being stopped because the requirement went
// down. Completed: ended, whatever the exit. Failed: the completed ones that count against
// taskexecutor.max-failures.
type Counts struct {
	Requested int `json:"requested"`
	Allocated int `json:"allocated"`
	Running   int `json:"running"`
	Stopping  int `json:"stopping,omitempty"`
	Completed int `json:"completed"`
	Failed    int `json:"failed"`
}

// Phase is where a TaskExecutor container is in its life.
type Phase string

// Phases of an accepted container.
const (
	Launching Phase = "LAUNCHING" // allocated and accepted; startContainers queued or in flight
	Running   Phase = "RUNNING"   // the NM started it
	// Stopping: the AM is stopping it because the requirement went down; it no longer counts as
	// active, and completes with -105 (killed by the AM, not a failure).
	Stopping  Phase = "STOPPING"
	Completed Phase = "COMPLETED" // it ended (see ContainerStatus.ExitStatus)
	// Held: allocated and kept but not started, until the whole gang is allocated
	// (taskexecutor.gang).
	Held Phase = "HELD"
)

// ContainerStatus is one TaskExecutor container (GET /api/v1/containers lists them).
type ContainerStatus struct {
	ID          string            `json:"id"`
	Node        string            `json:"node"`
	State       Phase             `json:"state"`
	Resources   Capability        `json:"resources"`
	Infos       map[string][]Info `json:"infos,omitempty"`
	ExitStatus  *int32            `json:"exitStatus,omitempty"`
	ExitClass   ExitClass         `json:"exitClass,omitempty"`
	Diagnostics string            `json:"diagnostics,omitempty"`
	// StderrTail is the last lines of the worker's own stderr when it exited non-zero (its launcher
	// reported them, secrets redacted; docs/running.md#the-workers-own-error). Served only to
	// readers with the secret over HTTPS; Diagnostics points to it without quoting it.
	StderrTail string `json:"stderrTail,omitempty"`
	// Rank is the container's place in its gang round (gang mode, once the round formed).
	Rank *Rendezvous `json:"rank,omitempty"`
	// PreemptionDeadline: the ResourceManager warned that it takes the container back; this is
	// when the AM expects the kill (docs/running.md#preemption).
	PreemptionDeadline time.Time `json:"preemptionDeadline,omitzero"`
	// RequestedAt: its request was first sent; AllocatedAt: the AM accepted the allocation;
	// LaunchedAt: the NodeManager started it; FinishedAt: it ended (or its start failed). Unset when
	// not known, e.g. for a container an earlier AM attempt started.
	RequestedAt time.Time `json:"requestedAt,omitzero"`
	AllocatedAt time.Time `json:"allocatedAt,omitzero"`
	LaunchedAt  time.Time `json:"launchedAt,omitzero"`
	FinishedAt  time.Time `json:"finishedAt,omitzero"`
	// GPUs are its GPUs' latest samples and means (docs/running.md#gpu-utilisation; absent when none
	// was sampled); GET /api/v1/containers/<id>/gpus serves the kept series.
	GPUs []GPUStatus `json:"gpus,omitempty"`
	// Topology is its launcher's ContainerReport.Topology: per GPU resource, the matrix of the node's
	// GPUs and the link of its set (the web UI's GPU map draws it; docs/running.md#web-ui).
	Topology map[string]GPUTopology `json:"topology,omitempty"`
}

// Bounds of the AM's HTTP API (docs/design.md#faults).
const (
	// MaxReportBytes is the largest launcher report the AM reads.
	MaxReportBytes = 64 << 10
	// MaxReportsPerContainer is how many reports the AM accepts from one container.
	MaxReportsPerContainer = 64
	// MaxRequestBytes is the largest body of any other write.
	MaxRequestBytes = 1 << 20
)

// ReportPath is appended to EnvReportURL and the container id: the launcher POSTs its
// ContainerReport to <EnvReportURL><CONTAINER_ID>/report.
const ReportPath = "/report"

// ContainerReport is the body of POST /api/v1/containers/<id>/report (the launcher's report).
type ContainerReport struct {
	Infos          map[string][]Info `json:"infos"`
	FailedResource string            `json:"failedResource,omitempty"`
	Failure        string            `json:"failure,omitempty"`
	// Port is a port that was free on the container's node (gang mode): rank 0's becomes the
	// rendezvous' MasterPort.
	Port int `json:"port,omitempty"`
	// Topology is, per GPU resource whose built-in script read one, the GPU topology it chose the set
	// from (docs/gpus.md#topology-connected-sets); at most MaxTopologyResources.
	Topology map[string]GPUTopology `json:"topology,omitempty"`
	// Exited: the worker exited, with ExitCode; sent once, before the launcher releases the
	// container's device claims, so the AM stops counting the devices as held before another
	// container of the node can claim them (the gpu-shared check, docs/running.md#events). A report
	// that carries it carries nothing else but WorkerStderr: the last lines of the worker's own stderr
	// (not the launcher's log lines) when it exited non-zero (docs/design.md#roles).
	Exited       bool   `json:"exited,omitempty"`
	WorkerStderr string `json:"workerStderr,omitempty"`
	ExitCode     int    `json:"exitCode,omitempty"`
}

// WorkerExit says r is the report of the worker's exit (a launcher before Exited sent WorkerStderr
// alone, after a non-zero exit).
func (r ContainerReport) WorkerExit() bool { return r.Exited || r.WorkerStderr != "" }

// RequirementsUpdate is the body of PUT /api/v1/requirements: the new number of TaskExecutors of the
// job's profile. Scaling down cancels pending asks first, then stops the newest TaskExecutors.
type RequirementsUpdate struct {
	Instances *int `json:"instances"`
}

// MaxInstances bounds a requirement (a typo like 10000000 should not flood the RM).
const MaxInstances = 100000

// Validate says what is wrong with u, naming the field and what would be valid.
func (u RequirementsUpdate) Validate() error {
	if u.Instances == nil {
		return fmt.Errorf(`the body needs "instances": the number of TaskExecutors wanted, e.g. {"instances": 2}`)
	}
	if *u.Instances < 0 || *u.Instances > MaxInstances {
		return fmt.Errorf(`"instances": %d: want 0..%d`, *u.Instances, MaxInstances)
	}
	return nil
}

// Info is what a worker learns about one device of an external resource: a map of properties
// (Flink's ExternalResourceInfo getKeys/getProperty). The GPU driver sets InfoIndex and, when the
// vendor tool reports one, InfoUUID.
type Info map[string]string

// Properties of a GPU's Info. The launcher's ContainerReport carries them in Infos[<resource>][i]:
// under YARN's GPU isolation every container sees its GPUs numbered from 0, so only the UUID tells
// whether two containers of one node hold the same GPU (docs/gpus.md#what-the-worker-gets).
const (
	InfoIndex = "index" // the GPU's index as the container sees it (CUDA_VISIBLE_DEVICES)
	InfoUUID  = "uuid"  // the GPU's UUID (nvidia-smi's GPU-..., rocm-smi's unique id); absent when unknown
)

// UUIDs returns the InfoUUID property of each info, "" where an info has none, in order.
func UUIDs(infos []Info) []string {
	out := make([]string, len(infos))
	for i, in := range infos {
		out[i] = in[InfoUUID]
	}
	return out
}

// Keys returns the property names of the info, sorted (Flink's ExternalResourceInfo#getKeys).
func (i Info) Keys() []string {
	keys := make([]string, 0, len(i))
	for k := range i {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Property returns the value of one property (Flink's ExternalResourceInfo#getProperty).
func (i Info) Property(key string) (string, bool) {
	v, ok := i[key]
	return v, ok
}

// NodeExclusion is one excluded node and why (Status.Exclusions).
type NodeExclusion struct {
	Node string `json:"node"`
	// Reason is ExclusionFailures or ExclusionLost.
	Reason string `json:"reason"`
}

// Reasons of a node exclusion.
const (
	// ExclusionFailures: TaskExecutors failed on the node repeatedly (or it lacks what the job needs);
	// node-exclusion-timeout lifts it.
	ExclusionFailures = "repeated-failures"
	// ExclusionLost: a TaskExecutor on the node was lost (its NodeManager did not answer); lifted
	// when the RM reports the node RUNNING or its NodeManager answers again.
	ExclusionLost = "lost-taskexecutor"
)

// Link is a page of a job's framework that status, the API and the web page show (framework.AM.Links).
type Link struct {
	Name string `json:"name"`           // what it is, shown before the URL ("Flink UI")
	URL  string `json:"url"`            // http(s)://...
	Note string `json:"note,omitempty"` // shown after the URL
}
