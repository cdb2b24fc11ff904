package jobfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/yarn-am/yarn-am/yarnrpc"
)

// Job is a parsed and validated job file (job.toml). The external-resource keys of the same file are
// read by the resources package (resources.Load with Sources.JobFile); Job only checks that they are
// the only keys it does not know itself.
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
}

// FileSpec is a file (or archive) to localise into each TaskExecutor's working directory. Source is a
// local path (made absolute) or an hdfs:// URI; Alias is the name in the container (the part after
// '#', or the source's base name).
type FileSpec struct {
	Source string
	Alias  string
}

// IsRemote reports whether the file is already on a Hadoop filesystem and is not staged.
func (f FileSpec) IsRemote() bool { return strings.Contains(f.Source, "://") }

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

// jobFile mirrors the TOML layout; pointer and interface fields tell "unset" from zero.
type jobFile struct {
	Name        string   `toml:"name"`
	Queue       string   `toml:"queue"`
	Tags        []string `toml:"tags"`
	Priority    *int64   `toml:"priority"`
	MaxAttempts *int64   `toml:"max-attempts"`
	KeepContain *bool    `toml:"keep-containers"`
	Namenodes   []string `toml:"hdfs-namenodes"`
	FlinkConf   string   `toml:"flink-conf"` // read by resources.Load

	AM struct {
		Memory any    `toml:"memory"`
		VCores *int64 `toml:"vcores"`
	} `toml:"am"`

	TaskExecutor struct {
		Instances   *int64            `toml:"instances"`
		Command     string            `toml:"command"`
		Memory      any               `toml:"memory"`
		VCores      *int64            `toml:"vcores"`
		MaxFailures *int64            `toml:"max-failures"`
		Files       []string          `toml:"files"`
		Archives    []string          `toml:"archives"`
		Env         map[string]string `toml:"env"`
		Gang        *bool             `toml:"gang"`
		GangTimeout *string           `toml:"gang-timeout"`
		Locality    *string           `toml:"locality"`
	} `toml:"taskexecutor"`
}

// JobError lists every problem found in a job file, so the user fixes them in one pass.
type JobError struct {
	Path     string
	Problems []string
}

func (e *JobError) Error() string {
	if len(e.Problems) == 1 {
		return fmt.Sprintf("job file %s: %s", e.Path, e.Problems[0])
	}
	var b strings.Builder
	fmt.Fprintf(&b, "job file %s has %d problems:", e.Path, len(e.Problems))
	for _, p := range e.Problems {
		b.WriteString("\n  - ")
		b.WriteString(p)
	}
	return b.String()
}

