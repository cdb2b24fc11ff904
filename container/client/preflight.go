package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/framework"
	"github.com/yarn-am/yarn-am/internal/text"
	"github.com/yarn-am/yarn-am/jobfile"
	"github.com/yarn-am/yarn-am/resources"
	"github.com/yarn-am/yarn-am/yarnrpc"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// JobOptions select a job's external-resource configuration besides the job file: --flink-conf and
// the -D overrides.
type JobOptions struct {
	ResourceConf string
	Defines      []string
	// Queue and Name, when not nil, are --queue and --name: they replace the job's and are validated
	// like them.
	Queue, Name *string
}

// LoadedJob is a job file with its validated external-resource configuration.
type LoadedJob struct {
	Job          *jobfile.Job
	Resources    *resources.Config
	ResourceConf string // the flink-conf.yaml in effect (option, else the job's flink-conf key), "" = none
	Defines      []string
	Warnings     []resources.Warning
}

// LoadJob reads and validates the job and its external-resource keys; every problem is in the error.
// The job file is read and decoded once (jobfile.Read); a file that is not TOML is reported once,
// alone.
func LoadJob(path string, opts JobOptions) (*LoadedJob, error) {
	f, err := jobfile.Read(path)
	if err != nil {
		return nil, err
	}
	// -D job keys replace the file's before it is validated (docs/job-file.md#-d-overrides); the
	// external-resource ones go to resources.Load. Submit passes every -D on to the AM, which applies
	// them to the staged job file the same way.
	resDefines, derr := f.ApplyDefines(opts.Defines)
	job, jerr := f.Job()
	var flagErrs []error
	if opts.Name != nil {
		if err := jobfile.ValidateName(*opts.Name); err != nil {
			flagErrs = append(flagErrs, fmt.Errorf("--name %w", err))
		} else if job != nil {
			job.Name = *opts.Name
		}
	}
	if opts.Queue != nil {
		if err := jobfile.ValidateQueue(*opts.Queue); err != nil {
			flagErrs = append(flagErrs, fmt.Errorf("--queue %w", err))
		} else if job != nil {
			job.Queue = *opts.Queue
		}
	}
	// The client's own YARN_AM_LOG_LEVEL: a level the AM and the launcher do not know would mean info
	// without a word (docs/job-file.md#files-archives-and-environment).
	if lvl := os.Getenv(contract.EnvLogLevel); lvl != "" {
		if err := jobfile.CheckLogLevel(lvl); err != nil {
			flagErrs = append(flagErrs, fmt.Errorf("environment: %w", err))
		}
	}
	src := resources.Sources{Job: f.ResourceKeys(), ResourceConf: opts.ResourceConf, Overrides: resDefines}
	cfg, warns, rerr := resources.Load(src)
	// The [policy] table is applied by the AM; check it here so a typo fails before anything is staged.
	_, perr := f.Policy()
	if job != nil && cfg != nil {
		jerr = errors.Join(jerr, gpuEnv(job, cfg))
	}
	if job != nil && jerr == nil {
		fw := framework.Of(job)
		jerr = fw.Check(job) // the framework's own pre-flight (a Flink job's memory)
		if w, ok := fw.(framework.Warner); ok && jerr == nil {
			for _, m := range w.CheckWarnings(job) {
				warns = append(warns, resources.Warning{Level: resources.LevelWarning, Message: m})
			}
		}
	}
	if derr != nil || jerr != nil || rerr != nil || perr != nil || len(flagErrs) > 0 {
		return nil, errors.Join(append([]error{derr, jerr, rerr, perr}, flagErrs...)...)
	}
	if _, err := cfg.Drivers(); err != nil {
		return nil, err
	}
	lj := &LoadedJob{Job: job, Resources: cfg, Warnings: warns, ResourceConf: opts.ResourceConf, Defines: opts.Defines}
	if lj.ResourceConf == "" {
		lj.ResourceConf = job.ResourceConf
	}
	return lj, nil
}

// usesGPU reports whether a resource is a YARN GPU or names a GPU driver (gpu, or Flink's GPU
// driver factory class, an alias of it).
func usesGPU(cfg *resources.Config) bool {
	for _, r := range cfg.Resources {
		if r.YarnKey == "yarn.io/gpu" || r.Driver == "gpu" || strings.Contains(strings.ToLower(r.Driver), "gpu") {
			return true
		}
	}
	return false
}

// gpuEnv refuses [taskexecutor.env] values of the GPU visibility variables when a resource uses the
// GPU driver: the launcher keeps a value the user set, so the worker would see GPUs YARN did not give
// it.
func gpuEnv(job *jobfile.Job, cfg *resources.Config) error {
	if !usesGPU(cfg) {
		return nil
	}
	var probs []string
	for _, k := range jobfile.GPUEnv {
		if _, set := job.TaskExecutor.Env[k]; set {
			probs = append(probs, fmt.Sprintf("taskexecutor.env: %s is reserved when a GPU resource is configured: the GPU driver sets it to the GPUs YARN assigned to the container; remove it from [taskexecutor.env]", k))
		}
	}
	if len(probs) == 0 {
		return nil
	}
	return &jobfile.JobError{Path: job.Path, Problems: probs}
}

