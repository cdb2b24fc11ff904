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

const checkUsage = `Usage: yarn-am check job.toml [--flink-conf FILE] [-D key=value]... [--queue Q] [--name N]
                     [--timeout D]

Validates a job file and its external-resource configuration, then checks it against the live cluster
named by $HADOOP_CONF_DIR without submitting anything: the resource types the ResourceManager knows
(getResourceTypeInfo), the running NodeManagers (getClusterNodes), the queue, then the cluster's
maximum allocation (getNewApplication, asked only when the rest passed; it reserves an application
id, which is harmless) and the capacity of every running NodeManager. Both the TaskExecutor (memory,
vcores, external resources) and the ApplicationMaster (am.memory, am.vcores) must fit.

Prints "OK: ..." with the YARN resource of one TaskExecutor, or the problems found (the first 20, then
how many more), each naming the key, the value and what the cluster allows. Everything that can be
checked without the cluster is checked before the first call to it (what submit would refuse, too).
A job whose rolled logs would not reach HDFS while it runs (log aggregation or rolling log
aggregation off in $HADOOP_CONF_DIR's yarn-site.xml) gets one note on stderr naming the key.

Flags:
  --flink-conf FILE   flink-conf.yaml / config.yaml with external-resource keys (wins over the job's
                      flink-conf key)
  -D key=value        set one key of the job file (taskexecutor.instances=4, taskexecutor.memory=2g)
                      or one external-resource key, as submit -D; repeatable; wins over the job file
                      and --flink-conf (-Dkey=value works too); any other key is an error, except
                      in a [flink] job, where it is a Flink key (or flink.config.KEY), as submit -D
  --queue Q           YARN queue, as submit --queue (default: the job's queue, else "default")
  --name N            application name, as submit --name (default: the job's name)
  --timeout D         give up after this long (default 2m; a duration with a unit: 30s, 2m)
` + loginUsage + `

` + exitCodesUsage

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
	facts, err := client.CheckAgainstCluster(ctx, rm, lj, lj.Job.Queue)
	if err != nil {
		return fail(stderr, "check", err, 0)
	}
	fmt.Fprintf(stdout, "OK: job %s fits the cluster: %d TaskExecutor(s) of %s; ApplicationMaster memory-mb=%d, vcores=%d; %d running NodeManagers\n",
		lj.Job.Name, lj.Job.TaskExecutor.Instances, lj.DescribeTaskExecutor(), lj.Job.AM.MemoryMB, lj.Job.AM.VCores, len(facts.Info.Nodes))
	return 0
}
