package jobfile

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/yarn-am/yarn-am/container/contract"
	"github.com/yarn-am/yarn-am/resources"
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

// SyntaxError is a job file that is not TOML at all. It is reported alone: nothing else in the file
// can be judged.
type SyntaxError struct {
	Path string
	Line int
	Msg  string
}

func (e *SyntaxError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("job file %s is not valid TOML: line %d: %s", e.Path, e.Line, e.Msg)
	}
	return fmt.Sprintf("job file %s is not valid TOML: %s", e.Path, e.Msg)
}

var (
	nameRe   = regexp.MustCompile(`^[A-Za-z0-9._-]{1,128}$`)
	envKeyRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	queueRe  = regexp.MustCompile(`^[^\s.,:]+(\.[^\s.,:]+)*$`)
)

// Keys of the job-file schema, for the unknown-key message and its did-you-mean.
var (
	topKeys  = []string{"name", "queue", "tags", "priority", "max-attempts", "keep-containers", "flink-conf", "hdfs-namenodes", "am", "taskexecutor", "policy", "external-resources"}
	amKeys   = []string{"memory", "vcores"}
	teKeys   = []string{"instances", "command", "memory", "vcores", "max-failures", "files", "archives", "env", "gang", "gang-timeout", "locality"}
	validTop = "valid top-level keys are name, queue, tags, priority, max-attempts, keep-containers, flink-conf, hdfs-namenodes, [am], [taskexecutor], [policy], and the external-resource keys"
)

// ValidateName checks an application name (the job's name, or submit/check --name).
func ValidateName(n string) error {
	if !nameRe.MatchString(n) {
		return fmt.Errorf("%q: use 1-128 letters, digits, '.', '_' or '-'", n)
	}
	return nil
}

// ValidateQueue checks a queue name (the job's queue, or --queue): a leaf name or a dotted path
// (root.team), without spaces, commas or colons.
func ValidateQueue(q string) error {
	if q == "" {
		return errors.New(`"" is empty; name a leaf queue of the cluster, e.g. default`)
	}
	if !queueRe.MatchString(q) {
		return fmt.Errorf("%q is not a queue name: use a leaf queue or a dotted path like root.team, without spaces, commas or colons", q)
	}
	return nil
}

// MaxUserTags is how many tags a job may give: YARN takes at most 10 per application
// (ApplicationSubmissionContext) and yarn-am adds its own (contract.ApplicationTag).
const (
	MaxUserTags  = 9
	MaxTagLength = 100
)

