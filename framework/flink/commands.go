package flink

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/framework"
	"github.com/yarn-am/yarn-am/framework/flink/flinkdist"
	"github.com/yarn-am/yarn-am/internal/stderrtail"
	"github.com/yarn-am/yarn-am/jobfile"
)

const flinkJobManagerUsage = `Usage: yarn-am flink-jobmanager

Runs a [flink] job's JobManager; the ApplicationMaster runs it as its driver (submit sets it), in the
AM container, where the Flink home is localised as ./flink and the job file as ./job.toml. It layers
the configuration (the home's, then the job file's Flink keys), sets the JobManager's address to
the AM's host ($YARN_AM_FLINK_HOST), its RPC and REST ports to the job's own or 0 (its JVM binds any
free one), and its process size to [am] memory minus the AM's 256 MiB, and starts it: an application
cluster with [flink] jar, a session cluster without. Once the JVM listens, it learns the ports the
JVM bound and writes them where the AM reads them ($YARN_AM_FLINK_BOUND_FILE); the AM publishes
nothing of the JobManager before (docs/flink.md#the-jobmanager-as-the-driver). The JobManager's log is jobmanager.log in the container's log directory, its
stdout and stderr jobmanager.out and jobmanager.err. With [flink] class-data-sharing (the default)
its JVM maps the home's class-data-sharing archive that submit took from the cache (the newest whose
record your key made; $YARN_AM_FLINK_CDS_ARCHIVE), once its SHA-256 is checked; after an
application run without one, its JVM lists the classes it loads and the driver makes an archive of
them for the next run, signed with the application's key from its token file
(docs/flink.md#class-data-sharing). Its temporary and working
directories are in the container's own (LOCAL_DIRS), not the node's /tmp
(docs/flink.md#private-directories). With [flink] jit-late-c2 (the default) its JVM starts with
HotSpot's C2 thresholds a hundredfold (docs/flink.md#the-jit-at-start).

Exit codes: 0 the Flink job FINISHED (the application SUCCEEDS); 1 it FAILED or was CANCELED (stderr
ends with Flink's root cause, which becomes the application's diagnostics) or the JobManager could
not start or ended first. A session cluster runs until the application is killed.`

const flinkTaskManagerUsage = `Usage: yarn-am flink-taskmanager

Runs a [flink] job's TaskManager as the worker of 'yarn-am launch' in a TaskExecutor container (the
AM sets it as the TaskExecutors' command). It reads the GPU indexes the launcher assigned
($YARN_AM_EXTERNAL_RESOURCES_FILE), points Flink's GPU driver at them, sets the process size to the
container's memory ([taskexecutor] memory) and the JobManager's address to $YARN_AM_FLINK_JOBMANAGER
(which the launcher asked the AM for before this command started: the AM publishes it once the
JobManager's JVM has bound its port), and replaces itself with the TaskManager's JVM (same process). On the JobManager's host (by default;
[flink] wait-for-jobmanager) the JVM starts once the JobManager has started (its job is past
INITIALIZING, or for a session cluster its REST API answers, read through the AM at
$YARN_AM_FLINK_UI), at most 60 s later; stdout says how long it waited. A TaskManager whose assigned GPUs do not match
external-resource.<name>.amount does not start (exit 1). Its log is taskmanager.log in the
container's log directory; the job's prints are in the container's stdout. Its temporary and working
directories are in the container's own (LOCAL_DIRS), not the node's /tmp
(docs/flink.md#private-directories); it maps only the class-data-sharing archive the AM names
($YARN_AM_FLINK_CDS_ARCHIVE), once its SHA-256 is checked; with [flink] jit-late-c2 (the default) its
JVM starts with HotSpot's C2 thresholds a hundredfold (docs/flink.md#the-jit-at-start).`

// commands are the processes of a Flink job (Framework.Commands).
func commands() []framework.Command {
	return []framework.Command{
		{Name: "flink-jobmanager", Summary: "run a [flink] job's JobManager (the AM's driver; inside the AM container)",
			Usage: flinkJobManagerUsage, Run: runFlinkJobManager},
		{Name: "flink-taskmanager", Summary: "run a [flink] job's TaskManager (inside a TaskExecutor container)",
			Usage: flinkTaskManagerUsage, Run: runFlinkTaskManager},
	}
}

