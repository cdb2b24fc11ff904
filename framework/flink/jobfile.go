package flink

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/jobfile"
)

// This file reads the [flink] table: a Flink application or session cluster whose JobManager is the
// AM's driver and whose TaskExecutors are Flink TaskManagers (docs/flink.md#the-flink-table).

var flinkKeys = []string{"home", "provided", "java-home", "jar", "main-class", "args", "wait-for-jobmanager", "class-data-sharing", keyJITLateC2, "restore", "taskmanagers", "checkpoint-on-preemption", keyHadoopClasspath, "web-submit", "internal-tls", keyRESTWithoutClientAuth, keyJobManagerRestarts, keyJobManagerRestartWindow, keyProgressTimeout, keyProgressRestart, keySavepointInterval, keySavepointsKept, keyLogMaxSize, keyLogMaxFiles, keyTokenRefresh, keyAutoscale, keyAutoscaleUtilisation, keyAutoscaleBand, keyAutoscaleMin, keyAutoscaleMax, keyAutoscaleWindow, keyAutoscaleStabilise, keyAutoscaleGrace, keyAutoscaleMaxStep, keyAutoscaleCatchUp, "config"}

// keyResourceID is Flink's key of a TaskManager's id, which flink-taskmanager sets to its container's.
const keyResourceID = "taskmanager.resource-id"

// flinkKeysSetByYarnAM are the Flink keys yarn-am sets itself (docs/flink.md#addresses).
var flinkKeysSetByYarnAM = map[string]string{
	"jobmanager.rpc.address":                   "the AM's host",
	"rest.address":                             "the AM's host",
	"execution.shutdown-on-application-finish": "false, so the AM can read the job's outcome",
	"taskmanager.host":                         "the TaskManager's host",
	keyResourceID:                              "the TaskManager's YARN container id, so the AM knows which TaskManager is idle",
	// The process sizes are the containers' (docs/flink.md#memory): a value here would be replaced
	// without a word, so it is refused with the key to set instead.
	"taskmanager.memory.process.size": "[taskexecutor] memory, the TaskManager's container; set that instead",
	"jobmanager.memory.process.size":  "[am] memory less the AM's share; set am.memory instead",
	// The REST API is closed to all but the AM (docs/flink.md#who-can-reach-the-jobmanager).
	keyWebSubmit:        "from [flink] web-submit, off unless a session cluster turns it on; set that instead",
	"rest.bind-address": "0.0.0.0, with mutual TLS: only the AM's client certificate is answered",
}

// tableReader reads the [flink] table (jobfile.TableReader).
type tableReader struct{}

