package flink

import (
	"archive/zip"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/container/client"
)

// classWithStrings is a class file whose constant pool holds strs as string constants: what a
// *Options class is to the key scan (flinkdist.Home.KnownKeys).
func classWithStrings(strs ...string) []byte {
	var pool []byte
	count := uint16(1)
	for _, s := range strs {
		pool = append(pool, 1) // CONSTANT_Utf8
		pool = binary.BigEndian.AppendUint16(pool, uint16(len(s)))
		pool = append(pool, s...)
		pool = append(pool, 8) // CONSTANT_String of it
		pool = binary.BigEndian.AppendUint16(pool, count)
		count += 2
	}
	b := binary.BigEndian.AppendUint32(nil, 0xCAFEBABE)
	b = append(b, 0, 0, 0, 61)
	b = binary.BigEndian.AppendUint16(b, count)
	b = append(b, pool...)
	return append(b, 0, 0x21, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
}

// writeZip writes a jar with the given entries.
func writeZip(t *testing.T, path string, entries map[string][]byte) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	f, err := os.Create(path)
	require.NoError(t, err)
	zw := zip.NewWriter(f)
	for name, body := range entries {
		w, err := zw.Create(name)
		require.NoError(t, err)
		_, err = w.Write(body)
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
	require.NoError(t, f.Close())
}

// checkHome makes a Flink home in dir/flink whose flink-dist declares a few keys, with a conf/ of
// its own, and a job jar dir/job.jar holding example.Main and a manifest naming it (manifest "" =
// none).
func checkHome(t *testing.T, dir, conf, manifest string) {
	t.Helper()
	home := filepath.Join(dir, "flink")
	writeZip(t, filepath.Join(home, "lib", "flink-dist-1.20.5.jar"), map[string][]byte{
		"org/apache/flink/configuration/TaskManagerOptions.class": classWithStrings("taskmanager.numberOfTaskSlots",
			"The number of parallel operator or user function instances that a single TaskManager can run."),
		"org/apache/flink/configuration/CoreOptions.class":         classWithStrings("parallelism.default", "rest.port"),
		"org/apache/flink/configuration/JobManagerOptions.class":   classWithStrings("scheduler-mode", "jobmanager.scheduler"),
		"org/apache/flink/configuration/ConfigConstants.class":     classWithStrings("metrics.reporter.", "state.backend.type"),
		"org/apache/flink/runtime/Unrelated.class":                 classWithStrings("taskmanager.numberOfTaskSlotz"),
		"org/apache/flink/shaded/guava/SomeOptions.class":          classWithStrings("taskmanager.numberOfTaskSlotx"),
		"org/apache/flink/configuration/SecurityOptions.class":     []byte("not a class file"),
		"org/apache/flink/configuration/SecurityOptions$Sub.class": classWithStrings("security.ssl.rest.enabled"),
	})
	for f, body := range map[string]string{"plugins/.keep": "", "bin/bash-java-utils.jar": "", "conf/config.yaml": conf} {
		require.NoError(t, os.MkdirAll(filepath.Join(home, filepath.Dir(f)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(home, f), []byte(body), 0o644))
	}
	entries := map[string][]byte{"example/Main.class": classWithStrings(), "example/Other.class": classWithStrings()}
	if manifest != "" {
		entries["META-INF/MANIFEST.MF"] = []byte(manifest)
	}
	writeZip(t, filepath.Join(dir, "job.jar"), entries)
}

const checkJob = `
[flink]
home = "flink"
jar = "job.jar"
main-class = "example.Main"
[taskexecutor]
instances = 2
memory = 2048
`

// check refuses a parallelism the TaskManagers' slots cannot run, naming where each key was set and
// what to change; the adaptive scheduler (reactive mode) runs at what the slots allow.
func TestCheckRefusesParallelismAboveTheSlots(t *testing.T) {
	t.Setenv("YARN_AM_CACHE", t.TempDir())
	p := writeJob(t, checkJob)
	checkHome(t, filepath.Dir(p), "parallelism.default: 1\n", "")
	_, err := client.LoadJob(p, client.JobOptions{})
	require.NoError(t, err)

	_, err = client.LoadJob(p, client.JobOptions{Defines: []string{"parallelism.default=4"}})
	require.Error(t, err)
	for _, want := range []string{"parallelism.default = 4 (from -D parallelism.default=4): more than the 2 slots the job will have",
		"taskexecutor.instances = 2 × taskmanager.numberOfTaskSlots = 1 (Flink's default)", "NoResourceAvailableException",
		"Lower parallelism.default to 2, raise taskexecutor.instances to 4 or taskmanager.numberOfTaskSlots to 2",
		`"scheduler-mode" = "reactive"`} {
		assert.Contains(t, err.Error(), want)
	}

	// The home's configuration is named as the place a key was set.
	checkHome(t, filepath.Dir(p), "parallelism.default: 3\ntaskmanager.numberOfTaskSlots: 1\n", "")
	_, err = client.LoadJob(p, client.JobOptions{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "parallelism.default = 3 (from "+filepath.Join(filepath.Dir(p), "flink", "conf", "config.yaml")+")")

	for _, ok := range [][]string{{"taskmanager.numberOfTaskSlots=2"}, {"scheduler-mode=reactive"}, {"jobmanager.scheduler=adaptive"}, {"taskexecutor.instances=3"}} {
		_, err = client.LoadJob(p, client.JobOptions{Defines: ok})
		assert.NoError(t, err, ok)
	}
}

// check refuses a main class the jar does not hold, and an unset one the manifest does not name.
func TestCheckLooksIntoTheJar(t *testing.T) {
	t.Setenv("YARN_AM_CACHE", t.TempDir())
	for _, tc := range []struct{ job, manifest, want string }{
		{strings.Replace(checkJob, "example.Main", "example.Mian", 1), "",
			`flink.main-class = "example.Mian": flink.jar = "` + "%DIR%" + `/job.jar" has no example/Mian.class (did you mean "example.Main"?); the JobManager would fail with ClassNotFoundException`},
		{strings.Replace(checkJob, "main-class = \"example.Main\"\n", "", 1), "Manifest-Version: 1.0\nCreated-By: test\n",
			"flink.main-class is not set and the manifest of flink.jar = "},
		{strings.Replace(checkJob, "main-class = \"example.Main\"\n", "", 1), "",
			"names no Main-Class: set flink.main-class"},
		{strings.Replace(checkJob, "main-class = \"example.Main\"\n", "", 1), "Manifest-Version: 1.0\r\nMain-Class: example.Gone\r\n\r\n",
			`flink.main-class is not set and the manifest of flink.jar names Main-Class "example.Gone": flink.jar`},
		{strings.Replace(checkJob, "main-class = \"example.Main\"\n", "", 1), "Manifest-Version: 1.0\nMain-Class: example.Ma\n in\n", ""},
		{checkJob, "", ""},
	} {
		p := writeJob(t, tc.job)
		checkHome(t, filepath.Dir(p), "", tc.manifest)
		_, err := client.LoadJob(p, client.JobOptions{})
		if tc.want == "" {
			assert.NoError(t, err, tc.job)
			continue
		}
		require.Error(t, err, tc.job)
		assert.Contains(t, err.Error(), strings.ReplaceAll(tc.want, "%DIR%", filepath.Dir(p)))
	}
	p := writeJob(t, checkJob)
	checkHome(t, filepath.Dir(p), "", "")
	require.NoError(t, os.WriteFile(filepath.Join(filepath.Dir(p), "job.jar"), []byte("not a zip"), 0o644))
	_, err := client.LoadJob(p, client.JobOptions{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "/job.jar\": not a jar")
}

// A Flink key that the home's Flink does not declare and that is a near miss of one it does is a
// warning with a did-you-mean and where it was set; plugin keys and far-off keys are not; the keys
// are read once per home into the cache.
func TestCheckWarnsOfAMisspeltFlinkKey(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("YARN_AM_CACHE", cache)
	p := writeJob(t, checkJob+`
[flink.config]
"parallelism.defualt" = 1
"metrics.reporter.prom.port" = "9249"
"my.own.key" = "x"
"taskmanager.numberOfTaskSlots" = 1
`)
	checkHome(t, filepath.Dir(p), "", "")
	lj, err := client.LoadJob(p, client.JobOptions{Defines: []string{"taskmanager.numberOfTaskSlot=2", "s3.acess-key=x"}})
	require.NoError(t, err)
	var warns []string
	for _, w := range lj.Warnings {
		warns = append(warns, w.Message)
	}
	all := strings.Join(warns, "\n")
	assert.Contains(t, all, `Flink key "taskmanager.numberOfTaskSlot" (from -D taskmanager.numberOfTaskSlot=2) is not a key of Flink 1.20.5 (did you mean "taskmanager.numberOfTaskSlots"?)`)
	assert.Contains(t, all, `Flink key "parallelism.defualt" (from the job file's [flink.config]) is not a key of Flink 1.20.5 (did you mean "parallelism.default"?)`)
	for _, not := range []string{"metrics.reporter", "my.own.key", "s3.", "numberOfTaskSlotz", "numberOfTaskSlotx", `"taskmanager.numberOfTaskSlots" (`} {
		assert.NotContains(t, all, not)
	}
	caches, _ := filepath.Glob(filepath.Join(cache, "flink-archives", "flink-keys-1.20.5-*.txt"))
	require.Len(t, caches, 1, "the keys are kept beside the packed homes")
	b, err := os.ReadFile(caches[0])
	require.NoError(t, err)
	assert.Contains(t, string(b), "security.ssl.rest.enabled\n", "a nested class of an *Options class is read")
	// The cache is what a later check reads.
	require.NoError(t, os.WriteFile(caches[0], []byte("parallelism.defualt\ntaskmanager.numberOfTaskSlots\n"), 0o644))
	lj, err = client.LoadJob(p, client.JobOptions{})
	require.NoError(t, err)
	for _, w := range lj.Warnings {
		assert.NotContains(t, w.Message, "parallelism.defualt", "read from the cache")
	}
}

// home = "~/…" is the user's home, as in a shell.
func TestFlinkHomeExpandsTilde(t *testing.T) {
	t.Setenv("YARN_AM_CACHE", t.TempDir())
	user := t.TempDir()
	t.Setenv("HOME", user)
	p := writeJob(t, strings.Replace(checkJob, `home = "flink"`, `home = "~/flink"`, 1))
	checkHome(t, user, "", "")
	require.NoError(t, os.Rename(filepath.Join(user, "job.jar"), filepath.Join(filepath.Dir(p), "job.jar")))
	lj, err := client.LoadJob(p, client.JobOptions{})
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(user, "flink"), specOf(lj.Job).Home)
}
