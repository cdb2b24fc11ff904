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

	"github.com/yarn-am/yarn-am/container/contract"
	"github.com/yarn-am/yarn-am/resources"
	"github.com/yarn-am/yarn-am/yarnrpc"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// RM is what the AM needs of the ResourceManager's scheduler port (yarnrpc.AMClient).
type RM interface {
	Register(ctx context.Context, req *hadooppb.RegisterApplicationMasterRequestProto) (*hadooppb.RegisterApplicationMasterResponseProto, error)
	Allocate(ctx context.Context, req *hadooppb.AllocateRequestProto) (*hadooppb.AllocateResponseProto, error)
	Finish(ctx context.Context, req *hadooppb.FinishApplicationMasterRequestProto) (bool, error)
	SetToken(tok yarnrpc.Token) error
}

// NM is what the AM needs of the NodeManagers (yarnrpc.NMClient).
type NM interface {
	SetToken(node string, tok yarnrpc.Token) error
	StartContainers(ctx context.Context, node string, reqs ...*hadooppb.StartContainerRequestProto) (*hadooppb.StartContainersResponseProto, error)
	StopContainers(ctx context.Context, node string, ids ...*hadooppb.ContainerIdProto) (*hadooppb.StopContainersResponseProto, error)
}

// Cleaner deletes the staging directory when the application ends (*Staging).
type Cleaner interface {
	Delete(ctx context.Context) error
}

// Defaults of Config.
const (
	DefaultHeartbeatFast = 200 * time.Millisecond
	DefaultHeartbeatSlow = time.Second
	DefaultLaunchWorkers = 8
	// DefaultFinishedHistory is how many finished containers the AM keeps records of (Status lists
	// them); older ones are dropped, their counts kept (a long-running service otherwise grows
	// without limit, ~1.8 KB per container ever started).
	DefaultFinishedHistory = 1000
	// DefaultGangTimeout is taskexecutor.gang-timeout's default: how long a gang round may take to be
	// allocated before the AM gives back what it holds.
	DefaultGangTimeout = 5 * time.Minute
	// callTimeout bounds every RM and NM call.
	callTimeout = 60 * time.Second
	// maxAllocateErrors: consecutive failed heartbeats (each already retried by yarnrpc) before the
	// AM gives up; YARN then starts another attempt if the application has one left.
	maxAllocateErrors = 5
)

// Config configures an AM.
type Config struct {
	App         string // application id, for logs and the API
	Spec        Spec
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
	// LaunchContext's (tokens refreshed by a keytab login: TokenRefresher.LaunchTokens).
	LaunchTokens func() []byte
	Priority     int32 // of the asks; 0 means 1
	Driver       *DriverConfig
	RM           RM
	NM           NM
	Staging      Cleaner // nil: nothing to delete
	Log          logrus.FieldLogger

	// Policy is the failure policy (zero values: the defaults).
	Policy PolicyConfig
	// Events receives the AM's events (nil: a new log of DefaultEventCapacity).
	Events *EventLog
	// Metrics is updated by the loop (nil: new ones); served at /metrics.
	Metrics *Metrics
	// Keys names the configuration key of each YARN resource type, for messages
	// (yarn.io/gpu → external-resource.gpu.amount).
	Keys ConfigKeys
	// Cluster lists the cluster's nodes for the evidence of not-enough-resources events and the
	// status document's nodes (nil: the allocate response's headroom only, no nodes).
	Cluster ClusterNodes
	// ExternalResources maps each external resource's name to its YARN type (gpu → yarn.io/gpu), for
	// the status document (the web UI matches a container's infos to the nodes' capacity with it).
	ExternalResources map[string]string
	// Now is the clock (nil: time.Now); tests set it.
	Now func() time.Time
	// State keeps the AM's durable state between attempts (durable.go; nil: nothing is kept, and a
	// later attempt starts from the running containers YARN hands it only).
	State StateStore
	// Attempt names this attempt (appattempt_..._000002) in the saved state and the events.
	Attempt string
	// GangTimeout bounds the forming of a gang round (Spec.Gang; 0: DefaultGangTimeout).
	GangTimeout time.Duration
	// Locality is taskexecutor.locality: LocalityAny ("" too) sends each ask as one "*" request;
	// LocalitySpread as node-local requests over the hosts with room (locality.go; needs Cluster for
	// the node reports, else the asks are plain). Any is the default: spreading was not faster in
	// every row of the benchmark (docs/performance.md, "Node-local spreading").
	Locality string
	// KeepStagingOnKill: a SIGTERM does not delete the staging directory, because YARN will start
	// another attempt that needs it (the process sets it when attempts are left).
	KeepStagingOnKill bool
}