// ReadTable reads the [flink] table into a *flinkSpec and sizes the job for it: the AM's memory holds the
// JobManager (minAMMemoryMB at least, the default), and the launcher leaves the GPU visibility
// variables unset (contract.EnvDeviceEnv): Flink's GPU driver hands the indexes to the operators.
func (tableReader) ReadTable(t *jobfile.Table, j *jobfile.Job) any {
	t.OnlyKeys(flinkKeys)
	f := &flinkSpec{Config: map[string]string{}}
	f.Home, _ = t.String("home")
	f.Provided, _ = t.String("provided")
	f.Jar, _ = t.String("jar")
	f.MainClass, _ = t.String("main-class")
	f.Args = t.Strings("args")
	f.WaitForJobManager = waitSameHost
	if v, set := t.String("wait-for-jobmanager"); set {
		if !slices.Contains(waitValues, v) {
			t.Problem("flink.wait-for-jobmanager = %q: want one of %s (which TaskManagers start their JVM only once the JobManager has started)", bounded(v), strings.Join(waitValues, ", "))
		}
		f.WaitForJobManager = v
	}
	f.TaskManagersMode = readTaskManagersMode(t, j)
	f.OnPreemption = preemptCheckpoint
	if v, set := t.String("checkpoint-on-preemption"); set {
		if !slices.Contains(preemptValues, v) {
			t.Problem("flink.checkpoint-on-preemption = %q: want one of %s (what the AM asks of the job when YARN warns that it will preempt a TaskManager)", bounded(v), strings.Join(preemptValues, ", "))
		}
		f.OnPreemption = v
	}
	readHadoopClasspath(t, f)
	if v, set := t.Bool("web-submit"); set {
		f.WebSubmit = v
		if f.Jar != "" {
			t.Problem("flink.web-submit = %v: an application cluster (flink.jar) runs its own job and takes no other; leave web-submit out, or drop jar for a session cluster", v)
		}
	}
	f.InternalTLS = true
	if v, set := t.Bool("internal-tls"); set {
		f.InternalTLS = v
	}
	if v, set := t.Bool(keyRESTWithoutClientAuth); set {
		f.RESTWithoutClientAuth = v
	}
	readRestartPolicy(t, f)
	readProgress(t, f)
	readSavepointSchedule(t, f)
	readTokenRefresh(t, f)
	readAutoscale(t, f)
	f.ClassDataSharing = true
	if v, set := t.Bool("class-data-sharing"); set {
		f.ClassDataSharing = v
	}
	f.JITLateC2 = true
	if v, set := t.Bool(keyJITLateC2); set {
		f.JITLateC2 = v
	}
	switch {
	case f.Home != "" && f.Provided != "":
		t.Problem("flink.home = %q and flink.provided = %q: give one: home (a Flink distribution on this machine, shipped by submit) or provided (an hdfs:// archive of one)", bounded(f.Home), bounded(f.Provided))
	case f.Home == "" && f.Provided == "":
		t.Problem("[flink] needs home (a Flink distribution on this machine: lib/, plugins/, conf/, bin/bash-java-utils.jar) or provided (an hdfs:// archive of one)")
	case f.Provided != "":
		if !strings.HasPrefix(f.Provided, "hdfs://") || !jobfile.HasArchiveSuffix(f.Provided) || strings.HasSuffix(f.Provided, ".jar") {
			t.Problem("flink.provided = %q: want the hdfs:// URI of an archive of a Flink home (%s), e.g. \"hdfs:///flink/flink-1.20.5.tar\"", bounded(f.Provided), strings.Join(jobfile.ArchiveSuffixes()[:4], ", "))
		} else if err := jobfile.CheckRemoteURI(f.Provided); err != nil {
			// The checks files and archives get: a bad port or an empty path fails only at localisation.
			t.Problem("flink.provided: %v", err)
		}
	case !t.Staged():
		f.Home = jobfile.AbsAgainst(t.Dir(), expandTilde(f.Home))
		if st, err := os.Stat(f.Home); err != nil || !st.IsDir() {
			t.Problem("flink.home = %q: no such directory; %s", bounded(f.Home), installHint)
			break
		}
		for _, need := range []string{"lib", "plugins", filepath.Join("bin", "bash-java-utils.jar")} {
			if _, err := os.Stat(filepath.Join(f.Home, need)); err != nil {
				t.Problem("flink.home = %q: %s is missing; a Flink home has lib/ (flink-dist), plugins/ and bin/bash-java-utils.jar (%s)", bounded(f.Home), need, installHint)
				break
			}
		}
	}
	readJavaHome(t, f)
	readLogRoll(t, f)
	checkHomeLog4j(t, f)
	if t.Has("main-class") && f.MainClass == "" {
		t.Problem("flink.main-class = \"\": give the job's main class, or leave main-class out when the jar's manifest names it")
	}
	if f.Jar == "" {
		if t.Has("jar") {
			t.Problem("flink.jar = \"\": give the job's jar, or leave jar out for a session cluster")
		}
		if f.MainClass != "" || len(f.Args) > 0 {
			t.Problem("flink.main-class and flink.args need flink.jar (a session cluster runs no program of its own)")
		}
	} else if t.Staged() {
		f.Jar = filepath.Base(f.Jar)
	} else {
		f.Jar = jobfile.AbsAgainst(t.Dir(), f.Jar)
		if fi, err := os.Stat(f.Jar); err != nil || !fi.Mode().IsRegular() {
			t.Problem("flink.jar = %q: not a readable file on this machine", bounded(f.Jar))
		} else if jobfile.ReservedAlias(filepath.Base(f.Jar)) != "" || filepath.Base(f.Jar) == homeAlias {
			t.Problem("flink.jar = %q: its name is taken in the containers; rename the jar", bounded(f.Jar))
		}
	}
	cfg := t.Sub("config")
	for _, k := range slices.Sorted(maps.Keys(cfg)) {
		v, ok := flinkValue(cfg[k])
		if !ok {
			t.Problem("flink.config.%s = %s: want a string, number or boolean (Flink reads every value as text), not %s", k, jobfile.Show(cfg[k]), jobfile.TypeName(cfg[k]))
			continue
		}
		if why, taken := flinkKeysSetByYarnAM[k]; taken {
			if v, byD := t.Defined(k); byD {
				t.Problem("-D %s=%s: %q is set by yarn-am (%s); leave it out", k, bounded(v), k, why)
			} else {
				t.Problem("flink.config: %q is set by yarn-am (%s); remove it", k, why)
			}
			continue
		}
		f.Config[k] = v
	}
	if f.TaskManagersMode == taskManagersDemand {
		if v, set := f.Config[keyTaskManagerTimeout]; set {
			if _, err := flinkDuration(v); err != nil {
				t.Problem("%s = %q: %v; want a duration such as \"30 s\" or \"5 s\": [flink] taskmanagers = \"demand\" keeps a TaskManager whose slots Flink freed this long before it releases it (unset: at once)", keyTaskManagerTimeout, bounded(v), err)
			}
		}
	}
	if v, set := t.String("restore"); set {
		if err := checkRestore(v); err != nil {
			t.Problem("flink.restore = %q: %v", bounded(v), err)
		} else if prev, twice := f.Config[keyRestore]; twice {
			t.Problem("flink.restore = %q and %s = %q: give one (restore sets that Flink key)", bounded(v), keyRestore, bounded(prev))
		} else if prev, over := f.Config[keyStateRecoveryPath]; over {
			// Flink 1.20 and 2.x read the current name before the deprecated one restore sets: the
			// restore would be ignored without a word.
			t.Problem("flink.restore = %q and %s = %q: give one (Flink reads %s before %s, which restore sets, so the restore would be ignored)",
				bounded(v), keyStateRecoveryPath, bounded(prev), keyStateRecoveryPath, keyRestore)
		} else {
			f.Config[keyRestore] = v
		}
	}
	for k, v := range t.TopLevel("external-resource") {
		if s, ok := flinkValue(v); ok {
			f.Config[k] = s // malformed ones are ResourceKeys' to report
		}
	}
	if !t.AMMemorySet() {
		j.AM.MemoryMB = minAMMemoryMB
	} else if j.AM.MemoryMB < minAMMemoryMB {
		t.Problem("am.memory = %d: a [flink] job's AM runs the JobManager too; give at least %d MiB (%d for the AM, the rest is the JobManager's process size)", j.AM.MemoryMB, minAMMemoryMB, amShareMB)
	}
	j.TaskExecutor.Env[contract.EnvDeviceEnv] = contract.DeviceEnvOff
	// A later AM attempt runs a new JobManager at new addresses: the earlier attempt's TaskManagers
	// could not follow it, so YARN stops them with it and the new attempt starts its own
	// (docs/flink.md#when-the-applicationmaster-is-lost).
	if v, set := t.TopLevel("keep-containers")["keep-containers"]; set && v == true {
		t.Problem("keep-containers = true: a [flink] job's TaskManagers cannot follow a later AM attempt's JobManager (it has new addresses); leave keep-containers out or set it to false: YARN stops them with the AM and the new attempt starts new ones")
	}
	j.KeepContainers = false
	return f
}

