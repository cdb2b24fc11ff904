package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/yarn-am/yarn-am/am"
	"github.com/yarn-am/yarn-am/am/contract"
	"github.com/yarn-am/yarn-am/container/jobfile"
	"github.com/yarn-am/yarn-am/resources"
	"github.com/yarn-am/yarn-am/yarnrpc"
)

var amUsage = `Usage: yarn-am am --job job.toml [--flink-conf FILE] [-D key=value]... [--service] [--driver CMD]
                  [failure-policy flags]

The ApplicationMaster. 'yarn-am submit' starts it in the application's first container; you do not run
it by hand. It registers with the ResourceManager, asks for the job's TaskExecutor containers (memory,
vcores and every external resource, e.g. yarn.io/gpu), launches 'yarn-am launch -- <command>' in each,
replaces failed ones up to taskexecutor.max-failures, serves the HTTP API at its tracking URL, and
unregisters with the final status. The staging directory is deleted when the application ends (also when
it is killed).

Flags:
  --job FILE              the job file (job.toml), required
  --flink-conf FILE       flink-conf.yaml with external-resource keys (passed on to the launchers)
  -D key=value            external-resource override; repeatable; passed on to the launchers
  --service               keep TaskExecutors running (replacing any that end) until the app is killed;
                          default: the app SUCCEEDS when every TaskExecutor has exited 0
  --driver CMD            driver mode: run CMD with bash -c in this container, with YARN_AM_API
                          (http://host:port/api/v1/) and YARN_AM_SECRET in its environment; the app
                          SUCCEEDS if CMD exits 0, else FAILS; TaskExecutors are stopped when it exits
  --heartbeat-fast DUR    allocate interval while containers are pending (default 200ms)
  --heartbeat-slow DUR    allocate interval when nothing is pending (default 1s)
  --launch-workers N      container launches in flight at once (default 8)
  --finished-history N    finished containers the status and the UI list, the latest (default 1000);
                          every active container is listed, and the counts of completed and failed
                          containers stay exact; bounds the AM's memory in a long-running --service

Failure policy (the same names are keys of the job file's [policy] table, which gives the defaults; flags
win):
` + am.PolicyFlagsUsage + `

Environment (set by YARN and 'yarn-am submit'): CONTAINER_ID, NM_HOST, HADOOP_TOKEN_FILE_LOCATION
(AM-RM token and the application secret 'yarn-am.secret'), HADOOP_CONF_DIR, HADOOP_USER_NAME,
YARN_AM_STAGING_DIR (hdfs:// URI of the staging directory), YARN_AM_LOG_LEVEL.

HTTP API (on NM_HOST, a free port; also the tracking URL, and through the RM's proxy):
  GET  /                                  status page (containers with GPU indexes, latest events)
  GET  /api/v1/status                     application state, counts, containers, excluded nodes, events
  GET  /api/v1/containers                 the containers with their resource infos (GPU indexes)
  GET  /api/v1/requirements               the declared TaskExecutor requirement
  PUT  /api/v1/requirements               {"instances": N}; needs 'Authorization: Bearer <secret>'
  GET  /api/v1/events                     Server-Sent Events, resumable (Last-Event-ID or ?since=ID);
                                          ?format=json[&since=ID][&limit=N] for a JSON array
  POST /api/v1/containers/<id>/report     the launcher's report; needs 'Authorization: Bearer <secret>'
  GET  /metrics                           Prometheus metrics

Exit codes: 0 unregistered (whatever the final status), 1 could not run or unregister, 2 bad usage,
143 stopped by SIGTERM (application killed).`

func init() {
	register(&command{name: "am", summary: "the ApplicationMaster (run by YARN in the AM container)", usage: amUsage, run: runAM})
}

