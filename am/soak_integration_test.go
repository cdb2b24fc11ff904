//go:build integration && soak

package am_test

// The chaos soak (make soak, make test-soak; docs/development.md#chaos-soak): on the HA mini cluster
// (recovery on) a service job of soakInstances TaskExecutors x 1 GPU runs the whole time and gang jobs
// run one after another, while random faults hit at random times, one after another: the service
// AM SIGKILLed, the AM's launch shell SIGKILLed, a worker SIGKILLed, a NodeManager stopped and started
// again, an RM failover, an RM restart. A monitor checks the invariants every second, from the
// AM's own status and from the processes the NodeManagers started on this machine (the physical
// truth: /proc); after each fault the driver waits until the service job is whole again. The table
// at the end counts faults, recoveries and times to whole; any violation fails the test.

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/testkit/e2e"
)

const (
	soakInstances = 3
	soakAMMemMiB  = 256 // the jobs' am.memory (writeJob): the AM's RSS must stay below it
	gangInstances = 2
)

// Fault kinds, in table order.
var soakKinds = []string{"am-kill", "am-shell-kill", "worker-kill", "nm-stop-start", "rm-failover", "rm-restart"}

// soakProc is a process the mini cluster's NodeManagers started (its cwd is in a container dir).
type soakProc struct {
	pid, ppid             int
	comm, nm, app, contID string
	// am: `yarn-am am ...`, an ApplicationMaster. Told by its command line, not by a container id
	// ending in _000001: after an RM failover the ids go on under a new epoch from 1 again, so a
	// TaskExecutor's may end so too (seen here: container_e01_..._01_000001 ran a gang worker).
	am bool
}

var containerDirRe = regexp.MustCompile(`^(nm-\d+)/.*/(application_\d+_\d+)/(container_[^/]+)`)

// soakProcs lists the processes whose working directory is a container dir under work/.
func soakProcs(work string) []soakProc {
	var out []soakProc
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cwd, err := os.Readlink(fmt.Sprintf("/proc/%d/cwd", pid))
		if err != nil || !strings.HasPrefix(cwd, work+"/") {
			continue
		}
		m := containerDirRe.FindStringSubmatch(strings.TrimPrefix(cwd, work+"/"))
		if m == nil {
			continue
		}
		comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
		stat, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		ppid := 0
		if i := strings.LastIndexByte(string(stat), ')'); i > 0 {
			if f := strings.Fields(string(stat)[i+1:]); len(f) > 2 {
				ppid, _ = strconv.Atoi(f[1])
				if f[0] == "Z" {
					continue // a zombie holds nothing
				}
			}
		}
		args := strings.Split(string(cmdline), "\x00")
		out = append(out, soakProc{pid: pid, ppid: ppid, comm: strings.TrimSpace(string(comm)), nm: m[1], app: m[2], contID: m[3],
			am: len(args) > 1 && filepath.Base(args[0]) == "yarn-am" && args[1] == "am"})
	}
	return out
}

// procEnv reads one variable of a process's environment ("" if absent or unreadable).
func procEnv(pid int, key string) string {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		return ""
	}
	for _, kv := range strings.Split(string(data), "\x00") {
		if v, ok := strings.CutPrefix(kv, key+"="); ok {
			return v
		}
	}
	return ""
}

// rssMiB is the resident set of a process in MiB (-1 if gone).
func rssMiB(pid int) int {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return -1
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return kb / 1024
		}
	}
	return -1
}

// soakStatus is `yarn-am status ID --json` without a *testing.T (the monitor runs in a goroutine).
func soakStatus(bin, id string) (e2e.StatusDoc, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "status", id, "--json").Output()
	var d e2e.StatusDoc
	if err != nil {
		return d, fmt.Errorf("status %s: %w", id, err)
	}
	if err := json.Unmarshal(out, &d); err != nil {
		return d, fmt.Errorf("status %s --json: %w", id, err)
	}
	return d, nil
}

