package flinkdist

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/yarn-am/yarn-am/contract"
)

// Flink's entry points and classes yarn-am starts (Flink 1.20; docs/flink.md#the-processes).
const (
	applicationEntryPoint = "org.apache.flink.container.entrypoint.StandaloneApplicationClusterEntryPoint"
	sessionEntryPoint     = "org.apache.flink.runtime.entrypoint.StandaloneSessionClusterEntrypoint"
	taskManagerEntryPoint = "org.apache.flink.runtime.taskexecutor.TaskManagerRunner"
	bashJavaUtilsClass    = "org.apache.flink.runtime.util.bash.BashJavaUtils"
	// gpuDriverFactory is the driver-factory.class of Flink's GPU plugin (plugins/external-resource-gpu).
	gpuDriverFactory = "org.apache.flink.externalresource.gpu.GPUDriverFactory"
)

// bashJavaUtilsPrefix starts the lines of BashJavaUtils' output that yarn-am reads.
const bashJavaUtilsPrefix = "BASH_JAVA_UTILS_EXEC_RESULT:"

// Spec is what a Flink process is built from.
type Spec struct {
	Home *Home
	// Java is the java binary; empty means JavaHome's bin/java, else $JAVA_HOME/bin/java, else java
	// on the PATH.
	Java string
	// JavaHome is the JDK the process runs on when [flink] java-home ships one
	// (docs/flink.md#a-jdk-for-the-containers): its bin/java, and JAVA_HOME points there.
	JavaHome string
	// Conf is the merged configuration (the home's, then the job file's Flink keys, then -D).
	Conf *Config
	// Dir is the process's own directory (the container's working directory): its conf/ and the GPU
	// discovery scripts are written here.
	Dir string
	// LogDir receives the process's log file (jobmanager.log or taskmanager.log).
	LogDir string
	// MemoryMiB is the process size: the container's memory. 0 leaves Flink's configured size.
	MemoryMiB int
	// GPUs is, per external resource name, the indexes yarn-am's discovery assigned to this
	// container (TaskManager only).
	GPUs map[string][]string
	// UserJars go on the classpath (application mode: the job's jar; TaskManagers: the same jar).
	UserJars []string
	// MainClass and Args are the job's main class (optional when the jar's manifest names it) and
	// program arguments (application mode only).
	MainClass string
	Args      []string
	// HadoopClasspath is the cluster's Hadoop classpath, expanded in the container
	// (ExpandHadoopClasspath): it goes after Flink's own jars, as Flink's YARN mode puts
	// yarn.application.classpath after them, so that Flink's Hadoop file system reaches hdfs://
	// (docs/flink.md#hdfs-checkpoints-and-savepoints). Empty: no Hadoop on the classpath.
	HadoopClasspath []string
	// ExtraClasspath goes last, after the Hadoop classpath: yarn-am's own jars (the token jar,
	// WriteTokenJar), which a class-data sharing archive made without them still serves.
	ExtraClasspath []string
	// CDS is the class-data sharing archive the JVM maps or writes (cds.go); with one, the Flink
	// home's jars are named relative to Dir, the process's working directory (Home.SharedClasspath).
	CDS CDS
	// JIT are JVM flags for the just-in-time compiler (LateC2Flags), before the configuration's
	// java options, so that a flag the job sets in env.java.opts.* wins (the JVM takes the last).
	JIT []string
	// Logs is how the log file rolls (its File is set by Prepare from LogDir and the role).
	Logs LogRoll
}

// logFileName is the role's log file in LogDir, the name Flink's own scripts give it.
func logFileName(role Role) string {
	if role == RoleTaskManager {
		return "taskmanager.log"
	}
	return "jobmanager.log"
}

// JavaBinary is the java the process runs: Java, else JavaHome's bin/java, else $JAVA_HOME/bin/java,
// else java on the PATH.
func (s Spec) JavaBinary() string { return s.java() }

func (s Spec) java() string {
	if s.Java != "" {
		return s.Java
	}
	if s.JavaHome != "" {
		return filepath.Join(s.JavaHome, "bin", "java")
	}
	if jh := os.Getenv("JAVA_HOME"); jh != "" {
		return filepath.Join(jh, "bin", "java")
	}
	return "java"
}

