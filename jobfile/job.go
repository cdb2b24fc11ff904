package jobfile

import (
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/internal/hadoop"
	"github.com/yarn-am/yarn-am/internal/text"
	"github.com/yarn-am/yarn-am/resources"
)

// Job is a parsed and validated job file (job.toml). The external-resource keys of the same file are
// handed to the resources package (File.ResourceKeys) and the [policy] table to the AM
// (File.Policy); Job only checks that they are the only keys it does not know itself.
type Job struct {
	// Path is the absolute path of the job file; relative file paths in it are resolved against its
	// directory.
	Path string
	// ResourceConf is the flink-conf.yaml the job names (flink-conf = "..."), made absolute against the
	// job file's directory; "" if none. Its external-resource keys are read by resources.Load.
	ResourceConf string

	Name        string
	Queue       string
	Tags        []string
	Priority    int32
	MaxAttempts int32 // ApplicationMaster attempts; 0 = the cluster default
	// KeepContainers: a new AM attempt takes over the running TaskExecutors instead of YARN killing
	// them (keep_containers_across_application_attempts); keep-containers, default true unless
	// max-attempts = 1.
	KeepContainers bool
	// HDFSNamenodes are NameNodes besides fs.defaultFS (hdfs://host:port) the job reads or writes; on
	// a Kerberized cluster submit gets a delegation token of each for the application.
	HDFSNamenodes []string

	AM AMSpec
	// LogAggregation is the [log-aggregation] table, with the framework's rolled-logs pattern as
	// its default (docs/job-file.md#log-aggregation).
	LogAggregation LogAggregation
	// Framework is the job's framework table ([flink]) as its framework read it; nil when the job
	// has none (docs/design.md#adding-a-framework).
	Framework    *FrameworkPart
	TaskExecutor TaskExecutorSpec
}

// AMSpec is the ApplicationMaster container: its size and, for driver mode, the files, archives and
// environment the driver needs (am.files, am.archives, am.env; docs/job-file.md#the-am-container).
type AMSpec struct {
	MemoryMB int64
	VCores   int32
	Files    []FileSpec
	Archives []FileSpec
	Env      map[string]string
	// Visibility is how the NodeManager caches the AM's files and archives (am.visibility).
	Visibility string
	// NodeLabel is the node-label expression of the AM container's request (am.node-label; "" = the
	// queue's default partition; docs/job-file.md#node-labels).
	NodeLabel string
}

// TaskExecutorSpec describes the worker containers.
type TaskExecutorSpec struct {
	Instances   int
	Command     string // run by bash inside the container, wrapped in `yarn-am launch`
	MemoryMB    int64
	VCores      int32
	MaxFailures int // failed TaskExecutors replaced before the application fails
	Files       []FileSpec
	Archives    []FileSpec
	Env         map[string]string
	// Visibility is how the NodeManager caches the files and archives (taskexecutor.visibility:
	// VisibilityPrivate, the default, VisibilityApplication or VisibilityPublic;
	// docs/job-file.md#visibility-and-the-cache).
	Visibility string
	// Gang: all Instances run at once or none (taskexecutor.gang); a round not allocated within
	// GangTimeout (taskexecutor.gang-timeout) gives back what it holds.
	Gang        bool
	GangTimeout time.Duration
	// MinInstances (taskexecutor.min-instances, 1..Instances, default Instances): the smallest round
	// an elastic gang runs; ElasticInterval (taskexecutor.elastic-interval): how long a round runs
	// before extra allocations grow it (docs/running.md#elastic-gangs). Without a gang, a framework
	// that sizes its workers from its demand may take it as its lower bound (TableInfo.MinInstances);
	// MinInstancesSet says the job file set it.
	MinInstances    int
	MinInstancesSet bool
	ElasticInterval time.Duration
	// Locality (taskexecutor.locality): "any" (the default) asks for any node, "spread" node-locally
	// over the hosts with room (package am's localityAny, localitySpread).
	Locality string
	// NodeLabel is the node-label expression of the TaskExecutor requests (taskexecutor.node-label;
	// "" = the queue's default partition; docs/job-file.md#node-labels).
	NodeLabel string
	// Placement (taskexecutor.placement): at most so many TaskExecutors per node and the node
	// attributes their nodes must have (docs/job-file.md#placement); the zero value places freely.
	Placement Placement
	// LivenessTimeout (taskexecutor.liveness-timeout): a running TaskExecutor whose launcher is
	// silent this long is lost if its NodeManager does not answer for it (docs/running.md#liveness).
	LivenessTimeout time.Duration
	// PreemptionSignal (taskexecutor.preemption-signal): the signal the launcher sends the worker
	// when the ResourceManager warns of its preemption, a name of contract.PreemptionSignals or
	// contract.PreemptionSignalNone (docs/running.md#preemption).
	PreemptionSignal string
	// GPUSampleInterval (taskexecutor.gpu-sample-interval; 0 = "off"): how often each launcher samples
	// its container's GPUs; IdleGPUWarning (taskexecutor.idle-gpu-warning; 0 = "off"): how long a GPU
	// may stay idle before the AM warns (docs/running.md#gpu-utilisation).
	GPUSampleInterval time.Duration
	IdleGPUWarning    time.Duration
	// IdleGPURelease (taskexecutor.idle-gpu-release; 0 = "off", the default): how long every GPU of a
	// running container may stay idle before the AM warns its worker and releases it, where the job
	// can shrink (docs/gpus.md#idle-gpus-given-back).
	IdleGPURelease time.Duration
	// SickGPUsPerNode (taskexecutor.sick-gpus-per-node; 0 = never): after this many of a node's GPUs
	// read unhealthy under the job's containers the node is excluded
	// (docs/gpus.md#gpu-health-a-sick-gpu-is-taken-out-of-service).
	SickGPUsPerNode int
}

