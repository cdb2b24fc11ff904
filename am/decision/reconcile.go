package decision

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/yarn-am/yarn-am/contract"
)

// Mode says when the application is done.
type Mode int

const (
	// Batch: done when every TaskExecutor has exited 0 (SUCCEEDED) or the failure limit is reached
	// (FAILED). TaskExecutors that exit 0 are not replaced.
	Batch Mode = iota
	// Service: TaskExecutors run until the application is killed; any that end are replaced (up to the
	// failure limit for those that failed).
	Service
	// Driver: like Batch for the TaskExecutors, but the driver program decides when the application is
	// done and how it ends; reconcile never finishes it.
	Driver
)

// fits says why got cannot serve an ask for want ("" if it can): memory and vcores may be larger than
// asked (the scheduler rounds them up), every other resource type must be exactly what was asked (a
// container with more GPUs than asked hides them from other applications; the launcher would only use
// the configured amount). Too little is got.Fits(want); too much, want.Fits(got) of the other types.
func fits(got, want contract.Capability) string {
	var bad []string
	for _, k := range got.Fits(want) {
		if k == "memory-mb" || k == "vcores" {
			bad = append(bad, fmt.Sprintf("%s %d < %d asked", k, got[k], want[k]))
		} else {
			bad = append(bad, fmt.Sprintf("%s %d != %d asked", k, got[k], want[k]))
		}
	}
	for _, k := range want.Fits(got) {
		switch _, asked := want[k]; {
		case k == "memory-mb" || k == "vcores":
		case asked:
			bad = append(bad, fmt.Sprintf("%s %d != %d asked", k, got[k], want[k]))
		default:
			bad = append(bad, fmt.Sprintf("%s %d, none asked", k, got[k]))
		}
	}
	slices.Sort(bad)
	return strings.Join(bad, ", ")
}

// Spec is the desired state: how many TaskExecutors of which size, and the failure policy.
type Spec struct {
	Instances   int
	Capability  contract.Capability
	MaxFailures int // failed TaskExecutors replaced before the application fails
	Mode        Mode
	// Gang: all Instances TaskExecutors run at once or none does (taskexecutor.gang): allocations
	// are held until the whole gang is allocated, and one that ends other than by success restarts
	// the gang in a new round (gang.go).
	Gang bool
	// MinInstances (taskexecutor.min-instances): with Gang and 1 <= MinInstances < Instances, an
	// elastic gang whose rounds run with MinInstances to Instances members (elastic.go); otherwise
	// every round has Instances members.
	MinInstances int
	// MaxPerNode (taskexecutor.placement.max-per-node; 0: no limit): an allocation on a node that
	// already has this many of the application's live TaskExecutors is released, and its ask keeps
	// wanting the container (docs/job-file.md#placement).
	MaxPerNode int
}

// Ask is one outstanding container request, keyed by its allocationRequestId.
type Ask struct {
	ID   int64 // allocationRequestId
	Want int   // containers we still want from it
	AtRM int   // what the RM's request table holds, as far as we know: last sent minus allocations since
	// Spread: sent as node-local requests over the hosts with room (taskexecutor.locality =
	// "spread", locality.go); otherwise one "*" request.
	Spread bool
}

// Exit is how a container ended.
type Exit struct {
	Status      int32
	Class       contract.ExitClass
	Diagnostics string
	// StderrTail is the last lines of the worker's own stderr, when its launcher reported them
	// (diagnostics.go).
	StderrTail string
}

// Container is a TaskExecutor container the AM accepted.
type Container struct {
	ID        string
	Node      string
	AskID     int64
	Phase     contract.Phase
	Resources contract.Capability
	Exit      Exit // when Completed
	Round     int  // the gang round it belongs to (gang mode)
	// NeverStarted: it ended while held (gang mode): the RM took it back (its allocation expired,
	// it was preempted, its node was lost) before it was started, so no rank was lost with it.
	NeverStarted bool
}

// Allocation is a container the RM allocated, not yet matched to an ask.
type Allocation struct {
	ID        string
	Node      string
	AskID     int64 // allocationRequestId (-1 when the RM sent none)
	Resources contract.Capability
}