// tracked is a container the AM accepted, with what it needs to launch and stop it.
type tracked struct {
	Container
	cid *hadooppb.ContainerIdProto // to stop and release it (nil when the RM's allocation was not kept)
	// token is the container token for startContainers; dropped once the start returned (it is most
	// of a container's allocation).
	token *hadooppb.TokenProto
	infos map[string][]resources.Info
	// reportFailure is the launcher's discovery failure, if it reported one.
	reportFailure string
	// discoveryEvent: a discovery-failed event was emitted for it (from the report or its exit).
	discoveryEvent bool
	// stopAfterLaunch: the requirement went down while its launch was in flight; stop it once started.
	stopAfterLaunch bool
	// reported: its launcher reported its infos; port: the free port it reported (gang mode); rank:
	// its place in the gang round, once every rank reported (gang.go).
	reported bool
	port     int
	rank     *contract.Rendezvous
	// forgotten: dropped from the records (Config.FinishedHistory); records.compact removes it.
	forgotten bool
	// requestedAt (its ask first sent), allocatedAt, launchedAt, finishedAt: the web UI's timeline
	// (zero: not known, e.g. adopted from an earlier attempt).
	requestedAt, allocatedAt, launchedAt, finishedAt time.Time
}

// AM is the ApplicationMaster: the loop around Reconcile that talks to the RM and the NMs.
type AM struct {
	cfg Config
	log logrus.FieldLogger

	mu          sync.Mutex
	state       contract.AMState
	asks        []Ask
	nextAskID   int64
	rec         records // the TaskExecutor containers accepted (records.go)
	newAllocs   []Allocation
	allocProtos map[string]*hadooppb.ContainerProto
	release     map[string]*hadooppb.ContainerIdProto
	send        map[int64]int
	responseID  int32
	requested   int // containers asked for so far
	limitHit    bool
	diagnostics string
	driverExit  *int
	stopping    bool

	events       *EventLog
	metrics      *Metrics
	policy       *Policy
	maxCap       contract.Capability // the register response's maximum_capability
	clusterNodes int                 // num_cluster_nodes of the last allocate response
	headroom     *hadooppb.ResourceProto
	blAdd        map[string]bool // nodes to add to / remove from the RM's blacklist with the next allocate
	blRemove     map[string]bool
	askTime      map[int64]time.Time // when each ask was first sent (allocation latency)
	progressed   bool                // an allocation arrived since the last pending check
	policyOut    *Outcome            // the failure policy ends the application
	holdUntil    time.Time           // restart backoff: no new asks before
	// nodesRetry: the node reports of a locality plan failed; asks are plain until then.
	nodesRetry time.Time

	wake    chan struct{}
	launchQ chan *tracked
	// gang is the state of gang mode (gang.go).
	gang gangState
	// adopted: the first registration took over what an earlier attempt left (durable.go).
	adopted bool
	// savedAt is the last event id when the durable state was saved; savedTime when it was tried.
	savedAt   uint64
	savedTime time.Time
	// background counts the goroutines that stop containers outside the loop (scale-down); Run
	// waits for them, so none outlives it.
	background sync.WaitGroup

	// started: when this attempt's AM was made; nodes: the node listing of the status document
	// (nodes.go).
	started time.Time
	nodes   nodeView

	// news: the last allocate brought allocations or completions. Run then reconciles at once
	// (launches start, a finished application unregisters) instead of after the heartbeat interval;
	// the next allocate still waits for the interval.
	news bool
}

// New returns an AM; Run starts it.
func New(cfg Config) (*AM, error) {
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
	if cfg.Driver != nil && cfg.Spec.Mode != Driver {
		cfg.Spec.Mode = Driver
	}
	if err := cfg.Policy.Validate(); err != nil {
		return nil, err
	}
	if cfg.Events == nil {
		cfg.Events = NewEventLog(DefaultEventCapacity)
	}
	if cfg.Metrics == nil {
		cfg.Metrics = NewMetrics()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	switch cfg.Locality {
	case "":
		cfg.Locality = LocalityAny
	case LocalitySpread, LocalityAny:
	default:
		return nil, fmt.Errorf("am: taskexecutor.locality = %q: use %q (one any-node request, the default) or %q (node-local requests over the hosts with room)", cfg.Locality, LocalityAny, LocalitySpread)
	}
	if cfg.GangTimeout <= 0 {
		cfg.GangTimeout = DefaultGangTimeout
	}
	cfg.Events.OnAdd(cfg.Metrics.ObserveEvent)
	return &AM{
		events:      cfg.Events,
		metrics:     cfg.Metrics,
		policy:      NewPolicy(cfg.Policy),
		blAdd:       map[string]bool{},
		blRemove:    map[string]bool{},
		askTime:     map[int64]time.Time{},
		cfg:         cfg,
		log:         cfg.Log.WithField("app", cfg.App),
		state:       contract.StateStarting,
		nextAskID:   1,
		rec:         newRecords(cfg.FinishedHistory, cfg.Now),
		allocProtos: map[string]*hadooppb.ContainerProto{},
		release:     map[string]*hadooppb.ContainerIdProto{},
		send:        map[int64]int{},
		wake:        make(chan struct{}, 1),
		started:     cfg.Now(),
		nodes:       nodeView{want: make(chan struct{}, 1)},
		launchQ:     make(chan *tracked, 1024),
	}, nil
}

func (a *AM) poke() {
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

func callCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, callTimeout)
}

