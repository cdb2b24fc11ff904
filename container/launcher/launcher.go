package launcher

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/framework"
	"github.com/yarn-am/yarn-am/internal/proc"
	"github.com/yarn-am/yarn-am/internal/startfail"
	"github.com/yarn-am/yarn-am/internal/stderrtail"
	"github.com/yarn-am/yarn-am/internal/text"
	"github.com/yarn-am/yarn-am/resources"
)

// Report is what the launcher tells the AM about its container: the infos the worker gets or why
// discovery failed.
type Report struct {
	ContainerID string                      // from CONTAINER_ID, set by YARN; "" outside YARN
	Infos       map[string][]resources.Info // every configured resource, by name (nil on failure)
	InfoFile    string                      // absolute path of external-resources.json ("" on failure)
	// FailedResource and Failure are set when discovery failed: the worker will not start.
	FailedResource string
	Failure        string
	// Port is a port that was free on this node (gang mode): the master port if this is rank 0.
	Port int
	// Topology is, per GPU resource whose built-in script read one, the topology it chose from
	// (docs/gpus.md#topology-connected-sets); nil when none did.
	Topology map[string]contract.GPUTopology
	// Exited marks the report sent when the worker exited (stderrtail.go), before the device claims
	// are released: ExitCode is its exit code, WorkerStderr the last lines of the worker's own stderr
	// when it was non-zero; such a report carries nothing else.
	Exited       bool
	WorkerStderr string
	ExitCode     int
}

// Reporter sends the launcher's report to the AM. It is called once after discovery (successful or
// not) and before the worker starts, and once more when the worker exited (Exited). A report error is logged and does not stop the worker: the
// worker's devices are known locally, and the AM also learns about a failed container from YARN.
type Reporter interface {
	Report(ctx context.Context, r Report) error
}

// NopReporter reports nowhere (outside YARN, and until the AM's report endpoint is configured).
type NopReporter struct{}

// Report does nothing.
func (NopReporter) Report(context.Context, Report) error { return nil }

// DiscoveryFailure says which resource's driver failed.
type DiscoveryFailure struct {
	Resource string
	Err      error
}

// Error is `discovery failed for resource "gpu": <driver error>`.
func (e *DiscoveryFailure) Error() string {
	return fmt.Sprintf("discovery failed for resource %q: %v", e.Resource, e.Err)
}

// Unwrap returns the driver's error.
func (e *DiscoveryFailure) Unwrap() error { return e.Err }

// DiscoverAll runs the driver of every resource, in configuration order, for its amount, and returns
// the infos of every resource (an empty list for a resource without driver). On the first failure it
// releases the claims already taken and returns a *DiscoveryFailure.
func DiscoverAll(ctx context.Context, res []resources.Resource, drivers map[string]resources.Driver) (map[string][]resources.Info, error) {
	infos := make(map[string][]resources.Info, len(res))
	var done []resources.Driver
	for _, r := range res {
		d, ok := drivers[r.Name]
		if !ok {
			infos[r.Name] = []resources.Info{}
			continue
		}
		got, err := d.Discover(ctx, int(r.Amount))
		if err == nil && len(got) < int(r.Amount) {
			err = fmt.Errorf("driver %q returned %d info(s) for amount %d", r.Driver, len(got), r.Amount)
		}
		if err != nil {
			// The failing driver may hold nothing, but releasing it too is harmless.
			ReleaseAll(ctx, append(done, d), logrus.WithField("resource", r.Name))
			return nil, &DiscoveryFailure{Resource: r.Name, Err: err}
		}
		done = append(done, d)
		infos[r.Name] = got
	}
	return infos, nil
}

// ReleaseAll releases the claims of every driver that holds some (resources.Releaser), in reverse
// order; errors are logged, since there is nothing better to do with them once the worker is gone.
func ReleaseAll(ctx context.Context, drivers []resources.Driver, log logrus.FieldLogger) {
	for i := len(drivers) - 1; i >= 0; i-- {
		if r, ok := drivers[i].(resources.Releaser); ok {
			if err := r.Release(ctx); err != nil {
				log.WithError(err).Warn("yarn-am launch: releasing device claims failed; they end when this process exits")
			}
		}
	}
}