// Process is a Flink process ready to start.
type Process struct {
	Role    Role
	Argv    []string // java and its arguments
	Env     []string // KEY=VALUE to add to the environment (FLINK_HOME, FLINK_CONF_DIR, FLINK_PLUGINS_DIR, ...)
	ConfDir string   // the conf directory the process reads (Dir/conf-<role>)
	LogFile string
	Conf    *Config // the configuration written to ConfDir
	// MemoryFrom says where Prepare took the memory flags from: computed in Go, or BashJavaUtils and
	// why (docs/flink.md#memory).
	MemoryFrom string
	// Started, when set, is called in a goroutine of its own once the JVM runs (RunApplication),
	// with its pid and a channel closed when it has ended: the driver learns the ports it bound.
	Started func(pid int, exited <-chan struct{})
}

// CommandLine is the process as one bash command line: the environment assignments, then the
// arguments, each quoted. It is one simple command, so it cannot follow `exec` (exec takes no
// assignments); `bash -c` runs it as is (TestFlinkSessionCluster starts a TaskManager this way).
func (p *Process) CommandLine() string {
	parts := make([]string, 0, len(p.Env)+len(p.Argv))
	for _, e := range p.Env {
		k, v, _ := strings.Cut(e, "=")
		parts = append(parts, k+"="+contract.ShellQuote(v))
	}
	for _, a := range p.Argv {
		parts = append(parts, contract.ShellQuote(a))
	}
	return strings.Join(parts, " ")
}

// Prepare builds the process for role: the configuration (configure), its conf directory with
// config.yaml and log4j.properties, the GPU discovery scripts, the memory flags (computeResourceParams,
// or Flink's BashJavaUtils for a configuration it does not cover), and the command line (buildCommand).
func Prepare(ctx context.Context, role Role, s Spec) (*Process, error) {
	conf, scripts, err := configure(role, s)
	if err != nil {
		return nil, err
	}
	confDir := filepath.Join(s.Dir, "conf-"+string(role))
	// A process without a log directory (a unit test's) logs into one file, not rolled.
	var logs *LogRoll
	if s.LogDir != "" {
		l := s.Logs
		l.File = filepath.Join(s.LogDir, logFileName(role))
		logs = &l
	}
	if err := WriteConfDir(confDir, conf, s.Home, logs); err != nil {
		return nil, err
	}
	for path, body := range scripts {
		if err := os.WriteFile(path, []byte(body), 0o755); err != nil {
			return nil, fmt.Errorf("flink: discovery script: %w", err)
		}
		// WriteFile keeps an existing file's mode; the GPU driver refuses a script it cannot execute.
		if err := os.Chmod(path, 0o755); err != nil {
			return nil, fmt.Errorf("flink: discovery script: %w", err)
		}
		// Run it once as the driver will: should it not run here (a noexec working directory), Flink's
		// driver would only log a warning and the TaskManager would run without its GPUs.
		if err := checkDiscoveryScript(ctx, path, body); err != nil {
			return nil, err
		}
	}
	// The flags and sizes Flink's calculator would print, computed here (computeResourceParams); a
	// configuration it does not cover goes to BashJavaUtils itself, a JVM of ~1.5 s
	// (docs/flink.md#memory).
	from := memoryModelFrom(s.Home)
	params, why := computeResourceParams(conf, role)
	if why != nil {
		from = "from Flink's BashJavaUtils (" + why.Error() + ")"
		if params, err = runBashJavaUtils(ctx, s.java(), s.Home, confDir, role); err != nil {
			return nil, err
		}
	}
	p, err := buildCommand(role, s, conf, confDir, params)
	if err != nil {
		return nil, err
	}
	p.MemoryFrom = from
	return p, nil
}

// memoryModelFrom says, on the process's stdout, that its memory flags were computed by yarn-am, naming
// the home's Flink version: 1.20's memory model is also 2.3's, and TestComputedResourceParamsEqualBashJavaUtils
// holds it to both versions' calculators (docs/flink.md#memory), so a Flink 2 home is not told of 1.20.
func memoryModelFrom(h *Home) string {
	if h == nil || h.Version == "" {
		return "computed by yarn-am from Flink's memory model"
	}
	return "computed by yarn-am from Flink " + h.Version + "'s memory model"
}