type violation struct {
	first    time.Time
	count    int
	evidence string
}

type soak struct {
	bin, work, serviceID string
	start                time.Time

	mu          sync.Mutex
	gangID      string
	gangWant    int
	service     e2e.StatusDoc
	serviceOK   bool // the last status call answered
	whole       bool // the last poll saw the service job whole
	wholeWhy    string
	pollStart   time.Time // when the last completed poll began
	violations  map[string]*violation
	maxRSS      int
	polls       int
	statusErrs  int
	submitErrs  int
	twoAMsSince time.Time // when a poll first saw more than one live AM process (zero: one or none)
}

func (s *soak) violate(key, evidence string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.violations[key]
	if v == nil {
		v = &violation{first: time.Now(), evidence: evidence}
		s.violations[key] = v
		fmt.Printf("soak %s: VIOLATION %s: %s\n", time.Since(s.start).Round(time.Second), key, evidence)
	}
	v.count++
}

// poll checks every invariant once.
func (s *soak) poll() {
	started := time.Now()
	procs := soakProcs(s.work)
	svc, svcErr := soakStatus(s.bin, s.serviceID)
	s.mu.Lock()
	gangID, gangWant := s.gangID, s.gangWant
	s.mu.Unlock()
	var gang e2e.StatusDoc
	var gangErr error
	if gangID != "" {
		gang, gangErr = soakStatus(s.bin, gangID)
	}

	// Live workers per application, and GPU indexes per NodeManager host from the workers' own
	// environment (what `yarn-am launch` handed them).
	workers := map[string][]soakProc{}
	gpus := map[string][]string{} // "nm-0/2" -> containers
	for _, p := range procs {
		if p.comm != "worker" {
			continue
		}
		workers[p.app] = append(workers[p.app], p)
		for _, g := range strings.Split(procEnv(p.pid, "CUDA_VISIBLE_DEVICES"), ",") {
			if g != "" {
				k := p.nm + "/gpu" + g
				if !slices.Contains(gpus[k], p.contID) {
					gpus[k] = append(gpus[k], p.contID)
				}
			}
		}
	}
	for k, cs := range gpus {
		if len(cs) > 1 {
			slices.Sort(cs)
			s.violate("gpu-shared "+k+" "+strings.Join(cs, ","), fmt.Sprintf("%s held by live containers %v", k, cs))
		}
	}
	// Never more running TaskExecutors than declared: live worker processes and the AM's count.
	check := func(app string, want int, d e2e.StatusDoc, err error) {
		if n := len(workers[app]); n > want {
			var ids []string
			for _, p := range workers[app] {
				ids = append(ids, fmt.Sprintf("%s(pid %d)", p.contID, p.pid))
			}
			s.violate("too-many-workers "+app, fmt.Sprintf("%d live workers, %d declared: %v", n, want, ids))
		}
		if err == nil && d.AM != nil && d.AM.Counts.Running > want {
			s.violate("too-many-running "+app, fmt.Sprintf("the AM counts %d running, %d declared", d.AM.Counts.Running, want))
		}
	}
	check(s.serviceID, soakInstances, svc, svcErr)
	if gangID != "" {
		check(gangID, gangWant, gang, gangErr)
	}
	// The service job never ends while the soak runs.
	if svcErr == nil && e2e.IsEnded(svc.Report.State) {
		s.violate("service-ended", fmt.Sprintf("%s ended %s/%s: %s", s.serviceID, svc.Report.State, svc.Report.FinalStatus, svc.Report.Diagnostics))
	}
	// The AM's RSS stays below its container's memory.
	var amPids []int
	for _, p := range procs {
		if p.app == s.serviceID && p.am {
			amPids = append(amPids, p.pid)
			if r := rssMiB(p.pid); r > 0 {
				s.mu.Lock()
				s.maxRSS = max(s.maxRSS, r)
				s.mu.Unlock()
				if r > soakAMMemMiB {
					s.violate("am-rss", fmt.Sprintf("AM pid %d (%s) RSS %d MiB > %d MiB", p.pid, p.contID, r, soakAMMemMiB))
				}
			}
		}
	}
	// One AM at a time: a killed launch shell leaves its AM orphaned until the NodeManager's cleanup
	// reaches it; two AM processes for longer than 15 s are two attempts driving the same job.
	if len(amPids) > 1 {
		s.mu.Lock()
		if s.twoAMsSince.IsZero() {
			s.twoAMsSince = started
		}
		since := s.twoAMsSince
		s.mu.Unlock()
		if started.Sub(since) > 15*time.Second {
			s.violate("two-ams", fmt.Sprintf("AM processes %v alive together for %s", amPids, started.Sub(since).Round(time.Second)))
		}
	} else {
		s.mu.Lock()
		s.twoAMsSince = time.Time{}
		s.mu.Unlock()
	}
	// Whole: the AM answers with soakInstances running, that many live workers, one live AM process.
	why := ""
	switch {
	case svcErr != nil:
		why = svcErr.Error()
	case svc.AM == nil:
		why = "the AM does not answer"
	case svc.AM.Counts.Running != soakInstances:
		why = fmt.Sprintf("the AM counts %d running", svc.AM.Counts.Running)
	case len(workers[s.serviceID]) != soakInstances:
		why = fmt.Sprintf("%d live workers", len(workers[s.serviceID]))
	case len(amPids) != 1:
		why = fmt.Sprintf("%d AM processes %v", len(amPids), amPids)
	}
	s.mu.Lock()
	s.polls++
	if svcErr != nil {
		s.statusErrs++
	} else {
		s.service = svc
	}
	s.serviceOK = svcErr == nil
	s.whole, s.wholeWhy, s.pollStart = why == "", why, started
	s.mu.Unlock()
}

