package flink

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/yarn-am/yarn-am/framework/flink/flinkdist"
)

// Where a Flink process keeps its files (docs/flink.md#private-directories). Left to Flink's
// defaults, a standalone process puts them in the JVM's java.io.tmpdir, the node's shared /tmp: its
// working directory /tmp/tm_<container id> (a name anyone can predict, and a directory or link
// someone else planted there first is taken as it is, with the job's jars in its blob store and its
// local state), the blob stores, the spill and shuffle files, the web server's upload directory; and
// what a killed JVM leaves behind stays there (45 tm_container_* directories after one test run).
// Flink's own YARN mode points io.tmp.dirs at the container's LOCAL_DIRS, which YARN creates for the
// application's user alone and removes when the application ends; yarn-am does the same, and sets
// the process's working directory there too (TestFlinkInternalTLS checks /tmp on the mini cluster).

// Flink's keys of a process's temporary and working directories (CoreOptions, ClusterOptions: the
// same in Flink 1.20 and 2.x).
const (
	keyTmpDirs         = "io.tmp.dirs"
	keyWorkingDir      = "process.working-dir"
	keyJMWorkingDir    = "process.jobmanager.working-dir"
	keyTMWorkingDir    = "process.taskmanager.working-dir"
	javaTmpDirProperty = "-Djava.io.tmpdir="
)

// containerTmp is the JVM's java.io.tmpdir, in the container's working directory (as YARN's own
// MapReduce tasks have it).
const containerTmp = "tmp"

// privateDirs points the temporary and working directories of a Flink process of role, running in
// the container whose working directory is dir, into the container's own directories: io.tmp.dirs to
// YARN's LOCAL_DIRS (getenv), the role's working directory to the first of them, and the JVM's
// java.io.tmpdir to dir/tmp (0700), for what Flink and its libraries put there by themselves (the
// web server's uploads, native libraries). A key the job or the home's configuration sets is kept:
// its directories are the user's choice (docs/flink.md#private-directories). It returns what it set,
// for the process's stdout.
func privateDirs(conf *flinkdist.Config, role flinkdist.Role, dir string, getenv func(string) string) (string, error) {
	var local []string
	for _, d := range strings.Split(getenv("LOCAL_DIRS"), ",") {
		if d = strings.TrimSpace(d); d != "" {
			if !filepath.IsAbs(d) {
				return "", fmt.Errorf("flink: LOCAL_DIRS holds %q, not an absolute path: YARN sets it to the application's local directories", d)
			}
			local = append(local, d)
		}
	}
	if len(local) == 0 {
		return "", fmt.Errorf("flink: LOCAL_DIRS is not set: not in a YARN container, which has its own directories for Flink's temporary files")
	}
	var set []string
	if v, ok := conf.Get(keyTmpDirs); !ok || strings.TrimSpace(v) == "" {
		conf.Set(keyTmpDirs, strings.Join(local, ","))
		set = append(set, keyTmpDirs+"="+strings.Join(local, ","))
	}
	roleKey := keyJMWorkingDir
	if role == flinkdist.RoleTaskManager {
		roleKey = keyTMWorkingDir
	}
	_, general := conf.Get(keyWorkingDir)
	if _, own := conf.Get(roleKey); !own && !general {
		conf.Set(roleKey, local[0])
		set = append(set, roleKey+"="+local[0])
	}
	if !hasJavaTmpDir(conf, role) {
		tmp := filepath.Join(dir, containerTmp)
		if err := os.MkdirAll(tmp, 0o700); err != nil {
			return "", fmt.Errorf("flink: the JVM's temporary directory: %w", err)
		}
		if err := os.Chmod(tmp, 0o700); err != nil {
			return "", fmt.Errorf("flink: the JVM's temporary directory: %w", err)
		}
		opts, _ := conf.Get(flinkdist.KeyJavaDefaultOpts)
		// First: a -Djava.io.tmpdir of the job's own, later on the command line, wins.
		conf.Set(flinkdist.KeyJavaDefaultOpts, strings.TrimSpace(javaTmpDirProperty+tmp+" "+opts))
		set = append(set, "java.io.tmpdir="+tmp)
	}
	if len(set) == 0 {
		return "its temporary and working directories are the job's own (" + keyTmpDirs + ", " + roleKey + ", java.io.tmpdir)", nil
	}
	return "temporary and working directories in the container's own: " + strings.Join(set, ", "), nil
}

// hasJavaTmpDir reports whether the JVM options the configuration gives role set java.io.tmpdir.
func hasJavaTmpDir(conf *flinkdist.Config, role flinkdist.Role) bool {
	for _, o := range flinkdist.JavaOptions(conf, role) {
		if strings.HasPrefix(o, javaTmpDirProperty) {
			return true
		}
	}
	return false
}