// Defaults used when the job file leaves a value out.
const (
	DefaultAMMemoryMB          = 256
	DefaultAMVCores            = 1
	DefaultTaskExecutorMemory  = 512
	DefaultTaskExecutorVCores  = 1
	DefaultTaskExecutorRetries = 3
	DefaultQueue               = "default"
	DefaultGangTimeout         = 5 * time.Minute
	DefaultLocality            = "any"
)

// Keys of the job-file schema, for the unknown-key message and its did-you-mean.
var (
	topKeys = []string{"name", "queue", "tags", "priority", "max-attempts", "keep-containers", "flink-conf", "hdfs-namenodes", "am", "taskexecutor", "policy", "log-aggregation", "external-resources"}
	amKeys  = []string{"memory", "vcores", "files", "archives", "env", "visibility", "node-label"}
	teKeys  = []string{"instances", "command", "memory", "vcores", "max-failures", "files", "archives", "env", "visibility", "gang", "gang-timeout", "min-instances", "elastic-interval", "locality", "node-label", "placement", "liveness-timeout", "preemption-signal", "gpu-sample-interval", "idle-gpu-warning", "idle-gpu-release", "sick-gpus-per-node"}
)

// Job validates the job-file schema; every problem is reported at once in a *JobError.
func (f *File) Job() (*Job, error) { return f.job(false) }

