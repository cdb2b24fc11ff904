package decision

import (
	"fmt"
	"sort"
	"time"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/jobfile"
)

// This file is the failure policy: pure bookkeeping over time that the loop feeds with what happened
// and the current time, and asks what to do. No clocks and no I/O here, so every rule is unit-tested
// with made-up times.
//
//   - failure rate: at most MaxFailureRate counted failures within FailureWindow (failures that are
//     not the worker's fault — preemption, lost nodes and disks, kills by the AM or RM — do not count;
//     ExitClass.Counts decides);
//   - restart backoff: replacing a failed TaskExecutor waits RestartBackoff, doubling with every
//     further counted failure in the window, capped at RestartBackoffMax;
//   - node exclusion: NodeMaxFailures counted failures on one node within FailureWindow exclude it
//     (the loop sends a blacklist addition) for NodeExclusionTimeout (then a removal);
//   - not enough resources: asks pending with no allocation for PendingTimeout → report, repeated at
//     a doubling interval while it lasts; the action is to wait or to fail the application.

// Pending-timeout actions (the values of policy.on-pending-timeout).
const (
	PendingWait = jobfile.PendingWait
	PendingFail = jobfile.PendingFail
)

// defaultPendingReportMax caps the doubling interval of not-enough-resources reports.
const defaultPendingReportMax = 10 * time.Minute

// PolicyConfig is the failure policy's limits as the AM runs them: the job's jobfile.Policy (the
// [policy] table and the AM's flags, read and checked there, once), converted with PolicyConfig(p).
// Zero values take jobfile.DefaultPolicy's; a negative MaxFailureRate or NodeMaxFailures disables
// that rule.
type PolicyConfig jobfile.Policy

// WithDefaults returns c with zero fields set to their defaults.
func (c PolicyConfig) WithDefaults() PolicyConfig {
	def := jobfile.DefaultPolicy()
	if c.MaxFailureRate == 0 {
		c.MaxFailureRate = def.MaxFailureRate
	}
	if c.FailureWindow <= 0 {
		c.FailureWindow = def.FailureWindow
	}
	if c.RestartBackoff <= 0 {
		c.RestartBackoff = def.RestartBackoff
	}
	if c.RestartBackoffMax <= 0 {
		c.RestartBackoffMax = def.RestartBackoffMax
	}
	if c.RestartBackoffMax < c.RestartBackoff {
		c.RestartBackoffMax = c.RestartBackoff
	}
	if c.NodeMaxFailures == 0 {
		c.NodeMaxFailures = def.NodeMaxFailures
	}
	if c.NodeExclusionTimeout <= 0 {
		c.NodeExclusionTimeout = def.NodeExclusionTimeout
	}
	if c.PendingTimeout <= 0 {
		c.PendingTimeout = def.PendingTimeout
	}
	if c.OnPendingTimeout == "" {
		c.OnPendingTimeout = def.OnPendingTimeout
	}
	return c
}

// Validate names the first invalid setting by its flag. yarn-am am has checked the policy already
// (jobfile.File.Policy, jobfile.PolicyFlags.Apply); this guards New's other Go callers.
func (c PolicyConfig) Validate() error {
	if c.OnPendingTimeout != "" && c.OnPendingTimeout != PendingWait && c.OnPendingTimeout != PendingFail {
		return fmt.Errorf("--on-pending-timeout=%q: valid values are %q and %q", c.OnPendingTimeout, PendingWait, PendingFail)
	}
	for _, d := range []struct {
		flag string
		v    time.Duration
	}{{"--failure-window", c.FailureWindow}, {"--restart-backoff", c.RestartBackoff}, {"--restart-backoff-max", c.RestartBackoffMax},
		{"--node-exclusion-timeout", c.NodeExclusionTimeout}, {"--pending-timeout", c.PendingTimeout}} {
		if d.v < 0 {
			return fmt.Errorf("%s=%s: must be a positive duration like 30s or 5m", d.flag, d.v)
		}
	}
	return nil
}

type failureRec struct {
	at   time.Time
	node string
}

