package am

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/yarn-am/yarn-am/am/decision"
	"github.com/yarn-am/yarn-am/am/events"
	"github.com/yarn-am/yarn-am/am/web"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/framework"
	"github.com/yarn-am/yarn-am/internal/hadoop"
	"github.com/yarn-am/yarn-am/jobfile"
	"github.com/yarn-am/yarn-am/resources"
	"github.com/yarn-am/yarn-am/yarnrpc"
)

// ProcessOptions are the flags of `yarn-am am`.
type ProcessOptions struct {
	Job             *jobfile.File // the staged job.toml, read once by the caller
	ResourceConf    string        // the staged flink-conf.yaml ("" = none)
	Defines         []string
	Service         bool
	Driver          string // the driver command (driver mode), "" = none
	HeartbeatFast   time.Duration
	HeartbeatSlow   time.Duration
	LaunchWorkers   int
	FinishedHistory int
	Policy          decision.PolicyConfig
	// MaxEventStreams and MaxEventStreamsPerClient bound concurrent event streams (0 = the defaults,
	// web.DefaultMaxEventStreams and web.DefaultMaxEventStreamsPerClient).
	MaxEventStreams, MaxEventStreamsPerClient int
}

// RunProcess is the ApplicationMaster process in its YARN container: it reads what YARN and the
// client put there (CONTAINER_ID, NM_HOST, the token file with the AM-RM token and the application
// secret, the staged job, manifest and site files), connects to the RM, the NMs and HDFS, serves the
// HTTP API on NM_HOST and runs the AM until the application ends or ctx is cancelled (SIGTERM). It
// returns the process's exit code: 0 unregistered, 1 failed, 143 stopped by a signal.
func RunProcess(ctx context.Context, a ProcessOptions) (int, error) {
	job, err := a.Job.StagedJob() // the job's local files were shipped; their paths mean nothing here
	if err != nil {
		return 1, err
	}
	cfg, warnings, err := resources.Load(resources.Sources{Job: a.Job.ResourceKeys(), ResourceConf: a.ResourceConf, Overrides: a.Defines})
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
	keys := configKeys{}
	external := map[string]string{}
	for _, r := range cfg.Resources {
		keys[r.YarnKey] = "external-resource." + r.Name + ".amount"
		external[r.Name] = r.YarnKey
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
	// The RM's client port, for the node reports behind not-enough-resources events and
	// taskexecutor.locality = "spread" (clusterAuth). When the calls fail, the events carry the
	// scheduler's headroom instead and the asks go to any node.
	var cluster clusterNodes
	if ac, err := yarnrpc.NewApplicationClient(conf, clusterAuth(creds, user)); err != nil {
		log.WithError(err).Warn("yarn-am am: no client connection to the ResourceManager; not-enough-resources events will carry the headroom only and asks go to any node")
	} else {
		defer ac.Close()
		cluster = ac
	}

	// First of all, before anything copies creds (the token refresher, the TaskExecutors' launch
	// context): take the TLS authority's key out of them.
	amTLS, err := tlsFromCredentials(creds, host, app, log)
	if err != nil {
		return 1, err
	}
	announceTokenDeadline(log, creds)
	// With a shipped keytab the AM logs in and gets fresh tokens before it touches HDFS: a later
	// attempt may start after the submit's tokens expired (a restart past their max lifetime, or the
	// RM late with a renewal), and it must still reach its staging directory
	// (docs/running.md#kept-taskexecutors-find-the-new-attempt).
	refresher, err := tokenRefresherFromEnv(ctx, conf, creds, log) // nil without a shipped keytab
	if err != nil {
		return 1, err
	}
	var staging stagingStore
	if uri := os.Getenv(contract.EnvStagingDir); uri != "" {
		stagingCreds := creds
		if refresher != nil {
			stagingCreds = refresher.credentials()
		}
		if staging, err = openStagingFor(ctx, uri, user, conf, stagingCreds); err != nil {
			return 1, err
		}
		defer staging.Close()
	} else {
		log.Warn("yarn-am am: " + contract.EnvStagingDir + " is not set; nothing will be deleted when the application ends")
	}
	if refresher != nil {
		refresher.useStaging(staging)
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

	// Two listeners (docs/design.md#security): the plain one is the tracking URL (the RM's proxy
	// speaks plain HTTP to it) and serves only reads; the HTTPS one takes the secret.
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return 1, fmt.Errorf("the HTTP API cannot listen on NM_HOST=%s: %w", host, err)
	}
	tln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		ln.Close()
		return 1, fmt.Errorf("the HTTPS API cannot listen on NM_HOST=%s: %w", host, err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	base := "http://" + net.JoinHostPort(host, strconv.Itoa(port)) + "/"
	secureBase := "https://" + net.JoinHostPort(host, strconv.Itoa(tln.Addr().(*net.TCPAddr).Port)) + "/"
	if err := os.WriteFile(contract.CACertFile, amTLS.CACert, 0o644); err != nil {
		return 1, fmt.Errorf("writing the TLS authority's certificate for the driver: %w", err)
	}
	caFile, _ := filepath.Abs(contract.CACertFile)

	var stagedFiles stagedFiles
	if staging != nil {
		stagedFiles = staging
	}
	env := map[string]string{}
	for k, v := range job.TaskExecutor.Env {
		env[k] = v
	}
	if lvl := os.Getenv(contract.EnvLogLevel); lvl != "" {
		if _, set := env[contract.EnvLogLevel]; !set {
			env[contract.EnvLogLevel] = lvl
		}
	}
	if refresher != nil {
		env[contract.EnvTokensURL] = strings.TrimSuffix(secureBase, "/") + web.TokensPath
	}
	// Where a kept TaskExecutor finds a later attempt (apiaddr.go).
	if uri := os.Getenv(contract.EnvStagingDir); uri != "" && staging != nil {
		env[contract.EnvStagingDir] = uri
		if p, err := conf.Protection(); err == nil {
			env[contract.EnvRPCProtection] = p
		}
		if secure, err := conf.SecurityEnabled(); err == nil { // the launcher refuses SIMPLE fallbacks by it
			env[contract.EnvHadoopAuthentication] = map[bool]string{true: "kerberos", false: "simple"}[secure]
		}
		publishAPIAddress(ctx, staging, secureBase, attempt, log)
	}
	if job.TaskExecutor.Gang {
		env[contract.EnvGang] = "1"
	}
	env[contract.EnvPreemptionSignal] = job.TaskExecutor.PreemptionSignal // the launcher's (docs/running.md#preemption)
	env[contract.EnvGPUSampleInterval] = contract.GPUSampleOff            // the launcher's (docs/running.md#gpu-utilisation)
	if d := job.TaskExecutor.GPUSampleInterval; d > 0 {
		env[contract.EnvGPUSampleInterval] = d.String()
	}
	// The job's framework (docs/design.md#adding-a-framework): what it adds to the driver's and the
	// TaskExecutors' environment and to the status, before either starts.
	fw := framework.Of(job)
	evlog := events.NewLog(events.DefaultCapacity) // the framework's events go to the AM's log (frameworkwatch.go)
	// The framework's Scale reaches the AM once it exists (newAM below).
	var running atomic.Pointer[am]
	published := &publishedValues{} // frameworkpublished.go
	emit, releaseEvents := frameworkEmitter(evlog)
	fwAM, err := fw.StartAM(ctx, job, framework.AMStart{Host: host, Attempt: int(cidp.GetAppAttemptId().GetAttemptId()),
		Emit: emit, Scale: func(to int, stopFirst []string, why string) error {
			if m := running.Load(); m != nil {
				return m.Scale(to, stopFirst, why)
			}
			return errors.New("the ApplicationMaster does not run yet")
		}, Instances: func() int {
			if m := running.Load(); m != nil {
				return m.Instances()
			}
			return 0
		}, TLS: amAuthority{amTLS}, TrackingURL: base, State: frameworkStateOf(staging), Files: frameworkFilesOf(staging),
		Publish: published.set})
	if err != nil {
		return 1, err
	}
	if err := addWorkerSecrets(creds, refresher, fwAM.WorkerSecrets); err != nil {
		return 1, err
	}
	if fw.Name() != "" {
		env[contract.EnvFramework] = fw.Name()
	}
	for _, k := range slices.Sorted(maps.Keys(fwAM.WorkerEnv)) {
		env[k] = fwAM.WorkerEnv[k]
	}
	te := taskExecutorLaunch{
		Manifest: manifest, Staged: stagedFiles, JobFile: a.Job.Path, ResourceConf: a.ResourceConf, Defines: a.Defines,
		Command: job.TaskExecutor.Command, Env: env, ReportURL: secureBase + "api/v1/containers/", Creds: creds,
	}
	clc, err := te.LaunchContext()
	if err != nil {
		return 1, err
	}

	mode := decision.Batch
	if a.Service {
		mode = decision.Service
	}
	amc := config{
		App: app,
		Spec: decision.Spec{Instances: job.TaskExecutor.Instances, Capability: capability, MaxFailures: job.TaskExecutor.MaxFailures, Mode: mode,
			Gang: job.TaskExecutor.Gang, MinInstances: job.TaskExecutor.MinInstances},
		GangTimeout:       job.TaskExecutor.GangTimeout,
		ElasticInterval:   job.TaskExecutor.ElasticInterval,
		Locality:          job.TaskExecutor.Locality,
		NodeLabel:         job.TaskExecutor.NodeLabel,
		Placement:         job.TaskExecutor.Placement,
		PlacementHandler:  conf.GetString(hadoop.KeyPlacementHandler, ""),
		LivenessTimeout:   job.TaskExecutor.LivenessTimeout,
		GPUSampleInterval: job.TaskExecutor.GPUSampleInterval, IdleGPUWarning: job.TaskExecutor.IdleGPUWarning,
		IdleGPURelease:  job.TaskExecutor.IdleGPURelease,
		SickGPUsPerNode: job.TaskExecutor.SickGPUsPerNode,
		PreemptionWait:  preemptionWait(conf, log),
		Host:            host, RPCPort: port, TrackingURL: base,
		HeartbeatFast: a.HeartbeatFast, HeartbeatSlow: a.HeartbeatSlow, LaunchWorkers: a.LaunchWorkers, FinishedHistory: a.FinishedHistory,
		LaunchContext: clc, RM: rm, NM: nm, Log: log,
		Policy: a.Policy, Keys: keys, Cluster: cluster, ExternalResources: external,
	}
	amc.OnScale, amc.OnPreemption = fwAM.OnScale, fwAM.OnPreemption
	if fwAM.Instances > 0 { // the framework sizes its workers from its demand: it starts low
		amc.Spec.Instances = fwAM.Instances
		amc.DemandSized = true
	}
	amc.Events, amc.ReleaseEvents = evlog, releaseEvents
	if staging != nil {
		amc.Staging = staging
		amc.State = staging
	}
	amc.Attempt = attempt
	maxAttempts, err := effectiveMaxAttempts(conf, job.MaxAttempts)
	if err != nil {
		return 1, err
	}
	n := int(cidp.GetAppAttemptId().GetAttemptId())
	attemptsLeft := n < maxAttempts
	if attemptsLeft {
		amc.KeepStagingOnKill = true
		log.WithFields(logrus.Fields{"attempt": n, "max_attempts": maxAttempts}).Info("yarn-am am: attempts are left; a SIGTERM keeps the staging directory for the next one")
	}
	if refresher != nil {
		amc.LaunchTokens = refresher.LaunchTokens
	}
	addTokenDeadlineEvent(&amc, creds)
	addRestartLimitEvent(&amc, conf, creds, attemptsLeft, log)
	if a.Driver != "" {
		amc.Driver = &driverConfig{Command: a.Driver, Env: []string{contract.EnvAPI + "=" + secureBase + "api/v1/", contract.EnvSecret + "=" + secret, contract.EnvCACert + "=" + caFile},
			Tokens: creds} // driver.go writes the driver's own token file from them, without the AM-RM token
		for _, k := range slices.Sorted(maps.Keys(fwAM.DriverEnv)) {
			amc.Driver.Env = append(amc.Driver.Env, k+"="+fwAM.DriverEnv[k])
		}
		if refresher != nil {
			// The driver's token file is written once; this one follows the refreshes
			// (contract.EnvDelegationTokens).
			path, err := filepath.Abs(driverDelegationTokensFile)
			if err == nil {
				err = refresher.keepTokenFile(path)
			}
			if err != nil {
				return 1, fmt.Errorf("writing the driver's delegation token file: %w", err)
			}
			amc.Driver.Env = append(amc.Driver.Env, contract.EnvDelegationTokens+"="+path)
			amc.Driver.FreshTokens = refresher.delegationTokens
		}
		amc.Driver.EndOnFailureLimit = fwAM.EndDriverOnFailureLimit
		amc.Driver.Restart = restartWith(fwAM.RestartDriver)
	}
	m, err := newAM(amc)
	if err != nil {
		return 1, err
	}
	running.Store(m)
	api := web.Options{Secret: secret, SecureAPI: secureBase + "api/v1/", Links: fwAM.Links,
		Redact: secretsRedactor(creds, ""), // the workers' stderr tails (diagnostics.go)
		Stop:   fwAM.OnStop, KeepState: fwAM.OnKeepState, Proxy: fwAM.Proxy, Published: published.get}
	if p := fwAM.Proxy; p != nil {
		// The framework's UI as users reach it: through the AM (web/proxy.go), never its own address.
		api.Links = append(slices.Clone(api.Links), contract.Link{Name: p.Name, URL: base + strings.TrimPrefix(web.ProxyPrefix(p), "/"), Note: p.Note})
	}
	if watch := newFrameworkWatch(fwAM.DetailsTitle, fwAM.Details, log); watch != nil {
		api.Framework = watch.status
		watchCtx, stopWatch := context.WithCancel(ctx)
		defer stopWatch()
		go watch.run(watchCtx)
	}
	if refresher != nil { // a nil *tokenRefresher in the interface would not read as "no tokens"
		api.Tokens = refresher
	}
	srv := web.Serve(m.Web(), api, web.Limits{MaxStreams: a.MaxEventStreams, MaxStreamsPerClient: a.MaxEventStreamsPerClient}, amTLS.Config, ln, tln)
	defer func() {
		c, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		srv.Shutdown(c)
	}()
	log.WithFields(logrus.Fields{"tracking_url": base, "secure_api": secureBase, "instances": amc.Spec.Instances, "resources": capability.String(),
		"mode": modeName(a), "policy": fmt.Sprintf("%+v", a.Policy)}).Info("yarn-am am: starting")

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

func modeName(a ProcessOptions) string {
	switch {
	case a.Driver != "":
		return "driver"
	case a.Service:
		return "service"
	}
	return "batch"
}

// effectiveMaxAttempts is how many AM attempts YARN gives the application: the job's max-attempts
// capped by the cluster's yarn.resourcemanager.am.max-attempts (default 2), or that when the job sets
// none.
func effectiveMaxAttempts(conf *yarnrpc.Config, job int32) (int, error) {
	global, err := conf.GetInt("yarn.resourcemanager.am.max-attempts", 2)
	if err != nil {
		return 0, err
	}
	if job > 0 && int64(job) < global {
		return int(job), nil
	}
	return int(global), nil
}

// preemptionWait is the ResourceManager's contract.PreemptionWaitKey (milliseconds) in the site files
// the AM was given, else contract.DefaultPreemptionWait. The AM cannot ask the RM for its setting; a
// client whose site files leave the key out gets the scheduler's default, which may not be the RM's
// (docs/running.md#preemption).
func preemptionWait(conf *yarnrpc.Config, log logrus.FieldLogger) time.Duration {
	ms, err := conf.GetInt(contract.PreemptionWaitKey, contract.DefaultPreemptionWait.Milliseconds())
	if err != nil || ms <= 0 {
		log.WithError(err).WithField("key", contract.PreemptionWaitKey).Warn("yarn-am am: not a positive number of milliseconds; preemption deadlines assume the default " + contract.DefaultPreemptionWait.String())
		return contract.DefaultPreemptionWait
	}
	return time.Duration(ms) * time.Millisecond
}

// clusterAuth is how the AM authenticates to the RM's client port: with the RM delegation token
// submit puts into the AM's credentials on Kerberized clusters (the AM has no Kerberos login), else
// SIMPLE as the user (clusters without Kerberos). A server that needs neither switches the token
// connection to SIMPLE.
func clusterAuth(creds *yarnrpc.Credentials, user string) yarnrpc.Auth {
	if tok, ok := creds.TokenOfKind(yarnrpc.RMDelegationTokenKind); ok {
		return yarnrpc.TokenAuth(tok, user)
	}
	return yarnrpc.SimpleAuth(user)
}