// PrintWarnings prints the job's warnings (not its notes), each behind prefix.
func (lj *LoadedJob) PrintWarnings(w io.Writer, prefix string) {
	for _, wa := range lj.Warnings {
		if wa.Level == resources.LevelWarning {
			fmt.Fprintf(w, "%s: warning: %s\n", prefix, wa.Message)
		}
	}
}

// DescribeTaskExecutor renders the YARN resource of one TaskExecutor: memory-mb=512, vcores=1,
// yarn.io/gpu=2.
func (lj *LoadedJob) DescribeTaskExecutor() string {
	parts := []string{fmt.Sprintf("memory-mb=%d", lj.Job.TaskExecutor.MemoryMB), fmt.Sprintf("vcores=%d", lj.Job.TaskExecutor.VCores)}
	yr := lj.Resources.YarnResources()
	for _, k := range slices.Sorted(maps.Keys(yr)) {
		parts = append(parts, fmt.Sprintf("%s=%d", k, yr[k]))
	}
	return strings.Join(parts, ", ")
}

// ClusterFacts is what the pre-flight learned from the RM.
type ClusterFacts struct {
	// NewApp is the answer to getNewApplication: the maximum allocation, and the application id
	// Submit uses.
	NewApp     *hadooppb.GetNewApplicationResponseProto
	Info       resources.ClusterInfo
	Queue      string
	QueueKnown bool
	// QueueParent: the queue has child queues, so YARN would refuse the application (non-leaf queue)
	// after it was staged. LeafQueues are the cluster's leaf queues (of Queue, when it is a parent), for
	// the message and its did-you-mean; nil when not asked or not answered.
	QueueParent bool
	LeafQueues  []string
}

// AskCluster fetches the resource types, the running nodes and whether queue exists; CheckAgainstCluster
// adds the maximum allocation (getNewApplication) once these pass.
func AskCluster(ctx context.Context, rm *yarnrpc.ApplicationClient, queue string) (*ClusterFacts, error) {
	types, err := rm.GetResourceTypeInfo(ctx)
	if err != nil {
		return nil, fmt.Errorf("asking the ResourceManager %s for its resource types: %w", rm.Active(), err)
	}
	nodes, err := rm.GetClusterNodes(ctx, hadooppb.NodeStateProto_NS_RUNNING)
	if err != nil {
		return nil, fmt.Errorf("asking the ResourceManager %s for its nodes: %w", rm.Active(), err)
	}
	f := &ClusterFacts{Queue: queue, QueueKnown: true}
	// The RM answers an unknown queue with an empty QueueInfo (and would reject the application only
	// after it was staged and submitted); other errors (ACLs, schedulers without the call) are not
	// held against the job.
	if qi, err := rm.GetQueueTree(ctx, queue, false); err == nil {
		switch {
		case qi.GetQueueName() == "":
			f.QueueKnown = false
			if root, err := rm.GetQueueTree(ctx, "root", true); err == nil {
				f.LeafQueues = yarnrpc.LeafQueues(root)
			}
		case len(qi.GetChildQueues()) > 0:
			f.QueueParent = true
			if tree, err := rm.GetQueueTree(ctx, queue, true); err == nil {
				f.LeafQueues = yarnrpc.LeafQueues(tree)
			}
		}
	}
	for _, t := range types {
		f.Info.ResourceTypes = append(f.Info.ResourceTypes, t.GetName())
	}
	for _, n := range nodes {
		f.Info.Nodes = append(f.Info.Nodes, resources.NodeCapacity{ID: yarnrpc.NodeAddress(n.GetNodeId()), Capability: contract.Capability(yarnrpc.ResourceAmounts(n.GetCapability()))})
	}
	sort.Slice(f.Info.Nodes, func(i, j int) bool { return f.Info.Nodes[i].ID < f.Info.Nodes[j].ID })
	return f, nil
}

// CheckAgainstCluster asks the RM what the cluster offers (in queue) and runs the pre-flight of the
// job against it; check and submit both start with it. getNewApplication, which reserves an
// application id (the one Submit uses), is asked only after the job passed the checks that do not
// need its answer (TestPreflightFailureReservesNoApplicationID): running NodeManagers, the queue, the
// resource types. The node capacities are judged together with the maximum allocation, so that a
// too-large amount is reported by its key against the maximum.
func CheckAgainstCluster(ctx context.Context, rm *yarnrpc.ApplicationClient, lj *LoadedJob, queue string) (*ClusterFacts, error) {
	facts, err := AskCluster(ctx, rm, queue)
	if err != nil {
		return nil, err
	}
	if err := checkNodeLabels(ctx, rm, lj.Job, queue); err != nil {
		return nil, err
	}
	if err := preflightWithoutMaximum(lj, facts); err != nil {
		return nil, err
	}
	na, err := rm.GetNewApplication(ctx)
	if err != nil {
		return nil, fmt.Errorf("asking the ResourceManager %s for a new application: %w", rm.Active(), err)
	}
	facts.NewApp = na
	facts.Info.Maximum = contract.Capability(yarnrpc.ResourceAmounts(na.GetMaximumCapability()))
	if err := Preflight(lj, facts); err != nil {
		return nil, err
	}
	return facts, nil
}

