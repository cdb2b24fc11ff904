package am

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/sirupsen/logrus"
	"google.golang.org/protobuf/proto"

	"github.com/yarn-am/yarn-am/am/book"
	"github.com/yarn-am/yarn-am/am/decision"
	"github.com/yarn-am/yarn-am/am/events"
	"github.com/yarn-am/yarn-am/am/gpuuse"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/framework"
	"github.com/yarn-am/yarn-am/jobfile"
	"github.com/yarn-am/yarn-am/yarnrpc"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// rm is what the AM needs of the ResourceManager's scheduler port (yarnrpc.AMClient).
type rm interface {
	Register(ctx context.Context, req *hadooppb.RegisterApplicationMasterRequestProto) (*hadooppb.RegisterApplicationMasterResponseProto, error)
	Allocate(ctx context.Context, req *hadooppb.AllocateRequestProto) (*hadooppb.AllocateResponseProto, error)
	Finish(ctx context.Context, req *hadooppb.FinishApplicationMasterRequestProto) (bool, error)
	SetToken(tok yarnrpc.Token) error
}

// nm is what the AM needs of the NodeManagers (yarnrpc.NMClient).
type nm interface {
	SetToken(node string, tok yarnrpc.Token) error
	StartContainers(ctx context.Context, node string, reqs ...*hadooppb.StartContainerRequestProto) (*hadooppb.StartContainersResponseProto, error)
	StopContainers(ctx context.Context, node string, ids ...*hadooppb.ContainerIdProto) (*hadooppb.StopContainersResponseProto, error)
}

// cleaner deletes the staging directory when the application ends (*staging).
type cleaner interface {
	Delete(ctx context.Context) error
}

// stateStore keeps the AM's durable state between attempts.
type stateStore interface {
	LoadState(ctx context.Context) ([]byte, error) // book.ErrNoState when there is none
	SaveState(ctx context.Context, data []byte) error
}

// Defaults of config.
const (
	DefaultHeartbeatFast = 200 * time.Millisecond
	DefaultHeartbeatSlow = time.Second
	DefaultLaunchWorkers = 8
	// DefaultFinishedHistory is how many finished containers the AM keeps records of (Status lists
	// them); older ones are dropped, their counts kept (a long-running service otherwise grows
	// without limit, ~1.8 KB per container ever started).
	DefaultFinishedHistory = 1000
	// defaultGangTimeout is taskexecutor.gang-timeout's default: how long a gang round may take to be
	// allocated before the AM gives back what it holds.
	defaultGangTimeout = 5 * time.Minute
	// callTimeout bounds every RM and NM call.
	callTimeout = 60 * time.Second
	// maxAllocateErrors: consecutive failed heartbeats (each already retried by yarnrpc) before the
	// AM gives up; YARN then starts another attempt if the application has one left.
	maxAllocateErrors = 5
)

// Locality values of taskexecutor.locality.
const (
	localitySpread = "spread" // node-local requests over the hosts with room
	localityAny    = "any"    // one "*" request per ask (the default)
)