// Policy is the failure policy's state. Not safe for concurrent use (the loop owns it).
type Policy struct {
	cfg      PolicyConfig
	failures []failureRec         // counted failures within the window, oldest first
	excluded map[string]time.Time // node → when its exclusion ends
	lastFail time.Time

	pendingSince time.Time // start of the current pending stretch without allocations (zero: none)
	nextReport   time.Time
	reportEvery  time.Duration
	reported     bool // a not-enough-resources report is standing
}

// NewPolicy returns a policy with cfg (defaults filled in).
func NewPolicy(cfg PolicyConfig) *Policy {
	return &Policy{cfg: cfg.WithDefaults(), excluded: map[string]time.Time{}}
}

// Config returns the effective configuration.
func (p *Policy) Config() PolicyConfig { return p.cfg }

// exitDecision is what the policy makes of a container's end.
type exitDecision struct {
	Counted        bool          // the failure counts (the worker's fault)
	ExcludeNode    string        // exclude this node now ("" if not)
	NodeFailures   int           // counted failures on that node within the window
	RateExceeded   bool          // more counted failures within the window than MaxFailureRate
	Reason         string        // when RateExceeded: the diagnostics
	RestartBackoff time.Duration // wait this long before asking for a replacement
}

func (p *Policy) prune(now time.Time) {
	cut := now.Add(-p.cfg.FailureWindow)
	i := 0
	for i < len(p.failures) && !p.failures[i].at.After(cut) {
		i++
	}
	p.failures = p.failures[i:]
}

// RecordExit records that a container on node ended with class at now.
func (p *Policy) RecordExit(now time.Time, node string, class contract.ExitClass) exitDecision {
	if !class.Counts() {
		return exitDecision{}
	}
	p.prune(now)
	p.failures = append(p.failures, failureRec{now, node})
	p.lastFail = now
	d := exitDecision{Counted: true, RestartBackoff: p.backoff()}
	if node != "" && p.cfg.NodeMaxFailures > 0 {
		if _, already := p.excluded[node]; !already {
			for _, f := range p.failures {
				if f.node == node {
					d.NodeFailures++
				}
			}
			if d.NodeFailures >= p.cfg.NodeMaxFailures {
				d.ExcludeNode = node
				p.excluded[node] = now.Add(p.cfg.NodeExclusionTimeout)
			}
		}
	}
	if p.cfg.MaxFailureRate > 0 && len(p.failures) > p.cfg.MaxFailureRate {
		d.RateExceeded = true
		d.Reason = fmt.Sprintf("%d TaskExecutor failures within %s, more than --max-failure-rate = %d allows", len(p.failures), p.cfg.FailureWindow, p.cfg.MaxFailureRate)
	}
	return d
}

// backoff is the delay for the current number of failures in the window: RestartBackoff × 2^(n-1),
// capped. With no failure in the window it is zero.
func (p *Policy) backoff() time.Duration {
	n := len(p.failures)
	if n == 0 {
		return 0
	}
	d := p.cfg.RestartBackoff
	for i := 1; i < n && d < p.cfg.RestartBackoffMax; i++ {
		d *= 2
	}
	return min(d, p.cfg.RestartBackoffMax)
}

// RestartAt is when a replacement may be asked for: the last counted failure plus the backoff
// (zero time when nothing failed within the window).
func (p *Policy) RestartAt(now time.Time) time.Time {
	p.prune(now)
	if len(p.failures) == 0 {
		return time.Time{}
	}
	return p.lastFail.Add(p.backoff())
}

// Lift returns the nodes whose exclusion has timed out at now (sorted) and forgets them.
func (p *Policy) Lift(now time.Time) []string {
	var out []string
	for n, until := range p.excluded {
		if !now.Before(until) {
			out = append(out, n)
			delete(p.excluded, n)
		}
	}
	sort.Strings(out)
	return out
}

