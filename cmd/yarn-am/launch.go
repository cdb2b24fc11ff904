package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/sirupsen/logrus"

	"github.com/yarn-am/yarn-am/container/launcher"
	"github.com/yarn-am/yarn-am/contract"
	_ "github.com/yarn-am/yarn-am/gpu" // registers the gpu driver (and Flink's GPUDriverFactory alias)
	"github.com/yarn-am/yarn-am/internal/cli"
	"github.com/yarn-am/yarn-am/jobfile"
	"github.com/yarn-am/yarn-am/resources"
)

const launchUsage = `Usage: yarn-am launch [-f job.toml] [--flink-conf FILE] [-D key=value]... -- CMD [ARGS...]

Runs inside every TaskExecutor container (the AM wraps the job's command in it; you can also run it by
hand to try a worker). It runs the driver of every configured external resource (GPU discovery), writes
external-resources.json in the working directory, starts CMD with these variables added:

  YARN_AM_EXTERNAL_RESOURCES_FILE   absolute path of external-resources.json
  YARN_AM_RESOURCE_<NAME>           per resource, the comma-separated indexes (gpu -> YARN_AM_RESOURCE_GPU)
  CUDA_VISIBLE_DEVICES              the GPU indexes (vendor=amd: HIP_VISIBLE_DEVICES), unless already set

and passes stdin, stdout and stderr through. In a YARN container the worker shares the container's
process group, so YARN's SIGTERM/SIGKILL reach everything it starts; elsewhere SIGTERM, SIGINT and
SIGHUP are forwarded to the worker.
When the worker exits, the GPUs claimed in coordination mode are released and launch exits with the
worker's exit code (128+N if it was killed by signal N).

Flags:
  -f FILE             job file (job.toml) with the external-resource keys
  --flink-conf FILE   flink-conf.yaml / config.yaml with the external-resource keys
  -D key=value        set one configuration key; repeatable; wins over both files (-Dkey=value works too)
  --report-url URL    report the resource infos (or the discovery failure) to the AM: POST to
                      URL<CONTAINER_ID>/report with the application secret from the container's token
                      file (default: $YARN_AM_REPORT_URL, which the AM sets; unset = no report). A failed
                      report is logged and never stops the worker.

Exit codes of its own (the worker is not started, or did not start):
  90  discovery failed: too few devices, the discovery script failed or timed out. stderr has a line
      'yarn-am launch: discovery failed for resource "<name>": <reason>'
  91  invalid configuration or command line
  92  the worker could not be started (command not found, not executable, info file not writable)

Log level: YARN_AM_LOG_LEVEL (debug, info, warn, error; default info), logs go to stderr.`

func init() {
	register(&command{
		name:    "launch",
		summary: "run the resource drivers, then the worker (inside a container)",
		usage:   launchUsage,
		run:     runLaunch,
	})
}

// extResFlags are the flags that select the external-resource configuration (launch, discover).
type extResFlags struct {
	jobFile      string
	resourceConf string
	defines      cli.Defines
}

func (f *extResFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.jobFile, "f", "", "job file (job.toml)")
	fs.Func("flink-conf", "flink-conf.yaml / config.yaml", cli.Path(&f.resourceConf))
	fs.Var(&f.defines, "D", "key=value (repeatable)")
}

// sources reads the job file's external-resource keys (a job file that cannot be read is a problem
// LoadResources reports with the rest).
func (f *extResFlags) sources() resources.Sources {
	src := resources.Sources{ResourceConf: f.resourceConf, Overrides: f.defines}
	if f.jobFile != "" {
		src.Job = jobfile.ReadResourceKeys(f.jobFile)
	}
	return src
}

func setLogLevel(stderr io.Writer, def logrus.Level) {
	logrus.SetOutput(stderr)
	lvl := def
	s := os.Getenv(contract.EnvLogLevel)
	if s != "" {
		if err := jobfile.CheckLogLevel(s); err != nil {
			// A worker or the AM is not stopped for its log level; the warning says which level is in
			// effect instead (check and submit refuse the value: TestBadInputs).
			fmt.Fprintf(stderr, "yarn-am: warning: %v; logging at %s\n", err, def)
		} else if l, err := logrus.ParseLevel(s); err == nil {
			lvl = l
		}
	}
	logrus.SetLevel(lvl)
}

func runLaunch(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("launch", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var f extResFlags
	f.register(fs)
	var reportURL string
	fs.StringVar(&reportURL, "report-url", "", "")
	if err := fs.Parse(cli.SplitJoinedDefines(args)); err != nil {
		if err == flag.ErrHelp {
			fmt.Fprintln(stdout, strings.TrimSpace(launchUsage))
			return 0
		}
		fmt.Fprintf(stderr, "yarn-am launch: %v\nRun 'yarn-am help launch' for usage.\n", cli.FlagError(fs, err))
		return contract.LauncherConfigError
	}
	argv := fs.Args()
	if len(argv) == 0 {
		fmt.Fprintln(stderr, "yarn-am launch: no worker command; usage: yarn-am launch [flags] -- CMD [ARGS...]")
		return contract.LauncherConfigError
	}
	setLogLevel(stderr, logrus.InfoLevel)
	// The AM passes the -D overrides in the environment, not on this command line (contract.EnvDefines).
	defines, err := definesFromEnv(f.defines)
	if err != nil {
		fmt.Fprintf(stderr, "yarn-am launch: %v\n", err)
		return contract.LauncherConfigError
	}
	f.defines = defines
	cfg, drivers, ok := launcher.LoadResources(f.sources(), "yarn-am launch", stderr)
	if !ok {
		return contract.LauncherConfigError
	}
	return launcher.RunInContainer(context.Background(), cfg, drivers, reportURL, argv, os.Stdin, stdout, stderr)
}