// waitWhole waits for a poll begun after now that saw the service job whole (a poll begun before
// the fault may not have seen it); false after bound.
func (s *soak) waitWhole(bound time.Duration) (time.Duration, bool, string) {
	t0 := time.Now()
	for {
		time.Sleep(time.Second)
		s.mu.Lock()
		whole, why, at := s.whole, s.wholeWhy, s.pollStart
		s.mu.Unlock()
		if whole && at.After(t0) {
			return time.Since(t0), true, ""
		}
		if time.Since(t0) > bound {
			return time.Since(t0), false, why
		}
	}
}

// control runs a fault control of the harness (minicluster.sh CMD STATE [ARGS]).
func soakControl(args ...string) (string, error) {
	sh, state := os.Getenv("YARN_AM_MINICLUSTER_SH"), os.Getenv("YARN_AM_MINICLUSTER_STATE")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "bash", append([]string{sh, args[0], state}, args[1:]...)...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("minicluster.sh %v: %w: %s", args, err, out)
	}
	return strings.TrimSpace(string(out)), nil
}

// inject runs one fault of kind; the returned text names the target.
func (s *soak) inject(rng *rand.Rand, kind string) (string, error) {
	procs := soakProcs(s.work)
	var am, workers []soakProc
	for _, p := range procs {
		switch {
		case p.app == s.serviceID && p.am:
			am = append(am, p)
		case p.comm == "worker":
			workers = append(workers, p)
		}
	}
	kill := func(p soakProc, what string) (string, error) {
		if err := syscall.Kill(p.pid, syscall.SIGKILL); err != nil {
			return "", fmt.Errorf("SIGKILL %s pid %d: %w", what, p.pid, err)
		}
		return fmt.Sprintf("%s pid %d (%s %s on %s)", what, p.pid, p.comm, p.contID, p.nm), nil
	}
	switch kind {
	case "am-kill":
		if len(am) != 1 {
			return "", fmt.Errorf("want 1 AM process of %s, found %v", s.serviceID, am)
		}
		return kill(am[0], "AM")
	case "am-shell-kill":
		if len(am) != 1 {
			return "", fmt.Errorf("want 1 AM process of %s, found %v", s.serviceID, am)
		}
		for _, p := range procs {
			if p.pid == am[0].ppid {
				return kill(p, "the AM's launch shell")
			}
		}
		return "", fmt.Errorf("the AM pid %d has no parent in its container dir (ppid %d)", am[0].pid, am[0].ppid)
	case "worker-kill":
		if len(workers) == 0 {
			return "", fmt.Errorf("no live worker")
		}
		return kill(workers[rng.IntN(len(workers))], "worker")
	case "nm-stop-start":
		n := strconv.Itoa(rng.IntN(2))
		out, err := soakControl("nm-stop", n)
		if err != nil {
			return "", err
		}
		down := time.Duration(3+rng.IntN(13)) * time.Second
		time.Sleep(down) // how long the host stays down: part of the fault, not a wait for a signal
		out2, err := soakControl("nm-start", n)
		if err != nil {
			return out, err
		}
		return fmt.Sprintf("%s; down %s; %s", out, down, out2), nil
	case "rm-failover":
		return soakControl("failover")
	case "rm-restart":
		return soakControl("rm-restart")
	}
	return "", fmt.Errorf("unknown fault kind %q", kind)
}