// publishOutcome writes the JobManager's outcome where the AM reads it for the application's
// diagnostics (contract.EnvOutcomeFile; the AM gives it only to its driver, so a TaskManager writes
// nothing): the Flink job's state and root cause, or why the JobManager could not run it. The file is
// replaced, never opened (replaceFile): a named pipe or a link in its place neither blocks the driver
// nor takes the text elsewhere. A write that fails is said on stderr.
func publishOutcome(format string, a ...any) {
	if p := os.Getenv(contract.EnvOutcomeFile); p != "" {
		if err := replaceFile(p, []byte(fmt.Sprintf(format, a...))); err != nil {
			fmt.Fprintf(os.Stderr, "yarn-am flink-jobmanager: the outcome for the application's diagnostics could not be written: %v\n", err)
		}
	}
}

// startFlink is the shared start of flink-jobmanager and flink-taskmanager: the setup, the
// JobManager's address, and the java to run, checked against the Flink version's need (checkJava).
// ok false: return code.
func startFlink(name string, stdout, stderr io.Writer) (s *flinkSetup, code int, ok bool) {
	failf := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "yarn-am "+name+": "+format+"\n", a...)
		publishOutcome(format, a...)
		return 1
	}
	s, err := loadFlinkSetup()
	if err == nil && name == "flink-jobmanager" {
		// Its JVM binds the ports itself (bound.go): the driver knows only the host.
		if s.host = os.Getenv(envHost); s.host == "" {
			err = fmt.Errorf("%s is not set: the AM sets it for a [flink] job's driver", envHost)
		}
	} else if err == nil {
		// The launcher asked the AM for it before this process started (taskmanager.go).
		s.host, s.rpcPort, err = hostPort(envJobManager)
	}
	if err == nil {
		s.javaHome, err = localJavaHome(s.dir, s.spec)
	}
	if err == nil {
		var note string
		if note, err = checkJava(context.Background(), s.spec, s.home.Version, flinkdist.Spec{JavaHome: s.javaHome}); note != "" {
			fmt.Fprintf(stdout, "yarn-am %s: %s\n", name, note)
		}
	}
	if err != nil {
		return nil, failf("%v", err), false
	}
	s.failf = failf
	if err := internalTLS(s, os.Getenv("HADOOP_TOKEN_FILE_LOCATION")); err != nil { // internaltls.go
		return nil, failf("%v", err), false
	}
	// Its files in the container's own directories, not the node's /tmp (privatedirs.go); the
	// JobManager's role is application or session alike here.
	role := flinkdist.RoleTaskManager
	if name == "flink-jobmanager" {
		role = flinkdist.RoleSession
	}
	said, err := privateDirs(s.conf, role, s.dir, os.Getenv)
	if err != nil {
		return nil, failf("%v", err), false
	}
	fmt.Fprintf(stdout, "yarn-am %s: %s\n", name, said)
	return s, 0, true
}

func loadFlinkSetup() (*flinkSetup, error) {
	job, err := jobfile.LoadStagedJob(contract.StagedJob)
	if err != nil {
		return nil, err
	}
	spec := specOf(job)
	if spec == nil {
		return nil, fmt.Errorf("%s has no [flink] table", contract.StagedJob)
	}
	dir, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	home, err := flinkdist.OpenHome(filepath.Join(dir, homeAlias))
	if err != nil {
		return nil, fmt.Errorf("the localised Flink home: %w", err)
	}
	conf, _, err := home.Config()
	if err != nil {
		return nil, err
	}
	layer := flinkdist.NewConfig()
	for _, k := range slices.Sorted(maps.Keys(spec.Config)) {
		layer.Set(k, spec.Config[k])
	}
	// -D last, as flink run -D: the staged job.toml does not have them.
	defines, err := decodeDefines(os.Getenv(envDefines))
	if err != nil {
		return nil, err
	}
	if err := layer.ApplyDefines(defines); err != nil {
		return nil, err
	}
	conf.Merge(layer)
	if tokensRefreshed(os.Getenv) {
		refreshedTokenDefaults(conf) // before hadoopSecurityDefaults, which would turn the framework off (tokens.go)
	}
	hadoopSecurityDefaults(conf)
	// With provided, the home's conf/ is first read here: the pre-flight could not check it.
	if err := checkUserRESTTLS(conf, spec.RESTWithoutClientAuth); err != nil {
		return nil, err
	}
	if err := checkInternalTLSKeys(conf, spec.InternalTLS); err != nil {
		return nil, err
	}
	if err := checkPorts(layer, nil); err != nil { // the job's own: the JobManager binds those (jobPorts)
		return nil, err
	}
	if err := flinkdist.CheckRemovedKeys(conf, home.Version); err != nil {
		return nil, err
	}
	// The GPUs a TaskManager's container holds reach its operators (docs/flink.md#gpus).
	if _, err := flinkdist.DefaultGPUDriver(conf, home); err != nil {
		return nil, err
	}
	return &flinkSetup{job: job, spec: spec, home: home, conf: conf, jobKeys: layer, dir: dir}, nil
}