// config configures an AM.
type config struct {
	App         string // application id, for logs and the API
	Spec        decision.Spec
	Host        string // registered host (NM_HOST)
	RPCPort     int    // registered rpc_port (the HTTP port)
	TrackingURL string
	// HeartbeatFast is the allocate interval while asks are pending or launches in flight;
	// HeartbeatSlow when idle.
	HeartbeatFast, HeartbeatSlow time.Duration
	LaunchWorkers                int // concurrent startContainers calls
	// FinishedHistory is how many finished containers keep their records (0: DefaultFinishedHistory).
	// Active containers are always kept; the counts of finished and failed ones stay exact.
	FinishedHistory int
	// LaunchContext is the launch context of every TaskExecutor (local resources, env, command, tokens).
	LaunchContext *hadooppb.ContainerLaunchContextProto
	// LaunchTokens, when set, returns the current credentials (HDTS) of new TaskExecutors, replacing
	// LaunchContext's (tokens refreshed by a keytab login: tokenRefresher.LaunchTokens).
	LaunchTokens func() []byte
	Priority     int32 // of the asks; 0 means 1
	Driver       *driverConfig
	// OnScale, when set, is asked before the declared number of TaskExecutors changes (PUT
	// requirements); an error refuses the change with its text. OnPreemption, when set, is told of
	// the containers the ResourceManager warned of (each once) and of those the AM gives back for
	// their idle GPUs, with the notice's reason. Both come from the job's framework
	// (framework.AM, docs/design.md#adding-a-framework) and are called without mu.
	OnScale      func(ctx context.Context, from, to int) error
	OnPreemption func(ctx context.Context, containers []string, reason string)
	// GiveBack, when set, is how a demand-sized job's framework gives back a TaskExecutor whose
	// GPUs stayed idle (framework.AM.GiveBack, idlerelease.go): Can under mu, Release without.
	GiveBack *framework.GiveBack
	RM       rm
	NM       nm
	Staging  cleaner // nil: nothing to delete
	Log      logrus.FieldLogger

	// Policy is the failure policy (zero values: the defaults).
	Policy decision.PolicyConfig
	// Events receives the AM's events (nil: a new log of events.DefaultCapacity).
	Events *events.Log
	// ReleaseEvents, when set, is called once the first registration has restored the previous
	// attempt's events (adopt): the framework's events held until then follow them (frameworkEmitter).
	ReleaseEvents func()
	// Metrics is updated by the loop (nil: new ones); served at /metrics.
	Metrics *metrics
	// Keys names the configuration key of each YARN resource type, for messages
	// (yarn.io/gpu → external-resource.gpu.amount).
	Keys configKeys
	// Cluster lists the cluster's nodes for the evidence of not-enough-resources events and the
	// status document's nodes (nil: the allocate response's headroom only, no nodes).
	Cluster clusterNodes
	// ExternalResources maps each external resource's name to its YARN type (gpu → yarn.io/gpu), for
	// the status document (the web UI matches a container's infos to the nodes' capacity with it).
	ExternalResources map[string]string
	// Now is the clock (nil: time.Now); tests set it.
	Now func() time.Time
	// State keeps the AM's durable state between attempts (durable.go; nil: nothing is kept, and a
	// later attempt starts from the running containers YARN hands it only).
	State stateStore
	// Attempt names this attempt (appattempt_..._000002) in the saved state and the events.
	Attempt string
	// GangTimeout bounds the forming of a gang round (Spec.Gang; 0: defaultGangTimeout).
	GangTimeout time.Duration
	// ElasticInterval: how long an elastic gang's round runs before containers held beside it grow
	// the gang (taskexecutor.elastic-interval; 0: defaultElasticInterval; book.Gang.Elastic).
	ElasticInterval time.Duration
	// Locality is taskexecutor.locality: localityAny ("" too) sends each ask as one "*" request;
	// localitySpread as node-local requests over the hosts with room (locality.go; needs Cluster for
	// the node reports, else the asks are plain). Any is the default: spreading was not faster in
	// every row of the benchmark (docs/performance.md, "Node-local spreading").
	Locality string
	// NodeLabel is taskexecutor.node-label: the node-label expression of the "*" request of every
	// ask, and the partition whose nodes the not-enough-resources evidence and spreading count (""
	// = the queue's default partition, every node counted; docs/job-file.md#node-labels).
	NodeLabel string
	// Placement is taskexecutor.placement, PlacementHandler the ResourceManager's
	// yarn.resourcemanager.placement-constraints.handler ("" = YARN's default, disabled): with a
	// handler the asks go as SchedulingRequests with placement constraints, without one the AM keeps
	// Placement.MaxPerNode itself (placement.go; docs/job-file.md#placement).
	Placement        jobfile.Placement
	PlacementHandler string
	// KeepStagingOnKill: a SIGTERM does not delete the staging directory, because YARN will start
	// another attempt that needs it (the process sets it when attempts are left).
	KeepStagingOnKill bool
	// LivenessTimeout is taskexecutor.liveness-timeout: a running TaskExecutor whose launcher has been
	// silent this long is probed at its NodeManager and declared lost if that does not answer for it
	// (liveness.go, docs/running.md#liveness). 0: contract.DefaultLivenessTimeout (newAM sets it);
	// negative: no check.
	LivenessTimeout time.Duration
	// PreemptionWait is how long after the ResourceManager first names a container for preemption
	// the AM expects the kill: the RM's contract.PreemptionWaitKey as far as the AM can know it
	// (process.go reads its site files). 0: contract.DefaultPreemptionWait (preemption.go).
	PreemptionWait time.Duration
	// GPUSampleInterval is taskexecutor.gpu-sample-interval (0: off; the launchers sample, the AM
	// names it in the series); IdleGPUWarning is taskexecutor.idle-gpu-warning (0: off; gpuusage.go).
	GPUSampleInterval, IdleGPUWarning time.Duration
	// IdleGPURelease is taskexecutor.idle-gpu-release (0: off): how long every GPU of a running
	// container may stay idle before the AM warns and releases it (idlerelease.go).
	IdleGPURelease time.Duration
	// DemandSized: the job's framework sizes its TaskExecutors from its work's demand
	// (framework.AM.Instances; a [flink] job with taskmanagers = "demand"): an idle release goes
	// through its GiveBack, and without one says that it cannot lower that count rather than call it
	// fixed.
	DemandSized bool
	// SickGPUsPerNode is taskexecutor.sick-gpus-per-node: a node is excluded once this many of its
	// GPUs read unhealthy (0: never; gpuhealth.go).
	SickGPUsPerNode int
}