// job reads the schema; staged: the job as it arrives in a container (StagedJob).
func (f *File) job(staged bool) (*Job, error) {
	doc, abs := f.doc, f.Abs
	je := &JobError{Path: f.Path}
	add := func(format string, args ...any) { je.Problems = append(je.Problems, sprintf(format, args...)) }
	r := reader{add: add}

	frameworks := frameworkNames()
	var tablesGiven []string
	for _, k := range slices.Sorted(maps.Keys(doc)) {
		if slices.Contains(frameworks, k) {
			tablesGiven = append(tablesGiven, "["+k+"]")
			continue // the framework's own: readFramework
		}
		if slices.Contains(topKeys, k) || strings.HasPrefix(k, "external-resource") {
			continue // external-resource keys: ResourceKeys; [policy]: Policy
		}
		hint := didYouMean(k, append(slices.Clone(topKeys), frameworks...))
		if want, near := resources.NearResourceKey(k); near {
			hint = ` (did you mean "` + want + `"?)`
		}
		add("unknown key %q%s; %s", k, hint, validTopKeys())
	}
	if len(tablesGiven) > 1 {
		add("%s: a job runs one framework; keep one of these tables", strings.Join(tablesGiven, " and "))
	}
	amT := r.table(doc, "am", "am")
	teT := r.table(doc, "taskexecutor", "taskexecutor")
	for _, t := range []struct {
		m      map[string]any
		prefix string
		keys   []string
	}{{amT, "am", amKeys}, {teT, "taskexecutor", teKeys}} {
		full := make([]string, len(t.keys))
		for i, k := range t.keys {
			full[i] = t.prefix + "." + k
		}
		for _, k := range slices.Sorted(maps.Keys(t.m)) {
			if !slices.Contains(t.keys, k) {
				add("unknown key %q%s; valid keys of [%s] are %s", t.prefix+"."+k, didYouMean(t.prefix+"."+k, full), t.prefix, strings.Join(t.keys, ", "))
			}
		}
	}

	j := &Job{Path: abs}
	j.Name, _ = r.str(doc, "name", "name")
	j.Queue, _ = r.str(doc, "queue", "queue")
	j.Tags = r.strings(doc, "tags", "tags")
	// A flink-conf that is not a string is reported by ResourceKeys, for resources.Load, which reads
	// the file it names.
	if fc, ok := doc["flink-conf"].(string); ok {
		j.ResourceConf = fc
		if !filepath.IsAbs(j.ResourceConf) {
			j.ResourceConf = filepath.Join(filepath.Dir(abs), j.ResourceConf)
		}
	}
	if j.Name == "" {
		j.Name = strings.TrimSuffix(filepath.Base(abs), filepath.Ext(abs))
	}
	if err := ValidateName(j.Name); err != nil {
		add("name = %v", err)
	}
	if _, set := doc["queue"]; set || j.Queue != "" {
		if err := ValidateQueue(j.Queue); err != nil {
			add("queue = %v", err)
		}
	}
	if j.Queue == "" {
		j.Queue = DefaultQueue
	}
	checkTags(j.Tags, add)
	if v, ok := r.integer(doc, "priority", "priority", 0, 1<<20, ""); ok {
		j.Priority = int32(v)
	}
	j.HDFSNamenodes = r.strings(doc, "hdfs-namenodes", "hdfs-namenodes")
	for _, nn := range j.HDFSNamenodes {
		if _, err := hadoop.NameNodeAddr(nn); err != nil {
			add("hdfs-namenodes: %v", err)
		}
	}
	if v, ok := r.integer(doc, "max-attempts", "max-attempts", 1, 100, " (the cluster's yarn.resourcemanager.am.max-attempts caps it)"); ok {
		j.MaxAttempts = int32(v)
	}
	j.KeepContainers = j.MaxAttempts != 1
	if v, ok := r.boolean(doc, "keep-containers", "keep-containers"); ok {
		j.KeepContainers = v
	}

	j.AM.MemoryMB = r.memory(amT, "memory", "am.memory", DefaultAMMemoryMB)
	j.AM.VCores = DefaultAMVCores
	if v, ok := r.integer(amT, "vcores", "am.vcores", 1, 1024, ""); ok {
		j.AM.VCores = int32(v)
	}

	te := &j.TaskExecutor
	te.Instances = 1
	if v, ok := r.integer(teT, "instances", "taskexecutor.instances", 0, 100000, ""); ok {
		te.Instances = int(v)
	}
	cmd, isString := r.str(teT, "command", "taskexecutor.command")
	te.Command = strings.TrimSpace(cmd)
	_, present := teT["command"]
	fw, hasFramework := frameworkIn(doc)
	ownCommand := hasFramework && fw.Command != ""
	switch {
	case ownCommand && present:
		add("taskexecutor.command = %q: a [%s] job's TaskExecutors are %s (yarn-am runs them); remove command", bounded(cmd), fw.Name, fw.Workers)
	case ownCommand:
		te.Command = fw.Command
	case !present:
		add("taskexecutor.command is missing: give the command each TaskExecutor runs, e.g. command = \"./worker\"")
	case isString && te.Command == "":
		add("taskexecutor.command = %q: give the command each TaskExecutor runs, e.g. command = \"./worker\"", cmd)
	case strings.ContainsRune(cmd, 0):
		add("taskexecutor.command = %s contains a NUL byte, which no command line can hold; remove it", text.Quote(cmd))
	}
	te.MemoryMB = r.memory(teT, "memory", "taskexecutor.memory", DefaultTaskExecutorMemory)
	te.VCores = DefaultTaskExecutorVCores
	if v, ok := r.integer(teT, "vcores", "taskexecutor.vcores", 1, 1024, ""); ok {
		te.VCores = int32(v)
	}
	te.MaxFailures = DefaultTaskExecutorRetries
	if v, ok := r.integer(teT, "max-failures", "taskexecutor.max-failures", 0, 1000000, ""); ok {
		te.MaxFailures = int(v)
	}
	te.Gang, _ = r.boolean(teT, "gang", "taskexecutor.gang")
	te.GangTimeout = DefaultGangTimeout
	if g, ok := r.str(teT, "gang-timeout", "taskexecutor.gang-timeout"); ok {
		d, err := time.ParseDuration(strings.TrimSpace(g))
		switch {
		case err != nil:
			add("taskexecutor.gang-timeout = %q: not a duration; use a number with a unit, e.g. \"5m\" or \"90s\"", g)
		case d <= 0:
			add("taskexecutor.gang-timeout = %q: must be positive, e.g. \"5m\"", g)
		default:
			te.GangTimeout = d
		}
		if !te.Gang {
			add("taskexecutor.gang-timeout = %q is set but taskexecutor.gang is not true: set gang = true, or remove gang-timeout", g)
		}
	}
	j.LogAggregation = r.readLogAggregation(doc, fw.RolledLogs, add)
	r.elastic(teT, te, fw.MinInstances)
	te.LivenessTimeout = r.livenessTimeout(teT)
	te.PreemptionSignal = r.preemptionSignal(teT)
	te.GPUSampleInterval, te.IdleGPUWarning = r.gpuSampleInterval(teT), r.idleGPUWarning(teT)
	te.IdleGPURelease = r.idleGPURelease(teT, te.GPUSampleInterval)
	te.SickGPUsPerNode = contract.DefaultSickGPUsPerNode
	if v, ok := r.integer(teT, "sick-gpus-per-node", "taskexecutor.sick-gpus-per-node", 0, contract.MaxSampleGPUs, " (0: never exclude a node for its sick GPUs)"); ok {
		te.SickGPUsPerNode = int(v)
	}
	te.Locality = DefaultLocality
	if l, ok := r.str(teT, "locality", "taskexecutor.locality"); ok {
		switch l {
		case "spread", "any":
			te.Locality = l
		default:
			add("taskexecutor.locality = %q: use \"any\" (any node, the default) or \"spread\" (node-local requests over the nodes with room)", l)
		}
	}
	te.NodeLabel = r.nodeLabel(teT, "taskexecutor.node-label", add)
	te.Placement = r.placement(teT, add)
	if te.Placement.Set() && te.Locality == "spread" {
		add("taskexecutor.locality = \"spread\" with taskexecutor.placement: the placement decides where TaskExecutors go; remove locality (or the placement table)")
	}
	j.AM.NodeLabel = r.nodeLabel(amT, "am.node-label", add)
	dir := filepath.Dir(abs)
	te.Files, te.Archives, te.Env, te.Visibility = r.localised(teT, "taskexecutor", dir, staged, add)
	j.AM.Files, j.AM.Archives, j.AM.Env, j.AM.Visibility = r.localised(amT, "am", dir, staged, add)
	r.readFramework(doc, amT, j, dir, staged, f.frameworkDefines)
	if len(je.Problems) > 0 {
		return nil, je
	}
	return j, nil
}