// hostPort splits the address in the environment variable name.
func hostPort(name string) (string, string, error) {
	v := os.Getenv(name)
	h, p, err := net.SplitHostPort(v)
	if err != nil || h == "" || p == "" {
		return "", "", fmt.Errorf("%s=%q is not host:port: the AM sets it for a [flink] job", name, v)
	}
	return h, p, nil
}

func firstLogDir() (string, error) {
	d := strings.Split(os.Getenv("LOG_DIRS"), ",")[0]
	if d == "" {
		return "", errors.New("LOG_DIRS is not set: not in a YARN container")
	}
	return d, nil
}

func runFlinkJobManager(stdout, stderr io.Writer) int {
	s, code, ok := startFlink("flink-jobmanager", stdout, stderr)
	if !ok {
		return code
	}
	failf, host := s.failf, s.host
	boundPath := os.Getenv(envBoundFile)
	if boundPath == "" {
		return failf("%s is not set: the AM sets it for a [flink] job's driver", envBoundFile)
	}
	logDir, err := firstLogDir()
	if err != nil {
		return failf("%v", err)
	}
	// One address literal on both sides (docs/flink.md#addresses); bind all interfaces so that
	// TaskManagers on other nodes reach it. The ports are the job's own, else any free one its JVM
	// binds (0): the driver learns them from the JVM before the AM publishes them (bound.go).
	rpcPort, restPort := jobPorts(s.jobKeys)
	// Restarted in place (restart.go): the first JVM's ports, the ones the TaskManagers know.
	if rpc, rest, pinned, err := pinnedPorts(os.Getenv(envJobManagerPorts)); err != nil {
		return failf("%v", err)
	} else if pinned {
		rpcPort, restPort = rpc, rest
		fmt.Fprintf(stdout, "yarn-am flink-jobmanager: started again in place after the JobManager was lost: its JVM binds the first one's ports, RPC %s and REST %s\n", rpc, rest)
	}
	for k, v := range map[string]string{
		flinkdist.KeyRPCAddress: host, "jobmanager.rpc.port": rpcPort, "jobmanager.bind-host": "0.0.0.0",
		"rest.address": host, "rest.bind-port": restPort, "rest.bind-address": "0.0.0.0",
		flinkdist.KeyShutdownOnFinish: "false",
	} {
		s.conf.Set(k, v)
	}
	f := s.spec
	// Its REST API answers the AM's client certificate only (docs/flink.md#who-can-reach-the-jobmanager),
	// unless the job has its own REST TLS (docs/flink.md#your-own-rest-tls).
	var restTLSClient *tls.Config
	if userRESTTLS(s.conf) {
		if restTLSClient, err = userRESTClient(s.conf, s.dir); err != nil {
			return failf("%v", err)
		}
		s.conf.Set(keyWebSubmit, fmt.Sprint(f.WebSubmit && f.Jar == ""))
		if !restAuth(s.conf) {
			fmt.Fprintf(stdout, "yarn-am flink-jobmanager: your own REST TLS without %s ([flink] %s = true): the JobManager's REST API answers anyone who reaches its port\n", keyRESTSSLAuth, keyRESTWithoutClientAuth)
		}
	} else {
		tlsDir := os.Getenv(envRESTTLS)
		if tlsDir == "" {
			return failf("%s is not set: the AM sets it for a [flink] job's driver", envRESTTLS)
		}
		var restKeys map[string]string
		if restKeys, restTLSClient, err = readRESTTLS(tlsDir); err != nil {
			return failf("%v", err)
		}
		closeREST(s.conf, restKeys, f.WebSubmit && f.Jar == "")
	}
	role := flinkdist.RoleSession
	spec := flinkdist.Spec{Home: s.home, Conf: s.conf, Dir: s.dir, LogDir: logDir, JavaHome: s.javaHome,
		MemoryMiB: int(s.job.AM.MemoryMB - amShareMB), Logs: f.Logs, JIT: jitFlags(f)}
	if f.Jar != "" {
		role = flinkdist.RoleApplication
		spec.UserJars, spec.MainClass, spec.Args = []string{filepath.Join(s.dir, f.Jar)}, f.MainClass, f.Args
		if spec.MainClass == "" {
			if spec.MainClass, err = jarMainClass(spec.UserJars[0]); err != nil {
				return failf("flink.jar: %v", err)
			}
		}
		// What a later AM attempt needs to restore the job, and the checkpoint it restores
		// (docs/flink.md#when-the-applicationmaster-is-lost).
		checkpointDefaults(s.conf, stdout)
		applyRecovery(s.conf, os.Getenv(envRecover), stdout)
	}
	if f.TaskManagersMode == taskManagersDemand {
		demandDefaults(s.conf, stdout) // docs/flink.md#taskmanagers-on-demand
	}
	// docs/flink.md#class-data-sharing
	cds := planCDS(f, s.dir, s.home, spec.JavaBinary(), os.Getenv(envCDSArchive))
	for _, line := range cds.say {
		fmt.Fprintf(stdout, "yarn-am flink-jobmanager: %s\n", line)
	}
	spec.CDS = cds.cds
	if role == flinkdist.RoleApplication && cds.identity != "" && cds.cds.Use == "" && os.Getenv(envCDSHome) != "" {
		// No archive to map: this JVM lists the classes it loads, of which the driver makes one,
		// unless it can make none (then the JVM lists nothing).
		if _, _, err := cdsSigner(); err != nil {
			fmt.Fprintf(stdout, "yarn-am flink-jobmanager: class-data sharing: not making an archive: %v\n", err)
		} else {
			spec.CDS.ClassList = filepath.Join(s.dir, cdsClassListName)
			spec.CDS.LoadLog = filepath.Join(s.dir, cdsLoadLogName)
			_ = os.Remove(spec.CDS.ClassList)
			_ = os.Remove(spec.CDS.LoadLog)
		}
	}
	// The JobManager ends with its AM: the AM's SIGKILL reaches no process of its driver (a process
	// group of its own), and a JobManager left behind would keep its job, its ports and its memory.
	// SIGTERM stops it as a kill does (the job SUSPENDED, its checkpoints kept).
	endWithParent()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if spec.HadoopClasspath, err = containerHadoopClasspath("flink-jobmanager", os.Getenv, stdout); err != nil {
		return failf("%v", err)
	}
	tokenJars, tokenEnv, err := tokensOnClasspath(s, true, os.Getenv, stdout, "flink-jobmanager")
	if err != nil {
		return failf("%v", err)
	}
	spec.ExtraClasspath = tokenJars
	p, err := flinkdist.Prepare(ctx, role, spec)
	if err != nil {
		return failf("%v", err)
	}
	p.Env = append(p.Env, tokenEnv...)
	fmt.Fprintf(stdout, "yarn-am flink-jobmanager: JVM memory flags %s\n", p.MemoryFrom)
	if spec.CDS.ClassList != "" {
		// After the JobManager has ended, whatever its outcome: the job never waits for it.
		defer makeArchive(ctx, s, cds.identity, spec.JavaBinary(), spec.CDS, stdout)
	}
	// The JVM's stdout and stderr roll as its log does (logroll.go).
	outF, errF, err := openOutputs(logDir, "jobmanager", f.Logs)
	if err != nil {
		return failf("%v", err)
	}
	defer outF.Close()
	defer errF.Close()
	fmt.Fprintf(stdout, "yarn-am flink-jobmanager: %s JobManager starting on %s; its JVM binds RPC port %s and REST port %s (0: any free one) (mutual TLS; users reach it through the AM's tracking URL, flink/)\n", role, host, rpcPort, restPort)
	jm := newJobManager(host)
	p.Started = func(pid int, exited <-chan struct{}) {
		publishBound(ctx, jm, pid, restTLSClient, exited, p.LogFile, boundPath, stdout)
	}
	if role == flinkdist.RoleSession {
		return runFlinkSession(ctx, p, outF, errF, stderr)
	}
	// The REST URL names the host alone, for the certificate's check; the port is the one bound.
	rest := &flinkdist.REST{URL: "https://" + host, HTTP: &http.Client{Timeout: 10 * time.Second, Transport: jm.transport(restTLSClient, false)}}
	out, err := flinkdist.RunApplication(ctx, p, rest, time.Second, 15*time.Second, outF, errF)
	if _, published := jm.known(); err != nil && published && errors.Is(err, flinkdist.ErrLostWhileRunning) && ctx.Err() == nil {
		// Lost while its job ran: the AM may start it again in place (restart.go). A JobManager
		// whose job never ran (its main threw, its JobMaster could not start) would fail again.
		failf("%v (the JobManager's log: jobmanager.log, jobmanager.err)", err)
		return exitJobManagerLost
	}
	if err != nil {
		return failf("%v (the JobManager's log: jobmanager.log, jobmanager.err)", err)
	}
	fmt.Fprintf(stdout, "yarn-am flink-jobmanager: %s\n", out)
	if out.State() == "FINISHED" && out.Savepoint == "" {
		out.Savepoint = stoppedWith(s.dir) // the AM's yarn-am stop (stop.go)
	}
	switch {
	case out.State() == "FINISHED" && out.Savepoint != "":
		publishOutcome("%s: stopped with a savepoint at %s", out, out.Savepoint)
		return 0
	case out.State() == "FINISHED":
		publishOutcome("%s", out)
		return 0
	case out.RootCause != nil:
		return failf("%s: %s", out, out.RootCause.String())
	default:
		return failf("%s", out)
	}
}