// Run registers, runs the allocation loop until the application is done and unregisters with the
// outcome, then deletes the staging directory. When ctx ends (SIGTERM from the NodeManager: the
// application is being killed) it deletes the staging directory at once and returns an outcome with
// status KILLED and ctx's error.
func (a *AM) Run(ctx context.Context) (Outcome, error) {
	var wg sync.WaitGroup
	wctx, stopWorkers := context.WithCancel(ctx)
	for i := 0; i < a.cfg.LaunchWorkers; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); a.launchWorker(wctx) }()
	}
	wg.Add(1)
	go func() { defer wg.Done(); a.nodeRefresher(wctx) }()
	defer func() { stopWorkers(); wg.Wait(); a.background.Wait() }()

	if err := a.register(ctx); err != nil {
		var u *unsatisfiable
		switch {
		case ctx.Err() != nil:
			return a.killed(), ctx.Err()
		case errors.As(err, &u):
			a.setState(contract.StateRunning)
			ev, ok := Rejection(a.cfg.Spec.Capability, u.maximum, a.cfg.Keys, nil)
			if !ok {
				ev = AllocationRejectedEvent("", 0, -1, "", u.why) // the client's pre-flight wording (CheckAsk)
			}
			ev = a.emit(ev)
			out := Outcome{Status: contract.Failed, Diagnostics: ev.Message}
			a.log.WithField("key", ev.Key).Error("am: " + out.Diagnostics)
			return out, a.finish(ctx, out)
		}
		return Outcome{}, err
	}
	a.setState(contract.StateRunning)
	a.mu.Lock()
	if a.gang.roundStart.IsZero() {
		a.gang.roundStart = a.cfg.Now()
	}
	a.mu.Unlock()
	var driverDone <-chan struct{}
	if a.cfg.Driver != nil {
		d, err := a.startDriver(ctx)
		if err != nil {
			out := Outcome{Status: contract.Failed, Diagnostics: err.Error()}
			return out, a.finish(ctx, out)
		}
		driverDone = d
	}

	errs := 0
	actOnly := false // reconcile on the last heartbeat's news without another allocate
	for {
		plan := a.reconcile(ctx)
		var out *Outcome
		if plan.Done != nil {
			out = plan.Done
		}
		if o := a.policyOutcome(); o != nil {
			out = o
		}
		if o := a.driverOutcome(); o != nil {
			out = o
		}
		if out != nil {
			return *out, a.finish(ctx, *out)
		}

		if !actOnly {
			err := a.heartbeat(ctx)
			var rej *rejectedError
			switch {
			case err == nil:
				errs = 0
				a.checkPending(ctx)
				a.checkGang(ctx)
			case ctx.Err() != nil:
				return a.killed(), ctx.Err()
			case errors.As(err, &rej):
				out := Outcome{Status: contract.Failed, Diagnostics: rej.ev.Message}
				return out, a.finish(ctx, out)
			case errors.Is(err, errShutdown):
				a.setState(contract.StateShutdown)
				return Outcome{Status: contract.Failed, Diagnostics: err.Error()}, err
			default:
				errs++
				a.log.WithError(err).WithField("consecutive", errs).Warn("am: allocate failed")
				if errs >= maxAllocateErrors {
					return Outcome{Status: contract.Failed, Diagnostics: err.Error()}, fmt.Errorf("am: %d heartbeats in a row failed; last: %w", errs, err)
				}
			}
			if err == nil && a.takeNews() {
				actOnly = true
				continue
			}
		}
		actOnly = false
		if now := a.cfg.Now(); now.Sub(a.savedTime) >= time.Second {
			a.savedTime = now
			a.saveState(ctx)
		}

		t := time.NewTimer(a.interval())
		select {
		case <-ctx.Done():
			t.Stop()
			return a.killed(), ctx.Err()
		case <-a.wake:
		case <-driverDone:
			driverDone = nil
		case <-t.C:
		}
		t.Stop()
	}
}

// takeNews reports and clears whether the last allocate brought allocations or completions.
func (a *AM) takeNews() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := a.news
	a.news = false
	return n
}

// interval: fast while something is pending, slow when idle.
func (a *AM) interval() time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()
	pending := a.rec.inFlight > 0 || len(a.send) > 0 || len(a.release) > 0
	for _, k := range a.asks {
		if k.Want > 0 {
			pending = true
		}
	}
	d := a.cfg.HeartbeatSlow
	if pending {
		d = a.cfg.HeartbeatFast
	}
	if wait := a.holdUntil.Sub(a.cfg.Now()); wait > 0 && wait < d {
		d = wait + time.Millisecond // wake when the restart backoff ends
	}
	return d
}

func (a *AM) setState(s contract.AMState) {
	a.mu.Lock()
	a.state = s
	a.mu.Unlock()
}