// WriteConfDir writes the process's conf directory: config.yaml from conf, and log4j.properties:
// yarn-am's rolling configuration for logs (LogRoll.Log4jProperties), or the home's own
// conf/log4j.properties when it has one and the job set neither log-max-size nor log-max-files
// (docs/flink.md#logs-that-roll). logs nil: one file, not rolled (plainLog4j), for a caller that
// does not know the log directory.
func WriteConfDir(dir string, conf *Config, h *Home, logs *LogRoll) error {
	if err := conf.WriteConfDir(dir); err != nil {
		return err
	}
	l4j := plainLog4j
	if logs != nil {
		var err error
		if l4j, err = logs.Log4jProperties(); err != nil {
			return err
		}
	}
	if data, ok, err := h.ReadLog4jConfig(); err != nil {
		return fmt.Errorf("flink: %w", err)
	} else if ok && logs != nil && logs.Set {
		return fmt.Errorf("flink: [flink] log-max-size and log-max-files set how yarn-am's log4j configuration rolls, but the Flink home has its own %s, which would be used instead: remove the keys, or remove that file from the home", h.Log4jConfig())
	} else if ok {
		l4j = data
	}
	if err := os.WriteFile(filepath.Join(dir, "log4j.properties"), []byte(l4j), 0o644); err != nil {
		return fmt.Errorf("flink: %w", err)
	}
	return nil
}

// indexPattern is what a GPU index may be: it is written into a shell script.
var indexPattern = regexp.MustCompile(`^[A-Za-z0-9_.:-]{1,64}$`)

// discoveryScriptName is the file, in Spec.Dir, of the discovery script for one resource.
func discoveryScriptName(resource string) string { return "yarn-am-discovery-" + resource + ".sh" }

// configure returns the process's configuration and the GPU discovery scripts to write (path to
// content). The process size is Spec.MemoryMiB, replacing the configured one as Flink's YARN mode
// does: the container's memory is the limit YARN enforces (the job file's checks refuse a Flink key
// that disagrees with it; docs/flink.md#memory). For a TaskManager,
// every external resource whose driver is Flink's GPU plugin gets a discovery script that prints
// the indexes yarn-am assigned (docs/flink.md#gpus): Flink's driver runs it instead of its own
// nvidia-smi discovery, so there is one discovery per container, and an operator's
// getExternalResourceInfos returns exactly those indexes. A TaskManager whose GPUs are missing or
// fewer than the configured amount is refused here, so it does not start without them.
func configure(role Role, s Spec) (*Config, map[string]string, error) {
	if s.Conf == nil || s.Home == nil {
		return nil, nil, fmt.Errorf("flink: a %s needs a Flink home and a configuration", role)
	}
	conf := s.Conf.Clone()
	sizeKey := keyJMProcessSize
	switch role {
	case RoleApplication, RoleSession:
	case RoleTaskManager:
		sizeKey = keyTMProcessSize
	default:
		return nil, nil, fmt.Errorf("flink: role %s: valid roles are %s, %s and %s", shown(string(role)), RoleApplication, RoleSession, RoleTaskManager)
	}
	if s.MemoryMiB < 0 {
		return nil, nil, fmt.Errorf("flink: memory %d MiB: want a positive size", s.MemoryMiB)
	}
	if s.MemoryMiB > 0 {
		conf.Set(sizeKey, strconv.Itoa(s.MemoryMiB)+"m")
	}
	if role == RoleApplication && len(s.UserJars) == 0 {
		return nil, nil, fmt.Errorf("flink: an application-mode JobManager needs the job's jar")
	}
	scripts := map[string]string{}
	if role != RoleTaskManager {
		return conf, scripts, nil
	}
	for _, name := range externalResources(conf) {
		if v, _ := conf.Get("external-resource." + name + ".driver-factory.class"); v != gpuDriverFactory {
			continue
		}
		amountKey := "external-resource." + name + ".amount"
		av, _ := conf.Get(amountKey)
		amount, err := strconv.Atoi(strings.TrimSpace(av))
		if err != nil || amount <= 0 {
			return nil, nil, fmt.Errorf("flink: %s is %s: want a positive integer", amountKey, shown(av))
		}
		idx := s.GPUs[name]
		if len(idx) != amount {
			return nil, nil, fmt.Errorf("flink: the TaskManager does not start: resource %q has %d discovered indexes %v but %s is %d", name, len(idx), idx, amountKey, amount)
		}
		seen := map[string]bool{}
		for _, i := range idx {
			if !indexPattern.MatchString(i) || seen[i] {
				return nil, nil, fmt.Errorf("flink: resource %q: index %s is not a distinct index (letters, digits, _.:-)", name, shown(i))
			}
			seen[i] = true
		}
		dir, err := filepath.Abs(s.Dir)
		if err != nil {
			return nil, nil, fmt.Errorf("flink: %w", err)
		}
		path := filepath.Join(dir, discoveryScriptName(name))
		scripts[path] = discoveryScript(name, idx)
		conf.Set("external-resource."+name+".param.discovery-script.path", path)
		conf.Set("external-resource."+name+".param.discovery-script.args", "")
	}
	return conf, scripts, nil
}