// runFlinkSession runs a session JobManager until it ends or the driver is stopped (the application
// is killed), then stops it as RunApplication does.
func runFlinkSession(ctx context.Context, p *flinkdist.Process, out, errOut io.Writer, stderr io.Writer) int {
	errTail := &stderrtail.Tail{}
	cmd := exec.Command(p.Argv[0], p.Argv[1:]...)
	cmd.Env = append(os.Environ(), p.Env...)
	cmd.Stdout, cmd.Stderr = out, io.MultiWriter(errOut, errTail)
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(stderr, "yarn-am flink-jobmanager: starting the JobManager: %v\n", err)
		return 1
	}
	exited := make(chan error, 1)
	ended := make(chan struct{})
	go func() { err := cmd.Wait(); close(ended); exited <- err }()
	if p.Started != nil {
		go p.Started(cmd.Process.Pid, ended)
	}
	select {
	case err := <-exited:
		// Why it ended is in its own output (docs/flink.md#when-the-jobmanager-fails-to-start).
		fmt.Fprintf(stderr, "yarn-am flink-jobmanager: the session JobManager ended: %v%s\n", err, p.Failure(flinkdist.StderrLines(errTail)))
		return 1
	case <-ctx.Done():
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(15 * time.Second):
		_ = cmd.Process.Kill()
		<-exited
	}
	return 0
}