// Observed is what the AM knows of the world.
type Observed struct {
	Asks           []Ask
	Containers     []Container
	NewAllocations []Allocation
	NextAskID      int64 // the allocationRequestId of the next new ask (>= 1)
	// Stopping: no new containers are wanted any more (the driver exited, the AM is finishing).
	Stopping bool
	// HoldNewAsks: do not add asks now (the failure policy's restart backoff); outstanding asks stay.
	HoldNewAsks bool
	// Excluded are the nodes the failure policy excludes: allocations on them are released (the RM
	// allocated them before it got the blacklist addition).
	Excluded map[string]bool
	// Forgotten counts the finished containers no longer in Containers (the AM keeps the records of
	// the latest Config.FinishedHistory only); Reconcile counts them as if they were listed.
	Forgotten Forgotten
	// Round is the current gang round (gang mode); containers of earlier rounds are history.
	Round int
	// SpreadRoom: how many containers of a new ask fit on the nodes now (taskexecutor.locality =
	// "spread"; 0: none or not spreading). That many become a Spread ask of their own; the rest a
	// plain one, so what has to wait for room is asked for as with "any" (its own
	// allocationRequestId: the scheduler keeps each id's locality apart).
	SpreadRoom int
	// Elastic is what time decides for an elastic gang (Spec.MinInstances, elastic.go).
	Elastic ElasticObserved
	// StopFirst names containers a scale-down stops before any other (a framework's idle workers,
	// framework.AMStart.Scale); the rest stop newest first.
	StopFirst map[string]bool
}

// Forgotten summarises finished containers whose records the AM dropped: what Reconcile needs of
// them (successes for Batch's target, counted failures for taskexecutor.max-failures and its
// diagnostics).
type Forgotten struct {
	Succeeded int // exited 0
	Failed    int // ended with a class that counts against taskexecutor.max-failures
	// FailedExits counts Failed by exit status (read only in Reconcile).
	FailedExits map[int32]int
}

// add counts one more dropped finished container.
func (f *Forgotten) Add(e Exit) {
	switch {
	case e.Class == contract.ExitSucceeded:
		f.Succeeded++
	case e.Class.Counts():
		f.Failed++
		if f.FailedExits == nil {
			f.FailedExits = map[int32]int{}
		}
		f.FailedExits[e.Status]++
	}
}

// Release is an allocation the AM gives back, and why.
type Release struct {
	Allocation
	Reason string
}

// AskUpdate is one ResourceRequest to send: the absolute number of containers wanted for an ask (0
// cancels it).
type AskUpdate struct {
	ID    int64
	Count int
}

// Outcome is the application's end.
type Outcome struct {
	Status      contract.FinalStatus
	Diagnostics string
}

// Plan is what the AM does next.
type Plan struct {
	Launch []Allocation // accepted: start a TaskExecutor in each
	// Hold (gang mode): accepted, but kept unstarted until the gang is complete; StartHeld: the gang
	// is complete, start every held container (and Hold).
	Hold      []Allocation
	StartHeld bool
	// NewRound (gang mode): a member of the current round ended other than by success; Stop lists
	// the round's other active members, and the next round asks for the whole gang again.
	NewRound bool
	// RoundReason: why the round restarts, or why the held containers in Stop go back (an elastic
	// gang whose requirement went down below what it runs and holds).
	RoundReason string
	// RoundSize and RoundChange (an elastic gang's NewRound, elastic.go): the size the next round
	// forms at as soon as it holds that many, and "grow" or "shrink" ("" for a restart at full size).
	// Its held containers are not in Stop: they carry over into the next round.
	RoundSize   int
	RoundChange string
	Release     []Release   // give back to the RM
	Stop        []Container // running TaskExecutors to stop: the requirement went down (newest first)
	Send        []AskUpdate // ResourceRequests for the next allocate
	Asks        []Ask       // the ask table once Send is sent
	NextAskID   int64
	// LimitReached: more TaskExecutors failed than taskexecutor.max-failures allows; nothing more is
	// asked for. Failures lists the counted failures still in Observed.Containers (for diagnostics);
	// FailureCount counts them all, the forgotten ones too.
	LimitReached bool
	Failures     []Container
	FailureCount int
	Done         *Outcome // the application is done (never set in Driver mode)
}