func (a *AM) killed() Outcome {
	a.setState(contract.AMState(contract.Killed))
	out := Outcome{Status: contract.Killed, Diagnostics: "the ApplicationMaster was stopped (SIGTERM: the application was killed)"}
	if a.cfg.KeepStagingOnKill {
		// The NodeManager stops an AM container the same way for a kill, preemption, memory or a node
		// going away; only in the first case is this the end. With attempts left, the staging
		// directory stays for the next one (yarn-am kill removes it once the application is KILLED).
		a.log.Info("am: stopped by SIGTERM with attempts left; the staging directory stays for the next attempt")
		a.saveState(context.Background())
		return out
	}
	a.deleteStaging()
	return out
}

func (a *AM) deleteStaging() {
	if a.cfg.Staging == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := a.cfg.Staging.Delete(ctx); err != nil {
		a.log.WithError(err).Warn("am: could not delete the staging directory")
		return
	}
	a.log.Info("am: staging directory deleted")
}

func (a *AM) register(ctx context.Context) error {
	req := &hadooppb.RegisterApplicationMasterRequestProto{
		Host:        proto.String(a.cfg.Host),
		RpcPort:     proto.Int32(int32(a.cfg.RPCPort)),
		TrackingUrl: proto.String(a.cfg.TrackingURL),
	}
	c, cancel := callCtx(ctx)
	defer cancel()
	start := time.Now()
	resp, err := a.cfg.RM.Register(c, req)
	a.metrics.ObserveRPC("registerApplicationMaster", start, err)
	if err != nil {
		return fmt.Errorf("am: registering with the ResourceManager: %w", err)
	}
	maximum := contract.Capability(yarnrpc.ResourceAmounts(resp.GetMaximumCapability()))
	a.log.WithFields(logrus.Fields{"queue": resp.GetQueue(), "maximum": maximum.String(),
		"tracking_url": a.cfg.TrackingURL}).Info("am: registered")
	if resp.GetMaximumCapability() == nil {
		maximum = nil
	}
	var types []string
	for _, ti := range resp.GetResourceTypes() {
		types = append(types, ti.GetName())
	}
	if err := CheckAsk(a.cfg.Spec.Capability, a.cfg.Keys, types, maximum); err != nil {
		return &unsatisfiable{why: err.Error(), maximum: maximum}
	}
	a.adopt(ctx, resp)
	a.mu.Lock()
	a.responseID = 0
	if m := resp.GetMaximumCapability(); m != nil {
		a.maxCap = contract.Capability(yarnrpc.ResourceAmounts(m))
	}
	for _, n := range a.policy.Excluded() { // a new registration starts with an empty blacklist too
		a.blAdd[n] = true
	}
	for i := range a.asks {
		a.asks[i].AtRM = 0 // a new registration starts with an empty request table: re-send everything
	}
	a.mu.Unlock()
	return nil
}

// reconcile runs Reconcile on the current state and performs the bookkeeping half of the plan: the
// ask table, releases, and launches queued to the workers.
func (a *AM) reconcile(ctx context.Context) Plan {
	plan, launches := a.reconcileLocked(a.spreadRoom(ctx))
	// Queued outside the lock: the workers take the lock when a launch completes.
	for _, t := range launches {
		select {
		case a.launchQ <- t:
		case <-ctx.Done():
			return plan
		}
	}
	return plan
}

// observedLocked is the Observed of the next Reconcile.
func (a *AM) observedLocked(now time.Time) Observed {
	a.liftExclusionsLocked(now)
	a.holdUntil = a.policy.RestartAt(now)
	obs := Observed{Asks: a.asks, NewAllocations: a.newAllocs, NextAskID: a.nextAskID, Stopping: a.stopping || a.driverExit != nil || a.policyOut != nil,
		HoldNewAsks: now.Before(a.holdUntil) || now.Before(a.gang.holdUntil), Containers: a.rec.observed(), Forgotten: a.rec.forgotten,
		Round: a.gang.round}
	if len(a.newAllocs) > 0 {
		for _, n := range a.policy.Excluded() {
			if obs.Excluded == nil {
				obs.Excluded = map[string]bool{}
			}
			obs.Excluded[n] = true
		}
	}
	return obs
}

