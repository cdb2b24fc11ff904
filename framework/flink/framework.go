package flink

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/framework"
	"github.com/yarn-am/yarn-am/framework/flink/flinkdist"
	"github.com/yarn-am/yarn-am/jobfile"
)

func init() { framework.Register(flinkFramework{}) }

// Name is frameworkName, "flink".
func (flinkFramework) Name() string { return frameworkName }

// Table is the [flink] table; -D keys that are not job keys are Flink's (docs/flink.md#configuration).
func (flinkFramework) Table() jobfile.TableInfo {
	return jobfile.TableInfo{Reader: tableReader{}, DefinesTo: "config", KeyNoun: "Flink key",
		DefineExample: "taskmanager.numberOfTaskSlots=2", DefinesDoc: "docs/flink.md#configuration",
		Command: taskManagerCommand, Workers: "Flink TaskManagers",
		MinInstances: `the fewest TaskManagers [flink] taskmanagers = "demand" keeps`, RolledLogs: rolledLogsPattern}
}

// Check is the pre-flight of a [flink] job: each role's memory, the parallelism against the slots,
// the jar against its main class (docs/flink.md#what-check-refuses).
func (flinkFramework) Check(j *jobfile.Job) error {
	if specOf(j) == nil {
		return nil
	}
	return preflight(j)
}

// CheckWarnings are the Flink keys that are near misses of the version's own
// (docs/flink.md#what-check-refuses).
func (flinkFramework) CheckWarnings(j *jobfile.Job) []string { return checkWarnings(j) }

// Stage ships the Flink home and the job's jar (docs/flink.md#the-flink-distribution).
func (flinkFramework) Stage(j *jobfile.Job, out io.Writer) error {
	if specOf(j) == nil {
		return nil
	}
	return stage(j, out)
}

// Driver is the JobManager (docs/flink.md#the-jobmanager-as-the-driver).
func (flinkFramework) Driver(*jobfile.Job) (string, string) {
	return jobManagerCommand, "its JobManager is the driver, and a session cluster (no flink.jar) runs until killed"
}