// preflightWithoutMaximum checks what needs neither the maximum allocation nor the node capacities:
// running NodeManagers, the queue and the resource types.
func preflightWithoutMaximum(lj *LoadedJob, facts *ClusterFacts) error {
	early := *facts
	if len(facts.Info.Nodes) > 0 {
		// resources.Preflight judges node capacities only when it is given nodes: leave them to the
		// full check after getNewApplication.
		early.Info = resources.ClusterInfo{ResourceTypes: facts.Info.ResourceTypes, Nodes: nil}
		probs := preflightProblems(lj, &early, false)
		if len(probs) > 0 {
			return &resources.PreflightError{Problems: probs}
		}
		return nil
	}
	return Preflight(lj, facts)
}

// Preflight checks the TaskExecutor and the AM against the cluster; the error lists every problem.
func Preflight(lj *LoadedJob, facts *ClusterFacts) error {
	if probs := preflightProblems(lj, facts, true); len(probs) > 0 {
		return &resources.PreflightError{Problems: probs}
	}
	return nil
}

// preflightProblems lists the problems; noNodes says whether an empty node list means the cluster has
// no running NodeManagers (false: the nodes were left out on purpose).
func preflightProblems(lj *LoadedJob, facts *ClusterFacts, noNodes bool) []string {
	var probs []string
	if noNodes && len(facts.Info.Nodes) == 0 {
		probs = append(probs, "the cluster has no running NodeManagers; nothing could be scheduled (check `yarn-am cluster`)")
	}
	switch {
	case !facts.QueueKnown:
		probs = append(probs, fmt.Sprintf("queue = %s: the ResourceManager has no such queue%s; set queue in the job file (or --queue) to one of the cluster's leaf queues%s",
			text.Quote(facts.Queue), queueSuggestion(facts.Queue, facts.LeafQueues), leafList(facts.LeafQueues, "e.g. default")))
	case facts.QueueParent:
		probs = append(probs, fmt.Sprintf("queue = %s is a parent queue: YARN accepts applications only in leaf queues (it would refuse this one after the job was staged); set queue in the job file (or --queue) to a leaf queue%s",
			text.Quote(facts.Queue), leafList(facts.LeafQueues, "")))
	}
	ask := resources.Ask{
		TaskExecutor: contract.Capability{"memory-mb": lj.Job.TaskExecutor.MemoryMB, "vcores": int64(lj.Job.TaskExecutor.VCores)}.
			Add(lj.Resources.YarnResources(), 1),
		AmountKeys:        lj.Resources.AmountKeys(),
		ApplicationMaster: contract.Capability{"memory-mb": lj.Job.AM.MemoryMB, "vcores": int64(lj.Job.AM.VCores)},
		Instances:         lj.Job.TaskExecutor.Instances,
		Gang:              lj.Job.TaskExecutor.Gang,
		MinInstances:      lj.Job.TaskExecutor.MinInstances,
	}
	if err := resources.Preflight(ask, facts.Info); err != nil {
		var pe *resources.PreflightError
		if !errors.As(err, &pe) {
			return append(probs, err.Error())
		}
		probs = append(probs, pe.Problems...)
	}
	return probs
}

// queueSuggestion is the did-you-mean for a queue the RM does not know, against its leaf queues by
// path and by last part (defualt → default, root.defualt → root.default).
func queueSuggestion(q string, leaves []string) string {
	cands := slices.Clone(leaves)
	for _, l := range leaves {
		if i := strings.LastIndex(l, "."); i >= 0 {
			cands = append(cands, l[i+1:])
		}
	}
	return text.DidYouMean(q, cands)
}

// maxListedQueues bounds the leaf queues a message lists.
const maxListedQueues = 20

// leafList renders ": a, b, c" (at most maxListedQueues, then how many more), or ", "+otherwise
// without leaves.
func leafList(leaves []string, otherwise string) string {
	if len(leaves) == 0 {
		if otherwise == "" {
			return ""
		}
		return ", " + otherwise
	}
	shown := leaves
	more := ""
	if len(shown) > maxListedQueues {
		shown, more = shown[:maxListedQueues], fmt.Sprintf(" and %d more", len(leaves)-maxListedQueues)
	}
	return ": " + strings.Join(shown, ", ") + more
}
