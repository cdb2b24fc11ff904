package flink

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/framework"
	"github.com/yarn-am/yarn-am/jobfile"
)

// A JobManager restarted in place (docs/flink.md#a-jobmanager-restarted-in-place): when the
// JobManager's JVM dies while its AM lives (killed, crashed, out of memory), flink-jobmanager ends
// with exitJobManagerLost; the AM (framework.AM.RestartDriver) starts it again in the same attempt,
// from the job's latest completed checkpoint (pickRestore, as a later AM attempt does), on the ports
// the first JVM bound: those are the ones the TaskManagers know, so they register with the new
// JobManager once theirs is lost to them (Flink's heartbeat timeout), and the application does not
// fail. At most jobmanager-restarts restarts within jobmanager-restart-window; the next loss ends the
// attempt as before.

// exitJobManagerLost is flink-jobmanager's exit code when the JobManager's JVM ended while its job ran
// (seen RUNNING, not ended: flinkdist.ErrLostWhileRunning), after its ports were published: what the AM
// restarts in place. A JobManager whose job never ran exits 1: it would fail the same way again. Above the codes
// workers commonly use, beside the launcher's own (contract.LauncherDiscoveryFailed and after).
const exitJobManagerLost = 93

// envJobManagerPorts is "RPC,REST": the ports a restarted JobManager's JVM binds, the first one's,
// set by the AM in the restarted driver's environment only.
const envJobManagerPorts = "YARN_AM_FLINK_JOBMANAGER_PORTS"

// The [flink] keys of the restart policy and their defaults.
const (
	keyJobManagerRestarts      = "jobmanager-restarts"
	keyJobManagerRestartWindow = "jobmanager-restart-window"
	defaultJobManagerRestarts  = 3
	defaultJobManagerWindow    = time.Hour
	maxJobManagerRestarts      = 100
)

// readRestartPolicy reads jobmanager-restarts and jobmanager-restart-window into f (after f.Jar).
func readRestartPolicy(t *jobfile.Table, f *flinkSpec) {
	f.JobManagerRestarts, f.JobManagerRestartWindow = defaultJobManagerRestarts, defaultJobManagerWindow
	if n, set := t.Int(keyJobManagerRestarts, 0, maxJobManagerRestarts, " (restarts of a lost JobManager within flink.jobmanager-restart-window; 0: a lost JobManager ends the attempt)"); set {
		f.JobManagerRestarts = int(n)
		if n > 0 && f.Jar == "" {
			t.Problem("flink.%s = %d: a session cluster (no flink.jar) keeps no job to restore, so its lost JobManager is not restarted; leave the key out or add jar", keyJobManagerRestarts, n)
		}
	}
	if d, set := t.Duration(keyJobManagerRestartWindow, time.Minute, `"1h" (the default) or "30m"`); set {
		f.JobManagerRestartWindow = d
	}
}

// pinnedPorts returns the ports a restarted JobManager binds (envJobManagerPorts), ok false when the
// variable is unset; a malformed value is an error naming it.
func pinnedPorts(v string) (rpc, rest string, ok bool, err error) {
	if v == "" {
		return "", "", false, nil
	}
	rpc, rest, found := strings.Cut(v, ",")
	for _, p := range []string{rpc, rest} {
		if n, perr := strconv.Atoi(p); !found || perr != nil || n < 1 || n > 65535 {
			return "", "", false, fmt.Errorf("%s = %q: want the RPC and REST ports as \"RPC,REST\" (the AM sets it for a restarted JobManager)", envJobManagerPorts, v)
		}
	}
	return rpc, rest, true, nil
}

// restarter is the AM's side: framework.AM.RestartDriver of an application cluster.
type restarter struct {
	max    int
	window time.Duration
	jm     *jobManager
	rec    *recorder       // the latest checkpoint seen (nil: none kept)
	files  framework.Files // the staging directory's filesystem (pickRestore)
	spec   *flinkSpec
	emit   func(contract.Event)
	now    func() time.Time

	mu    sync.Mutex
	times []time.Time // the restarts within the window, oldest first
	total int
	last  string // the last restart, for the details
}

// restart is framework.AM.RestartDriver: a JobManager lost while its job ran is started
// again from its latest completed checkpoint on the ports it had bound, while the policy allows.
func (r *restarter) restart(ctx context.Context, code int) (map[string]string, bool) {
	b, bound := r.jm.known()
	// A driver killed by a signal took its JVM with it (it ends with its parent): lost as well.
	if !bound || (code != exitJobManagerLost && code <= 128) {
		return nil, false
	}
	now := r.now()
	r.mu.Lock()
	kept := r.times[:0]
	for _, t := range r.times {
		if now.Sub(t) < r.window {
			kept = append(kept, t)
		}
	}
	r.times = kept
	if len(r.times) >= r.max {
		r.mu.Unlock()
		r.emit(contract.Event{Type: eventJob, Severity: contract.SeverityError, Message: fmt.Sprintf(
			"the JobManager was lost (%s) after %d restarts within %s (flink.%s = %d): not started again; the attempt ends",
			lostHow(code), len(kept), r.window, keyJobManagerRestarts, r.max)})
		return nil, false
	}
	r.times = append(r.times, now)
	r.total++
	n := len(r.times)
	r.mu.Unlock()

	_, rpcPort, err1 := net.SplitHostPort(b.RPC)
	_, restPort, err2 := net.SplitHostPort(b.REST)
	if err1 != nil || err2 != nil {
		return nil, false
	}
	env := map[string]string{envJobManagerPorts: rpcPort + "," + restPort, envRecover: ""}
	from := "with no checkpoint to start from: it starts " + startsFrom(r.spec)
	if rec := r.rec.snapshot(); rec.Path != "" || len(rec.Savepoints) > 0 {
		if pick := pickRestore(ctx, rec, r.files); pick.Path != "" {
			env[envRecover] = pick.Path
			from = fmt.Sprintf("from %s at %s, %s", pick.name(), pick.Path, pick.Why)
		} else {
			from = "with no kept checkpoint left (" + pick.Why + "): it starts " + startsFrom(r.spec)
		}
	}
	say := fmt.Sprintf("the JobManager was lost (%s) while the AM runs: started again in place (restart %d of at most %d within %s), %s; its TaskManagers register again at RPC %s",
		lostHow(code), n, r.max, r.window, from, b.RPC)
	r.emit(contract.Event{Type: eventJob, Severity: contract.SeverityWarning, Message: say})
	r.mu.Lock()
	r.last = now.Format(time.TimeOnly) + ", " + from
	r.mu.Unlock()
	return env, true
}

// lostHow says how the driver ended.
func lostHow(code int) string {
	if code > 128 {
		return fmt.Sprintf("its driver was killed by signal %d", code-128)
	}
	return "its JVM ended before its job did"
}

// details are the restarts so far, for the status.
func (r *restarter) details() []contract.Detail {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.total == 0 {
		return nil
	}
	return []contract.Detail{{Name: "JobManager restarts", Value: fmt.Sprintf("%d (last at %s)", r.total, r.last)}}
}
