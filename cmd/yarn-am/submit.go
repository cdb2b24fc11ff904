package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/yarn-am/yarn-am/container/client"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/framework"
	"github.com/yarn-am/yarn-am/internal/cli"
	"github.com/yarn-am/yarn-am/yarnrpc"
)

const submitUsage = `Usage: yarn-am submit job.toml [--flink-conf FILE] [-D key=value]... [--detach]
                      [--kill-on-interrupt] [--driver 'CMD'] [--service] [--queue Q] [--name N]

Submits a job to the YARN cluster named by $HADOOP_CONF_DIR:

 1. pre-flight, as 'yarn-am check' does: the job and its external-resource keys are validated and the
    TaskExecutor and the ApplicationMaster are checked against the cluster's resource types, maximum
    allocation and node capacities; any problem stops the submission within seconds, naming the key;
 2. staging: this yarn-am binary, the job file, flink-conf.yaml (if any), core-site.xml, yarn-site.xml
    (and hdfs-site.xml) from $HADOOP_CONF_DIR, custom discovery scripts and the job's local
    taskexecutor.files/archives are copied to hdfs:///user/<user>/.yarn-am/<application id>/ and
    listed (the directory is removed when the application ends, or here if submission fails);
 3. the ApplicationMaster is submitted (application type YARN-AM, tags from the job plus yarn-am).

Attached (the default), submit then follows the application: it prints state changes, the AM's
container counts (requested, allocated, running, completed, failed) and each container's GPU indexes
as they become known, until the application ends. It exits 0 only if the application's final status
is SUCCEEDED; otherwise it prints the diagnostics and exits 1. Ctrl-C stops following (the
application keeps running; 'yarn-am follow APP_ID' re-attaches) and prints the commands to follow or
kill it; with --kill-on-interrupt, Ctrl-C kills the application instead.

Flags:
  --flink-conf FILE      flink-conf.yaml / config.yaml with external-resource keys; shipped as
                         flink-conf.yaml (so is a flink-conf named in the job file)
  -D key=value           set one key of the job file (taskexecutor.instances=4, taskexecutor.memory=2g,
                         am.memory=1g, policy.pending-timeout=5m, ...) or one external-resource key;
                         repeatable, the last wins; wins over the job file and --flink-conf, loses to
                         --queue and --name; checked like the job file; passed on to the AM and every
                         TaskExecutor's launcher (-Dkey=value works too). In a [flink] job, any other
                         key (or flink.config.KEY) is a Flink key: it wins over [flink.config] and the
                         home's conf/config.yaml, as flink run -D (taskmanager.numberOfTaskSlots=2)
  --detach               print the application id and return once it is submitted
  --kill-on-interrupt    Ctrl-C (SIGINT/SIGTERM) kills the application instead of only detaching
  --driver 'CMD'         driver mode: the AM runs CMD (a shell command) and the application's final
                         status follows its exit code
  --service              TaskExecutors run until the application is killed (no batch completion);
                         not with --driver (the driver decides when the application ends)
  --queue Q              YARN queue (default: the job's queue, else "default")
  --name N               application name (default: the job's name)
  --timeout D            time allowed for pre-flight, staging and submission (default 2m; a duration
                         with a unit: 30s, 5m)
` + loginUsage + `

Environment: HADOOP_CONF_DIR (required), HADOOP_USER_NAME (the user; default the OS user).

Everything that can be checked without the cluster (flags, job file, keys, flink-conf, environment) is
checked before the first call to it; getNewApplication, which reserves the application id, comes after
the cluster checks that do not need it. Exit 0 means submitted (--detach) or SUCCEEDED; 130 means
interrupted (the application keeps running unless --kill-on-interrupt).
` + exitCodesUsage

func init() {
	register(&command{
		name:    "submit",
		summary: "stage and submit a job, then follow it until it ends",
		usage:   submitUsage,
		run:     runSubmit,
	})
}

type submitFlags struct {
	jobFlags
	detach, killOnInterrupt, service bool
	driver                           string
	loginFlags
}

func runSubmit(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("submit", flag.ContinueOnError)
	var sf submitFlags
	sf.jobFlags.register(fs)
	fs.BoolVar(&sf.detach, "detach", false, "return after submission")
	fs.BoolVar(&sf.killOnInterrupt, "kill-on-interrupt", false, "kill the application on Ctrl-C")
	fs.BoolVar(&sf.service, "service", false, "service mode")
	fs.StringVar(&sf.driver, "driver", "", "driver command")
	timeout := registerTimeout(fs)
	sf.loginFlags.register(fs)
	pos, code, ok := parseCommand(fs, args, "submit", submitUsage, 1, "one job file", stdout, stderr)
	if !ok {
		return code
	}
	if sf.service && sf.driver != "" {
		return usageError(stderr, "submit", errors.New("--service and --driver exclude each other: with --driver the driver's exit ends the application, with --service only a kill does"))
	}
	if sf.driver != "" && strings.TrimSpace(sf.driver) == "" {
		return usageError(stderr, "submit", errors.New(`--driver "": give the driver's shell command, e.g. --driver './train --epochs 3'`))
	}
	setLogLevel(stderr, logrus.InfoLevel)
	lj, err := client.LoadJob(pos[0], sf.jobOptions())
	if err != nil {
		return fail(stderr, "submit", err, contract.ExitInvalidInput)
	}
	lj.PrintWarnings(stderr, "yarn-am submit")
	fw := framework.Of(lj.Job)
	if driver, why := fw.Driver(lj.Job); driver != "" {
		// The framework's driver (a Flink JobManager, docs/flink.md#the-jobmanager-as-the-driver).
		if sf.driver != "" || sf.service {
			return usageError(stderr, "submit", fmt.Errorf("--driver and --service do not go with a [%s] job: %s", fw.Name(), why))
		}
		sf.driver = driver
	}
	if err := fw.Stage(lj.Job, stdout); err != nil {
		return fail(stderr, "submit", err, contract.ExitInvalidInput)
	}

	// One signal handler for the whole run: Ctrl-C during submission cancels it (and removes the
	// staging directory); while following, it detaches or kills. (Resetting and re-registering would
	// leave SIGINT ignored in a process started in the background.)
	subCtx, cancel := context.WithTimeout(context.Background(), time.Duration(*timeout))
	defer cancel()
	followCtx, stopFollow := context.WithCancel(context.Background())
	defer stopFollow()
	interrupted, stopWatch := cli.OnInterrupt(cancel, stopFollow)
	defer stopWatch()

	sess, rm, code := connect(sf.loginFlags, "submit", stderr)
	if code != 0 {
		return code
	}
	defer rm.Close()
	appID, err := sess.Submit(subCtx, rm, lj, client.SubmitOptions{Service: sf.service, Driver: sf.driver}, stdout)
	id := yarnrpc.FormatApplicationID(appID)
	switch {
	case err != nil && appID != nil && subCtx.Err() != nil && !errors.Is(err, context.DeadlineExceeded):
		fmt.Fprintf(stderr, "yarn-am submit: interrupted before %s was submitted: %v\n", id, err)
		return contract.ExitInterrupted
	case err != nil:
		return fail(stderr, "submit", err, 0)
	}
	fmt.Fprintf(stdout, "submitted %s\n", id)
	if sf.detach {
		fmt.Fprintln(stdout, id)
		return 0
	}

	return sess.FollowToEnd(followCtx, "submit", rm, appID, interrupted, sf.killOnInterrupt, stdout, stderr)
}
