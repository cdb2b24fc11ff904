package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os/signal"
	"strings"
	"syscall"

	"github.com/sirupsen/logrus"

	"github.com/yarn-am/yarn-am/am"
	"github.com/yarn-am/yarn-am/am/web"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/internal/cli"
	"github.com/yarn-am/yarn-am/jobfile"
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
	var f am.ProcessFlags
	var defines cli.Defines
	fs.StringVar(&f.JobFile, "job", "", "")
	fs.Func("flink-conf", "", cli.Path(&f.ResourceConf))
	fs.Var(&defines, "D", "")
	fs.BoolVar(&f.Service, "service", false, "")
	fs.StringVar(&f.Driver, "driver", "", "")
	fs.DurationVar(&f.HeartbeatFast, "heartbeat-fast", am.DefaultHeartbeatFast, "")
	fs.DurationVar(&f.HeartbeatSlow, "heartbeat-slow", am.DefaultHeartbeatSlow, "")
	fs.IntVar(&f.LaunchWorkers, "launch-workers", am.DefaultLaunchWorkers, "")
	fs.IntVar(&f.FinishedHistory, "finished-history", am.DefaultFinishedHistory, "")
	fs.IntVar(&f.MaxEventStreams, "max-event-streams", web.DefaultMaxEventStreams, "")
	fs.IntVar(&f.MaxEventStreamsPerClient, "max-event-streams-per-client", web.DefaultMaxEventStreamsPerClient, "")
	f.Policy.Register(fs)
	if err := fs.Parse(cli.SplitJoinedDefines(args)); err != nil {
		if err == flag.ErrHelp {
			fmt.Fprintln(stdout, strings.TrimSpace(amUsage))
			return 0
		}
		return usageError(stderr, "am", cli.FlagError(fs, err))
	}
	if err := f.Check(fs.Args()); err != nil {
		fmt.Fprintf(stderr, "yarn-am am: %v\n", err)
		return contract.ExitUsage
	}
	// submit passes the -D overrides in the environment, not on this command line (contract.EnvDefines).
	var err error
	f.Defines, err = definesFromEnv(defines)
	var opts am.ProcessOptions
	if err == nil {
		opts, err = f.Options()
	}
	if err != nil {
		fmt.Fprintf(stderr, "yarn-am am: %v\n", err)
		return contract.ExitInvalidInput
	}
	setLogLevel(stderr, logrus.InfoLevel)
	defer am.LogPeakRSS()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	code, err := am.RunProcess(ctx, opts)
	if err != nil {
		logrus.WithError(err).Error("yarn-am am: failed")
		fmt.Fprintf(stderr, "yarn-am am: %v\n", err)
	}
	return code
}