// Reconcile computes the AM's next actions from the desired and the observed state. It is a pure
// function: the caller performs the plan (launches, releases, asks) and feeds what comes back into
// the next call.
func Reconcile(spec Spec, obs Observed) Plan {
	p := Plan{NextAskID: obs.NextAskID}
	if p.NextAskID < 1 {
		p.NextAskID = 1
	}
	asks := make([]Ask, len(obs.Asks))
	copy(asks, obs.Asks)
	byID := map[int64]int{}
	for i, a := range asks {
		byID[a.ID] = i
	}

	// In gang mode only the current round counts (gang.go), and a round succeeds as a whole.
	active, succeeded, held, formed := 0, obs.Forgotten.Succeeded, 0, false
	if spec.Gang {
		succeeded = 0
	}
	var roundEnded *Container
	for i, c := range obs.Containers {
		if c.Phase == contract.Completed && c.Exit.Class.Counts() {
			p.Failures = append(p.Failures, c)
		}
		if spec.Gang && c.Round != obs.Round {
			continue
		}
		switch {
		case c.Phase == contract.Stopping: // on its way out: neither active nor done
		case c.Phase == contract.Held:
			active++
			held++
		case c.Phase != contract.Completed:
			active++
			formed = true
		case c.Exit.Class == contract.ExitSucceeded:
			succeeded++
			formed = true
		case spec.Gang && c.Exit.Class != contract.ExitKilledByAM && !c.NeverStarted && roundEnded == nil:
			roundEnded = &obs.Containers[i]
		}
	}
	p.FailureCount = len(p.Failures) + obs.Forgotten.Failed
	p.LimitReached = p.FailureCount > spec.MaxFailures
	stop := obs.Stopping || p.LimitReached

	target := spec.Instances
	if spec.Mode != Service {
		target -= succeeded
	}
	if stop {
		target = 0
	}
	elastic := spec.Elastic()
	if elastic && !stop && succeeded > 0 && spec.Mode != Service {
		target = active - held // the round is finishing: ask for no more
	}
	if spec.Gang && !stop && elastic {
		if r := elasticRestart(spec, obs, roundEnded, formed, succeeded); r.why != "" {
			p.NewRound, p.RoundReason, p.RoundSize, p.RoundChange = true, r.why, r.size, r.change
			carry := spec.Instances // held containers carry over, up to a whole gang; the rest go back
			for _, c := range obs.Containers {
				if c.Round != obs.Round || c.Phase == contract.Completed || c.Phase == contract.Stopping {
					continue
				}
				if c.Phase == contract.Held && carry > 0 {
					carry--
					continue
				}
				p.Stop = append(p.Stop, c)
			}
			target = 0
		} else if surplus := elasticSurplus(spec, obs); len(surplus) > 0 {
			p.Stop, p.RoundReason = surplus, fmt.Sprintf("the requirement went down to %d TaskExecutors", spec.Instances)
			active -= len(surplus)
		}
	} else if spec.Gang && !stop {
		if why := gangRestart(spec, roundEnded, formed, active, succeeded); why != "" {
			// Every other member of the round stops; the next round asks for the whole gang.
			p.NewRound, p.RoundReason = true, why
			for _, c := range obs.Containers {
				if c.Round == obs.Round && c.Phase != contract.Completed && c.Phase != contract.Stopping {
					p.Stop = append(p.Stop, c)
				}
			}
			target = 0
		}
	}
	// Cancel what is no longer wanted before matching, so allocations for it are released as excess.
	wanted := target - active
	if wanted < 0 {
		wanted = 0
	}
	outstanding := 0
	for _, a := range asks {
		outstanding += a.Want
	}
	for i := len(asks) - 1; i >= 0 && outstanding > wanted; i-- {
		cut := min(asks[i].Want, outstanding-wanted)
		asks[i].Want -= cut
		outstanding -= cut
	}
	// Scaling down: pending asks went first (above); then the newest TaskExecutors stop. When the
	// whole application is stopping, finishing stops everything instead. (A gang changes size by a
	// new round.)
	if !stop && !spec.Gang {
		p.Stop = scaleDown(obs.Containers, target, obs.StopFirst)
		active -= len(p.Stop)
	}

	perNode := liveByNode(spec, obs.Containers)
	for _, al := range obs.NewAllocations {
		i, ok := byID[al.AskID]
		if !ok {
			p.Release = append(p.Release, Release{al, fmt.Sprintf("no outstanding request with allocationRequestId %d", al.AskID)})
			continue
		}
		a := &asks[i]
		if a.AtRM > 0 {
			a.AtRM-- // the RM decremented its table when it allocated this container
		}
		if obs.Excluded[al.Node] {
			p.Release = append(p.Release, Release{al, "on a node excluded after repeated TaskExecutor failures"})
			continue
		}
		if a.Want == 0 {
			p.Release = append(p.Release, Release{al, "excess: more containers allocated than requested"})
			continue
		}
		if why := fits(al.Resources, spec.Capability); why != "" {
			p.Release = append(p.Release, Release{al, "does not fit the request: " + why})
			continue
		}
		if spec.MaxPerNode > 0 && perNode[al.Node] >= spec.MaxPerNode {
			p.Release = append(p.Release, Release{al, fmt.Sprintf("its node already runs %d TaskExecutors (taskexecutor.placement.max-per-node = %d)", perNode[al.Node], spec.MaxPerNode)})
			continue
		}
		if perNode != nil {
			perNode[al.Node]++
		}
		a.Want--
		active++
		if spec.Gang {
			p.Hold = append(p.Hold, al)
			continue
		}
		p.Launch = append(p.Launch, al)
	}

	// Ask for what is still missing.
	outstanding = 0
	for _, a := range asks {
		outstanding += a.Want
	}
	// A gang starts when all of it is allocated; an elastic one when it holds its round's size, or
	// at least its minimum by the round's deadline.
	switch {
	case !spec.Gang || p.NewRound || held+len(p.Hold) == 0:
	case elastic:
		p.StartHeld = !formed && elasticForms(spec, obs.Elastic, held+len(p.Hold))
	case outstanding == 0 && active == target:
		p.StartHeld = true
	}
	if need := target - active - outstanding; need > 0 && !obs.HoldNewAsks && !p.NewRound {
		if spread := min(need, obs.SpreadRoom); spread > 0 {
			asks = append(asks, Ask{ID: p.NextAskID, Want: spread, Spread: true})
			p.NextAskID++
			need -= spread
		}
		if need > 0 {
			asks = append(asks, Ask{ID: p.NextAskID, Want: need})
			p.NextAskID++
		}
	}
	for i := range asks {
		if asks[i].Want != asks[i].AtRM {
			p.Send = append(p.Send, AskUpdate{ID: asks[i].ID, Count: asks[i].Want})
			asks[i].AtRM = asks[i].Want
		}
	}
	for _, a := range asks {
		if a.Want > 0 || a.AtRM > 0 {
			p.Asks = append(p.Asks, a)
		}
	}

	switch {
	case spec.Mode == Driver:
	case p.LimitReached:
		p.Done = &Outcome{Status: contract.Failed, Diagnostics: FailureDiagnostics(spec, p.Failures, obs.Forgotten)}
	case spec.Mode == Batch && succeeded >= spec.Instances:
		p.Done = &Outcome{Status: contract.Succeeded, Diagnostics: fmt.Sprintf("all %d TaskExecutors exited with code 0", spec.Instances)}
	case spec.Mode == Batch && elastic && succeeded > 0 && succeeded == roundStarted(obs):
		p.Done = &Outcome{Status: contract.Succeeded, Diagnostics: fmt.Sprintf("all %d TaskExecutors of the elastic gang's round %d exited with code 0", succeeded, obs.Round)}
	}
	return p
}