func (a *AM) reconcileLocked(spreadRoom int) (Plan, []*tracked) {
	a.mu.Lock()
	defer a.mu.Unlock()
	var launches []*tracked
	now := a.cfg.Now()
	obs := a.observedLocked(now)
	obs.SpreadRoom = spreadRoom
	plan := Reconcile(a.cfg.Spec, obs)
	a.newAllocs = nil
	for _, s := range plan.Send {
		a.send[s.ID] = s.Count
		if s.Count > 0 {
			old := 0
			for _, k := range a.asks {
				if k.ID == s.ID {
					old = k.Want
				}
			}
			if s.Count > old {
				a.requested += s.Count - old
				a.emit(RequestedEvent(s.Count-old, a.cfg.Spec.Capability))
			}
			if _, ok := a.askTime[s.ID]; !ok {
				a.askTime[s.ID] = now
			}
			a.log.WithFields(logrus.Fields{"allocation_request_id": s.ID, "containers": s.Count, "resources": a.cfg.Spec.Capability.String()}).Info("am: requesting TaskExecutor containers")
		}
	}
	a.asks, a.nextAskID = plan.Asks, plan.NextAskID
	for _, r := range plan.Release {
		a.log.WithFields(logrus.Fields{"container": r.ID, "node": r.Node, "reason": r.Reason}).Info("am: releasing container")
		if p := a.allocProtos[r.ID]; p != nil {
			a.release[r.ID] = p.GetId()
		}
		delete(a.allocProtos, r.ID)
	}
	for _, l := range plan.Hold {
		a.rec.accepted(l, a.allocProtos[l.ID], a.gang.round, true)
		delete(a.allocProtos, l.ID)
		a.log.WithFields(logrus.Fields{"container": l.ID, "node": l.Node, "round": a.gang.round}).Info("am: container allocated and held until the gang is complete")
		a.emit(AllocatedEvent(l.ID, l.Node, l.Resources, a.allocLatencyLocked(l.AskID, now)))
		a.progressed = true
	}
	if plan.StartHeld {
		launches = append(launches, a.startGangLocked()...)
	}
	for _, l := range plan.Launch {
		t := a.rec.accepted(l, a.allocProtos[l.ID], a.gang.round, false)
		t.requestedAt = a.askTime[l.AskID]
		delete(a.allocProtos, l.ID)
		a.log.WithFields(logrus.Fields{"container": l.ID, "node": l.Node, "resources": l.Resources.String()}).Info("am: container allocated, launching TaskExecutor")
		a.emit(AllocatedEvent(l.ID, l.Node, l.Resources, a.allocLatencyLocked(l.AskID, now)))
		a.progressed = true
		launches = append(launches, t)
	}
	for id := range a.askTime {
		if !a.hasAskLocked(id) {
			delete(a.askTime, id)
		}
	}
	var stop []*tracked
	for _, c := range plan.Stop {
		t := a.rec.get(c.ID)
		if t == nil {
			continue
		}
		if t.Phase == contract.Held {
			a.releaseHeldLocked(t, "released before it started: "+plan.RoundReason)
			continue
		}
		why := "the requirement went down"
		if plan.NewRound {
			why = "the gang restarts"
		}
		a.log.WithFields(logrus.Fields{"container": t.ID, "node": t.Node}).Info("am: stopping TaskExecutor: " + why)
		if a.rec.stopping(t) {
			stop = append(stop, t)
		}
	}
	if len(stop) > 0 {
		a.stopInBackground(stop)
	}
	if plan.NewRound {
		a.newRoundLocked(now, plan.RoundReason)
	}
	if plan.LimitReached && !a.limitHit {
		a.limitHit = true
		a.diagnostics = failureDiagnostics(a.cfg.Spec, plan.Failures, obs.Forgotten)
		a.log.WithField("failures", plan.FailureCount).Error("am: failure limit reached: " + a.diagnostics)
		a.emit(FailureLimitReachedEvent(a.diagnostics))
	}
	a.updateMetricsLocked()
	return plan, launches
}

// unsatisfiable: the ask can never be allocated on this cluster.
type unsatisfiable struct {
	why     string
	maximum contract.Capability // the registration's maximum allocation (nil if not sent)
}

func (u *unsatisfiable) Error() string { return u.why }

var errShutdown = errors.New("am: the ResourceManager told the ApplicationMaster to shut down (AM_SHUTDOWN)")

