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

	"github.com/prometheus/client_golang/prometheus"
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
//
// Its stages, in order, each a method of process that fills in what the later ones use: readJob,
// readContainer, connect, openStaging, listen, workerEnv, startFramework, configure, then serve and
// run.
func RunProcess(ctx context.Context, a ProcessOptions) (int, error) {
	p := &process{opts: a}
	defer p.close()
	for _, stage := range []func(context.Context) error{
		p.readJob, p.readContainer, p.connect, p.openStaging, p.listen, p.workerEnv, p.startFramework, p.configure,
	} {
		if err := stage(ctx); err != nil {
			return 1, err
		}
	}
	return p.serveAndRun(ctx)
}

// process is the AM process's state as RunProcess's stages build it.
type process struct {
	opts ProcessOptions

	job        *jobfile.Job
	capability contract.Capability
	keys       configKeys
	external   map[string]string // external resource name → its YARN resource

	app, attempt, host, secret string
	attemptNo                  int
	creds                      *yarnrpc.Credentials
	amrm                       yarnrpc.Token
	log                        *logrus.Entry

	conf    *yarnrpc.Config
	rm      *yarnrpc.AMClient
	nm      *yarnrpc.NMClient
	cluster clusterNodes

	tls       *amTLS
	refresher *tokenRefresher // nil without a shipped keytab
	staging   stagingStore    // nil without a staging directory
	manifest  []contract.LocalResource

	ln, tln                  net.Listener
	port                     int
	base, secureBase, caFile string

	env           map[string]string // the TaskExecutors'
	fwAM          *framework.AM
	evlog         *events.Log
	releaseEvents func()
	published     *publishedValues
	running       atomic.Pointer[am] // the AM once newAM made it, for the framework's Scale
	amc           config

	closers []func() // run in reverse order by close
}

func (p *process) onClose(f func()) { p.closers = append(p.closers, f) }

func (p *process) close() {
	for i := len(p.closers) - 1; i >= 0; i-- {
		p.closers[i]()
	}
}

// readJob reads the staged job and its resource keys: the TaskExecutors' capability and the
// external resources' keys.
func (p *process) readJob(context.Context) error {
	a := p.opts
	job, err := a.Job.StagedJob() // the job's local files were shipped; their paths mean nothing here
	if err != nil {
		return err
	}
	cfg, warnings, err := resources.Load(resources.Sources{Job: a.Job.ResourceKeys(), ResourceConf: a.ResourceConf, Overrides: a.Defines})
	for _, w := range warnings {
		logrus.WithField("key", w.Key).Warn(w.Message)
	}
	if err != nil {
		return err
	}
	p.job = job
	p.capability = contract.Capability{"memory-mb": job.TaskExecutor.MemoryMB, "vcores": int64(job.TaskExecutor.VCores)}
	for k, v := range cfg.YarnResources() {
		p.capability[k] = v
	}
	p.keys, p.external = configKeys{}, map[string]string{}
	for _, r := range cfg.Resources {
		p.keys[r.YarnKey] = "external-resource." + r.Name + ".amount"
		p.external[r.Name] = r.YarnKey
	}
	return nil
}

// readContainer reads what YARN put in the AM's container: its id, host and token file (the AM-RM
// token and the application secret).
func (p *process) readContainer(context.Context) error {
	cidp, err := yarnrpc.ParseContainerID(os.Getenv("CONTAINER_ID"))
	if err != nil {
		return fmt.Errorf("CONTAINER_ID: %w (the AM runs in a YARN container)", err)
	}
	p.attempt = yarnrpc.FormatAttemptID(cidp.GetAppAttemptId())
	p.attemptNo = int(cidp.GetAppAttemptId().GetAttemptId())
	p.app = yarnrpc.FormatApplicationID(cidp.GetAppAttemptId().GetApplicationId())
	if p.host = os.Getenv("NM_HOST"); p.host == "" {
		return fmt.Errorf("NM_HOST is not set (YARN sets it in every container); the AM binds its HTTP API there")
	}
	tokenFile := os.Getenv("HADOOP_TOKEN_FILE_LOCATION")
	if tokenFile == "" {
		return fmt.Errorf("HADOOP_TOKEN_FILE_LOCATION is not set: the AM needs its AM-RM token from YARN")
	}
	if p.creds, err = yarnrpc.ReadCredentialsFile(tokenFile); err != nil {
		return err
	}
	var ok bool
	if p.amrm, ok = p.creds.TokenOfKind(yarnrpc.AMRMTokenKind); !ok {
		return fmt.Errorf("the token file %s has no %s token", tokenFile, yarnrpc.AMRMTokenKind)
	}
	if p.secret = string(p.creds.Secrets[contract.SecretAlias]); p.secret == "" {
		return fmt.Errorf("the token file %s has no secret %q ('yarn-am submit' puts it there)", tokenFile, contract.SecretAlias)
	}
	p.log = logrus.WithFields(logrus.Fields{"app": p.app, "attempt": p.attempt})
	return nil
}