// gangs submits gang jobs one after another until stop is closed, and checks each ends SUCCEEDED.
func (s *soak) gangs(job string, stop <-chan struct{}, done chan<- int) {
	n := 0
	defer func() { done <- n }()
	for {
		select {
		case <-stop:
			return
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		cmd := exec.CommandContext(ctx, s.bin, "submit", "--detach", job)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		cancel()
		f := strings.Fields(string(out))
		if err != nil || len(f) == 0 || !e2e.AppIDRe.MatchString(f[len(f)-1]) {
			// A submit while an RM restarts may fail; that is the client's answer, not a job's end:
			// counted and printed, and submitted again.
			s.mu.Lock()
			s.submitErrs++
			s.mu.Unlock()
			fmt.Printf("soak %s: gang submit failed (retrying): %v: %s %s\n", time.Since(s.start).Round(time.Second), err, out, stderr.String())
			time.Sleep(5 * time.Second)
			continue
		}
		id := f[len(f)-1]
		n++
		s.mu.Lock()
		s.gangID, s.gangWant = id, gangInstances
		s.mu.Unlock()
		t0 := time.Now()
		var d e2e.StatusDoc
		for {
			time.Sleep(2 * time.Second)
			d, err = soakStatus(s.bin, id)
			if err == nil && e2e.IsEnded(d.Report.State) {
				break
			}
			if time.Since(t0) > 15*time.Minute {
				s.violate("gang-stuck "+id, fmt.Sprintf("not ended after 15 min: %+v", d.Report))
				e2e.KillQuietly(id)
				break
			}
		}
		if d.Report.FinalStatus != "SUCCEEDED" {
			s.violate("gang-ended "+id, fmt.Sprintf("%s/%s: %s", d.Report.State, d.Report.FinalStatus, d.Report.Diagnostics))
		}
		fmt.Printf("soak %s: gang %s ended %s/%s after %s\n", time.Since(s.start).Round(time.Second), id, d.Report.State, d.Report.FinalStatus, time.Since(t0).Round(time.Second))
		s.mu.Lock()
		s.gangID = ""
		s.mu.Unlock()
	}
}

// soakJob is writeJob with 8 fake GPUs a machine instead of 4.
func soakJob(t *testing.T, s jobSpec) string {
	p := writeJob(t, s)
	data, err := os.ReadFile(p)
	require.NoError(t, err)
	body := strings.Replace(string(data), `FAKE_GPU_COUNT = "4"`, `FAKE_GPU_COUNT = "8"`, 1)
	require.NotEqual(t, string(data), body, "writeJob sets FAKE_GPU_COUNT = \"4\"")
	require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	return p
}

func soakEnvInt(t *testing.T, key string, def int) int {
	v := os.Getenv(key)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	require.NoError(t, err, "%s=%.20q: want a whole number", key, v)
	require.Positive(t, n, "%s=%s: want a positive number", key, v)
	return n
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func TestSoak(t *testing.T) {
	bin := e2e.Env(t)
	require.Equal(t, "1", os.Getenv("YARN_AM_HA"), "the soak needs the HA mini cluster (recovery on): make soak")
	expiryMs := soakEnvInt(t, "YARN_AM_NM_EXPIRY_MS", 600000)
	minutes := soakEnvInt(t, "SOAK_MINUTES", 15)
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("SOAK_SEED"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		require.NoError(t, err, "SOAK_SEED=%.24q: want the unsigned number a soak printed", v)
		seed = n
	}
	rng := rand.New(rand.NewPCG(seed, 0))
	kinds := soakKinds
	if v := os.Getenv("SOAK_FAULTS"); v != "" {
		kinds = strings.Split(v, ",")
		for _, k := range kinds {
			require.Contains(t, soakKinds, k, "SOAK_FAULTS=%.80q: %q is not a fault kind", v, k)
		}
	}
	fmt.Printf("soak: seed %d (replay: SOAK_SEED=%d), %d minutes\n", seed, seed, minutes)
	state := os.Getenv("YARN_AM_MINICLUSTER_STATE")
	require.NotEmpty(t, state, "YARN_AM_MINICLUSTER_STATE is not set: source the soak cluster's env (make soak)")

	// The AM may die many times (the cluster's am.max-attempts is raised by make soak), and every
	// worker SIGKILL is a failure by the book: neither limit may end the service job.
	// The fake nvidia-smi shows FAKE_GPU_COUNT GPUs on both NodeManagers and discovery claims them in
	// one coordination directory per cluster (e2e.CoordinationDir): 8 leaves room for the service job,
	// a gang job and a replacement whose predecessor's claim is not yet reclaimed.
	svcJob := soakJob(t, jobSpec{name: "soak-service", instances: soakInstances, gpus: 1, command: "./worker --sleep 24h",
		maxAttempts: 100, maxFailures: 1000})
	gangJob := soakJob(t, jobSpec{name: "soak-gang", instances: gangInstances, gpus: 1, command: "./worker --rendezvous --sleep 20s",
		maxAttempts: 100, maxFailures: 1000, teExtra: "gang = true\ngang-timeout = \"10m\""})
	s := &soak{bin: bin, work: filepath.Join(state, "work"), start: time.Now(), violations: map[string]*violation{}}
	s.serviceID = e2e.SubmitDetached(t, svcJob)
	fmt.Printf("soak: service job %s (%d TaskExecutors x 1 GPU)\n", s.serviceID, soakInstances)

	stopMon := make(chan struct{})
	monDone := make(chan struct{})
	go func() {
		defer close(monDone)
		for {
			select {
			case <-stopMon:
				return
			case <-time.After(time.Second):
			}
			s.poll()
		}
	}()
	defer func() {
		select {
		case <-stopMon:
		default:
			close(stopMon)
		}
		<-monDone
	}()
	if _, ok, why := s.waitWhole(5 * time.Minute); !ok {
		t.Fatalf("the service job %s never got whole: %s", s.serviceID, why)
	}
	stopGangs := make(chan struct{})
	gangsDone := make(chan int, 1)
	go s.gangs(gangJob, stopGangs, gangsDone)

	// Whole again within: the nm-stop bound covers the RM's expiry of the stopped node (after which
	// the AM hears its containers are lost) plus the replacement's allocation and start.
	bounds := map[string]time.Duration{"nm-stop-start": time.Duration(expiryMs)*time.Millisecond + 5*time.Minute}
	injected, recovered := map[string]int{}, map[string]int{}
	took := map[string][]time.Duration{}
	deadline := s.start.Add(time.Duration(minutes) * time.Minute)
	aborted, nFaults := "", 0
	for time.Now().Before(deadline) {
		gap := time.Duration(5+rng.IntN(21)) * time.Second
		time.Sleep(gap) // random fault timing is the point of the soak, not a wait for a signal
		if time.Now().After(deadline) {
			break
		}
		kind := kinds[rng.IntN(len(kinds))]
		t0 := time.Now()
		what, err := s.inject(rng, kind)
		if err != nil {
			s.violate("inject "+kind, err.Error())
			aborted = fmt.Sprintf("%s could not be injected: %v", kind, err)
			break
		}
		injected[kind]++
		nFaults++
		fmt.Printf("soak %s: fault %d %s: %s\n", time.Since(s.start).Round(time.Second), nFaults, kind, what)
		_, ok, why := s.waitWhole(cmp.Or(bounds[kind], 4*time.Minute))
		d := time.Since(t0)
		if !ok {
			s.violate("not-whole-after "+kind, fmt.Sprintf("%s: not whole %s after the fault: %s", what, d.Round(time.Second), why))
			aborted = fmt.Sprintf("the service job is not whole after %s", kind)
			break
		}
		recovered[kind]++
		took[kind] = append(took[kind], d)
		fmt.Printf("soak %s: whole again %s after %s\n", time.Since(s.start).Round(time.Second), d.Round(100*time.Millisecond), kind)
	}
	close(stopGangs)
	var gangsRun int
	select {
	case gangsRun = <-gangsDone:
	case <-time.After(20 * time.Minute):
		s.violate("gangs-stuck", "the last gang job did not end within 20 min")
	}
	close(stopMon)
	<-monDone
	// The service job ends only when the soak kills it.
	e2e.KillQuietly(s.serviceID)
	end := e2e.WaitFor(t, s.serviceID, 3*time.Minute, "the end after kill", func(d e2e.StatusDoc) bool { return e2e.IsEnded(d.Report.State) })
	if end.Report.State != "KILLED" {
		s.violate("service-end", fmt.Sprintf("killed by the soak, ended %s/%s: %s", end.Report.State, end.Report.FinalStatus, end.Report.Diagnostics))
	}

	s.mu.Lock() // a gang goroutine stuck past its bound may still record a violation
	defer s.mu.Unlock()
	var b strings.Builder
	fmt.Fprintf(&b, "\nchaos soak: seed %d, %s, service %s (%d x 1 GPU), %d gang jobs (%d x 1 GPU), %d refused gang submits, %d polls (%d status errors), AM max RSS %d MiB\n",
		seed, time.Since(s.start).Round(time.Second), s.serviceID, soakInstances, gangsRun, gangInstances, s.submitErrs, s.polls, s.statusErrs, s.maxRSS)
	fmt.Fprintf(&b, "%-14s %8s %10s %14s %10s\n", "fault", "injected", "recovered", "whole: median", "max")
	total := 0
	for _, k := range soakKinds {
		mx := time.Duration(0)
		if len(took[k]) > 0 {
			mx = slices.Max(took[k])
		}
		total += injected[k]
		fmt.Fprintf(&b, "%-14s %8d %10d %14s %10s\n", k, injected[k], recovered[k], median(took[k]).Round(100*time.Millisecond), mx.Round(100*time.Millisecond))
	}
	fmt.Fprintf(&b, "%-14s %8d\nviolations: %d\n", "total", total, len(s.violations))
	keys := make([]string, 0, len(s.violations))
	for k := range s.violations {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := s.violations[k]
		fmt.Fprintf(&b, "  %s (seen %d times, first at %s): %s\n", k, v.count, v.first.Sub(s.start).Round(time.Second), v.evidence)
	}
	fmt.Print(b.String())
	_ = os.WriteFile(filepath.Join(state, "soak-report.txt"), []byte(b.String()), 0o644)
	require.Empty(t, aborted, "the soak stopped early")
	require.Empty(t, s.violations, "invariant violations (seed %d):%s", seed, b.String())
	require.Positive(t, total, "at least one fault was injected")
}