// installHint says where make flink-dist puts a Flink home (testdata/flink/flink.mk).
const installHint = "make flink-dist installs Flink 2.3.0 in ~/.cache/yarn-am/flink-2.3.0 and 1.20.5 in ~/.cache/yarn-am/flink-1.20.5"

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

// checkRestore says what is wrong with a [flink] restore path: the savepoint (or retained
// checkpoint) directory that yarn-am stop printed, as a URI (file:///tmp/sp/savepoint-...) or an
// absolute path, on a file system the JobManager reads.
func checkRestore(v string) error {
	const want = "want the savepoint's path as yarn-am stop printed it, a URI like file:///tmp/savepoints/savepoint-0a1b2c-0123456789ab or an absolute path"
	switch {
	case strings.TrimSpace(v) != v || v == "":
		return fmt.Errorf("%s, without spaces around it", want)
	case strings.ContainsAny(v, "\n\r\x00"):
		return fmt.Errorf("a line break or NUL in a path; %s", want)
	case strings.HasPrefix(v, "/"):
		return nil
	}
	scheme, rest, ok := strings.Cut(v, "://")
	if !ok || scheme == "" || strings.ContainsAny(scheme, "/:") {
		// file:/tmp/x is how Flink itself writes a local path: it is a URI too.
		if s, r, ok := strings.Cut(v, ":/"); ok && s != "" && !strings.Contains(s, "/") && r != "" {
			return nil
		}
		return fmt.Errorf("not a URI or an absolute path; %s", want)
	}
	if rest == "" || rest == "/" {
		return fmt.Errorf("no path after %s://; %s", scheme, want)
	}
	return nil
}