// discoveryScript is the script Flink's GPU driver runs for resource: it prints the indexes yarn-am
// already discovered, comma separated on one line, as the driver expects of a discovery script.
func discoveryScript(resource string, indexes []string) string {
	return "#!/bin/sh\n" +
		"# Written by yarn-am (docs/flink.md#gpus): the " + resource + " indexes yarn-am's discovery assigned to this\n" +
		"# container. Flink's GPU driver runs this instead of a discovery of its own.\n" +
		"echo '" + strings.Join(indexes, ",") + "'\n"
}

// checkDiscoveryScript runs the script written from body and compares its output with the echo line
// in body.
func checkDiscoveryScript(ctx context.Context, path, body string) error {
	want := ""
	for _, line := range strings.Split(body, "\n") {
		if rest, ok := strings.CutPrefix(line, "echo '"); ok {
			want = strings.TrimSuffix(rest, "'")
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "0").Output()
	if err != nil {
		return fmt.Errorf("flink: the TaskManager does not start: its GPU discovery script %s does not run: %w", path, err)
	}
	if got := strings.TrimSpace(string(out)); got != want {
		return fmt.Errorf("flink: the TaskManager does not start: its GPU discovery script %s printed %s, want %s", path, shown(got), shown(want))
	}
	return nil
}

// externalResources returns the names in external-resources (Flink's list: ";" separated; "none"
// means none), in order.
func externalResources(c *Config) []string {
	v, _ := c.Get(keyExternalRes)
	var out []string
	for _, n := range strings.FieldsFunc(v, func(r rune) bool { return r == ';' || r == ',' }) {
		n = strings.TrimSpace(n)
		if n != "" && n != "none" {
			out = append(out, n)
		}
	}
	return out
}

// runBashJavaUtils runs Flink's memory calculator on confDir, as Flink's scripts do before starting a
// JobManager or TaskManager, and parses what it prints.
func runBashJavaUtils(ctx context.Context, java string, h *Home, confDir string, role Role) (ResourceParams, error) {
	cmdName := "GET_TM_RESOURCE_PARAMS"
	if role != RoleTaskManager {
		cmdName = "GET_JM_RESOURCE_PARAMS"
	}
	cp := h.BashJavaUtils + string(os.PathListSeparator) + h.DistJar
	cmd := exec.CommandContext(ctx, java, "-cp", cp, bashJavaUtilsClass, cmdName, "--configDir", confDir)
	var out limitedBuffer
	out.max = 1 << 20
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if err != nil {
		return ResourceParams{}, fmt.Errorf("flink: %s %s on %s: %w; its output ends: %s", bashJavaUtilsClass, cmdName, confDir, err, tail(out.String(), 1500))
	}
	return parseResourceParams(out.Bytes(), role)
}

// parseResourceParams reads BashJavaUtils' result lines: the JVM flags, then (a TaskManager always,
// a JobManager since Flink 1.11) the dynamic properties "-D key=value ...".
func parseResourceParams(out []byte, role Role) (ResourceParams, error) {
	var results []string
	for _, line := range strings.Split(string(out), "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimRight(line, "\r"), bashJavaUtilsPrefix); ok {
			results = append(results, rest)
		}
	}
	want := "1 or 2"
	if role == RoleTaskManager {
		want = "2"
	}
	if len(results) == 0 || len(results) > 2 || (role == RoleTaskManager && len(results) != 2) {
		return ResourceParams{}, fmt.Errorf("flink: BashJavaUtils printed %d %s lines, want %s; its output ends: %s", len(results), bashJavaUtilsPrefix, want, tail(string(out), 1500))
	}
	p := ResourceParams{JVM: strings.Fields(results[0])}
	for _, f := range p.JVM {
		if !strings.HasPrefix(f, "-X") {
			return ResourceParams{}, fmt.Errorf("flink: BashJavaUtils JVM flag %s is not a -X flag", shown(f))
		}
	}
	if len(results) == 2 {
		fields := strings.Fields(results[1])
		for i := 0; i < len(fields); i++ {
			if fields[i] != "-D" || i+1 >= len(fields) || !strings.Contains(fields[i+1], "=") {
				return ResourceParams{}, fmt.Errorf("flink: BashJavaUtils dynamic properties %s: want -D key=value pairs", shown(results[1]))
			}
			p.Dynamic = append(p.Dynamic, fields[i+1])
			i++
		}
	}
	return p, nil
}