// WorkerEnv returns the worker's environment: base, plus the info file and per-resource variables of
// resources.InfoEnv (always set), plus the drivers' variables (CUDA_VISIBLE_DEVICES, ...) unless base
// already has a non-empty value for them (the user's choice wins). The result is sorted.
func WorkerEnv(base []string, infoFile string, infos map[string][]resources.Info, drivers map[string]resources.Driver) []string {
	env := map[string]string{}
	for _, kv := range base {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	userSet := func(k string) bool { return env[k] != "" }
	names := make([]string, 0, len(drivers))
	for n := range drivers {
		names = append(names, n)
	}
	sort.Strings(names)
	extra := map[string]string{}
	for _, n := range names {
		if ep, ok := drivers[n].(resources.EnvProvider); ok {
			for k, v := range ep.Env(infos[n]) {
				if userSet(k) {
					continue
				}
				if prev, dup := extra[k]; dup && prev != "" && v != "" {
					v = prev + "," + v // two GPU resources: the worker sees both sets
				}
				extra[k] = v
			}
		}
	}
	for k, v := range extra {
		env[k] = v
	}
	for k, v := range resources.InfoEnv(infoFile, infos) {
		env[k] = v
	}
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// Launcher runs the drivers, then the worker, inside a container (docs/design.md#roles).
type Launcher struct {
	Resources []resources.Resource        // the validated configuration, in order
	Drivers   map[string]resources.Driver // by resource name; resources without driver are absent
	WorkDir   string                      // where external-resources.json goes; "" = current directory
	Env       []string                    // the worker's base environment; nil = os.Environ()
	Reporter  Reporter                    // nil = NopReporter
	// ContainerID names the container in the report; "" = $CONTAINER_ID.
	ContainerID    string
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Log            logrus.FieldLogger // nil = logrus.StandardLogger()
	// InContainer: the launcher runs in a YARN container, whose process group the NodeManager
	// signals as a whole (see runWorker). RunInContainer sets it when CONTAINER_ID is set.
	InContainer bool
	// KillGrace is how long after a SIGTERM in a container the launcher kills what is left of the
	// group; 0 = DefaultKillGrace.
	KillGrace time.Duration
	// Gang: the container is a rank of a gang (YARN_AM_GANG=1): it reports a free port on Host and
	// waits for Rendezvous before the worker starts (rendezvous.go).
	Gang       bool
	Host       string
	Rendezvous Rendezvouser
	// Framework is the job's framework ($YARN_AM_FRAMEWORK): its PrepareWorker runs before the
	// worker starts (a gang's rendezvous); nil = none.
	Framework framework.Framework
	// Preemption, when set, watches for the container's preemption notice while the worker runs
	// (preemption.go); the worker's environment names the notice file.
	Preemption *Preemption
	// GPUSampling, when set, samples the container's GPUs while the worker runs (gpusample.go).
	GPUSampling *GPUSampling
}

// Run discovers the devices, writes the info file, reports, runs argv as the worker and returns the
// launcher's exit code: the worker's own code, 128+N if it was killed by signal N, or one of the Exit*
// constants if the worker could not be started. Outside a container SIGTERM, SIGINT and SIGHUP
// received by this process are forwarded to the worker; in one, the worker shares the container's
// process group (runWorker). A signal received before the worker starts stops the launch (128+N). Device
// claims are released once the worker has exited.
func (l *Launcher) Run(ctx context.Context, argv []string) int {
	log := l.Log
	if log == nil {
		log = logrus.StandardLogger()
	}
	stderr := l.Stderr
	if stderr == nil {
		stderr = os.Stderr
	}
	if len(argv) == 0 {
		fmt.Fprintln(stderr, "yarn-am launch: no worker command; usage: yarn-am launch [flags] -- CMD ARGS...")
		return contract.LauncherConfigError
	}
	reporter := l.Reporter
	if reporter == nil {
		reporter = NopReporter{}
	}
	containerID := l.ContainerID
	if containerID == "" {
		containerID = os.Getenv("CONTAINER_ID")
	}
	if containerID != "" {
		log = log.WithField("container", containerID)
	}
	if h, ok := reporter.(Heartbeater); ok && containerID != "" {
		hctx, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { defer close(done); Heartbeat(hctx, h, containerID, contract.LivenessInterval, log) }()
		defer func() { stop(); <-done }()
	}

	// Signals are caught from the start: before the worker runs they cancel discovery, afterwards they
	// are forwarded.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	defer signal.Stop(sigs)
	dctx, cancel := context.WithCancel(ctx)
	defer cancel()
	early := make(chan os.Signal, 1)
	stopEarly := make(chan struct{})
	earlyDone := make(chan struct{})
	go func() {
		defer close(earlyDone)
		select {
		case s := <-sigs:
			early <- s
			cancel()
		case <-stopEarly:
		}
	}()
	stopEarlyWatch := func() { close(stopEarly); <-earlyDone }

	ordered := l.orderedDrivers()
	infos, err := DiscoverAll(dctx, l.Resources, l.Drivers)
	stopEarlyWatch()
	if s := pending(early); s != nil {
		if err == nil {
			ReleaseAll(ctx, ordered, log)
		}
		fmt.Fprintf(stderr, "yarn-am launch: received %v before the worker started; not starting it\n", s)
		return 128 + int(s.(syscall.Signal))
	}
	if err != nil {
		var df *DiscoveryFailure
		failed := ""
		if errors.As(err, &df) {
			failed = df.Resource
			fmt.Fprintf(stderr, "%s%q: %v\n", contract.DiscoveryFailedPrefix, df.Resource, df.Err)
		} else {
			fmt.Fprintf(stderr, "yarn-am launch: %v\n", err)
		}
		log.WithError(err).WithField("resource", failed).Error("yarn-am launch: discovery failed; the worker is not started")
		if rerr := reporter.Report(ctx, Report{ContainerID: containerID, FailedResource: failed, Failure: err.Error()}); rerr != nil {
			log.WithError(rerr).Warn("yarn-am launch: reporting the discovery failure to the AM failed")
		}
		return contract.LauncherDiscoveryFailed
	}
	defer ReleaseAll(context.WithoutCancel(ctx), ordered, log)

	dir := l.WorkDir
	if dir == "" {
		dir = "."
	}
	infoFile, err := resources.WriteInfoFile(dir, infos)
	if err != nil {
		fmt.Fprintf(stderr, "yarn-am launch: cannot write the resource info file: %v\n", err)
		return contract.LauncherWorkerStartFailed
	}
	base := l.Env
	if base == nil {
		base = os.Environ()
	}
	envDrivers := l.Drivers
	if workerEnvGet(base, contract.EnvDeviceEnv) == contract.DeviceEnvOff {
		envDrivers = nil // the worker takes physical indexes from the info file (contract.EnvDeviceEnv)
	}
	env := WorkerEnv(base, infoFile, infos, envDrivers)
	for name, list := range infos {
		log.WithFields(logrus.Fields{"resource": name, "infos": list}).Info("yarn-am launch: resource infos")
	}
	rep := Report{ContainerID: containerID, Infos: infos, InfoFile: infoFile, Topology: topologies(l.Drivers)}
	if l.Gang {
		if rep.Port, err = FreePort(l.Host); err != nil {
			fmt.Fprintf(stderr, "yarn-am launch: %v\n", err)
			return contract.LauncherWorkerStartFailed
		}
	}
	if rerr := reporter.Report(ctx, rep); rerr != nil {
		if l.Gang {
			fmt.Fprintf(stderr, "yarn-am launch: a rank of a gang must report to the AM before it starts: %v\n", rerr)
			return contract.LauncherWorkerStartFailed
		}
		log.WithError(rerr).Warn("yarn-am launch: reporting the resource infos to the AM failed; starting the worker anyway")
	}
	if l.Framework != nil {
		fenv, code := l.prepareWorker(ctx, containerID, dir, sigs, stderr, log)
		if code >= 0 {
			return code
		}
		env = append(env, fenv...)
	}
	var started func(pid int) (stop func())
	if l.Preemption != nil && containerID != "" {
		env = append(env, contract.EnvPreemptionFile+"="+preemptionFile(dir))
		started = func(pid int) func() { return l.Preemption.start(ctx, containerID, dir, pid, log) }
	}
	stopSampling := l.startGPUSampling(ctx, infos, log)
	code, tail := l.runWorker(argv, env, sigs, l.InContainer, started, stderr, log)
	stopSampling()
	reportWorkerExit(ctx, reporter, containerID, code, tail, log)
	return code
}

func pending(c chan os.Signal) os.Signal {
	select {
	case s := <-c:
		return s
	default:
		return nil
	}
}

func (l *Launcher) orderedDrivers() []resources.Driver {
	var out []resources.Driver
	for _, r := range l.Resources {
		if d, ok := l.Drivers[r.Name]; ok {
			out = append(out, d)
		}
	}
	return out
}

// DefaultKillGrace is how long the launcher waits, after a SIGTERM in a YARN container, before it
// kills what is left of the container's process group: the NodeManager's own default
// (yarn.nodemanager.sleep-delay-before-sigkill.ms, 250 ms).
const DefaultKillGrace = 250 * time.Millisecond

// runWorker starts the worker and waits for it.
//
// The worker stays in the launcher's process group. In a YARN container that is the container's
// group, which the NodeManager signals as a whole when it stops the container (kill, preemption, the
// AM stopping it, node shutdown): SIGTERM, then SIGKILL after its grace period. So every process the
// worker starts, including children that ignore SIGTERM or outlive the worker, is inside what YARN
// kills; a worker in a group of its own escaped it (TestNoWorkerProcessSurvivesItsContainer). For the
// same reason the launcher does not forward signals in a container (the worker got them already);
// after a SIGTERM it waits the grace period and kills the group itself if anything of the worker is
// still there, in case nobody else does. Outside a container (no CONTAINER_ID: `yarn-am launch` run by
// hand or by a test) it forwards SIGTERM, SIGINT and SIGHUP to the worker.
//
// If this process dies first (SIGKILL), the kernel kills the worker (parent-death signal), so it never
// outlives the launcher with devices it no longer owns.
//
// The worker's stderr passes through the launcher, which keeps its tail (stderrtail.go); the tail is
// returned with the exit code (nil when the worker did not start).
//
// started, when set, is called with the worker's pid once it runs; what it returns is called when
// the worker has exited.
func (l *Launcher) runWorker(argv, env []string, sigs chan os.Signal, inContainer bool, started func(pid int) (stop func()),
	stderr io.Writer, log logrus.FieldLogger) (int, *stderrtail.Tail) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = l.Stdin, l.Stdout, l.Stderr
	if cmd.Stdin == nil {
		cmd.Stdin = os.Stdin
	}
	if cmd.Stdout == nil {
		cmd.Stdout = os.Stdout
	}
	if cmd.Stderr == nil {
		cmd.Stderr = os.Stderr
	}
	var tail *stderrtail.Tail
	cmd.Stderr, tail = teeWorkerStderr(cmd.Stderr)
	cmd.WaitDelay = workerStderrWaitDelay
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	grace := l.KillGrace
	if grace <= 0 {
		grace = DefaultKillGrace
	}

	// The parent-death signal fires when the forking thread exits: keep this goroutine on its thread
	// until the worker is gone.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := cmd.Start(); err != nil {
		// A script whose interpreter is missing starts with "no such file or directory" although
		// the script is there: say which part is missing (TestWorkerStartFailureSaysWhy).
		if se := (*startfail.Error)(nil); errors.As(startfail.Explain(cmd.Path, err), &se) {
			fmt.Fprintf(stderr, "yarn-am launch: cannot start the worker %s\n", se)
		} else {
			fmt.Fprintf(stderr, "yarn-am launch: cannot start the worker %s: %s\n", text.Quote(argv[0]), text.Sanitize(text.Cut(err.Error(), 1024)))
		}
		return contract.LauncherWorkerStartFailed, nil
	}
	log.WithFields(logrus.Fields{"pid": cmd.Process.Pid, "command": argv[0]}).Info("yarn-am launch: worker started")
	if started != nil {
		defer started(cmd.Process.Pid)()
	}
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		var killGroup <-chan time.Time
		for {
			select {
			case s := <-sigs:
				if !inContainer {
					log.WithField("signal", s.String()).Info("yarn-am launch: forwarding signal to the worker")
					_ = syscall.Kill(cmd.Process.Pid, s.(syscall.Signal))
					continue
				}
				if s == syscall.SIGTERM && killGroup == nil {
					log.WithField("grace", grace).Info("yarn-am launch: SIGTERM; the worker's process group is killed if it is still there after the grace period")
					killGroup = time.After(grace)
				}
			case <-killGroup:
				log.Warn("yarn-am launch: the worker outlived the grace period after SIGTERM; killing the container's process group")
				// Every process of the group but this one: kill(0) would take the launcher first
				// and leave the worker's exit unreported.
				killGroupExceptSelf()
				killGroup = nil
			case <-done:
				return
			}
		}
	}()
	err := cmd.Wait()
	close(done)
	// The worker may have died from the group kill while it is still going on: let it finish before
	// this process exits, or the rest of the group would survive.
	<-stopped
	code := exitCode(cmd.ProcessState)
	if err != nil && cmd.ProcessState == nil {
		fmt.Fprintf(stderr, "yarn-am launch: waiting for the worker: %v\n", err)
		return contract.LauncherWorkerStartFailed, tail
	}
	if errors.Is(err, exec.ErrWaitDelay) {
		log.Warn("yarn-am launch: a process the worker left running still holds its stderr; not waiting for it")
	}
	log.WithField("exit_code", code).Info("yarn-am launch: worker exited")
	return code, tail
}

