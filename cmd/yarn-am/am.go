package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/yarn-am/yarn-am/am"
	"github.com/yarn-am/yarn-am/am/decision"
	"github.com/yarn-am/yarn-am/am/web"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/internal/cli"
	"github.com/yarn-am/yarn-am/internal/proc"
	"github.com/yarn-am/yarn-am/jobfile"
	"github.com/yarn-am/yarn-am/resources"
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
  -D key=value            job-file or external-resource override, as submit -D; repeatable; the
                          external-resource ones are passed on to the launchers
  --service               keep TaskExecutors running (replacing any that end) until the app is killed;
                          default: the app SUCCEEDS when every TaskExecutor has exited 0
  --driver CMD            driver mode: run CMD with bash -c in this container, with YARN_AM_API
                          (https://host:port/api/v1/), YARN_AM_CA_CERT (the PEM file to trust for it)
                          and YARN_AM_SECRET in its environment; the app
                          SUCCEEDS if CMD exits 0, else FAILS; TaskExecutors are stopped when it exits
  --heartbeat-fast DUR    allocate interval while containers are pending (default 200ms)
  --heartbeat-slow DUR    allocate interval when nothing is pending (default 1s)
  --launch-workers N      container launches in flight at once, 1-1024 (default 8)
  --finished-history N    finished containers the status and the UI list, the latest (default 1000);
                          every active container is listed, and the counts of completed and failed
                          containers stay exact; bounds the AM's memory in a long-running --service
  --max-event-streams N   event streams (GET /api/v1/events) served at once, in total (default 256);
                          beyond, 503 with Retry-After; bounds the AM's memory against a flood
  --max-event-streams-per-client N
                          event streams served at once to one client address (default 16)

Failure policy (the same names are keys of the job file's [policy] table, which gives the defaults; flags
win):
` + jobfile.PolicyFlagsUsage() + `

Environment (set by YARN and 'yarn-am submit'): CONTAINER_ID, NM_HOST, HADOOP_TOKEN_FILE_LOCATION
(AM-RM token and the application secret 'yarn-am.secret'), HADOOP_CONF_DIR, HADOOP_USER_NAME,
YARN_AM_STAGING_DIR (hdfs:// URI of the staging directory), YARN_AM_LOG_LEVEL, YARN_AM_DEFINES (submit's
-D overrides, base64 of a JSON list, applied before this command line's -D: never on a command line,
which every user of the node can read; passed on to the launchers the same way).

HTTP API, on NM_HOST, two free ports: the tracking URL (plain HTTP, also through the RM's proxy) serves
the reads and answers 403 to everything that takes the secret; the HTTPS port (its address is
"secureAPI" in the status; certificate issued by the application's authority, 'yarn-am.tls.ca-cert' in
the credentials) serves everything, and is the only one that takes the secret:
  GET  /                                  status page (containers with GPU indexes, latest events)
  GET  /api/v1/status                     application state, counts, containers, excluded nodes, events
  GET  /api/v1/containers                 the containers with their resource infos (GPU indexes)
  GET  /api/v1/requirements               the declared TaskExecutor requirement
  PUT  /api/v1/requirements               {"instances": N}; needs 'Authorization: Bearer <secret>'
  GET  /api/v1/events                     Server-Sent Events, resumable (Last-Event-ID or ?since=ID);
                                          ?format=json[&since=ID][&limit=N] for a JSON array
  POST /api/v1/containers/<id>/report     the launcher's report; needs 'Authorization: Bearer <secret>'
  GET  /api/v1/tokens                     refreshed delegation tokens (with a keytab); needs the secret
  GET  /metrics                           Prometheus metrics

Exit codes: 0 unregistered (whatever the final status), 1 could not run or unregister, 2 bad usage,
3 invalid job file or [policy], 143 stopped by SIGTERM (application killed).`

func init() {
	register(&command{name: "am", summary: "the ApplicationMaster (run by YARN in the AM container)", usage: amUsage, run: runAM})
}

func runAM(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("am", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var (
		jobFile, resourceConf, driver string
		defines                       cli.Defines
		service                       bool
		fast, slow                    time.Duration
		workers, history              int
		maxStreams, streamsPerIP      int
		policyFlags                   jobfile.PolicyFlags
	)
	fs.StringVar(&jobFile, "job", "", "")
	fs.Func("flink-conf", "", cli.Path(&resourceConf))
	fs.Var(&defines, "D", "")
	fs.BoolVar(&service, "service", false, "")
	fs.StringVar(&driver, "driver", "", "")
	fs.DurationVar(&fast, "heartbeat-fast", am.DefaultHeartbeatFast, "")
	fs.DurationVar(&slow, "heartbeat-slow", am.DefaultHeartbeatSlow, "")
	fs.IntVar(&workers, "launch-workers", am.DefaultLaunchWorkers, "")
	fs.IntVar(&history, "finished-history", am.DefaultFinishedHistory, "")
	fs.IntVar(&maxStreams, "max-event-streams", web.DefaultMaxEventStreams, "")
	fs.IntVar(&streamsPerIP, "max-event-streams-per-client", web.DefaultMaxEventStreamsPerClient, "")
	policyFlags.Register(fs)
	if err := fs.Parse(cli.SplitJoinedDefines(args)); err != nil {
		if err == flag.ErrHelp {
			fmt.Fprintln(stdout, strings.TrimSpace(amUsage))
			return 0
		}
		return usageError(stderr, "am", cli.FlagError(fs, err))
	}
	switch {
	case jobFile == "":
		fmt.Fprintln(stderr, "yarn-am am: --job is required (the staged job.toml)")
		return 2
	case fs.NArg() > 0:
		fmt.Fprintf(stderr, "yarn-am am: unexpected argument %q; am takes flags only\n", fs.Arg(0))
		return 2
	case fast <= 0 || slow <= 0:
		fmt.Fprintf(stderr, "yarn-am am: --heartbeat-fast=%v --heartbeat-slow=%v: both must be positive durations like 200ms or 1s\n", fast, slow)
		return 2
	case history < 1:
		fmt.Fprintf(stderr, "yarn-am am: --finished-history=%d: must be at least 1 (the default is %d)\n", history, am.DefaultFinishedHistory)
		return 2
	case maxStreams < 1 || streamsPerIP < 1 || streamsPerIP > maxStreams:
		fmt.Fprintf(stderr, "yarn-am am: --max-event-streams=%d --max-event-streams-per-client=%d: both must be at least 1, the per-client one at most the total (defaults %d and %d)\n",
			maxStreams, streamsPerIP, web.DefaultMaxEventStreams, web.DefaultMaxEventStreamsPerClient)
		return 2
	case service && driver != "":
		fmt.Fprintln(stderr, "yarn-am am: --service and --driver exclude each other (the driver decides when the application ends)")
		return 2
	case workers < 1 || workers > maxLaunchWorkers:
		fmt.Fprintf(stderr, "yarn-am am: --launch-workers=%d: must be from 1 to %d (the default is %d)\n", workers, maxLaunchWorkers, am.DefaultLaunchWorkers)
		return 2
	}
	// A bad policy flag is bad usage (2), checked before the job file: Apply checks only the flags.
	if err := policyFlags.Apply(new(jobfile.Policy)); err != nil {
		fmt.Fprintf(stderr, "yarn-am am: %v\n", err)
		return 2
	}
	// submit passes the -D overrides in the environment, not on this command line (contract.EnvDefines).
	envDefines, err := definesFromEnv(defines)
	if err != nil {
		fmt.Fprintf(stderr, "yarn-am am: %v\n", err)
		return contract.ExitInvalidInput
	}
	defines = envDefines
	// The job file is read once, here: its [policy] table gives the policy (flags on the command
	// line win), and RunProcess reads the rest of it.
	job, err := jobfile.Read(jobFile)
	if err != nil {
		fmt.Fprintf(stderr, "yarn-am am: %v\n", err)
		return contract.ExitInvalidInput
	}
	// A job that does not validate is invalid input (3), not a failure of the AM (1): the same checks
	// RunProcess makes, before it registers (TestBadInputs, "am a bad job").
	// -D job keys replace the staged file's, as they replaced the file's at submit
	// (docs/job-file.md#-d-overrides); the launchers get the external-resource ones.
	defines, derr := job.ApplyDefines(defines)
	_, jerr := job.StagedJob()
	_, _, rerr := resources.Load(resources.Sources{Job: job.ResourceKeys(), ResourceConf: resourceConf, Overrides: defines})
	if err := errors.Join(derr, jerr, rerr); err != nil {
		fmt.Fprintf(stderr, "yarn-am am: %v\n", err)
		return contract.ExitInvalidInput
	}
	policy, err := job.Policy()
	if err == nil {
		err = policyFlags.Apply(&policy)
	}
	if err != nil {
		fmt.Fprintf(stderr, "yarn-am am: %v\n", err)
		return contract.ExitInvalidInput
	}
	setLogLevel(stderr, logrus.InfoLevel)
	defer logPeakRSS()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	code, err := am.RunProcess(ctx, am.ProcessOptions{Job: job, ResourceConf: resourceConf, Defines: defines, Service: service,
		Driver: driver, HeartbeatFast: fast, HeartbeatSlow: slow, LaunchWorkers: workers, FinishedHistory: history, Policy: decision.PolicyConfig(policy),
		MaxEventStreams: maxStreams, MaxEventStreamsPerClient: streamsPerIP})
	if err != nil {
		logrus.WithError(err).Error("yarn-am am: failed")
		fmt.Fprintf(stderr, "yarn-am am: %v\n", err)
	}
	return code
}

// logPeakRSS logs the AM's peak resident set size (VmHWM), for sizing am.memory.
func logPeakRSS() {
	v, ok, err := proc.StatusField(proc.Self, "VmHWM")
	if err != nil || !ok {
		return
	}
	if f := strings.Fields(v); len(f) >= 1 {
		if kb, err := strconv.ParseFloat(f[0], 64); err == nil {
			logrus.Infof("am peak RSS: %.1f MiB", kb/1024)
		}
	}
}

// maxLaunchWorkers bounds --launch-workers: each worker holds a connection to a NodeManager.
const maxLaunchWorkers = 1024
