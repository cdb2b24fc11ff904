package flink

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/container/client"
	"github.com/yarn-am/yarn-am/framework/flink/flinkdist"
)

// toFlink2 makes checkHome's home in dir/flink a Flink 2.3.0 home (flink-dist's name gives the
// version).
func toFlink2(t *testing.T, dir string) {
	t.Helper()
	lib := filepath.Join(dir, "flink", "lib")
	require.NoError(t, os.Rename(filepath.Join(lib, "flink-dist-1.20.5.jar"), filepath.Join(lib, "flink-dist-2.3.0.jar")))
}

func warnings(lj *client.LoadedJob) string {
	var all []string
	for _, w := range lj.Warnings {
		all = append(all, w.Message)
	}
	return strings.Join(all, "\n")
}

// A key Flink 2 no longer reads is a warning for a Flink 1.20 home, which reads it, and refused for a
// Flink 2 home, naming where it was set and what replaces it; a Flink 2 home's legacy
// flink-conf.yaml beside config.yaml is reported as ignored (docs/flink.md#flink-2).
func TestCheckAppliesFlink2Rules(t *testing.T) {
	t.Setenv("YARN_AM_CACHE", t.TempDir())
	p := writeJob(t, checkJob+"[flink.config]\n\"taskmanager.heap.size\" = \"1g\"\n")
	dir := filepath.Dir(p)
	checkHome(t, dir, "parallelism.default: 1\n", "")
	lj, err := client.LoadJob(p, client.JobOptions{Defines: []string{"state.backend.async=false"}})
	require.NoError(t, err, "Flink 1.20 reads them")
	w := warnings(lj)
	assert.Contains(t, w, `"taskmanager.heap.size" = "1g" (from the job file's [flink.config]) works with Flink 1.20.5 but Flink 2.0 removed it`)
	assert.Contains(t, w, `"state.backend.async" = "false" (from -D state.backend.async=false) works with Flink 1.20.5`)

	toFlink2(t, dir)
	_, err = client.LoadJob(p, client.JobOptions{Defines: []string{"state.backend.async=false", "state.backend=hashmap"}})
	require.Error(t, err)
	for _, want := range []string{`"taskmanager.heap.size" = "1g" (from the job file's [flink.config]): Flink 2.3.0 does not read it`, "taskexecutor.memory",
		`"state.backend.async" = "false" (from -D state.backend.async=false): Flink 2.3.0 does not read it`} {
		assert.Contains(t, err.Error(), want)
	}
	assert.NotContains(t, err.Error(), `"state.backend"`, "Flink 2.3 still reads state.backend (state.backend.type's deprecated name)")

	p = writeJob(t, checkJob)
	dir = filepath.Dir(p)
	checkHome(t, dir, "parallelism.default: 1\n", "")
	toFlink2(t, dir)
	lj, err = client.LoadJob(p, client.JobOptions{})
	require.NoError(t, err)
	assert.NotContains(t, warnings(lj), "flink-conf.yaml")
	legacy := filepath.Join(dir, "flink", "conf", "flink-conf.yaml")
	require.NoError(t, os.WriteFile(legacy, []byte("parallelism.default: 8\n"), 0o644))
	lj, err = client.LoadJob(p, client.JobOptions{})
	require.NoError(t, err, "the legacy file is ignored, as Flink 2 ignores it: its parallelism of 8 is not checked")
	assert.Contains(t, warnings(lj), legacy+" is ignored: Flink 2.3.0 reads only "+filepath.Join(dir, "flink", "conf", "config.yaml"))

	require.NoError(t, os.Remove(filepath.Join(dir, "flink", "conf", "config.yaml")))
	_, err = client.LoadJob(p, client.JobOptions{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "flink.home: flink: the home's "+legacy+" is the legacy configuration file, which Flink 2.3.0 no longer reads")
}

// A provided home is first read in the container: a Flink 2 home's removed key fails the JobManager
// and every TaskManager there, naming the key, rather than running without it.
func TestFlinkSetupRefusesRemovedKeysOfAFlink2Home(t *testing.T) {
	dir := inProvidedHome(t, "2.3.0", "taskmanager:\n  network:\n    numberOfBuffers: 2048\n")
	_, err := loadFlinkSetup()
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"taskmanager.network.numberOfBuffers" = "2048": Flink 2.3.0 does not read it`)
	assert.Contains(t, err.Error(), `use "taskmanager.memory.network.min" instead`)

	require.NoError(t, os.WriteFile(filepath.Join(dir, "flink/conf/config.yaml"), []byte("taskmanager.memory.network.min: 64m\n"), 0o644))
	_, err = loadFlinkSetup()
	require.NoError(t, err)
}

// check warns that a java-home older than Java 11 will not run a Flink 2 home (Flink 2 dropped Java 8).
func TestCheckWarnsOfJava8ForFlink2(t *testing.T) {
	t.Setenv("YARN_AM_CACHE", t.TempDir())
	p := writeJob(t, strings.Replace(checkJob, `home = "flink"`, "home = \"flink\"\njava-home = \"jdk\"", 1))
	dir := filepath.Dir(p)
	checkHome(t, dir, "", "")
	fakeJDK(t, filepath.Join(dir, "jdk"), "1.8.0_402", "JAVA_VERSION=\"1.8.0_402\"\n")
	lj, err := client.LoadJob(p, client.JobOptions{})
	require.NoError(t, err)
	assert.NotContains(t, warnings(lj), "java-home", "Flink 1.20 runs on Java 8")

	toFlink2(t, dir)
	lj, err = client.LoadJob(p, client.JobOptions{})
	require.NoError(t, err)
	assert.Contains(t, warnings(lj), `is Java 8 ("1.8.0_402", from `)
	assert.Contains(t, warnings(lj), "Flink 2.3.0 needs Java 11 or later")
}

// No key that yarn-am sets or reads for the JobManager and the TaskManagers is one Flink 2 no longer
// reads: every string constant of this package's and flinkdist's code is checked against the table
// (flinkdist.RemovedInFlink2). resources.go names the legacy memory keys only to leave a configuration
// that sets them to Flink's own calculator; removedkeys.go is the table.
func TestYarnAMSetsNoKeyFlink2Removed(t *testing.T) {
	allowed := map[string]bool{"removedkeys.go": true, "resources.go": true}
	checked := 0
	for _, dir := range []string{".", "flinkdist"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		require.NoError(t, err)
		for _, file := range files {
			if strings.HasSuffix(file, "_test.go") || allowed[filepath.Base(file)] {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
			require.NoError(t, err)
			ast.Inspect(f, func(n ast.Node) bool {
				lit, ok := n.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				s, err := strconv.Unquote(lit.Value)
				if err != nil {
					return true
				}
				checked++
				if _, removed := flinkdist.RemovedInFlink2(s); removed {
					t.Errorf("%s: %q is a key Flink 2 no longer reads", file, s)
				}
				return true
			})
		}
	}
	assert.Greater(t, checked, 500, "string constants checked")
}