// nodeLabelRe is a node label's name as the ResourceManager accepts it: a letter or digit, then
// letters, digits, '-' and '_' (docs/job-file.md#node-labels).
var nodeLabelRe = regexp.MustCompile(`^[0-9A-Za-z][0-9A-Za-z_-]*$`)

// maxNodeLabel is the longest name the ResourceManager accepts for a node label.
const maxNodeLabel = 255

// nodeLabel reads a node-label key (am.node-label, taskexecutor.node-label): one label's name. The
// CapacityScheduler takes a single label per request, not an expression of several.
func (r reader) nodeLabel(t map[string]any, name string, add func(string, ...any)) string {
	v, ok := r.str(t, "node-label", name)
	if !ok {
		return ""
	}
	l := strings.TrimSpace(v)
	switch {
	case l == "":
		add("%s = %q: name a node label, e.g. node-label = \"gpu\"; leave the key out for the queue's default partition", name, v)
	case len(l) > maxNodeLabel:
		add("%s = %q: a node label has at most %d characters, not %d", name, bounded(l), maxNodeLabel, len(l))
	case strings.ContainsAny(l, "&|!() ,"):
		add("%s = %q: name one node label (the CapacityScheduler takes one label per request, not an expression)", name, bounded(l))
	case !nodeLabelRe.MatchString(l):
		add("%s = %q: not a node label name: letters, digits, '-' and '_', starting with a letter or digit", name, bounded(l))
	default:
		return l
	}
	return ""
}

var envKeyRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// localised reads what a container's table ([am] or [taskexecutor]) localises into the container and
// adds to its environment: files, archives, env and visibility, with the same checks for both.
func (r reader) localised(t map[string]any, table, dir string, staged bool, add func(string, ...any)) (files, archives []FileSpec, env map[string]string, vis string) {
	aliases := map[string]string{}
	fs, as := r.strings(t, "files", table+".files"), r.strings(t, "archives", table+".archives")
	if staged {
		files, archives = stagedSpecs(fs), stagedSpecs(as)
	} else {
		files = parseFileSpecs(table+".files", fs, dir, aliases, false, add)
		archives = parseFileSpecs(table+".archives", as, dir, aliases, true, add)
	}
	env = map[string]string{}
	envT := r.table(t, "env", table+".env")
	for _, k := range slices.Sorted(maps.Keys(envT)) {
		v, ok := envT[k].(string)
		if !ok {
			add("%s.env.%s = %s: want a string (quote it: %s = \"%s\"), not %s", table, k, show(envT[k]), k, show(envT[k]), typeName(envT[k]))
			continue
		}
		if !envKeyRe.MatchString(k) {
			add("%s.env: %q is not a valid environment variable name (letters, digits and '_', not starting with a digit)", table, k)
			continue
		}
		why := ReservedEnv(k)
		if why == "" && table == "am" {
			why = reservedAMEnv[k]
		}
		if why != "" {
			add("%s.env: %s is reserved: %s; remove it from [%s.env]", table, k, why, table)
			continue
		}
		if strings.ContainsRune(v, 0) {
			add("%s.env.%s = %s contains a NUL byte, which no environment value can hold; remove it", table, k, text.Quote(v))
			continue
		}
		if k == contract.EnvLogLevel {
			if err := CheckLogLevel(v); err != nil {
				add("%s.env: %v", table, err)
				continue
			}
		}
		if k == contract.EnvTokensRefresh {
			if err := CheckTokensRefresh(v); err != nil {
				add("%s.env: %v", table, err)
				continue
			}
		}
		env[k] = v
	}
	vis = VisibilityPrivate
	if v, ok := r.str(t, "visibility", table+".visibility"); ok {
		switch v {
		case VisibilityPrivate, VisibilityApplication, VisibilityPublic:
			vis = v
		default:
			add("%s.visibility = %q: use \"private\" (the default: cached on each node for all your applications), \"application\" (downloaded for each application) or \"public\" (shared by all users; the files must be world-readable hdfs:// paths)", table, v)
		}
		if v == VisibilityPublic && !staged {
			for _, f := range append(append([]FileSpec{}, files...), archives...) {
				if !f.IsRemote() {
					add("%s.visibility = \"public\": %q is a local file, staged to your private cache which other users cannot read; use \"private\", or put it on HDFS world-readable and list its hdfs:// URI", table, f.Source)
				}
			}
		}
	}
	return files, archives, env, vis
}

// Values of am.visibility and taskexecutor.visibility: the NodeManager's LocalResourceVisibility.
const (
	VisibilityPrivate     = "private"
	VisibilityApplication = "application"
	VisibilityPublic      = "public"
)

// reservedAMEnv are the variables yarn-am sets in the AM container besides the YARN_AM_ ones.
var reservedAMEnv = map[string]string{
	hadoop.EnvConfDir:  "yarn-am points it at the Hadoop configuration staged with the AM",
	hadoop.EnvUserName: "yarn-am sets it to the submitting user",
}

// didYouMean returns ` (did you mean "x"?)` for the candidate closest to s, or "".
func didYouMean(s string, candidates []string) string { return text.DidYouMean(s, candidates) }