// Excluded returns the currently excluded nodes, sorted.
func (p *Policy) Excluded() []string {
	out := make([]string, 0, len(p.excluded))
	for n := range p.excluded {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// IsExcluded says whether the policy excludes node now (its own timeout lifts it).
func (p *Policy) IsExcluded(node string) bool {
	_, ok := p.excluded[node]
	return ok
}

// AllExcluded says whether every one of the cluster's nodes is excluded (clusterNodes from the
// allocate response's num_cluster_nodes; 0 = unknown, never all).
func (p *Policy) AllExcluded(clusterNodes int) (bool, string) {
	if clusterNodes <= 0 || len(p.excluded) < clusterNodes {
		return false, ""
	}
	return true, fmt.Sprintf("every node of the cluster (%d) is excluded after repeated TaskExecutor failures: %v (--node-max-failures = %d within --failure-window = %s)",
		clusterNodes, p.Excluded(), p.cfg.NodeMaxFailures, p.cfg.FailureWindow)
}

// pendingDecision is what the policy makes of the pending asks at one moment.
type pendingDecision struct {
	Report     bool          // emit a not-enough-resources event now
	Fail       bool          // and fail the application (--on-pending-timeout=fail)
	Cleared    bool          // a standing report is over: nothing is pending any more
	PendingFor time.Duration // how long nothing was allocated while asks were pending
}

// ObservePending is called on every loop turn with the number of containers asked for and not yet
// allocated, and whether an allocation arrived since the last call (progress restarts the clock:
// a shortage is asks pending while nothing comes).
func (p *Policy) ObservePending(now time.Time, pending int, progressed bool) pendingDecision {
	if pending <= 0 {
		d := pendingDecision{Cleared: p.reported}
		p.pendingSince, p.reported, p.reportEvery = time.Time{}, false, 0
		return d
	}
	if p.pendingSince.IsZero() || (progressed && !p.reported) {
		p.pendingSince = now
		return pendingDecision{}
	}
	d := pendingDecision{PendingFor: now.Sub(p.pendingSince)}
	if d.PendingFor < p.cfg.PendingTimeout || now.Before(p.nextReport) {
		return d
	}
	d.Report = true
	d.Fail = p.cfg.OnPendingTimeout == PendingFail
	if p.reportEvery == 0 {
		p.reportEvery = p.cfg.PendingTimeout
	} else {
		p.reportEvery = min(2*p.reportEvery, max(defaultPendingReportMax, p.cfg.PendingTimeout))
	}
	p.nextReport = now.Add(p.reportEvery)
	p.reported = true
	return d
}

// Reporting says whether a not-enough-resources report is standing.
func (p *Policy) Reporting() bool { return p.reported }

// PolicyState is the failure policy's memory: counted failures within the window and the excluded
// nodes with the end of their exclusion.
type PolicyState struct {
	Failures []PolicyFailure      `json:"failures,omitempty"`
	Excluded map[string]time.Time `json:"excluded,omitempty"`
	LastFail time.Time            `json:"lastFail,omitempty"`
}

// PolicyFailure is one counted failure.
type PolicyFailure struct {
	At   time.Time `json:"at"`
	Node string    `json:"node,omitempty"`
}

// Snapshot returns the policy's memory.
func (p *Policy) Snapshot() PolicyState {
	s := PolicyState{LastFail: p.lastFail}
	for _, f := range p.failures {
		s.Failures = append(s.Failures, PolicyFailure{At: f.at, Node: f.node})
	}
	if len(p.excluded) > 0 {
		s.Excluded = map[string]time.Time{}
		for n, t := range p.excluded {
			s.Excluded[n] = t
		}
	}
	return s
}

// Restore takes over the memory of an earlier attempt's policy.
func (p *Policy) Restore(s PolicyState) {
	p.failures = p.failures[:0]
	for _, f := range s.Failures {
		p.failures = append(p.failures, failureRec{at: f.At, node: f.Node})
	}
	sort.Slice(p.failures, func(i, j int) bool { return p.failures[i].at.Before(p.failures[j].at) })
	for n, t := range s.Excluded {
		p.excluded[n] = t
	}
	if s.LastFail.After(p.lastFail) {
		p.lastFail = s.LastFail
	}
}

// excludeUnfit excludes node at once for --node-exclusion-timeout (a discovery failure there: the node
// lacks what the job needs); false if node exclusion is off (--node-max-failures 0) or the node is
// excluded already. The failure itself still counts once toward taskexecutor.max-failures
// (contract.ExitClass.Counts): a job whose every node lacks the device fails rather than waits.
func (p *Policy) ExcludeUnfit(now time.Time, node string) bool {
	if node == "" || p.cfg.NodeMaxFailures <= 0 {
		return false
	}
	if _, already := p.excluded[node]; already {
		return false
	}
	p.excluded[node] = now.Add(p.cfg.NodeExclusionTimeout)
	return true
}