// jobManagerStartBound is how long a TaskManager waits for the JobManager to start before its JVM
// starts anyway.
const jobManagerStartBound = 60 * time.Second

// waitForJobManager holds the TaskManager's JVM until the JobManager has started when [flink]
// wait-for-jobmanager says so for this host (docs/flink.md#taskmanagers-on-the-jobmanagers-host):
// by default when the JobManager runs on this host, whose CPUs the JVMs' starts would share. After
// bound it gives up and the TaskManager starts (it retries its registration as always). It says
// on stdout what it did.
func waitForJobManager(s *flinkSetup, tmHost string, bound time.Duration, stdout io.Writer) {
	say := func(format string, a ...any) { fmt.Fprintf(stdout, "yarn-am flink-taskmanager: "+format+"\n", a...) }
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	switch mode := s.spec.WaitForJobManager; {
	case mode == waitNever:
		return
	case mode != waitAlways && !sameHost(ctx, s.host, tmHost):
		return
	}
	start := time.Now()
	// The REST API answers the AM's client certificate only (resttls.go), which a TaskManager does
	// not hold: it reads the job's state through the AM, whose reads need none, as before from the
	// JobManager itself.
	if ui := os.Getenv(envUI); ui != "" {
		rest := &flinkdist.REST{URL: strings.TrimSuffix(ui, "/"), HTTP: &http.Client{Timeout: 2 * time.Second}}
		saw, err := rest.WaitStarted(ctx, 200*time.Millisecond, s.spec.Jar != "")
		if err != nil {
			say("starting after %.1f s without the JobManager at %s: %v", time.Since(start).Seconds(), rest.URL, err)
			return
		}
		say("started after the JobManager at %s (wait-for-jobmanager = %s, TaskManager on %s): waited %.1f s, %s",
			rest.URL, s.spec.WaitForJobManager, tmHost, time.Since(start).Seconds(), saw)
		return
	}
	say("starting without waiting for the JobManager: %s is not set (the AM sets it for a [flink] job)", envUI)
}