var (
	nameRe   = regexp.MustCompile(`^[A-Za-z0-9._-]{1,128}$`)
	envKeyRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// LoadJob reads and validates a job file. Every problem is reported at once in a *JobError.
func LoadJob(path string) (*Job, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("job file %s: %w", path, err)
	}
	data, err := os.ReadFile(abs)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("job file %s does not exist", path)
		}
		return nil, fmt.Errorf("job file %s: %w", path, err)
	}
	var f jobFile
	md, err := toml.Decode(string(data), &f)
	if err != nil {
		return nil, fmt.Errorf("job file %s is not valid TOML: %w", path, err)
	}
	je := &JobError{Path: path}
	add := func(format string, args ...any) { je.Problems = append(je.Problems, fmt.Sprintf(format, args...)) }

	for _, k := range md.Undecoded() {
		top := k[0]
		if top == "external-resources" || strings.HasPrefix(top, "external-resource") {
			continue // the resources package reads and validates these
		}
		if top == "policy" {
			continue // the AM's failure policy: am.PolicyArgs reads and validates it
		}
		add("unknown key %q; valid top-level keys are name, queue, tags, priority, max-attempts, keep-containers, flink-conf, hdfs-namenodes, [am] memory/vcores, [taskexecutor] instances/command/memory/vcores/max-failures/files/archives/env/gang/gang-timeout/locality, [policy], and the external-resource keys", k.String())
	}

	j := &Job{Path: abs, Name: f.Name, Queue: f.Queue, Tags: f.Tags}
	if f.FlinkConf != "" {
		j.FlinkConf = f.FlinkConf
		if !filepath.IsAbs(j.FlinkConf) {
			j.FlinkConf = filepath.Join(filepath.Dir(abs), j.FlinkConf)
		}
	}
	if j.Name == "" {
		j.Name = strings.TrimSuffix(filepath.Base(abs), filepath.Ext(abs))
	}
	if !nameRe.MatchString(j.Name) {
		add("name = %q: use 1-128 letters, digits, '.', '_' or '-'", j.Name)
	}
	if j.Queue == "" {
		j.Queue = DefaultQueue
	}
	for _, t := range j.Tags {
		if t == "" || strings.ContainsAny(t, ",\n") {
			add("tags: %q is not a valid tag (non-empty, no commas or newlines)", t)
		}
	}
	if f.Priority != nil {
		if *f.Priority < 0 || *f.Priority > 1<<20 {
			add("priority = %d: use an integer from 0 to %d", *f.Priority, 1<<20)
		}
		j.Priority = int32(*f.Priority)
	}
	for _, nn := range f.Namenodes {
		if _, err := yarnrpc.NameNodeAddr(nn); err != nil {
			add("hdfs-namenodes: %v", err)
		}
	}
	j.HDFSNamenodes = f.Namenodes
	if f.MaxAttempts != nil {
		if *f.MaxAttempts < 1 || *f.MaxAttempts > 100 {
			add("max-attempts = %d: use an integer from 1 to 100 (the cluster's yarn.resourcemanager.am.max-attempts caps it)", *f.MaxAttempts)
		}
		j.MaxAttempts = int32(*f.MaxAttempts)
	}
	j.KeepContainers = j.MaxAttempts != 1
	if f.KeepContain != nil {
		j.KeepContainers = *f.KeepContain
	}

	j.AM.MemoryMB = memoryOrDefault("am.memory", f.AM.Memory, DefaultAMMemoryMB, add)
	j.AM.VCores = vcoresOrDefault("am.vcores", f.AM.VCores, DefaultAMVCores, add)

	te := &j.TaskExecutor
	te.Instances = 1
	if f.TaskExecutor.Instances != nil {
		if *f.TaskExecutor.Instances < 0 || *f.TaskExecutor.Instances > 100000 {
			add("taskexecutor.instances = %d: use an integer from 0 to 100000", *f.TaskExecutor.Instances)
		}
		te.Instances = int(*f.TaskExecutor.Instances)
	}
	te.Command = strings.TrimSpace(f.TaskExecutor.Command)
	if te.Command == "" {
		add("taskexecutor.command is missing: give the command each TaskExecutor runs, e.g. command = \"./worker\"")
	}
	te.MemoryMB = memoryOrDefault("taskexecutor.memory", f.TaskExecutor.Memory, DefaultTaskExecutorMemory, add)
	te.VCores = vcoresOrDefault("taskexecutor.vcores", f.TaskExecutor.VCores, DefaultTaskExecutorVCores, add)
	te.MaxFailures = DefaultTaskExecutorRetries
	if f.TaskExecutor.MaxFailures != nil {
		if *f.TaskExecutor.MaxFailures < 0 || *f.TaskExecutor.MaxFailures > 1000000 {
			add("taskexecutor.max-failures = %d: use an integer from 0 to 1000000", *f.TaskExecutor.MaxFailures)
		}
		te.MaxFailures = int(*f.TaskExecutor.MaxFailures)
	}
	if f.TaskExecutor.Gang != nil {
		te.Gang = *f.TaskExecutor.Gang
	}
	te.GangTimeout = DefaultGangTimeout
	if g := f.TaskExecutor.GangTimeout; g != nil {
		d, err := time.ParseDuration(strings.TrimSpace(*g))
		switch {
		case err != nil:
			add("taskexecutor.gang-timeout = %q: not a duration; use a number with a unit, e.g. \"5m\" or \"90s\"", *g)
		case d <= 0:
			add("taskexecutor.gang-timeout = %q: must be positive, e.g. \"5m\"", *g)
		default:
			te.GangTimeout = d
		}
		if !te.Gang {
			add("taskexecutor.gang-timeout = %q is set but taskexecutor.gang is not true: set gang = true, or remove gang-timeout", *g)
		}
	}
	te.Locality = DefaultLocality
	if l := f.TaskExecutor.Locality; l != nil {
		switch *l {
		case "spread", "any":
			te.Locality = *l
		default:
			add("taskexecutor.locality = %q: use \"any\" (any node, the default) or \"spread\" (node-local requests over the nodes with room)", *l)
		}
	}
	dir := filepath.Dir(abs)
	aliases := map[string]string{}
	te.Files = parseFileSpecs("taskexecutor.files", f.TaskExecutor.Files, dir, aliases, add)
	te.Archives = parseFileSpecs("taskexecutor.archives", f.TaskExecutor.Archives, dir, aliases, add)
	te.Env = map[string]string{}
	keys := make([]string, 0, len(f.TaskExecutor.Env))
	for k := range f.TaskExecutor.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !envKeyRe.MatchString(k) {
			add("taskexecutor.env: %q is not a valid environment variable name (letters, digits and '_', not starting with a digit)", k)
			continue
		}
		te.Env[k] = f.TaskExecutor.Env[k]
	}
	if len(je.Problems) > 0 {
		return nil, je
	}
	return j, nil
}