// connect reads the site files and connects to the RM's scheduler, the NodeManagers and the RM's
// client port.
func (p *process) connect(context.Context) error {
	var err error
	if p.conf, err = yarnrpc.LoadConfigFromEnv(); err != nil {
		return err
	}
	user := yarnrpc.CurrentUser()
	if p.rm, err = yarnrpc.NewAMClient(p.conf, p.amrm, user); err != nil {
		return err
	}
	p.onClose(func() { p.rm.Close() })
	co, err := p.conf.ConnDefaults()
	if err != nil {
		return err
	}
	p.nm = yarnrpc.NewNMClient(co, p.attempt)
	p.onClose(func() { p.nm.Close() })
	// The RM's client port, for the node reports behind not-enough-resources events and
	// taskexecutor.locality = "spread" (clusterAuth). When the calls fail, the events carry the
	// scheduler's headroom instead and the asks go to any node.
	if ac, err := yarnrpc.NewApplicationClient(p.conf, clusterAuth(p.creds, user)); err != nil {
		p.log.WithError(err).Warn("yarn-am am: no client connection to the ResourceManager; not-enough-resources events will carry the headroom only and asks go to any node")
	} else {
		p.onClose(func() { ac.Close() })
		p.cluster = ac
	}
	return nil
}

// openStaging takes the TLS authority's key out of the credentials, starts the token refresher (with
// a shipped keytab), opens the staging directory and reads the staged manifest.
func (p *process) openStaging(ctx context.Context) error {
	var err error
	// First of all, before anything copies creds (the token refresher, the TaskExecutors' launch
	// context): take the TLS authority's key out of them.
	if p.tls, err = tlsFromCredentials(p.creds, p.host, p.app, p.log); err != nil {
		return err
	}
	announceTokenDeadline(p.log, p.creds)
	// With a shipped keytab the AM logs in and gets fresh tokens before it touches HDFS: a later
	// attempt may start after the submit's tokens expired (a restart past their max lifetime, or the
	// RM late with a renewal), and it must still reach its staging directory
	// (docs/running.md#kept-taskexecutors-find-the-new-attempt).
	if p.refresher, err = tokenRefresherFromEnv(ctx, p.conf, p.creds, p.log); err != nil {
		return err
	}
	if uri := os.Getenv(contract.EnvStagingDir); uri != "" {
		stagingCreds := p.creds
		if p.refresher != nil {
			stagingCreds = p.refresher.credentials()
		}
		if p.staging, err = openStagingFor(ctx, uri, yarnrpc.CurrentUser(), p.conf, stagingCreds); err != nil {
			return err
		}
		p.onClose(func() { p.staging.Close() })
	} else {
		p.log.Warn("yarn-am am: " + contract.EnvStagingDir + " is not set; nothing will be deleted when the application ends")
	}
	if p.refresher != nil {
		p.refresher.useStaging(p.staging)
		go p.refresher.Run(ctx)
	}
	if data, err := os.ReadFile(contract.StagedManifest); err == nil {
		if p.manifest, err = contract.ParseManifest(data); err != nil {
			return err
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("reading the staged manifest: %w", err)
	}
	return nil
}

// listen binds the AM's two listeners (docs/design.md#security): the plain one is the tracking URL
// (the RM's proxy speaks plain HTTP to it) and serves only reads; the HTTPS one takes the secret. It
// writes the TLS authority's certificate for the driver.
func (p *process) listen(context.Context) error {
	var err error
	if p.ln, err = net.Listen("tcp", net.JoinHostPort(p.host, "0")); err != nil {
		return fmt.Errorf("the HTTP API cannot listen on NM_HOST=%s: %w", p.host, err)
	}
	if p.tln, err = net.Listen("tcp", net.JoinHostPort(p.host, "0")); err != nil {
		p.ln.Close()
		return fmt.Errorf("the HTTPS API cannot listen on NM_HOST=%s: %w", p.host, err)
	}
	p.port = p.ln.Addr().(*net.TCPAddr).Port
	p.base = "http://" + net.JoinHostPort(p.host, strconv.Itoa(p.port)) + "/"
	p.secureBase = "https://" + net.JoinHostPort(p.host, strconv.Itoa(p.tln.Addr().(*net.TCPAddr).Port)) + "/"
	if err := os.WriteFile(contract.CACertFile, p.tls.CACert, 0o644); err != nil {
		return fmt.Errorf("writing the TLS authority's certificate for the driver: %w", err)
	}
	p.caFile, _ = filepath.Abs(contract.CACertFile)
	return nil
}

// workerEnv is the TaskExecutors' environment before their framework adds to it: the job's, the
// log level, where they refresh tokens and find a later attempt, and the launcher's settings.
func (p *process) workerEnv(ctx context.Context) error {
	job, env := p.job, map[string]string{}
	for k, v := range job.TaskExecutor.Env {
		env[k] = v
	}
	if lvl := os.Getenv(contract.EnvLogLevel); lvl != "" {
		if _, set := env[contract.EnvLogLevel]; !set {
			env[contract.EnvLogLevel] = lvl
		}
	}
	if p.refresher != nil {
		env[contract.EnvTokensURL] = strings.TrimSuffix(p.secureBase, "/") + web.TokensPath
	}
	// Where a kept TaskExecutor finds a later attempt (apiaddr.go).
	if uri := os.Getenv(contract.EnvStagingDir); uri != "" && p.staging != nil {
		env[contract.EnvStagingDir] = uri
		if pr, err := p.conf.Protection(); err == nil {
			env[contract.EnvRPCProtection] = pr
		}
		if secure, err := p.conf.SecurityEnabled(); err == nil { // the launcher refuses SIMPLE fallbacks by it
			env[contract.EnvHadoopAuthentication] = map[bool]string{true: "kerberos", false: "simple"}[secure]
		}
		publishAPIAddress(ctx, p.staging, p.secureBase, p.attempt, p.log)
	}
	if job.TaskExecutor.Gang {
		env[contract.EnvGang] = "1"
	}
	env[contract.EnvPreemptionSignal] = job.TaskExecutor.PreemptionSignal // the launcher's (docs/running.md#preemption)
	env[contract.EnvGPUSampleInterval] = contract.GPUSampleOff            // the launcher's (docs/running.md#gpu-utilisation)
	if d := job.TaskExecutor.GPUSampleInterval; d > 0 {
		env[contract.EnvGPUSampleInterval] = d.String()
	}
	p.env = env
	return nil
}

// startFramework starts the job's framework (docs/design.md#adding-a-framework): what it adds to the
// driver's and the TaskExecutors' environment, secrets and status, before either starts.
func (p *process) startFramework(ctx context.Context) error {
	fw := framework.Of(p.job)
	p.evlog = events.NewLog(events.DefaultCapacity) // the framework's events go to the AM's log (frameworkwatch.go)
	p.published = &publishedValues{}                // frameworkpublished.go
	emit, releaseEvents := frameworkEmitter(p.evlog)
	p.releaseEvents = releaseEvents
	var err error
	p.fwAM, err = fw.StartAM(ctx, p.job, framework.AMStart{Host: p.host, Attempt: p.attemptNo,
		Emit: emit, Scale: func(to int, stopFirst []string, why string) error {
			if m := p.running.Load(); m != nil { // the AM exists once configure made it
				return m.Scale(to, stopFirst, why)
			}
			return errors.New("the ApplicationMaster does not run yet")
		}, Instances: func() int {
			if m := p.running.Load(); m != nil {
				return m.Instances()
			}
			return 0
		}, GPUUtilisation: func(id string) (float64, bool) {
			if m := p.running.Load(); m != nil {
				return m.GPUUtilisation(id)
			}
			return 0, false
		}, Headroom: func() (framework.Headroom, bool) {
			if m := p.running.Load(); m != nil {
				return m.Headroom()
			}
			return framework.Headroom{}, false
		}, TLS: amAuthority{p.tls}, TrackingURL: p.base, State: frameworkStateOf(p.staging), Files: frameworkFilesOf(p.staging),
		Publish: p.published.set})
	if err != nil {
		return err
	}
	if err := addWorkerSecrets(p.creds, p.refresher, p.fwAM.WorkerSecrets); err != nil {
		return err
	}
	if fw.Name() != "" {
		p.env[contract.EnvFramework] = fw.Name()
	}
	for _, k := range slices.Sorted(maps.Keys(p.fwAM.WorkerEnv)) {
		p.env[k] = p.fwAM.WorkerEnv[k]
	}
	return nil
}

// configure makes the AM: the TaskExecutors' launch context, the AM's config from the job, the site
// files and the framework, and the driver's.
func (p *process) configure(context.Context) error {
	a, job := p.opts, p.job
	var staged stagedFiles
	if p.staging != nil {
		staged = p.staging
	}
	te := taskExecutorLaunch{
		Manifest: p.manifest, Staged: staged, JobFile: a.Job.Path, ResourceConf: a.ResourceConf, Defines: a.Defines,
		Command: job.TaskExecutor.Command, Env: p.env, ReportURL: p.secureBase + "api/v1/containers/", Creds: p.creds,
	}
	clc, err := te.LaunchContext()
	if err != nil {
		return err
	}
	mode := decision.Batch
	if a.Service {
		mode = decision.Service
	}
	p.amc = config{
		App: p.app,
		Spec: decision.Spec{Instances: job.TaskExecutor.Instances, Capability: p.capability, MaxFailures: job.TaskExecutor.MaxFailures, Mode: mode,
			Gang: job.TaskExecutor.Gang, MinInstances: job.TaskExecutor.MinInstances},
		GangTimeout:       job.TaskExecutor.GangTimeout,
		ElasticInterval:   job.TaskExecutor.ElasticInterval,
		Locality:          job.TaskExecutor.Locality,
		NodeLabel:         job.TaskExecutor.NodeLabel,
		Placement:         job.TaskExecutor.Placement,
		PlacementHandler:  p.conf.GetString(hadoop.KeyPlacementHandler, ""),
		LivenessTimeout:   job.TaskExecutor.LivenessTimeout,
		GPUSampleInterval: job.TaskExecutor.GPUSampleInterval, IdleGPUWarning: job.TaskExecutor.IdleGPUWarning,
		IdleGPURelease:  job.TaskExecutor.IdleGPURelease,
		SickGPUsPerNode: job.TaskExecutor.SickGPUsPerNode,
		PreemptionWait:  preemptionWait(p.conf, p.log),
		Host:            p.host, RPCPort: p.port, TrackingURL: p.base,
		HeartbeatFast: a.HeartbeatFast, HeartbeatSlow: a.HeartbeatSlow, LaunchWorkers: a.LaunchWorkers, FinishedHistory: a.FinishedHistory,
		LaunchContext: clc, RM: p.rm, NM: p.nm, Log: p.log,
		Policy: a.Policy, Keys: p.keys, Cluster: p.cluster, ExternalResources: p.external,
	}
	p.amc.OnScale, p.amc.OnPreemption, p.amc.GiveBack = p.fwAM.OnScale, p.fwAM.OnPreemption, p.fwAM.GiveBack
	if p.fwAM.Instances > 0 { // the framework sizes its workers from its demand: it starts low
		p.amc.Spec.Instances = p.fwAM.Instances
		p.amc.DemandSized = true
	}
	p.amc.Events, p.amc.ReleaseEvents = p.evlog, p.releaseEvents
	if p.staging != nil {
		p.amc.Staging = p.staging
		p.amc.State = p.staging
	}
	p.amc.Attempt = p.attempt
	return p.configureAttempts()
}

// configureAttempts: what the AM's config takes from the attempts left, the tokens and the driver.
func (p *process) configureAttempts() error {
	maxAttempts, err := effectiveMaxAttempts(p.conf, p.job.MaxAttempts)
	if err != nil {
		return err
	}
	attemptsLeft := p.attemptNo < maxAttempts
	if attemptsLeft {
		p.amc.KeepStagingOnKill = true
		p.log.WithFields(logrus.Fields{"attempt": p.attemptNo, "max_attempts": maxAttempts}).Info("yarn-am am: attempts are left; a SIGTERM keeps the staging directory for the next one")
	}
	if p.refresher != nil {
		p.amc.LaunchTokens = p.refresher.LaunchTokens
	}
	addTokenDeadlineEvent(&p.amc, p.creds)
	addRestartLimitEvent(&p.amc, p.conf, p.creds, attemptsLeft, p.log)
	if p.opts.Driver != "" {
		return p.configureDriver()
	}
	return nil
}

// configureDriver is the driver's part of the AM's config (driver mode).
func (p *process) configureDriver() error {
	d := &driverConfig{Command: p.opts.Driver, Env: []string{contract.EnvAPI + "=" + p.secureBase + "api/v1/", contract.EnvSecret + "=" + p.secret, contract.EnvCACert + "=" + p.caFile},
		Tokens: p.creds} // driver.go writes the driver's own token file from them, without the AM-RM token
	for _, k := range slices.Sorted(maps.Keys(p.fwAM.DriverEnv)) {
		d.Env = append(d.Env, k+"="+p.fwAM.DriverEnv[k])
	}
	if p.refresher != nil {
		// The driver's token file is written once; this one follows the refreshes
		// (contract.EnvDelegationTokens).
		path, err := filepath.Abs(driverDelegationTokensFile)
		if err == nil {
			err = p.refresher.keepTokenFile(path)
		}
		if err != nil {
			return fmt.Errorf("writing the driver's delegation token file: %w", err)
		}
		d.Env = append(d.Env, contract.EnvDelegationTokens+"="+path)
		d.FreshTokens = p.refresher.delegationTokens
	}
	d.EndOnFailureLimit = p.fwAM.EndDriverOnFailureLimit
	d.Restart = restartWith(p.fwAM.RestartDriver)
	p.amc.Driver = d
	return nil
}

// serveAndRun makes the AM, serves its HTTP API on the listeners and runs it until the application
// ends or ctx is cancelled; it returns RunProcess's exit code.
func (p *process) serveAndRun(ctx context.Context) (int, error) {
	m, err := newAM(p.amc)
	if err != nil {
		return 1, err
	}
	p.running.Store(m)
	fwAM := p.fwAM
	registerCollectors(m, fwAM.Collectors, p.log)
	api := web.Options{Secret: p.secret, SecureAPI: p.secureBase + "api/v1/", Links: fwAM.Links,
		Redact: secretsRedactor(p.creds, ""), // the workers' stderr tails (diagnostics.go)
		Stop:   fwAM.OnStop, KeepState: fwAM.OnKeepState, Proxy: fwAM.Proxy, Published: p.published.get}
	if pr := fwAM.Proxy; pr != nil {
		// The framework's UI as users reach it: through the AM (web/proxy.go), never its own address.
		api.Links = append(slices.Clone(api.Links), contract.Link{Name: pr.Name, URL: p.base + strings.TrimPrefix(web.ProxyPrefix(pr), "/"), Note: pr.Note})
	}
	if watch := newFrameworkWatch(fwAM.DetailsTitle, fwAM.Details, p.log); watch != nil {
		watch.series = fwAM.Series
		api.Framework = watch.status
		watchCtx, stopWatch := context.WithCancel(ctx)
		defer stopWatch()
		go watch.run(watchCtx)
	}
	if p.refresher != nil { // a nil *tokenRefresher in the interface would not read as "no tokens"
		api.Tokens = p.refresher
	}
	a := p.opts
	srv := web.Serve(m.Web(), api, web.Limits{MaxStreams: a.MaxEventStreams, MaxStreamsPerClient: a.MaxEventStreamsPerClient}, p.tls.Config, p.ln, p.tln)
	defer func() {
		c, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		srv.Shutdown(c)
	}()
	p.log.WithFields(logrus.Fields{"tracking_url": p.base, "secure_api": p.secureBase, "instances": p.amc.Spec.Instances, "resources": p.capability.String(),
		"mode": modeName(a), "policy": fmt.Sprintf("%+v", a.Policy)}).Info("yarn-am am: starting")

	out, err := m.Run(ctx)
	if ctx.Err() != nil {
		p.log.Info("yarn-am am: stopped by signal (application killed)")
		return 143, nil
	}
	p.log.WithFields(logrus.Fields{"final_status": out.Status, "diagnostics": out.Diagnostics}).Info("yarn-am am: done")
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

// registerCollectors serves the framework's collectors with the AM's own at /metrics
// (framework.AM.Collectors); one that cannot be registered is a warning, not the AM's end.
func registerCollectors(m *am, cs []prometheus.Collector, log logrus.FieldLogger) {
	for _, c := range cs {
		if err := m.metrics.reg.Register(c); err != nil {
			log.WithError(err).Warn("a collector of the framework's is not served at /metrics")
		}
	}
}
