package jobfile

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/yarn-am/yarn-am/container/contract"
)

// This file reads the [flink] table: a Flink application or session cluster whose JobManager is the
// AM's driver and whose TaskExecutors are Flink TaskManagers (docs/flink.md#the-flink-table).

// FlinkSpec is the [flink] table.
type FlinkSpec struct {
	// Home is the Flink distribution on the client (made absolute): staged by submit as the archive
	// FlinkHomeAlias. "" when Provided names it.
	Home string
	// Provided is an hdfs:// URI of an archive (.tar, .tar.gz, .tgz, .zip) that holds a Flink home,
	// localised as it is, never uploaded.
	Provided string
	// Jar is the job's jar: a local path (made absolute) as read on the client, its base name as read
	// in a container (StagedJob), where it is localised under that name. "" = a session cluster.
	Jar       string
	MainClass string
	Args      []string
	// Config is the job file's Flink keys: [flink.config] and the top-level external-resource keys,
	// as strings, layered over the home's configuration (docs/flink.md#configuration).
	Config map[string]string
	// Defines are the -D Flink keys (key=value, in order; already in Config): the layer over the
	// job file's that the AM hands to the JobManager and the TaskManagers, whose staged job.toml
	// lacks them (contract.EnvFlinkDefines, docs/flink.md#configuration).
	Defines []string
	// WaitForJobManager is which TaskManagers start their JVM only once the JobManager has started
	// (docs/flink.md#taskmanagers-on-the-jobmanagers-host): FlinkWaitSameHost (the default),
	// FlinkWaitAlways or FlinkWaitNever.
	WaitForJobManager string
}

// The values of [flink] wait-for-jobmanager.
const (
	FlinkWaitSameHost = "same-host" // the TaskManagers on the JobManager's host: they share its CPUs
	FlinkWaitAlways   = "always"
	FlinkWaitNever    = "never"
)

// FlinkWaitValues are the valid values of [flink] wait-for-jobmanager, the default first.
var FlinkWaitValues = []string{FlinkWaitSameHost, FlinkWaitAlways, FlinkWaitNever}

// Names in a Flink job's containers.
const (
	// FlinkHomeAlias is the directory the Flink home is localised as, in the AM's and every
	// TaskExecutor's working directory.
	FlinkHomeAlias = "flink"
	// FlinkTaskManagerCommand is every TaskExecutor's command in a Flink job.
	FlinkTaskManagerCommand = "./" + contract.StagedBinary + " flink-taskmanager"
	// FlinkJobManagerCommand is the AM's driver in a Flink job.
	FlinkJobManagerCommand = "./" + contract.StagedBinary + " flink-jobmanager"
	// FlinkAMShareMB is what the AM keeps of [am] memory for itself; the JobManager's process size
	// is the rest.
	FlinkAMShareMB = 256
	// FlinkMinAMMemoryMB is the smallest [am] memory of a Flink job: a 768 MiB JobManager
	// (docs/flink.md#memory) and the AM's share.
	FlinkMinAMMemoryMB = 768 + FlinkAMShareMB
)

var flinkKeys = []string{"home", "provided", "jar", "main-class", "args", "wait-for-jobmanager", "config"}

// flinkKeysSetByYarnAM are the Flink keys yarn-am sets itself (docs/flink.md#addresses).
var flinkKeysSetByYarnAM = map[string]string{
	"jobmanager.rpc.address": "the AM's host",
	"jobmanager.rpc.port":    "a free port the AM picks",
	"rest.address":           "the AM's host",
	"rest.port":              "a free port the AM picks",
	"execution.shutdown-on-application-finish": "false, so the AM can read the job's outcome",
	"taskmanager.host":                         "the TaskManager's host",
	// The process sizes are the containers' (docs/flink.md#memory): a value here would be replaced
	// without a word, so it is refused with the key to set instead.
	"taskmanager.memory.process.size": "[taskexecutor] memory, the TaskManager's container; set that instead",
	"jobmanager.memory.process.size":  "[am] memory less the AM's share; set am.memory instead",
}