// StartAM readies the JobManager's start on the AM's host: its JVM binds its own ports, which the AM
// learns from the driver and only then publishes to its REST clients, its proxy and the
// TaskManagers (bound.go, docs/flink.md#the-jobmanager-as-the-driver); the driver and every
// TaskExecutor get the -D Flink keys.
func (flinkFramework) StartAM(ctx context.Context, j *jobfile.Job, s framework.AMStart) (*framework.AM, error) {
	spec := specOf(j)
	if spec == nil {
		return nil, fmt.Errorf("the job has no [%s] table", frameworkName)
	}
	env := map[string]string{}
	if len(spec.Defines) > 0 {
		defs, err := encodeDefines(spec.Defines)
		if err != nil {
			return nil, err
		}
		env[envDefines] = defs
	}
	if err := hadoopEnv(spec, env); err != nil {
		return nil, err
	}
	// The one class-data-sharing archive the TaskManagers may map: the one submit took, named in the
	// AM's launch context (cds.go).
	if a := os.Getenv(envCDSArchive); a != "" {
		env[envCDSArchive] = a
	}
	wd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	// The REST API answers the AM's client certificate only (resttls.go); users go through the AM.
	// A job with its own REST TLS keeps it, and the AM uses its stores (userresttls.go).
	conf := amConfig(spec)
	var restTLSClient *tls.Config
	closedDir := ""
	if userRESTTLS(conf) {
		if restTLSClient, err = userRESTClient(conf, wd); err != nil {
			return nil, err
		}
	} else {
		closed, err := writeRESTTLS(filepath.Join(wd, restTLSDir), s.Host)
		if err != nil {
			return nil, err
		}
		restTLSClient, closedDir = closed.client, closed.dir
	}
	// Its internal connections answer this application's certificate only (internaltls.go).
	var secrets map[string][]byte
	if spec.InternalTLS {
		secret, err := internalSecret(s.TLS)
		if err != nil {
			return nil, err
		}
		secrets = map[string][]byte{secretInternalTLS: secret}
	}
	if s.TrackingURL != "" {
		env[envUI] = strings.TrimSuffix(s.TrackingURL, "/") + "/" + proxyPath + "/"
	}
	driverEnv := maps.Clone(env)
	if closedDir != "" {
		driverEnv[envRESTTLS] = closedDir
	}
	driverEnv[envHost] = s.Host
	emit := s.Emit
	if emit == nil {
		emit = func(contract.Event) {}
	}
	publish := s.Publish
	if publish == nil {
		publish = func(string, string) {}
	}
	if note := os.Getenv(envCDSRefused); note != "" {
		emit(contract.Event{Type: eventJob, Severity: contract.SeverityWarning, Message: "class-data sharing: submit " + note})
	}
	// Nothing reaches the JobManager before the driver says where its JVM bound (bound.go): the
	// watch, demand and stop wait for it, the proxy answers 503.
	jm := newJobManager(s.Host)
	boundPath := filepath.Join(wd, boundFile)
	if err := os.Remove(boundPath); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	driverEnv[envBoundFile] = boundPath
	go jm.await(ctx, boundPath, publish, emit)
	// The URL names the host alone, which the server's certificate names; the port is the bound one.
	client := &flinkdist.REST{URL: "https://" + s.Host, HTTP: &http.Client{Timeout: 5 * time.Second, Transport: jm.transport(restTLSClient, true)}}
	// A later AM attempt starts the job from the latest checkpoint an earlier one kept (recover.go).
	from, kept := recoverAtStart(ctx, spec, conf, s, emit)
	if from != "" {
		driverEnv[envRecover] = from
	}
	// The recorder knows the latest completed checkpoint, for a JobManager restarted in place
	// (restart.go) and, with a store, for a later AM attempt.
	var rec *recorder
	if spec.Jar != "" {
		rec = newRecorder(s.State, emit, s.Attempt, kept)
		if s.State != nil {
			go rec.run(ctx)
		}
	}
	watch := &jobWatch{rest: client, emit: emit, now: time.Now, recorder: rec, jm: jm}
	dir, _ := conf.Get(keySavepointsDir)
	dir = strings.TrimSpace(dir)
	if spec.OnPreemption != preemptOff {
		watch.preempt = newPreempter(client, emit, spec.OnPreemption, dir)
	}
	fw := &framework.AM{
		DriverEnv: driverEnv, WorkerEnv: env, WorkerSecrets: secrets,
		Proxy: &framework.Proxy{Path: proxyPath, Name: "Flink UI", Note: "the JobManager's web UI and REST API, through the AM",
			Target: &url.URL{Scheme: "https", Host: s.Host}, Transport: jm.transport(restTLSClient, false), Access: proxyAccess,
			InlineHandlers: dashboardHandlers, InlineStyles: true},
		// The JobManager would wait for TaskManagers past the failure limit, which are not replaced.
		EndDriverOnFailureLimit: true,
		OnScale:                 scalePolicy(isReactive(spec), spec.Jar == ""),
		DetailsTitle:            detailsTitle,
		Details:                 watch.details,
	}
	if spec.TaskManagersMode == taskManagersDemand {
		d, err := newDemand(j, conf, client, s)
		if err != nil {
			return nil, err
		}
		d.emit = emit
		watch.demand = d
		fw.OnScale, fw.Instances, fw.GiveBack = d.onScale, d.lo, d.giveBack()
		go d.run(ctx)
	}
	if spec.Autoscale.Mode != autoscaleOff {
		watch.autoscale = startAutoscale(ctx, j, conf, client, emit, s.GPUUtilisation, s.Headroom, watch.demand) // docs/flink.md#autoscaling
		fw.Collectors, fw.Series = watch.autoscale.gauges.collectors(), watch.autoscale.series
	}
	if watch.preempt != nil {
		fw.OnPreemption = watch.preempt.onPreemption // docs/flink.md#preemption
	}
	// A session cluster runs until killed, whatever its jobs do: stopping one of them would not end
	// the application, so stop refuses it and names kill; a lost session JobManager is not restarted
	// either (its jobs are not kept).
	if spec.Jar != "" && spec.JobManagerRestarts > 0 {
		r := &restarter{max: spec.JobManagerRestarts, window: spec.JobManagerRestartWindow, jm: jm, rec: rec,
			files: s.Files, spec: spec, emit: emit, now: time.Now}
		watch.restarts = r
		fw.RestartDriver = r.restart
	}
	iv, _ := conf.Get(keyCheckpointInterval)
	interval, err := flinkDuration(iv)
	if err != nil {
		interval = 0
	}
	watch.progress = &progress{timeout: progressTimeout(spec, interval), checkpointing: interval > 0, emit: emit}
	if spec.ProgressRestart && fw.RestartDriver != nil {
		watch.progress.restart = func() error { return endJobManager(boundPath) }
	}
	if spec.Jar != "" {
		note := filepath.Join(wd, stoppedNote)
		fw.OnStop = (&stopper{rest: client, emit: emit, configured: dir, note: note}).stop
		startSavepoints(ctx, fw, &savepointSchedule{rest: client, emit: emit, rec: rec, files: s.Files, jm: jm, dir: dir,
			interval: spec.SavepointInterval, kept: spec.SavepointsKept, now: time.Now})
	}
	return fw, nil
}

// proxyPath is where the AM serves the JobManager's UI: <tracking URL>/flink/.
const proxyPath = "flink"

// Commands are flink-jobmanager and flink-taskmanager.
func (flinkFramework) Commands() []framework.Command { return commands() }
