package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/yarn-am/yarn-am/container/client"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/internal/cli"
)

var checkUsage = usage("check")

func init() {
	register(&command{
		name:    "check",
		summary: "validate a job file against the live cluster without submitting",
		usage:   checkUsage,
		run:     runCheck,
	})
}

// jobFlags are the flags shared by check and submit that select the job and its configuration.
type jobFlags struct {
	resourceConf      string
	defines           cli.Defines
	queue, name       string
	queueSet, nameSet bool // given on the command line, even as ""
}

func (f *jobFlags) register(fs *flag.FlagSet) {
	fs.Func("flink-conf", "flink-conf.yaml / config.yaml", cli.Path(&f.resourceConf))
	fs.Var(&f.defines, "D", "key=value (repeatable)")
	fs.Func("queue", "YARN queue", func(v string) error { f.queue = v; f.queueSet = true; return nil })
	fs.Func("name", "application name", func(v string) error { f.name = v; f.nameSet = true; return nil })
}

// jobOptions are the job flags as the client package takes them.
func (f *jobFlags) jobOptions() client.JobOptions {
	o := client.JobOptions{ResourceConf: f.resourceConf, Defines: f.defines}
	if f.queueSet {
		o.Queue = &f.queue
	}
	if f.nameSet {
		o.Name = &f.name
	}
	return o
}

func runCheck(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	var jf jobFlags
	jf.register(fs)
	var lf loginFlags
	lf.register(fs)
	timeout := registerTimeout(fs)
	pos, code, ok := parseCommand(fs, args, "check", checkUsage, 1, "one job file", stdout, stderr)
	if !ok {
		return code
	}
	lj, err := client.LoadJob(pos[0], jf.jobOptions())
	if err != nil {
		return fail(stderr, "check", err, contract.ExitInvalidInput)
	}
	lj.PrintWarnings(stderr, "yarn-am check")
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(*timeout))
	defer cancel()
	sess, rm, code := connect(lf, "check", stderr)
	if code != 0 {
		return code
	}
	defer rm.Close()
	// docs/job-file.md#log-aggregation: whether the job's rolled logs reach HDFS while it runs.
	if note := client.RollingAggregationNote(sess.Conf, lj.Job.LogAggregation); note != "" {
		fmt.Fprintf(stderr, "yarn-am check: note: %s\n", note)
	}
	// docs/job-file.md#placement: SchedulingRequests or the AM's own spreading, by the RM's handler.
	placement, err := client.PlacementPlan(sess.Conf, lj.Job)
	if err != nil {
		return fail(stderr, "check", err, contract.ExitInvalidInput)
	}
	facts, err := client.CheckAgainstCluster(ctx, rm, lj, lj.Job.Queue)
	if err != nil {
		return fail(stderr, "check", err, 0)
	}
	if placement != "" {
		fmt.Fprintln(stdout, placement)
	}
	fmt.Fprintf(stdout, "OK: job %s fits the cluster: %d TaskExecutor(s) of %s; ApplicationMaster memory-mb=%d, vcores=%d; %d running NodeManagers\n",
		lj.Job.Name, lj.Job.TaskExecutor.Instances, lj.DescribeTaskExecutor(), lj.Job.AM.MemoryMB, lj.Job.AM.VCores, len(facts.Info.Nodes))
	return 0
}