// liveByNode counts the containers that occupy a node (every one not completed, of any round) by
// node, when spec limits them (nil otherwise).
func liveByNode(spec Spec, cs []Container) map[string]int {
	if spec.MaxPerNode <= 0 {
		return nil
	}
	n := map[string]int{}
	for _, c := range cs {
		if c.Phase != contract.Completed {
			n[c.Node]++
		}
	}
	return n
}

// failureDiagnostics names the exit codes of the failed TaskExecutors, the forgotten ones too (the
// last few in full).
func FailureDiagnostics(spec Spec, failures []Container, forgotten Forgotten) string {
	codes := map[int32]int{}
	for status, n := range forgotten.FailedExits {
		codes[status] += n
	}
	for _, c := range failures {
		codes[c.Exit.Status]++
	}
	keys := make([]int, 0, len(codes))
	for k := range codes {
		keys = append(keys, int(k))
	}
	sort.Ints(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("exit code %d ×%d", k, codes[int32(k)]))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d TaskExecutors failed, more than taskexecutor.max-failures = %d allows (%s)", len(failures)+forgotten.Failed, spec.MaxFailures, strings.Join(parts, ", "))
	// One line per failure, the latest three (docs/running.md#the-workers-own-error).
	from := max(0, len(failures)-3)
	for _, c := range failures[from:] {
		b.WriteString("\n- ")
		b.WriteString(ContainerFailureLine(c))
	}
	return b.String()
}