// killGroupExceptSelf sends SIGKILL to every process of this process's group except itself and its
// ancestors (the container's launch shell waits for us and exits with our code).
func killGroupExceptSelf() {
	self := os.Getpid()
	pgid, err := syscall.Getpgid(self)
	if err != nil {
		return
	}
	keep := map[int]bool{self: true}
	for p := os.Getppid(); p > 1 && !keep[p]; {
		keep[p] = true
		st, err := proc.ReadStat(p)
		if err != nil {
			break
		}
		p = st.PPid
	}
	proc.KillGroupExcept(pgid, keep, syscall.SIGKILL)
}

func exitCode(ps *os.ProcessState) int {
	if ps == nil {
		return contract.LauncherWorkerStartFailed
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

// prepareWorker runs the job's framework's PrepareWorker (a gang's rendezvous: the rank's environment)
// before the worker starts, stopping it when a signal arrives; it returns what the framework adds to
// the worker's environment, or an exit code (>= 0) when the worker must not start.
func (l *Launcher) prepareWorker(ctx context.Context, containerID, dir string, sigs chan os.Signal, stderr io.Writer, log logrus.FieldLogger) ([]string, int) {
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	got := make(chan os.Signal, 1)
	go func() {
		select {
		case s := <-sigs:
			got <- s
			cancel()
		case <-rctx.Done():
		}
	}()
	w := framework.Worker{ContainerID: containerID, Dir: dir, Log: log}
	if l.Rendezvous != nil {
		w.Rendezvous = func(ctx context.Context) (*contract.Rendezvous, error) {
			return l.Rendezvous.Rendezvous(ctx, containerID)
		}
	}
	if p, ok := l.Reporter.(Publisheder); ok {
		w.Published = p.Published
	}
	env, err := l.Framework.PrepareWorker(rctx, w)
	cancel()
	if s := pending(got); s != nil {
		fmt.Fprintf(stderr, "yarn-am launch: received %v while waiting for the gang; not starting the worker\n", s)
		return nil, 128 + int(s.(syscall.Signal))
	}
	if err != nil {
		fmt.Fprintf(stderr, "yarn-am launch: %v\n", err)
		switch {
		case errors.Is(err, framework.ErrRestarted):
			return nil, 128 + int(syscall.SIGTERM)
		case w.Rendezvous == nil && l.Gang:
			return nil, contract.LauncherConfigError
		}
		return nil, contract.LauncherWorkerStartFailed
	}
	return env, -1
}

// workerEnvGet returns the value of k in env (KEY=VALUE entries), the last one winning, or "".
func workerEnvGet(env []string, k string) string {
	v := ""
	for _, kv := range env {
		if key, val, ok := strings.Cut(kv, "="); ok && key == k {
			v = val
		}
	}
	return v
}
