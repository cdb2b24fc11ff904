package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/yarn-am/yarn-am/am"
	"github.com/yarn-am/yarn-am/container/jobfile"
	"github.com/yarn-am/yarn-am/resources"
	"github.com/yarn-am/yarn-am/yarnrpc"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
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

// loadedJob is a job file with its validated external-resource configuration.
type loadedJob struct {
	job       *jobfile.Job
	res       *resources.Config
	flinkConf string // the flink-conf.yaml in effect (flag, else the job's flink-conf key), "" = none
	warnings  []resources.Warning
}

// loadJob reads and validates the job and its external-resource keys; every problem is in the error.
func loadJob(path string, f *jobFlags) (*loadedJob, error) {
	job, jerr := jobfile.LoadJob(path)
	src := resources.Sources{JobFile: path, FlinkConf: f.flinkConf, Overrides: f.defines}
	cfg, warns, rerr := resources.Load(src)
	// The [policy] table is applied by the AM; check it here so a typo fails before anything is staged.
	_, perr := am.PolicyArgs(path)
	if jerr != nil || rerr != nil || perr != nil {
		return nil, errors.Join(jerr, rerr, perr)
	}
	if _, err := cfg.Drivers(); err != nil {
		return nil, err
	}
	lj := &loadedJob{job: job, res: cfg, warnings: warns, flinkConf: f.flinkConf}
	if lj.flinkConf == "" {
		lj.flinkConf = job.FlinkConf
	}
	return lj, nil
}

func printWarnings(w io.Writer, prefix string, warns []resources.Warning) {
	for _, wa := range warns {
		if wa.Level == resources.LevelWarning {
			fmt.Fprintf(w, "%s: warning: %s\n", prefix, wa.Message)
		}
	}
}

// loadClientConfig loads the Hadoop configuration of HADOOP_CONF_DIR (or YARN_CONF_DIR) and insists on
// a yarn-site.xml there: without one every address would silently be the 0.0.0.0 default.
func loadClientConfig() (*yarnrpc.Config, error) {
	dir := yarnrpc.ConfigDirFromEnv()
	conf, err := yarnrpc.LoadConfigFromEnv()
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(dir, "yarn-site.xml")); err != nil {
		return nil, fmt.Errorf("HADOOP_CONF_DIR=%s has no yarn-site.xml; point HADOOP_CONF_DIR at the directory with the cluster's core-site.xml and yarn-site.xml", dir)
	}
	return conf, nil
}

// newClientRM connects to the RM of loadClientConfig, logged in as lf says (Kerberos on a Kerberized
// cluster, else SIMPLE as CurrentUser).
func newClientRM(lf *loginFlags, stderr io.Writer) (*yarnrpc.ApplicationClient, error) {
	_, _, rm, err := connectRM(lf, stderr)
	return rm, err
}

// connectRM is newClientRM for commands that also need the configuration and the login (staging,
// delegation tokens).
func connectRM(lf *loginFlags, stderr io.Writer) (*yarnrpc.Config, *identity, *yarnrpc.ApplicationClient, error) {
	conf, err := loadClientConfig()
	if err != nil {
		return nil, nil, nil, err
	}
	id, err := lf.login(conf, stderr)
	if err != nil {
		return nil, nil, nil, err
	}
	rm, err := id.newRM(conf)
	if err != nil {
		return nil, nil, nil, err
	}
	return conf, id, rm, nil
}

// clusterFacts is what the pre-flight learned from the RM.
type clusterFacts struct {
	newApp     *hadooppb.GetNewApplicationResponseProto
	info       resources.ClusterInfo
	queue      string
	queueKnown bool
}

func capabilityOf(r *hadooppb.ResourceProto) resources.Capability {
	amounts := yarnrpc.ResourceAmounts(r)
	c := resources.Capability{MemoryMB: amounts["memory-mb"], VCores: int32(amounts["vcores"]), Resources: map[string]int64{}}
	for k, v := range amounts {
		if k != "memory-mb" && k != "vcores" {
			c.Resources[k] = v
		}
	}
	return c
}