// am is the ApplicationMaster: the loop around Reconcile that talks to the RM and the NMs. Which
// goroutine may touch which field is the locking rule in doc.go ("Locking").
type am struct {
	// Set by newAM, never changed afterwards: read without the lock.
	cfg     config
	log     logrus.FieldLogger
	events  *events.Log // safe for concurrent use
	metrics *metrics    // safe for concurrent use
	started time.Time   // when this attempt's AM was made
	wake    waker       // safe for concurrent use
	// launch starts and stops TaskExecutors on their NodeManagers (launch.go).
	launch *launchPool
	// nodes lists the cluster's nodes (nodes.go).
	nodes *nodeLister
	// driver is driver mode's process (driver.go; nil without config.Driver), safe for concurrent use.
	driver *driverProc
	// background counts the goroutines the AM's checks start outside the loop (probes, give-backs);
	// Run waits for them, so none outlives it.
	background sync.WaitGroup

	// savedTime: when Run last tried to save the durable state. Only Run's goroutine touches it.
	savedTime time.Time

	// mu guards every field below. It is held for bookkeeping only, never across a call to the RM,
	// an NM, HDFS or a stateStore.
	mu          sync.Mutex
	state       contract.AMState
	diagnostics string
	rec         book.Records // the TaskExecutor containers accepted (book.Records)
	// book is the bookkeeping (package book): the declared number of TaskExecutors (book.Want:
	// config.Spec.Instances at first, then what PUT /api/v1/requirements, a framework's Scale or an
	// earlier attempt's state declares; Want.Spec), the asks, the exclusions, the node view, the
	// nodes' sick GPUs (gpuhealth.go), the release of idle GPUs (idlerelease.go), the placement's
	// SchedulingRequests and full nodes (placement.go), how the application ends (book.End: the AM
	// finishing, the failure policy's verdict) and the loop's memory between plans (book.Plans: new
	// allocations, news, the restart backoff, the last idle plan's inputs).
	book        book.Book
	policy      *decision.Policy // the failure policy (its Config is immutable and read without the lock)
	allocProtos map[string]*hadooppb.ContainerProto
	release     map[string]*hadooppb.ContainerIdProto
	responseID  int32
	limitHit    bool

	maxCap       contract.Capability // the register response's maximum_capability
	clusterNodes int                 // num_cluster_nodes of the last allocate response
	headroom     *hadooppb.ResourceProto
	progressed   bool // an allocation arrived since the last pending check
	// adopted: the first registration took over what an earlier attempt left (durable.go).
	adopted bool
	// savedAt is the last event id when the durable state was saved.
	savedAt uint64
	// lastAllocated: the resources of the last allocation, shared by the next ones of the same size
	// (a container's Resources are never changed in place).
	lastAllocated contract.Capability
	// gpus: the TaskExecutors' GPU samples (gpuusage.go).
	gpus gpuuse.Book
}