// heartbeat sends one allocate and applies the response.
func (a *AM) heartbeat(ctx context.Context) error {
	rooms := a.localityRooms(ctx)
	a.mu.Lock()
	req := &hadooppb.AllocateRequestProto{ResponseId: proto.Int32(a.responseID), Progress: proto.Float32(a.progressLocked())}
	ids := make([]int64, 0, len(a.send))
	for id := range a.send {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	sent := map[int64]int{}
	for _, id := range ids {
		n := a.send[id]
		rr := a.resourceRequest(id, n)
		if shares := PlanLocality(rooms, n); n > 0 && len(shares) > 0 && a.spreadAskLocked(id) {
			a.log.WithFields(logrus.Fields{"ask": id, "containers": n, "hosts": len(shares)}).Debug("am: ask spread over hosts as node-local requests")
			req.Ask = append(req.Ask, localityRequests(rr, shares, Racks(rooms))...)
		} else {
			req.Ask = append(req.Ask, rr)
		}
		sent[id] = n
	}
	released := map[string]bool{}
	for id, p := range a.release {
		req.Release = append(req.Release, p)
		released[id] = true
	}
	blAdd, blRemove := sortedKeys(a.blAdd), sortedKeys(a.blRemove)
	if len(blAdd)+len(blRemove) > 0 {
		req.BlacklistRequest = &hadooppb.ResourceBlacklistRequestProto{BlacklistAdditions: blacklistNames(blAdd), BlacklistRemovals: blacklistNames(blRemove)}
	}
	a.mu.Unlock()

	c, cancel := callCtx(ctx)
	defer cancel()
	start := time.Now()
	resp, err := a.cfg.RM.Allocate(c, req)
	a.metrics.ObserveRPC("allocate", start, err)
	if err != nil && IsRejection(err) {
		a.mu.Lock()
		maxCap := a.maxCap
		a.mu.Unlock()
		ev, _ := Rejection(a.cfg.Spec.Capability, maxCap, a.cfg.Keys, err)
		ev = a.emit(ev)
		a.log.WithError(err).WithField("key", ev.Key).Error("am: " + ev.Message)
		return &rejectedError{ev: ev}
	}
	if errors.Is(err, yarnrpc.ErrApplicationMasterNotRegistered) {
		a.log.WithError(err).Warn("am: the ResourceManager does not know this ApplicationMaster (restart or failover); registering again and re-sending every outstanding request")
		if err := a.register(ctx); err != nil {
			return err
		}
		a.resendAll()
		return nil
	}
	if err != nil {
		return err
	}

	a.mu.Lock()
	defer a.mu.Unlock()
	a.responseID = resp.GetResponseId()
	for id, n := range sent {
		if a.send[id] == n {
			delete(a.send, id)
		}
	}
	for id := range released {
		delete(a.release, id)
	}
	for _, n := range blAdd {
		delete(a.blAdd, n)
	}
	for _, n := range blRemove {
		delete(a.blRemove, n)
	}
	a.clusterNodes = int(resp.GetNumClusterNodes())
	if l := resp.GetLimit(); l != nil {
		a.headroom = l
	}
	for _, n := range resp.GetUpdatedNodes() {
		a.nodeUpdateLocked(n)
	}
	if t := resp.GetAmRmToken(); t != nil {
		if err := a.cfg.RM.SetToken(yarnrpc.TokenFromProto(t)); err != nil {
			a.log.WithError(err).Warn("am: the new AM-RM token is unusable; keeping the old one")
		} else {
			a.log.Info("am: AM-RM token rolled over")
		}
	}
	for _, nt := range resp.GetNmTokens() {
		node := yarnrpc.NodeAddress(nt.GetNodeId())
		if err := a.cfg.NM.SetToken(node, yarnrpc.TokenFromProto(nt.GetToken())); err != nil {
			a.log.WithError(err).WithField("node", node).Warn("am: unusable NMToken")
		}
	}
	if len(resp.GetAllocatedContainers()) > 0 || len(resp.GetCompletedContainerStatuses()) > 0 {
		a.news = true
	}
	for _, c := range resp.GetAllocatedContainers() {
		id := yarnrpc.FormatContainerID(c.GetId())
		if a.rec.get(id) != nil || a.allocProtos[id] != nil {
			// A ResourceManager that restarted (work-preserving) or failed over may report a container
			// again that this AM already took: it is never launched twice
			// (TestLoopIgnoresAContainerTheRMReportsAgain).
			a.log.WithField("container", id).Info("am: the ResourceManager reported a known container again; ignored")
			continue
		}
		a.allocProtos[id] = c
		a.newAllocs = append(a.newAllocs, Allocation{ID: id, Node: yarnrpc.NodeAddress(c.GetNodeId()), AskID: c.GetAllocationRequestId(),
			Resources: contract.Capability(yarnrpc.ResourceAmounts(c.GetResource()))})
	}
	for _, st := range resp.GetCompletedContainerStatuses() {
		a.completedLocked(st)
	}
	if resp.AMCommand == nil { // proto2: an unset enum reads as its first value, AM_RESYNC
		return nil
	}
	switch resp.GetAMCommand() {
	case hadooppb.AMCommandProto_AM_SHUTDOWN:
		return errShutdown
	case hadooppb.AMCommandProto_AM_RESYNC:
		a.mu.Unlock()
		err := a.register(ctx)
		a.resendAll()
		a.mu.Lock()
		return err
	}
	return nil
}

// resendAll marks every outstanding ask for sending (after a new registration).
func (a *AM) resendAll() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for i := range a.asks {
		if a.asks[i].Want > 0 {
			a.send[a.asks[i].ID] = a.asks[i].Want
			a.asks[i].AtRM = a.asks[i].Want
		}
	}
}

func (a *AM) completedLocked(st *hadooppb.ContainerStatusProto) {
	id := yarnrpc.FormatContainerID(st.GetContainerId())
	t := a.rec.get(id)
	if t == nil || t.Phase == contract.Completed {
		return // released by us, or already known to have ended
	}
	exit := st.GetExitStatus()
	a.exitedLocked(t, a.rec.completed(t, Exit{Status: exit, Class: Classify(exit), Diagnostics: st.GetDiagnostics()}))
	class := t.Exit.Class
	f := logrus.Fields{"container": id, "node": t.Node, "exit_status": exit, "class": class}
	if class == contract.ExitSucceeded {
		a.log.WithFields(f).Info("am: TaskExecutor " + Describe(exit, class))
	} else {
		a.log.WithFields(f).WithField("diagnostics", st.GetDiagnostics()).Warn("am: TaskExecutor " + Describe(exit, class))
	}
}