// LoadJob reads and validates a job file. The file is parsed once; a file that is not TOML is a
// *SyntaxError, every other problem is reported at once in a *JobError.
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
		if st, serr := os.Stat(abs); serr == nil && st.IsDir() {
			return nil, fmt.Errorf("job file %s is a directory; give the path of a job.toml", path)
		}
		return nil, fmt.Errorf("job file %s cannot be read: %w", path, err)
	}
	var doc map[string]any
	if _, err := toml.Decode(string(data), &doc); err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, &SyntaxError{Path: path, Line: pe.Position.Line, Msg: pe.Message}
		}
		return nil, &SyntaxError{Path: path, Msg: err.Error()}
	}
	je := &JobError{Path: path}
	add := func(format string, args ...any) { je.Problems = append(je.Problems, fmt.Sprintf(format, args...)) }
	r := reader{add: add}

	for _, k := range sortedKeys(doc) {
		if slices.Contains(topKeys, k) || strings.HasPrefix(k, "external-resource") {
			continue // external-resource keys: resources.Load; [policy]: am.PolicyArgs
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
		for _, k := range sortedKeys(t.m) {
			if !slices.Contains(t.keys, k) {
				add("unknown key %q%s; valid keys of [%s] are %s", t.prefix+"."+k, didYouMean(t.prefix+"."+k, full), t.prefix, strings.Join(t.keys, ", "))
			}
		}
	}

	j := &Job{Path: abs}
	j.Name, _ = r.str(doc, "name", "name")
	j.Queue, _ = r.str(doc, "queue", "queue")
	j.Tags = r.strings(doc, "tags", "tags")
	// A flink-conf that is not a string is reported by resources.Load, which reads the file it names.
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
	te.Files = parseFileSpecs("taskexecutor.files", r.strings(teT, "files", "taskexecutor.files"), dir, aliases, false, add)
	te.Archives = parseFileSpecs("taskexecutor.archives", r.strings(teT, "archives", "taskexecutor.archives"), dir, aliases, true, add)
	te.Env = map[string]string{}
	envT := r.table(teT, "env", "taskexecutor.env")
	for _, k := range sortedKeys(envT) {
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

// checkTags applies the limits YARN's client applies to application tags (at most 10 per
// application, each at most 100 ASCII characters), counting the tag yarn-am adds.
func checkTags(tags []string, add func(string, ...any)) {
	distinct := map[string]bool{}
	for _, t := range tags {
		switch {
		case t == "" || strings.ContainsAny(t, ",\n"):
			add("tags: %q is not a valid tag (non-empty, no commas or newlines)", t)
		case len(t) > MaxTagLength:
			add("tags: %q is %d characters long; YARN allows at most %d", t, len(t), MaxTagLength)
		case !isASCII(t):
			add("tags: %q has characters that are not ASCII; YARN accepts ASCII tags only", t)
		}
		if strings.ToLower(t) != contract.ApplicationTag {
			distinct[strings.ToLower(t)] = true // YARN lowercases tags
		}
	}
	if len(distinct) > MaxUserTags {
		add("tags: %d tags; give at most %d (YARN allows 10 per application and yarn-am adds its own tag %q)", len(distinct), MaxUserTags, contract.ApplicationTag)
	}
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// yarnEnv are the variables YARN's NodeManager sets in every container (ApplicationConstants.Environment
// and the container launch script); a value in the job would be overwritten or would break the
// container.
var yarnEnv = []string{"CONTAINER_ID", "NM_HOST", "NM_PORT", "NM_HTTP_PORT", "LOCAL_DIRS", "LOCAL_USER_DIRS", "LOG_DIRS",
	"USER", "LOGNAME", "HOME", "PWD", "JVM_PID", "HADOOP_TOKEN_FILE_LOCATION", "APPLICATION_WEB_PROXY_BASE", "APP_SUBMIT_TIME_ENV"}

// ReservedEnv says why an environment variable cannot be set in [taskexecutor.env], or "" when it can.
// The GPU visibility variables are reserved only when a GPU resource is configured (the client checks
// those: GPUEnv).
func ReservedEnv(k string) string {
	switch {
	case slices.Contains(yarnEnv, k):
		return "YARN's NodeManager sets it in every container"
	case strings.HasPrefix(k, "NM_AUX_SERVICE_"):
		return "YARN's NodeManager sets the NM_AUX_SERVICE_* variables in every container"
	case k == contract.EnvTokensRefresh || k == contract.EnvLogLevel:
		return "" // the user's to tune (docs/job-file.md#files-archives-and-environment)
	case strings.HasPrefix(k, "YARN_AM_"):
		return "variables starting with YARN_AM_ are set by yarn-am's ApplicationMaster and launcher (only YARN_AM_TOKENS_REFRESH and YARN_AM_LOG_LEVEL may be set)"
	}
	return ""
}

// GPUEnv are the variables the GPU driver sets to the GPUs it assigned; the launcher keeps a value the
// user set, so a job that sets one would see GPUs that are not its own.
var GPUEnv = contract.GPUVisibilityEnv()

// reservedAliases are the names in a container's working directory that yarn-am or YARN itself
// puts there; a user file localised under one would replace it.
var reservedAliases = map[string]string{
	contract.StagedBinary:                   "yarn-am's own binary",
	contract.StagedJob:                      "the staged job file",
	contract.StagedFlinkConf:                "the staged flink-conf.yaml",
	contract.StagedManifest:                 "the staged list of local resources",
	contract.StagedKeytab:                   "the staged keytab",
	contract.InfoFileName:                   "the file the launcher writes the resource infos to",
	contract.CoreSiteFile:                   "the staged Hadoop configuration",
	contract.YARNSiteFile:                   "the staged Hadoop configuration",
	contract.HDFSSiteFile:                   "the staged Hadoop configuration",
	"launch_container.sh":                   "YARN's container launch script",
	"container_tokens":                      "YARN's file of the container's tokens",
	"default_container_executor.sh":         "YARN's container executor script",
	"default_container_executor_session.sh": "YARN's container executor script",
	"tmp":                                   "YARN's per-container temporary directory",
}

// ReservedAlias says why a name cannot be the alias of a user file, or "" when it can.
func ReservedAlias(a string) string { return reservedAliases[a] }

// archiveSuffixes are the names YARN's localiser unpacks (FSDownload); anything else is copied as is.
var archiveSuffixes = []string{".tar.gz", ".tgz", ".tar", ".zip", ".jar"}

// reader reads typed values from the decoded TOML, reporting a value of the wrong type with its key,
// its value and the type wanted.
type reader struct{ add func(string, ...any) }

func (r reader) table(m map[string]any, k, full string) map[string]any {
	v, ok := m[k]
	if !ok {
		return map[string]any{}
	}
	t, ok := v.(map[string]any)
	if !ok {
		r.add("%s = %s: want a table ([%s] or %s = {...}), not %s", full, show(v), full, full, typeName(v))
		return map[string]any{}
	}
	return t
}

func (r reader) str(m map[string]any, k, full string) (string, bool) {
	v, ok := m[k]
	if !ok {
		return "", false
	}
	s, ok := v.(string)
	if !ok {
		r.add("%s = %s: want a string (in quotes), not %s", full, show(v), typeName(v))
		return "", false
	}
	return s, true
}

func (r reader) boolean(m map[string]any, k, full string) (bool, bool) {
	v, ok := m[k]
	if !ok {
		return false, false
	}
	b, ok := v.(bool)
	if !ok {
		r.add("%s = %s: want true or false (without quotes), not %s", full, show(v), typeName(v))
		return false, false
	}
	return b, true
}

func (r reader) strings(m map[string]any, k, full string) []string {
	v, ok := m[k]
	if !ok {
		return nil
	}
	list, ok := v.([]any)
	if !ok {
		r.add("%s = %s: want a list of strings, e.g. %s = [%s], not %s", full, show(v), full, show(v), typeName(v))
		return nil
	}
	out := make([]string, 0, len(list))
	for _, it := range list {
		s, ok := it.(string)
		if !ok {
			r.add("%s: %s is %s; want a list of strings", full, show(it), typeName(it))
			continue
		}
		out = append(out, s)
	}
	return out
}

func (r reader) integer(m map[string]any, k, full string, lo, hi int64, note string) (int64, bool) {
	v, ok := m[k]
	if !ok {
		return 0, false
	}
	n, ok := v.(int64)
	if !ok || n < lo || n > hi {
		what := ""
		if !ok {
			what = ", not " + typeName(v)
		}
		r.add("%s = %s: want an integer from %d to %d%s%s", full, show(v), lo, hi, what, note)
		return 0, false
	}
	return n, true
}

func (r reader) memory(m map[string]any, k, full string, def int64) int64 {
	v, ok := m[k]
	if !ok {
		return def
	}
	switch t := v.(type) {
	case int64:
		if t <= 0 || t > MaxMemoryMB {
			r.add("%s = %d: want a positive number of MiB up to %d, or a size like \"2g\"", full, t, int64(MaxMemoryMB))
			return def
		}
		return t
	case float64:
		r.add("%s = %s: want a whole number of MiB (e.g. 1536) or a size string (e.g. \"1536m\", \"2g\")", full, show(v))
		return def
	case string:
		mb, err := ParseMemoryMB(t)
		if err != nil {
			r.add("%s: %v", full, err)
			return def
		}
		return mb
	}
	r.add("%s = %s: want a number of MiB or a size like \"2g\", not %s", full, show(v), typeName(v))
	return def
}

// show renders a decoded TOML value as it would be written in TOML.
func show(v any) string {
	switch t := v.(type) {
	case string:
		return strconv.Quote(t)
	case int64:
		return strconv.FormatInt(t, 10)
	case float64:
		return strconv.FormatFloat(t, 'g', -1, 64)
	case bool:
		return strconv.FormatBool(t)
	case []any:
		items := make([]string, len(t))
		for i, it := range t {
			items[i] = show(it)
		}
		return "[" + strings.Join(items, ", ") + "]"
	case map[string]any:
		items := make([]string, 0, len(t))
		for _, k := range sortedKeys(t) {
			items = append(items, k+" = "+show(t[k]))
		}
		return "{" + strings.Join(items, ", ") + "}"
	}
	return fmt.Sprint(v)
}

// typeName names a decoded TOML value's type in the words of the TOML spec.
func typeName(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case int64:
		return "an integer"
	case float64:
		return "a float"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	case map[string]any:
		return "a table"
	}
	return "a date/time"
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// didYouMean returns ` (did you mean "x"?)` for the candidate closest to s, or "".
func didYouMean(s string, candidates []string) string { return resources.DidYouMean(s, candidates) }

// MaxMemoryMB is the largest memory size a job may ask for: 1 PiB, far above any node, so a larger
// value is a typo.
const MaxMemoryMB = 1 << 30

// ParseMemoryMB parses a memory size: a plain number is MiB; suffixes k, m, g, t (optionally followed
// by "b" or "ib", case-insensitive) are binary units. The result must be a whole number of MiB from 1
// to MaxMemoryMB.
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
	t = strings.TrimSpace(t)
	v, err := strconv.ParseFloat(t, 64)
	if err != nil && errors.Is(err, strconv.ErrRange) && v > 0 {
		err = nil // +Inf: too large, reported below
	}
	if err != nil || math.IsNaN(v) || strings.ContainsAny(t, "xXpP_") || strings.EqualFold(strings.TrimLeft(t, "+-"), "inf") || strings.EqualFold(strings.TrimLeft(t, "+-"), "infinity") {
		return 0, fmt.Errorf("%q is not a memory size: write a number of MiB or a number with a unit k, m, g or t (examples: 512, 512m, 2g)", s)
	}
	if v <= 0 {
		return 0, fmt.Errorf("%q is not a positive memory size (examples: 512, 512m, 2g)", s)
	}
	mb := v * mult
	if mb > MaxMemoryMB || math.IsInf(mb, 0) {
		return 0, fmt.Errorf("%q is too large: the maximum is %dg (1 PiB)", s, MaxMemoryMB/1024)
	}
	if mb < 1 {
		return 0, fmt.Errorf("%q is less than 1 MiB, the smallest size YARN allocates", s)
	}
	if mb != math.Trunc(mb) {
		return 0, fmt.Errorf("%q is %g MiB: YARN allocates whole MiB; write a whole number of MiB, e.g. %q", s, mb, fmt.Sprintf("%dm", int64(math.Ceil(mb))))
	}
	return int64(mb), nil
}

func parseFileSpecs(key string, in []string, dir string, aliases map[string]string, archives bool, add func(string, ...any)) []FileSpec {
	var out []FileSpec
	for _, s := range in {
		src, alias, _ := strings.Cut(s, "#")
		if src == "" {
			add("%s: %q has no path before '#'", key, s)
			continue
		}
		if strings.Contains(alias, "#") {
			add("%s: %q: the alias %q contains '#'; give one '#' between the path and the alias (path#alias)", key, s, alias)
			continue
		}
		fs := FileSpec{Source: src, Alias: alias}
		if fs.IsRemote() {
			if !strings.HasPrefix(src, "hdfs://") && !strings.HasPrefix(src, "viewfs://") {
				add("%s: %q: only local paths and hdfs:// (or viewfs://) URIs are supported", key, src)
				continue
			}
			u, err := url.Parse(src)
			if err != nil {
				add("%s: %q is not a URI: %v", key, src, err)
				continue
			}
			if strings.Trim(u.Path, "/") == "" {
				add("%s: %q has no path: name a file, e.g. hdfs://namenode:8020/user/alice/model.bin", key, src)
				continue
			}
		} else {
			if !filepath.IsAbs(src) {
				fs.Source = filepath.Join(dir, src)
			}
			st, err := os.Stat(fs.Source)
			if err != nil {
				add("%s: %q does not exist (relative paths are resolved against the job file's directory %s)", key, src, dir)
				continue
			}
			if st.IsDir() {
				add("%s: %q is a directory; YARN localises files: pack it (tar czf %s.tar.gz ...) and list the archive under taskexecutor.archives", key, src, filepath.Base(fs.Source))
				continue
			}
		}
		if archives && !hasArchiveSuffix(fs.Source) {
			add("%s: %q is not an archive YARN unpacks (names ending in %s); list plain files under taskexecutor.files", key, src, strings.Join(archiveSuffixes, ", "))
			continue
		}
		if fs.Alias == "" {
			fs.Alias = path.Base(strings.TrimSuffix(fs.Source, "/"))
		}
		if strings.Contains(fs.Alias, "/") || fs.Alias == "." || fs.Alias == ".." {
			add("%s: alias %q must be a plain file name", key, fs.Alias)
			continue
		}
		if why := ReservedAlias(fs.Alias); why != "" {
			add("%s: %q would be localised as %q, which is reserved (%s in the container's working directory); give it another name with '#name'", key, s, fs.Alias, why)
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

func hasArchiveSuffix(p string) bool {
	l := strings.ToLower(p)
	for _, s := range archiveSuffixes {
		if strings.HasSuffix(l, s) {
			return true
		}
	}
	return false
}
