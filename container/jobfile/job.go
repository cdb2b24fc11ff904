package jobfile

import (
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/yarn-am/yarn-am/resources"
	"github.com/yarn-am/yarn-am/yarnrpc"
)

// Job is a parsed and validated job file (job.toml). The external-resource keys of the same file are
// handed to the resources package (File.ResourceKeys) and the [policy] table to the AM
// (File.PolicyArgs); Job only checks that they are the only keys it does not know itself.
type Job struct {
	// Path is the absolute path of the job file; relative file paths in it are resolved against its
	// directory.
	Path string
	// FlinkConf is the flink-conf.yaml the job names (flink-conf = "..."), made absolute against the
	// job file's directory; "" if none. Its external-resource keys are read by resources.Load.
	FlinkConf string

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

	AM           AMSpec
	TaskExecutor TaskExecutorSpec
}

// AMSpec is the ApplicationMaster container's size.
type AMSpec struct {
	MemoryMB int64
	VCores   int32
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
	// Gang: all Instances run at once or none (taskexecutor.gang); a round not allocated within
	// GangTimeout (taskexecutor.gang-timeout) gives back what it holds.
	Gang        bool
	GangTimeout time.Duration
	// Locality (taskexecutor.locality): "any" (the default) asks for any node, "spread" node-locally
	// over the hosts with room (am.LocalityAny, am.LocalitySpread).
	Locality string
	// LivenessTimeout (taskexecutor.liveness-timeout): a running TaskExecutor whose launcher is
	// silent this long is lost if its NodeManager does not answer for it (docs/running.md#liveness).
	LivenessTimeout time.Duration
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
	topKeys  = []string{"name", "queue", "tags", "priority", "max-attempts", "keep-containers", "flink-conf", "hdfs-namenodes", "am", "taskexecutor", "policy", "external-resources"}
	amKeys   = []string{"memory", "vcores"}
	teKeys   = []string{"instances", "command", "memory", "vcores", "max-failures", "files", "archives", "env", "gang", "gang-timeout", "locality", "liveness-timeout"}
	validTop = "valid top-level keys are name, queue, tags, priority, max-attempts, keep-containers, flink-conf, hdfs-namenodes, [am], [taskexecutor], [policy], and the external-resource keys"
)

// Job validates the job-file schema; every problem is reported at once in a *JobError.
func (f *File) Job() (*Job, error) { return f.job(false) }

// job reads the schema; staged: the job as it arrives in a container (StagedJob).
func (f *File) job(staged bool) (*Job, error) {
	doc, abs := f.doc, f.Abs
	je := &JobError{Path: f.Path}
	add := func(format string, args ...any) { je.Problems = append(je.Problems, fmt.Sprintf(format, args...)) }
	r := reader{add: add}

	for _, k := range slices.Sorted(maps.Keys(doc)) {
		if slices.Contains(topKeys, k) || strings.HasPrefix(k, "external-resource") {
			continue // external-resource keys: ResourceKeys; [policy]: PolicyArgs
		}
		add("unknown key %q%s; %s", k, didYouMean(k, topKeys), validTop)
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
		j.FlinkConf = fc
		if !filepath.IsAbs(j.FlinkConf) {
			j.FlinkConf = filepath.Join(filepath.Dir(abs), j.FlinkConf)
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
		if _, err := yarnrpc.NameNodeAddr(nn); err != nil {
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
	if _, present := teT["command"]; !present {
		add("taskexecutor.command is missing: give the command each TaskExecutor runs, e.g. command = \"./worker\"")
	} else if isString && te.Command == "" {
		add("taskexecutor.command = %q: give the command each TaskExecutor runs, e.g. command = \"./worker\"", cmd)
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
	te.LivenessTimeout = r.livenessTimeout(teT)
	te.Locality = DefaultLocality
	if l, ok := r.str(teT, "locality", "taskexecutor.locality"); ok {
		switch l {
		case "spread", "any":
			te.Locality = l
		default:
			add("taskexecutor.locality = %q: use \"any\" (any node, the default) or \"spread\" (node-local requests over the nodes with room)", l)
		}
	}
	dir := filepath.Dir(abs)
	aliases := map[string]string{}
	files, archives := r.strings(teT, "files", "taskexecutor.files"), r.strings(teT, "archives", "taskexecutor.archives")
	if staged {
		te.Files, te.Archives = stagedSpecs(files), stagedSpecs(archives)
	} else {
		te.Files = parseFileSpecs("taskexecutor.files", files, dir, aliases, false, add)
		te.Archives = parseFileSpecs("taskexecutor.archives", archives, dir, aliases, true, add)
	}
	te.Env = map[string]string{}
	envT := r.table(teT, "env", "taskexecutor.env")
	for _, k := range slices.Sorted(maps.Keys(envT)) {
		v, ok := envT[k].(string)
		if !ok {
			add("taskexecutor.env.%s = %s: want a string (quote it: %s = \"%s\"), not %s", k, show(envT[k]), k, show(envT[k]), typeName(envT[k]))
			continue
		}
		if !envKeyRe.MatchString(k) {
			add("taskexecutor.env: %q is not a valid environment variable name (letters, digits and '_', not starting with a digit)", k)
			continue
		}
		if why := ReservedEnv(k); why != "" {
			add("taskexecutor.env: %s is reserved: %s; remove it from [taskexecutor.env]", k, why)
			continue
		}
		te.Env[k] = v
	}
	if len(je.Problems) > 0 {
		return nil, je
	}
	return j, nil
}

var envKeyRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// didYouMean returns ` (did you mean "x"?)` for the candidate closest to s, or "".
func didYouMean(s string, candidates []string) string { return resources.DidYouMean(s, candidates) }