// ParseMemoryMB parses a memory size: a plain integer is MiB; suffixes k, m, g, t (optionally followed
// by "b" or "ib", case-insensitive) are binary units.
func ParseMemoryMB(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	t = strings.TrimSuffix(strings.TrimSuffix(t, "ib"), "b")
	mult := float64(1)
	switch {
	case strings.HasSuffix(t, "k"):
		mult, t = 1.0/1024, strings.TrimSuffix(t, "k")
	case strings.HasSuffix(t, "m"):
		t = strings.TrimSuffix(t, "m")
	case strings.HasSuffix(t, "g"):
		mult, t = 1024, strings.TrimSuffix(t, "g")
	case strings.HasSuffix(t, "t"):
		mult, t = 1024*1024, strings.TrimSuffix(t, "t")
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(t), 64)
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("%q is not a memory size (examples: 512, 512m, 2g)", s)
	}
	mb := int64(v * mult)
	if mb < 1 {
		return 0, fmt.Errorf("%q is less than 1 MiB", s)
	}
	return mb, nil
}

func memoryOrDefault(key string, v any, def int64, add func(string, ...any)) int64 {
	switch m := v.(type) {
	case nil:
		return def
	case int64:
		if m <= 0 {
			add("%s = %d: use a positive number of MiB or a size like \"2g\"", key, m)
			return def
		}
		return m
	case string:
		mb, err := ParseMemoryMB(m)
		if err != nil {
			add("%s: %v", key, err)
			return def
		}
		return mb
	default:
		add("%s = %v: use a number of MiB or a size like \"2g\"", key, v)
		return def
	}
}

func vcoresOrDefault(key string, v *int64, def int32, add func(string, ...any)) int32 {
	if v == nil {
		return def
	}
	if *v < 1 || *v > 1024 {
		add("%s = %d: use an integer from 1 to 1024", key, *v)
		return def
	}
	return int32(*v)
}

func parseFileSpecs(key string, in []string, dir string, aliases map[string]string, add func(string, ...any)) []FileSpec {
	var out []FileSpec
	for _, s := range in {
		src, alias, _ := strings.Cut(s, "#")
		if src == "" {
			add("%s: %q has no path before '#'", key, s)
			continue
		}
		fs := FileSpec{Source: src, Alias: alias}
		if fs.IsRemote() {
			if !strings.HasPrefix(src, "hdfs://") && !strings.HasPrefix(src, "viewfs://") {
				add("%s: %q: only local paths and hdfs:// (or viewfs://) URIs are supported", key, src)
				continue
			}
		} else {
			if !filepath.IsAbs(src) {
				fs.Source = filepath.Join(dir, src)
			}
			if _, err := os.Stat(fs.Source); err != nil {
				add("%s: %q does not exist (relative paths are resolved against the job file's directory %s)", key, src, dir)
				continue
			}
		}
		if fs.Alias == "" {
			fs.Alias = filepath.Base(strings.TrimSuffix(fs.Source, "/"))
		}
		if strings.Contains(fs.Alias, "/") || fs.Alias == "." || fs.Alias == ".." {
			add("%s: alias %q must be a plain file name", key, fs.Alias)
			continue
		}
		if prev, dup := aliases[fs.Alias]; dup {
			add("%s: %q and %q would both be localised as %q; give one an alias with '#name'", key, prev, s, fs.Alias)
			continue
		}
		aliases[fs.Alias] = s
		out = append(out, fs)
	}
	return out
}