// flink reads the [flink] table; nil when the job has none. staged: the job as read in a container.
func (r reader) flink(doc map[string]any, dir string, staged bool, add func(string, ...any)) *FlinkSpec {
	if _, ok := doc["flink"]; !ok {
		return nil
	}
	t := r.table(doc, "flink", "flink")
	full := make([]string, len(flinkKeys))
	for i, k := range flinkKeys {
		full[i] = "flink." + k
	}
	for _, k := range slices.Sorted(maps.Keys(t)) {
		if !slices.Contains(flinkKeys, k) {
			add("unknown key %q%s; valid keys of [flink] are %s", "flink."+k, didYouMean("flink."+k, full), strings.Join(flinkKeys, ", "))
		}
	}
	f := &FlinkSpec{Config: map[string]string{}}
	f.Home, _ = r.str(t, "home", "flink.home")
	f.Provided, _ = r.str(t, "provided", "flink.provided")
	f.Jar, _ = r.str(t, "jar", "flink.jar")
	f.MainClass, _ = r.str(t, "main-class", "flink.main-class")
	f.Args = r.strings(t, "args", "flink.args")
	f.WaitForJobManager = FlinkWaitSameHost
	if v, set := r.str(t, "wait-for-jobmanager", "flink.wait-for-jobmanager"); set {
		if !slices.Contains(FlinkWaitValues, v) {
			add("flink.wait-for-jobmanager = %q: want one of %s (which TaskManagers start their JVM only once the JobManager has started)", bounded(v), strings.Join(FlinkWaitValues, ", "))
		}
		f.WaitForJobManager = v
	}
	switch {
	case f.Home != "" && f.Provided != "":
		add("flink.home = %q and flink.provided = %q: give one: home (a Flink distribution on this machine, shipped by submit) or provided (an hdfs:// archive of one)", bounded(f.Home), bounded(f.Provided))
	case f.Home == "" && f.Provided == "":
		add("[flink] needs home (a Flink distribution on this machine: lib/, plugins/, conf/, bin/bash-java-utils.jar) or provided (an hdfs:// archive of one)")
	case f.Provided != "":
		if !strings.HasPrefix(f.Provided, "hdfs://") || !hasArchiveSuffix(f.Provided) || strings.HasSuffix(f.Provided, ".jar") {
			add("flink.provided = %q: want the hdfs:// URI of an archive of a Flink home (%s), e.g. \"hdfs:///flink/flink-1.20.5.tar\"", bounded(f.Provided), strings.Join(archiveSuffixes[:4], ", "))
		}
	case !staged:
		f.Home = absAgainst(dir, f.Home)
		for _, need := range []string{"lib", "plugins", filepath.Join("bin", "bash-java-utils.jar")} {
			if _, err := os.Stat(filepath.Join(f.Home, need)); err != nil {
				add("flink.home = %q: %s is missing; a Flink home has lib/ (flink-dist), plugins/ and bin/bash-java-utils.jar (make flink-dist installs one)", bounded(f.Home), need)
				break
			}
		}
	}
	if _, set := t["main-class"]; set && f.MainClass == "" {
		add("flink.main-class = \"\": give the job's main class, or leave main-class out when the jar's manifest names it")
	}
	if f.Jar == "" {
		if _, set := t["jar"]; set {
			add("flink.jar = \"\": give the job's jar, or leave jar out for a session cluster")
		}
		if f.MainClass != "" || len(f.Args) > 0 {
			add("flink.main-class and flink.args need flink.jar (a session cluster runs no program of its own)")
		}
	} else if staged {
		f.Jar = filepath.Base(f.Jar)
	} else {
		f.Jar = absAgainst(dir, f.Jar)
		if fi, err := os.Stat(f.Jar); err != nil || !fi.Mode().IsRegular() {
			add("flink.jar = %q: not a readable file on this machine", bounded(f.Jar))
		} else if ReservedAlias(filepath.Base(f.Jar)) != "" || filepath.Base(f.Jar) == FlinkHomeAlias {
			add("flink.jar = %q: its name is taken in the containers; rename the jar", bounded(f.Jar))
		}
	}
	cfg := r.table(t, "config", "flink.config")
	for _, k := range slices.Sorted(maps.Keys(cfg)) {
		v, ok := flinkValue(cfg[k])
		if !ok {
			add("flink.config.%s = %s: want a string, number or boolean (Flink reads every value as text), not %s", k, show(cfg[k]), typeName(cfg[k]))
			continue
		}
		if why, taken := flinkKeysSetByYarnAM[k]; taken {
			add("flink.config: %q is set by yarn-am (%s); remove it", k, why)
			continue
		}
		f.Config[k] = v
	}
	for k, v := range doc {
		if strings.HasPrefix(k, "external-resource") {
			if s, ok := flinkValue(v); ok {
				f.Config[k] = s // malformed ones are ResourceKeys' to report
			}
		}
	}
	return f
}

// flinkValue renders a TOML scalar as the text Flink reads.
func flinkValue(v any) (string, bool) {
	switch t := v.(type) {
	case string:
		return t, true
	case int64:
		return strconv.FormatInt(t, 10), true
	case float64:
		return strconv.FormatFloat(t, 'g', -1, 64), true
	case bool:
		return strconv.FormatBool(t), true
	}
	return "", false
}

// flinkDefaults sizes a Flink job's AM and marks its TaskExecutors' environment: the AM's memory
// holds the JobManager (FlinkMinAMMemoryMB at least, the default), and the launcher leaves the GPU
// visibility variables unset (contract.EnvDeviceEnv).
func (j *Job) flinkDefaults(amT map[string]any, add func(string, ...any)) {
	if _, set := amT["memory"]; !set {
		j.AM.MemoryMB = FlinkMinAMMemoryMB
	} else if j.AM.MemoryMB < FlinkMinAMMemoryMB {
		add("am.memory = %d: a [flink] job's AM runs the JobManager too; give at least %d MiB (%d for the AM, the rest is the JobManager's process size)", j.AM.MemoryMB, FlinkMinAMMemoryMB, FlinkAMShareMB)
	}
	j.TaskExecutor.Env[contract.EnvDeviceEnv] = contract.DeviceEnvOff
}
