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

var submitUsage = usage("submit")

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
	placement, err := client.PlacementPlan(sess.Conf, lj.Job) // docs/job-file.md#placement
	if err != nil {
		return fail(stderr, "submit", err, contract.ExitInvalidInput)
	}
	if placement != "" {
		fmt.Fprintln(stdout, placement)
	}
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