func (a *AM) progressLocked() float32 {
	if a.cfg.Spec.Instances == 0 || a.cfg.Spec.Mode == Service {
		return 0
	}
	return float32(min(a.rec.succeededN, a.cfg.Spec.Instances)) / float32(a.cfg.Spec.Instances)
}

// spreadAskLocked says whether ask id is a Spread ask.
func (a *AM) spreadAskLocked(id int64) bool {
	for _, k := range a.asks {
		if k.ID == id {
			return k.Spread
		}
	}
	return false
}

// localityRooms returns the nodes' room when Spread asks are about to be sent, nil otherwise.
func (a *AM) localityRooms(ctx context.Context) []NodeRoom {
	a.mu.Lock()
	asking := false
	for id, n := range a.send {
		asking = asking || (n > 0 && a.spreadAskLocked(id))
	}
	a.mu.Unlock()
	if !asking {
		return nil
	}
	return a.nodeRooms(ctx)
}

// spreadRoom is Observed.SpreadRoom: how many containers fit on the nodes now, when the next plan
// adds an ask (a dry run of Reconcile says so) and taskexecutor.locality = "spread"; 0 otherwise.
func (a *AM) spreadRoom(ctx context.Context) int {
	if a.cfg.Locality != LocalitySpread || a.cfg.Cluster == nil {
		return 0
	}
	a.mu.Lock()
	obs := a.observedLocked(a.cfg.Now())
	dry := Reconcile(a.cfg.Spec, obs)
	a.mu.Unlock()
	if dry.NextAskID == max(obs.NextAskID, 1) {
		return 0
	}
	room := 0
	for _, r := range a.nodeRooms(ctx) {
		room += r.Free
	}
	return room
}

// nodeRooms asks the RM for the RUNNING nodes and returns their room for a container of the spec
// (nil when the call fails: asks go out plain, as with taskexecutor.locality = "any"; after a
// failure the RM is not asked again for a minute).
func (a *AM) nodeRooms(ctx context.Context) []NodeRoom {
	a.mu.Lock()
	if a.cfg.Locality != LocalitySpread || a.cfg.Cluster == nil || a.cfg.Now().Before(a.nodesRetry) {
		a.mu.Unlock()
		return nil
	}
	ours := map[string]contract.Capability{}
	for _, t := range a.rec.active() {
		m := ours[t.Node]
		if m == nil {
			m = contract.Capability{}
			ours[t.Node] = m
		}
		for k, v := range t.Resources {
			m[k] += v
		}
	}
	excluded := map[string]bool{}
	for _, n := range a.policy.Excluded() {
		excluded[contract.NodeHost(n)] = true
	}
	a.mu.Unlock()

	nodes, err := a.listNodes(ctx)
	if err != nil {
		a.mu.Lock()
		a.nodesRetry = a.cfg.Now().Add(time.Minute)
		a.mu.Unlock()
		a.log.WithError(err).Warn("am: no node reports for taskexecutor.locality = \"spread\"; asking for any node for a minute")
		return nil
	}
	return NodeRooms(nodes, a.cfg.Spec.Capability, ours, excluded)
}

// resourceRequest builds one ResourceRequest (any node, relaxed locality) for ask id.
func (a *AM) resourceRequest(id int64, n int) *hadooppb.ResourceRequestProto {
	return &hadooppb.ResourceRequestProto{
		Priority:            &hadooppb.PriorityProto{Priority: proto.Int32(a.cfg.Priority)},
		ResourceName:        proto.String("*"),
		Capability:          ResourceProto(a.cfg.Spec.Capability),
		NumContainers:       proto.Int32(int32(n)),
		RelaxLocality:       proto.Bool(true),
		AllocationRequestId: proto.Int64(id),
	}
}

// ResourceProto converts a capability to YARN's ResourceProto: memory and vcores in their own fields,
// every other type in resource_value_map.
func ResourceProto(c contract.Capability) *hadooppb.ResourceProto {
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

// launchWorker starts queued containers on their NodeManagers; several workers run at once.
func (a *AM) launchWorker(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case t := <-a.launchQ:
			a.launch(ctx, t)
		}
	}
}