// sameHost reports whether two host names are one host: the same name, names with an address in
// common, or names that are both loopback addresses (NodeManagers of one machine on 127.0.0.2 and
// 127.0.0.3, as in the mini cluster: a loopback address is always this machine).
func sameHost(ctx context.Context, a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	if strings.EqualFold(a, b) {
		return true
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	as, err1 := net.DefaultResolver.LookupHost(ctx, a)
	bs, err2 := net.DefaultResolver.LookupHost(ctx, b)
	if err1 != nil || err2 != nil {
		return false
	}
	for _, x := range as {
		if slices.Contains(bs, x) {
			return true
		}
	}
	return allLoopback(as) && allLoopback(bs)
}

func allLoopback(addrs []string) bool {
	for _, a := range addrs {
		if ip := net.ParseIP(a); ip == nil || !ip.IsLoopback() {
			return false
		}
	}
	return len(addrs) > 0
}

func runFlinkTaskManager(stdout, stderr io.Writer) int {
	s, code, ok := startFlink("flink-taskmanager", stdout, stderr)
	if !ok {
		return code
	}
	failf := s.failf
	fmt.Fprintf(stdout, "yarn-am flink-taskmanager: the JobManager's RPC address %s (published by the AM once its JVM bound it)\n", net.JoinHostPort(s.host, s.rpcPort))
	s.conf.Set(flinkdist.KeyRPCAddress, s.host)
	s.conf.Set("jobmanager.rpc.port", s.rpcPort)
	if nm := os.Getenv("NM_HOST"); nm != "" {
		s.conf.Set("taskmanager.host", nm)
	}
	s.conf.Set("taskmanager.bind-host", "0.0.0.0")
	setRegistrationDelay(s.conf)
	// The TaskManager's id in Flink is its container's, so the AM can tell from /taskmanagers which
	// container is idle and release that one (docs/flink.md#taskmanagers-on-demand).
	if id := os.Getenv("CONTAINER_ID"); id != "" {
		s.conf.Set(keyResourceID, id)
	}
	spec := flinkdist.Spec{Home: s.home, Conf: s.conf, JavaHome: s.javaHome, MemoryMiB: int(s.job.TaskExecutor.MemoryMB), Logs: s.spec.Logs,
		JIT: jitFlags(s.spec)}
	if s.spec.Jar != "" {
		spec.UserJars = []string{filepath.Join(s.dir, s.spec.Jar)}
	}
	spec, err := flinkdist.InContainer(spec, s.dir, os.Getenv)
	if err != nil {
		return failf("%v", err)
	}
	if spec.HadoopClasspath, err = containerHadoopClasspath("flink-taskmanager", os.Getenv, stdout); err != nil {
		return failf("%v", err)
	}
	if spec.ExtraClasspath, _, err = tokensOnClasspath(s, false, os.Getenv, stdout, "flink-taskmanager"); err != nil {
		return failf("%v", err)
	}
	// The JobManager's archive: the classes both load at their start (docs/flink.md#class-data-sharing).
	cds := planCDS(s.spec, s.dir, s.home, spec.JavaBinary(), os.Getenv(envCDSArchive))
	for _, line := range cds.say {
		fmt.Fprintf(stdout, "yarn-am flink-taskmanager: %s\n", line)
	}
	spec.CDS = cds.cds
	p, err := flinkdist.Prepare(context.Background(), flinkdist.RoleTaskManager, spec)
	if err != nil {
		return failf("the TaskManager does not start: %v", err)
	}
	fmt.Fprintf(stdout, "yarn-am flink-taskmanager: JVM memory flags %s\n", p.MemoryFrom)
	java, err := exec.LookPath(p.Argv[0])
	if err != nil {
		return failf("%v", err)
	}
	// Only the JVM waits for the JobManager on its host: what it needs is ready by then (the
	// classpath, the archive's check, the memory flags), made while the JobManager starts.
	waitForJobManager(s, os.Getenv("NM_HOST"), jobManagerStartBound, stdout)
	// The JVM's stdout (the job's prints) and stderr go to taskmanager.out and taskmanager.err, rolled
	// as its log is (logroll.go), as Flink's own YARN mode names them; its web UI's Stdout tab reads
	// taskmanager.out.
	outF, errF, err := openOutputs(spec.LogDir, "taskmanager", s.spec.Logs)
	if err != nil {
		return failf("%v", err)
	}
	defer outF.Close()
	defer errF.Close()
	return superviseTaskManager(java, p, outF, errF, stderr)
}