func runAM(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("am", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var (
		jobFile, flinkConf, driver string
		defines                    defineFlags
		service                    bool
		fast, slow                 time.Duration
		workers, history           int
		policy                     = am.PolicyConfig{}.WithDefaults()
	)
	fs.StringVar(&jobFile, "job", "", "")
	fs.StringVar(&flinkConf, "flink-conf", "", "")
	fs.Var(&defines, "D", "")
	fs.BoolVar(&service, "service", false, "")
	fs.StringVar(&driver, "driver", "", "")
	fs.DurationVar(&fast, "heartbeat-fast", am.DefaultHeartbeatFast, "")
	fs.DurationVar(&slow, "heartbeat-slow", am.DefaultHeartbeatSlow, "")
	fs.IntVar(&workers, "launch-workers", am.DefaultLaunchWorkers, "")
	fs.IntVar(&history, "finished-history", am.DefaultFinishedHistory, "")
	policy.RegisterFlags(fs)
	if err := fs.Parse(splitJoinedDefines(args)); err != nil {
		if err == flag.ErrHelp {
			fmt.Fprintln(stdout, amUsage)
			return 0
		}
		fmt.Fprintf(stderr, "yarn-am am: %v\nRun 'yarn-am help am' for usage.\n", err)
		return 2
	}
	switch {
	case jobFile == "":
		fmt.Fprintln(stderr, "yarn-am am: --job is required (the staged job.toml)")
		return 2
	case fs.NArg() > 0:
		fmt.Fprintf(stderr, "yarn-am am: unexpected arguments %q\n", fs.Args())
		return 2
	case fast <= 0 || slow <= 0:
		fmt.Fprintf(stderr, "yarn-am am: --heartbeat-fast=%v --heartbeat-slow=%v: both must be positive durations like 200ms or 1s\n", fast, slow)
		return 2
	case history < 1:
		fmt.Fprintf(stderr, "yarn-am am: --finished-history=%d: must be at least 1 (the default is %d)\n", history, am.DefaultFinishedHistory)
		return 2
	case service && driver != "":
		fmt.Fprintln(stderr, "yarn-am am: --service and --driver exclude each other (the driver decides when the application ends)")
		return 2
	}
	// The job file's [policy] table gives the defaults; flags on the command line win.
	pargs, err := am.PolicyArgs(jobFile)
	if err != nil {
		fmt.Fprintf(stderr, "yarn-am am: %v\n", err)
		return 2
	}
	if len(pargs) > 0 {
		fromJob := am.PolicyConfig{}.WithDefaults()
		pfs := flag.NewFlagSet("policy", flag.ContinueOnError)
		pfs.SetOutput(io.Discard)
		fromJob.RegisterFlags(pfs)
		if err := pfs.Parse(pargs); err != nil {
			fmt.Fprintf(stderr, "yarn-am am: [policy] of %s: %v\n", jobFile, err)
			return 2
		}
		fs.Visit(func(f *flag.Flag) {
			if pfs.Lookup(f.Name) != nil {
				_ = pfs.Set(f.Name, f.Value.String())
			}
		})
		policy = fromJob
	}
	if err := policy.Validate(); err != nil {
		fmt.Fprintf(stderr, "yarn-am am: %v\n", err)
		return 2
	}
	setLogLevel(stderr, logrus.InfoLevel)
	defer logPeakRSS()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	code, err := amMain(ctx, amArgs{jobFile, flinkConf, defines, service, driver, fast, slow, workers, history, policy})
	if err != nil {
		logrus.WithError(err).Error("yarn-am am: failed")
		fmt.Fprintf(stderr, "yarn-am am: %v\n", err)
	}
	return code
}

type amArgs struct {
	jobFile, flinkConf string
	defines            []string
	service            bool
	driver             string
	fast, slow         time.Duration
	workers, history   int
	policy             am.PolicyConfig
}

func amMain(ctx context.Context, a amArgs) (int, error) {
	job, err := jobfile.LoadStagedJob(a.jobFile) // the job's local files were shipped; their paths mean nothing here
	if err != nil {
		return 1, err
	}
	cfg, warnings, err := resources.Load(resources.Sources{JobFile: a.jobFile, FlinkConf: a.flinkConf, Overrides: a.defines})
	for _, w := range warnings {
		logrus.WithField("key", w.Key).Warn(w.Message)
	}
	if err != nil {
		return 1, err
	}
	capability := contract.Capability{"memory-mb": job.TaskExecutor.MemoryMB, "vcores": int64(job.TaskExecutor.VCores)}
	for k, v := range cfg.YarnResources() {
		capability[k] = v
	}
	keys := am.ConfigKeys{}
	for _, r := range cfg.Resources {
		keys[r.YarnKey] = "external-resource." + r.Name + ".amount"
	}

	cid := os.Getenv("CONTAINER_ID")
	cidp, err := yarnrpc.ParseContainerID(cid)
	if err != nil {
		return 1, fmt.Errorf("CONTAINER_ID: %w (the AM runs in a YARN container)", err)
	}
	attempt := yarnrpc.FormatAttemptID(cidp.GetAppAttemptId())
	app := yarnrpc.FormatApplicationID(cidp.GetAppAttemptId().GetApplicationId())
	host := os.Getenv("NM_HOST")
	if host == "" {
		return 1, fmt.Errorf("NM_HOST is not set (YARN sets it in every container); the AM binds its HTTP API there")
	}
	tokenFile := os.Getenv("HADOOP_TOKEN_FILE_LOCATION")
	if tokenFile == "" {
		return 1, fmt.Errorf("HADOOP_TOKEN_FILE_LOCATION is not set: the AM needs its AM-RM token from YARN")
	}
	creds, err := yarnrpc.ReadCredentialsFile(tokenFile)
	if err != nil {
		return 1, err
	}
	amrm, ok := creds.TokenOfKind(yarnrpc.AMRMTokenKind)
	if !ok {
		return 1, fmt.Errorf("the token file %s has no %s token", tokenFile, yarnrpc.AMRMTokenKind)
	}
	secret := string(creds.Secrets[contract.SecretAlias])
	if secret == "" {
		return 1, fmt.Errorf("the token file %s has no secret %q ('yarn-am submit' puts it there)", tokenFile, contract.SecretAlias)
	}
	log := logrus.WithFields(logrus.Fields{"app": app, "attempt": attempt})

	conf, err := yarnrpc.LoadConfigFromEnv()
	if err != nil {
		return 1, err
	}
	user := yarnrpc.CurrentUser()
	rm, err := yarnrpc.NewAMClient(conf, amrm, user)
	if err != nil {
		return 1, err
	}
	defer rm.Close()
	co, err := conf.ConnDefaults()
	if err != nil {
		return 1, err
	}
	nm := yarnrpc.NewNMClient(co, attempt)
	defer nm.Close()
	// The RM's client port, only for the node reports behind not-enough-resources events. SIMPLE
	// authentication as the user works on clusters without Kerberos; elsewhere the calls fail and the
	// events carry the scheduler's headroom instead.
	var cluster am.ClusterNodes
	if ac, err := yarnrpc.NewApplicationClient(conf, yarnrpc.SimpleAuth(user)); err != nil {
		log.WithError(err).Warn("yarn-am am: no client connection to the ResourceManager; not-enough-resources events will carry the headroom only")
	} else {
		defer ac.Close()
		cluster = ac
	}

	am.AnnounceTokenDeadline(log, creds)
	var staging am.StagingStore
	if uri := os.Getenv(contract.EnvStagingDir); uri != "" {
		if staging, err = am.OpenStagingFor(ctx, uri, user, conf, creds); err != nil {
			return 1, err
		}
		defer staging.Close()
	} else {
		log.Warn("yarn-am am: " + contract.EnvStagingDir + " is not set; nothing will be deleted when the application ends")
	}
	refresher, err := am.TokenRefresherFromEnv(ctx, conf, creds, staging, log) // nil without a shipped keytab
	if err != nil {
		return 1, err
	}
	if refresher != nil {
		go refresher.Run(ctx)
	}
	var manifest []contract.LocalResource
	if data, err := os.ReadFile(contract.StagedManifest); err == nil {
		if manifest, err = contract.ParseManifest(data); err != nil {
			return 1, err
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return 1, fmt.Errorf("reading the staged manifest: %w", err)
	}

	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return 1, fmt.Errorf("the HTTP API cannot listen on NM_HOST=%s: %w", host, err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	base := "http://" + net.JoinHostPort(host, strconv.Itoa(port)) + "/"

	flinkAlias := ""
	if a.flinkConf != "" {
		flinkAlias = a.flinkConf
	}
	var stagedFiles am.StagedFiles
	if staging != nil {
		stagedFiles = staging
	}
	env := map[string]string{}
	for k, v := range job.TaskExecutor.Env {
		env[k] = v
	}
	if lvl := os.Getenv("YARN_AM_LOG_LEVEL"); lvl != "" {
		if _, set := env["YARN_AM_LOG_LEVEL"]; !set {
			env["YARN_AM_LOG_LEVEL"] = lvl
		}
	}
	if refresher != nil {
		env[contract.EnvTokensURL] = strings.TrimSuffix(base, "/") + am.TokensPath
	}
	te := am.TaskExecutorLaunch{
		Manifest: manifest, Staged: stagedFiles, JobFile: a.jobFile, FlinkConf: flinkAlias, Defines: a.defines,
		Command: job.TaskExecutor.Command, Env: env, ReportURL: base + "api/v1/containers/", Creds: creds,
	}
	clc, err := te.LaunchContext()
	if err != nil {
		return 1, err
	}

	mode := am.Batch
	if a.service {
		mode = am.Service
	}
	amc := am.Config{
		App:  app,
		Spec: am.Spec{Instances: job.TaskExecutor.Instances, Capability: capability, MaxFailures: job.TaskExecutor.MaxFailures, Mode: mode},
		Host: host, RPCPort: port, TrackingURL: base,
		HeartbeatFast: a.fast, HeartbeatSlow: a.slow, LaunchWorkers: a.workers, FinishedHistory: a.history,
		LaunchContext: clc, RM: rm, NM: nm, Log: log,
		Policy: a.policy, Keys: keys, Cluster: cluster,
	}
	if staging != nil {
		amc.Staging = staging
	}
	if refresher != nil {
		amc.LaunchTokens = refresher.LaunchTokens
	}
	am.AddTokenDeadlineEvent(&amc, creds)
	if a.driver != "" {
		amc.Driver = &am.DriverConfig{Command: a.driver, Env: []string{contract.EnvAPI + "=" + base + "api/v1/", contract.EnvSecret + "=" + secret}}
	}
	m, err := am.New(amc)
	if err != nil {
		return 1, err
	}
	srv := &http.Server{Handler: am.TokenEndpoint(m.Handler(secret), refresher, secret), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer func() {
		c, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(c)
	}()
	log.WithFields(logrus.Fields{"tracking_url": base, "instances": job.TaskExecutor.Instances, "resources": capability.String(),
		"mode": modeName(a), "policy": fmt.Sprintf("%+v", a.policy)}).Info("yarn-am am: starting")

	out, err := m.Run(ctx)
	if ctx.Err() != nil {
		log.Info("yarn-am am: stopped by signal (application killed)")
		return 143, nil
	}
	log.WithFields(logrus.Fields{"final_status": out.Status, "diagnostics": out.Diagnostics}).Info("yarn-am am: done")
	if err != nil {
		return 1, err
	}
	return 0, nil
}

func modeName(a amArgs) string {
	switch {
	case a.driver != "":
		return "driver"
	case a.service:
		return "service"
	}
	return "batch"
}

// logPeakRSS logs the AM's peak resident set size (VmHWM), for sizing am.memory.
func logPeakRSS() {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			f := strings.Fields(v)
			if len(f) >= 1 {
				if kb, err := strconv.ParseFloat(f[0], 64); err == nil {
					logrus.Infof("am peak RSS: %.1f MiB", kb/1024)
				}
			}
		}
	}
}
