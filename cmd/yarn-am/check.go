package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/yarn-am/yarn-am/container/client"
)

const checkUsage = `Usage: yarn-am check job.toml [--flink-conf FILE] [-D key=value]... [--timeout D]

Validates a job file and its external-resource configuration, then checks it against the live cluster
named by $HADOOP_CONF_DIR without submitting anything: the resource types the ResourceManager knows
(getResourceTypeInfo), the cluster's maximum allocation (getNewApplication; this reserves an
application id, which is harmless) and the capacity of every running NodeManager (getClusterNodes).
Both the TaskExecutor (memory, vcores, external resources) and the ApplicationMaster (am.memory,
am.vcores) must fit.

Prints "OK: ..." with the YARN resource of one TaskExecutor, or every problem found, each naming the
key, the value and what the cluster allows.

Flags:
  --flink-conf FILE   flink-conf.yaml / config.yaml with external-resource keys (wins over the job's
                      flink-conf key)
  -D key=value        set one external-resource key; repeatable; wins over both files
                      (-Dkey=value works too)
  --timeout D         give up after this long (default 30s)
` + loginUsage + `

Exit codes: 0 the job fits the cluster, 1 it does not (or the cluster could not be asked), 2 usage.`

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
	flinkConf string
	defines   defineFlags
}

func (f *jobFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.flinkConf, "flink-conf", "", "flink-conf.yaml / config.yaml")
	fs.Var(&f.defines, "D", "key=value (repeatable)")
}

// parseInterleaved parses flags that may come before and after positional arguments (`check job.toml
// -D k=v`); "--" ends the flags.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	args = splitJoinedDefines(args)
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// parseCommand parses a client command's flags and positional arguments. With --help it prints usage
// and returns exit code 0; on a bad flag or a wrong number of arguments (want of them; -1 = any) it
// prints the problem and the way to the usage and returns 2. ok is true when the command should go on.
func parseCommand(fs *flag.FlagSet, args []string, name, usage string, want int, what string, stdout, stderr io.Writer) (pos []string, code int, ok bool) {
	pos, err := parseInterleaved(fs, args)
	if err == flag.ErrHelp {
		fmt.Fprintln(stdout, usage)
		return nil, 0, false
	}
	if err == nil && want >= 0 && len(pos) != want {
		if want == 0 {
			err = fmt.Errorf("unexpected argument %q", pos[0])
		} else {
			err = fmt.Errorf("give exactly %s", what)
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "yarn-am %s: %v\nRun 'yarn-am help %s' for usage.\n", name, err, name)
		return nil, 2, false
	}
	return pos, 0, true
}

// jobOptions are the job flags as the client package takes them.
func (f *jobFlags) jobOptions() client.JobOptions {
	return client.JobOptions{FlinkConf: f.flinkConf, Defines: f.defines}
}

func runCheck(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var jf jobFlags
	jf.register(fs)
	var lf loginFlags
	lf.register(fs)
	timeout := fs.Duration("timeout", 30*time.Second, "overall timeout")
	pos, code, ok := parseCommand(fs, args, "check", checkUsage, 1, "one job file", stdout, stderr)
	if !ok {
		return code
	}
	lj, err := client.LoadJob(pos[0], jf.jobOptions())
	if err != nil {
		fmt.Fprintf(stderr, "yarn-am check: %v\n", err)
		return 1
	}
	lj.PrintWarnings(stderr, "yarn-am check")
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	_, rm, err := client.Connect(lf.options(), stderr)
	if err != nil {
		fmt.Fprintf(stderr, "yarn-am check: %v\n", err)
		return 1
	}
	defer rm.Close()
	facts, err := client.CheckAgainstCluster(ctx, rm, lj, lj.Job.Queue)
	if err != nil {
		fmt.Fprintf(stderr, "yarn-am check: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "OK: job %s fits the cluster: %d TaskExecutor(s) of %s; ApplicationMaster memory-mb=%d, vcores=%d; %d running NodeManagers\n",
		lj.Job.Name, lj.Job.TaskExecutor.Instances, lj.DescribeTaskExecutor(), lj.Job.AM.MemoryMB, lj.Job.AM.VCores, len(facts.Info.Nodes))
	return 0
}