// JavaOptions returns the JVM options the configuration gives role, as Flink's scripts assemble
// them: env.java.default-opts.all, env.java.opts.all (or its deprecated name env.java.opts), then
// env.java.opts.jobmanager or env.java.opts.taskmanager; each split at whitespace.
func JavaOptions(c *Config, role Role) []string {
	var opts []string
	add := func(k string) bool {
		v, ok := c.Get(k)
		opts = append(opts, strings.Fields(v)...)
		return ok
	}
	add(KeyJavaDefaultOpts)
	if !add(KeyJavaOptsAll) {
		add(KeyJavaOptsLegacy)
	}
	if role == RoleTaskManager {
		add(KeyJavaOptsTM)
	} else {
		add(keyJavaOptsJM)
	}
	return opts
}

// buildCommand assembles the command line from the configuration configure returned, the conf directory it
// was written to and BashJavaUtils' parameters. It reads nothing from disk.
func buildCommand(role Role, s Spec, conf *Config, confDir string, params ResourceParams) (*Process, error) {
	entry := taskManagerEntryPoint
	logName := logFileName(role)
	switch role {
	case RoleApplication:
		entry = applicationEntryPoint
	case RoleSession:
		entry = sessionEntryPoint
	case RoleTaskManager:
	default:
		return nil, fmt.Errorf("flink: role %s: valid roles are %s, %s and %s", shown(string(role)), RoleApplication, RoleSession, RoleTaskManager)
	}
	logFile := filepath.Join(s.LogDir, logName)
	l4j := filepath.Join(confDir, "log4j.properties")
	cp, err := classpath(s)
	if err != nil {
		return nil, err
	}
	argv := []string{s.java()}
	argv = append(argv, params.JVM...)
	argv = append(argv, s.CDS.Flags()...)
	argv = append(argv, s.JIT...)
	argv = append(argv, JavaOptions(conf, role)...)
	argv = append(argv, "-Dlog.file="+logFile, "-Dlog4j.configuration=file:"+l4j, "-Dlog4j.configurationFile=file:"+l4j,
		"-classpath", cp, entry, "--configDir", confDir)
	for _, d := range params.Dynamic {
		argv = append(argv, "-D", d)
	}
	if role == RoleApplication {
		if s.MainClass != "" {
			argv = append(argv, "--job-classname", s.MainClass)
		}
		argv = append(argv, s.Args...)
	}
	env := []string{
		"FLINK_HOME=" + s.Home.Dir,
		"FLINK_CONF_DIR=" + confDir,
		"FLINK_LIB_DIR=" + filepath.Join(s.Home.Dir, "lib"),
		"FLINK_BIN_DIR=" + filepath.Join(s.Home.Dir, "bin"),
		// The GPU driver is loaded only as a plugin, from here; on the classpath it yields no GPUs.
		"FLINK_PLUGINS_DIR=" + s.Home.PluginsDir,
		"FLINK_LOG_DIR=" + s.LogDir,
	}
	if s.JavaHome != "" {
		// What the JVM's own children (and Flink's scripts, should a job run one) take for the JDK.
		env = append(env, "JAVA_HOME="+s.JavaHome)
	}
	sort.Strings(env)
	return &Process{Role: role, Argv: argv, Env: env, ConfDir: confDir, LogFile: logFile, Conf: conf}, nil
}

// classpath is the home's jars with the user's, then the Hadoop classpath, then ExtraClasspath.
func classpath(s Spec) (string, error) {
	cp := s.Home.Classpath(s.UserJars)
	if s.CDS.On() {
		// The home's jars relative to the working directory, then the user's (cds.go).
		base, err := filepath.Abs(s.Dir)
		if err == nil {
			cp, err = s.Home.SharedClasspath(base, s.UserJars)
		}
		if err != nil {
			return "", err
		}
	}
	if len(s.HadoopClasspath) > 0 {
		cp += string(os.PathListSeparator) + strings.Join(s.HadoopClasspath, string(os.PathListSeparator))
	}
	if len(s.ExtraClasspath) > 0 {
		cp += string(os.PathListSeparator) + strings.Join(s.ExtraClasspath, string(os.PathListSeparator))
	}
	return cp, nil
}