// newAM returns an AM; Run starts it.
func newAM(cfg config) (*am, error) {
	if cfg.RM == nil || cfg.NM == nil {
		return nil, errors.New("am: Config.RM and Config.NM are required")
	}
	if cfg.LaunchContext == nil {
		return nil, errors.New("am: Config.LaunchContext is required")
	}
	if cfg.HeartbeatFast <= 0 {
		cfg.HeartbeatFast = DefaultHeartbeatFast
	}
	if cfg.HeartbeatSlow <= 0 {
		cfg.HeartbeatSlow = DefaultHeartbeatSlow
	}
	if cfg.LaunchWorkers <= 0 {
		cfg.LaunchWorkers = DefaultLaunchWorkers
	}
	if cfg.Priority == 0 {
		cfg.Priority = 1
	}
	if cfg.FinishedHistory < 0 {
		return nil, fmt.Errorf("am: Config.FinishedHistory (--finished-history) = %d: must be at least 0 (0: the default, %d)", cfg.FinishedHistory, DefaultFinishedHistory)
	}
	if cfg.FinishedHistory == 0 {
		cfg.FinishedHistory = DefaultFinishedHistory
	}
	if cfg.Log == nil {
		cfg.Log = logrus.StandardLogger()
	}
	if cfg.Driver != nil && cfg.Spec.Mode != decision.Driver {
		cfg.Spec.Mode = decision.Driver
	}
	if err := cfg.Policy.Validate(); err != nil {
		return nil, err
	}
	if cfg.Events == nil {
		cfg.Events = events.NewLog(events.DefaultCapacity)
	}
	if cfg.Metrics == nil {
		cfg.Metrics = newMetrics()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	switch cfg.Locality {
	case "":
		cfg.Locality = localityAny
	case localitySpread, localityAny:
	default:
		return nil, fmt.Errorf("am: taskexecutor.locality = %q: use %q (one any-node request, the default) or %q (node-local requests over the hosts with room)", cfg.Locality, localityAny, localitySpread)
	}
	schedulingRequests, err := checkPlacement(cfg.Placement, cfg.PlacementHandler, cfg.NodeLabel)
	if err != nil {
		return nil, fmt.Errorf("am: %w", err)
	}
	cfg.Spec.MaxPerNode = cfg.Placement.MaxPerNode
	if cfg.ElasticInterval <= 0 {
		cfg.ElasticInterval = defaultElasticInterval
	}
	if cfg.GangTimeout <= 0 {
		cfg.GangTimeout = defaultGangTimeout
	}
	if cfg.LivenessTimeout == 0 {
		cfg.LivenessTimeout = contract.DefaultLivenessTimeout
	}
	cfg.Events.OnAdd(cfg.Metrics.ObserveEvent)
	b := book.New(cfg.Spec.Instances, wantSource(cfg))
	b.Place = book.NewPlacement(cfg.Placement, cfg.PlacementHandler, schedulingRequests, cfg.Priority)
	a := &am{
		events:      cfg.Events,
		metrics:     cfg.Metrics,
		policy:      decision.NewPolicy(cfg.Policy),
		cfg:         cfg,
		book:        b,
		log:         cfg.Log.WithField("app", cfg.App),
		state:       contract.StateStarting,
		rec:         book.NewRecords(cfg.FinishedHistory, cfg.Now),
		allocProtos: map[string]*hadooppb.ContainerProto{},
		release:     map[string]*hadooppb.ContainerIdProto{},
		wake:        make(waker, 1),
		started:     cfg.Now(),
	}
	a.launch = &launchPool{nms: cfg.NM, timeout: callTimeout, clc: cfg.LaunchContext, tokens: cfg.LaunchTokens, now: cfg.Now, metrics: cfg.Metrics, log: a.log,
		queue: make(chan launchJob, 1024), answered: a.bookStart}
	a.nodes = &nodeLister{cluster: cfg.Cluster, asked: cfg.Spec.Capability, label: cfg.NodeLabel, metrics: cfg.Metrics, log: a.log,
		now: cfg.Now, want: make(chan struct{}, 1), mu: &a.mu, view: &a.book.Nodes}
	if cfg.Driver != nil {
		a.driver = newDriverProc(cfg.Driver, a.log, a.wake.poke)
	}
	return a, nil
}

// waker wakes Run for a heartbeat before its interval ends (Run waits on it).
type waker chan struct{}

// poke wakes Run for a heartbeat now (a send that would block is dropped: one is pending).
func (w waker) poke() {
	select {
	case w <- struct{}{}:
	default:
	}
}

// callCtx bounds one RM or NM call by callTimeout.
func callCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, callTimeout)
}

// setState sets the AM's state as the status document shows it; it takes mu.
func (a *am) setState(s contract.AMState) {
	a.mu.Lock()
	a.state = s
	a.mu.Unlock()
}

// wantSource names where the count of TaskExecutors at the start comes from (book.Want.By).
func wantSource(cfg config) string {
	if cfg.DemandSized {
		return book.WantDemand
	}
	return book.WantJobFile
}

// defaultElasticInterval is taskexecutor.elastic-interval's default: how long a round runs before
// containers held beside it grow the gang.
const defaultElasticInterval = 60 * time.Second

// resourceProto converts a capability to YARN's ResourceProto: memory and vcores in their own fields,
// every other type in resource_value_map.
func resourceProto(c contract.Capability) *hadooppb.ResourceProto {
	r := &hadooppb.ResourceProto{Memory: proto.Int64(c["memory-mb"]), VirtualCores: proto.Int32(int32(c["vcores"]))}
	keys := make([]string, 0, len(c))
	for k := range c {
		if k != "memory-mb" && k != "vcores" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		r.ResourceValueMap = append(r.ResourceValueMap, &hadooppb.ResourceInformationProto{
			Key: proto.String(k), Value: proto.Int64(c[k]), Units: proto.String(""), Type: hadooppb.ResourceTypesProto_COUNTABLE.Enum(),
		})
	}
	return r
}