// askCluster fetches the resource types, the maximum allocation (through getNewApplication, whose
// application id submit then uses) and the running nodes.
func askCluster(ctx context.Context, rm *yarnrpc.ApplicationClient, queue string) (*clusterFacts, error) {
	types, err := rm.GetResourceTypeInfo(ctx)
	if err != nil {
		return nil, fmt.Errorf("asking the ResourceManager %s for its resource types: %w", rm.Active(), err)
	}
	na, err := rm.GetNewApplication(ctx)
	if err != nil {
		return nil, fmt.Errorf("asking the ResourceManager %s for a new application: %w", rm.Active(), err)
	}
	nodes, err := rm.GetClusterNodes(ctx, hadooppb.NodeStateProto_NS_RUNNING)
	if err != nil {
		return nil, fmt.Errorf("asking the ResourceManager %s for its nodes: %w", rm.Active(), err)
	}
	f := &clusterFacts{newApp: na, queue: queue, queueKnown: true}
	// The RM answers an unknown queue with an empty QueueInfo (and would reject the application only
	// after it was staged and submitted); other errors (ACLs, schedulers without the call) are not
	// held against the job.
	if qi, err := rm.GetQueueInfo(ctx, queue, false); err == nil && qi.GetQueueName() == "" {
		f.queueKnown = false
	}
	for _, t := range types {
		f.info.ResourceTypes = append(f.info.ResourceTypes, t.GetName())
	}
	f.info.Maximum = capabilityOf(na.GetMaximumCapability())
	for _, n := range nodes {
		f.info.Nodes = append(f.info.Nodes, resources.NodeCapacity{ID: yarnrpc.NodeAddress(n.GetNodeId()), Capability: capabilityOf(n.GetCapability())})
	}
	sort.Slice(f.info.Nodes, func(i, j int) bool { return f.info.Nodes[i].ID < f.info.Nodes[j].ID })
	return f, nil
}

// preflight checks the TaskExecutor and the AM against the cluster; the error lists every problem.
// checkAgainstCluster asks the RM what the cluster offers (in queue) and runs the pre-flight of the job
// against it; check and submit both start with it.
func checkAgainstCluster(ctx context.Context, rm *yarnrpc.ApplicationClient, lj *loadedJob, queue string) (*clusterFacts, error) {
	facts, err := askCluster(ctx, rm, queue)
	if err != nil {
		return nil, err
	}
	if err := preflight(lj, facts); err != nil {
		return nil, err
	}
	return facts, nil
}

func preflight(lj *loadedJob, facts *clusterFacts) error {
	var probs []string
	if len(facts.info.Nodes) == 0 {
		probs = append(probs, "the cluster has no running NodeManagers; nothing could be scheduled (check `yarn-am cluster`)")
	}
	if !facts.queueKnown {
		probs = append(probs, fmt.Sprintf("queue = %q: the ResourceManager has no such queue; set queue in the job file (or --queue) to one of the cluster's leaf queues, e.g. default", facts.queue))
	}
	te := resources.Capability{MemoryMB: lj.job.TaskExecutor.MemoryMB, VCores: lj.job.TaskExecutor.VCores}
	if err := resources.Preflight(te, lj.res, facts.info); err != nil {
		var pe *resources.PreflightError
		if !errors.As(err, &pe) {
			return err
		}
		for _, p := range pe.Problems {
			probs = append(probs, "TaskExecutor (taskexecutor.memory, taskexecutor.vcores, external resources): "+p)
		}
	}
	am := resources.Capability{MemoryMB: lj.job.AM.MemoryMB, VCores: lj.job.AM.VCores}
	if err := resources.Preflight(am, nil, facts.info); err != nil {
		var pe *resources.PreflightError
		if !errors.As(err, &pe) {
			return err
		}
		for _, p := range pe.Problems {
			probs = append(probs, "ApplicationMaster (am.memory, am.vcores): "+p)
		}
	}
	if len(probs) > 0 {
		return &resources.PreflightError{Problems: probs}
	}
	return nil
}

// describeTE renders the YARN resource of one TaskExecutor: memory-mb=512, vcores=1, yarn.io/gpu=2.
func describeTE(lj *loadedJob) string {
	parts := []string{fmt.Sprintf("memory-mb=%d", lj.job.TaskExecutor.MemoryMB), fmt.Sprintf("vcores=%d", lj.job.TaskExecutor.VCores)}
	yr := lj.res.YarnResources()
	keys := make([]string, 0, len(yr))
	for k := range yr {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%d", k, yr[k]))
	}
	return strings.Join(parts, ", ")
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
	lj, err := loadJob(pos[0], &jf)
	if err != nil {
		fmt.Fprintf(stderr, "yarn-am check: %v\n", err)
		return 1
	}
	printWarnings(stderr, "yarn-am check", lj.warnings)
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	rm, err := newClientRM(&lf, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "yarn-am check: %v\n", err)
		return 1
	}
	defer rm.Close()
	facts, err := checkAgainstCluster(ctx, rm, lj, lj.job.Queue)
	if err != nil {
		fmt.Fprintf(stderr, "yarn-am check: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "OK: job %s fits the cluster: %d TaskExecutor(s) of %s; ApplicationMaster memory-mb=%d, vcores=%d; %d running NodeManagers\n",
		lj.job.Name, lj.job.TaskExecutor.Instances, describeTE(lj), lj.job.AM.MemoryMB, lj.job.AM.VCores, len(facts.info.Nodes))
	return 0
}