func (a *AM) launch(ctx context.Context, t *tracked) {
	log := a.log.WithFields(logrus.Fields{"container": t.ID, "node": t.Node})
	start := time.Now()
	c, cancel := callCtx(ctx)
	defer cancel()
	req := &hadooppb.StartContainerRequestProto{ContainerLaunchContext: a.cfg.LaunchContext}
	if a.cfg.LaunchTokens != nil {
		if tok := a.cfg.LaunchTokens(); len(tok) > 0 {
			clc := proto.Clone(a.cfg.LaunchContext).(*hadooppb.ContainerLaunchContextProto)
			clc.Tokens = tok
			req.ContainerLaunchContext = clc
		}
	}
	a.mu.Lock()
	req.ContainerToken = t.token
	sent := a.cfg.Now()
	a.mu.Unlock()
	resp, err := a.cfg.NM.StartContainers(c, t.Node, req)
	a.metrics.ObserveRPC("startContainers", start, err)
	if err == nil {
		for _, f := range resp.GetFailedRequests() {
			err = yarnrpc.ContainerFailure(f)
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	defer a.poke()
	t.token = nil // used: a container is started once
	if t.Phase == contract.Stopping && t.stopAfterLaunch {
		t.stopAfterLaunch = false
		if err != nil { // it never started: give the allocation back
			if t.cid != nil {
				a.release[t.ID] = t.cid
			}
			a.exitedLocked(t, a.rec.stoppedBeforeStart(t))
			return
		}
		a.stopInBackground([]*tracked{t})
		return
	}
	if t.Phase != contract.Launching {
		if err == nil && t.Phase == contract.Completed && t.launchedAt.IsZero() {
			// It started and ended before this start call returned: the timeline still shows it ran.
			t.launchedAt = sent
		}
		return // completed (or stopped) while the launch was in flight
	}
	if err != nil {
		log.WithError(err).Warn("am: starting the TaskExecutor failed; releasing the container")
		if t.cid != nil {
			a.release[t.ID] = t.cid
		}
		a.exitedLocked(t, a.rec.launchFailed(t, err.Error()))
		return
	}
	log.WithField("took", time.Since(start).Round(time.Millisecond)).Info("am: TaskExecutor started")
	a.emitAll(a.rec.launched(t))
}

// stopInBackground stops containers without holding up the caller (which may hold a.mu); Run waits
// for it before it returns.
func (a *AM) stopInBackground(ts []*tracked) {
	a.background.Add(1)
	go func() {
		defer a.background.Done()
		a.stopAll(context.Background(), ts)
	}()
}

// finish stops what still runs, unregisters with the outcome and deletes the staging directory.
func (a *AM) finish(ctx context.Context, out Outcome) error {
	a.mu.Lock()
	a.stopping = true
	a.state = contract.StateFinishing
	running := a.rec.active()
	a.mu.Unlock()
	a.stopAll(ctx, running)

	status := map[contract.FinalStatus]hadooppb.FinalApplicationStatusProto{
		contract.Succeeded: hadooppb.FinalApplicationStatusProto_APP_SUCCEEDED,
		contract.Failed:    hadooppb.FinalApplicationStatusProto_APP_FAILED,
		contract.Killed:    hadooppb.FinalApplicationStatusProto_APP_KILLED,
	}[out.Status]
	req := &hadooppb.FinishApplicationMasterRequestProto{
		FinalApplicationStatus: status.Enum(),
		Diagnostics:            proto.String(out.Diagnostics),
		TrackingUrl:            proto.String(a.cfg.TrackingURL),
	}
	log := a.log.WithFields(logrus.Fields{"final_status": out.Status, "diagnostics": out.Diagnostics})
	log.Info("am: unregistering")
	var err error
	for i := 0; i < 50; i++ {
		c, cancel := callCtx(ctx)
		var done bool
		start := time.Now()
		done, err = a.cfg.RM.Finish(c, req)
		a.metrics.ObserveRPC("finishApplicationMaster", start, err)
		cancel()
		if errors.Is(err, yarnrpc.ErrApplicationMasterNotRegistered) {
			if err = a.register(ctx); err == nil {
				continue
			}
		}
		if err != nil || done {
			break
		}
		select {
		case <-ctx.Done():
			err = ctx.Err()
		case <-time.After(100 * time.Millisecond):
			continue
		}
		break
	}
	a.setState(contract.AMState(out.Status))
	a.mu.Lock()
	a.diagnostics = out.Diagnostics
	a.mu.Unlock()
	a.emit(FinishedEvent(out))
	a.deleteStaging()
	if err != nil {
		return fmt.Errorf("am: unregistering with final status %s: %w", out.Status, err)
	}
	return nil
}

// stopAll stops containers on their NMs, every node at once.
func (a *AM) stopAll(ctx context.Context, ts []*tracked) {
	byNode := map[string][]*hadooppb.ContainerIdProto{}
	for _, t := range ts {
		byNode[t.Node] = append(byNode[t.Node], t.cid)
	}
	var wg sync.WaitGroup
	for node, ids := range byNode {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			start := time.Now()
			_, err := a.cfg.NM.StopContainers(c, node, ids...)
			a.metrics.ObserveRPC("stopContainers", start, err)
			if err != nil {
				a.log.WithError(err).WithField("node", node).Warn("am: stopping TaskExecutors failed (the RM kills them when the application ends)")
			}
		}()
	}
	wg.Wait()
}
