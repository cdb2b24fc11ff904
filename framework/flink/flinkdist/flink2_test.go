package flinkdist

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMajorAndIsFlink2(t *testing.T) {
	for v, want := range map[string]bool{"2.3.0": true, "2.0.1": true, "3.0-SNAPSHOT": true, "1.20.5": false, "1.19": false, "": false, "x.y": false} {
		assert.Equal(t, want, IsFlink2(v), v)
	}
	n, ok := majorVersion("2.3.0")
	assert.True(t, ok)
	assert.Equal(t, 2, n)
}

// A Flink 2 home reads conf/config.yaml only: with only the legacy flink-conf.yaml it is refused
// naming the file, what Flink 2 reads and how to migrate; with both, config.yaml is read and the
// legacy file is reported as ignored. A Flink 1.20 home keeps reading the legacy file.
func TestFlink2HomeReadsOnlyConfigYAML(t *testing.T) {
	h := fakeHomeAt(t, "2.3.0", "taskmanager:\n  numberOfTaskSlots: 1\n")
	require.Equal(t, "2.3.0", h.Version)
	require.NoError(t, os.MkdirAll(h.ConfDir, 0o755))
	legacy := filepath.Join(h.ConfDir, legacyConfigFile)
	require.NoError(t, os.WriteFile(legacy, []byte("taskmanager.numberOfTaskSlots: 4\n"), 0o644))

	_, _, err := h.Config()
	var le *LegacyConfigError
	require.True(t, errors.As(err, &le), "%v", err)
	for _, want := range []string{legacy, "Flink 2.3.0 no longer reads", "only conf/config.yaml", migrateConfigScript, "docs/flink.md#flink-2"} {
		assert.Contains(t, err.Error(), want)
	}
	assert.Empty(t, h.IgnoredLegacyConfig(), "refused, not ignored")

	require.NoError(t, os.WriteFile(filepath.Join(h.ConfDir, configFile), []byte("taskmanager.numberOfTaskSlots: 2\n"), 0o644))
	c, src, err := h.Config()
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(h.ConfDir, configFile), src)
	v, _ := c.Get("taskmanager.numberOfTaskSlots")
	assert.Equal(t, "2", v)
	assert.Equal(t, legacy, h.IgnoredLegacyConfig())

	// Neither file: flink-dist's defaults, as for 1.20.
	require.NoError(t, os.Remove(legacy))
	require.NoError(t, os.Remove(filepath.Join(h.ConfDir, configFile)))
	_, src, err = h.Config()
	require.NoError(t, err)
	assert.True(t, strings.HasSuffix(src, "flink-dist-2.3.0.jar!/config.yaml"), src)

	old := fakeHome(t, "")
	require.NoError(t, os.MkdirAll(old.ConfDir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(old.ConfDir, legacyConfigFile), []byte("a: b\n"), 0o644))
	_, src, err = old.Config()
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(old.ConfDir, legacyConfigFile), src)
	require.NoError(t, os.WriteFile(filepath.Join(old.ConfDir, configFile), []byte("a: c\n"), 0o644))
	assert.Empty(t, old.IgnoredLegacyConfig(), "Flink 1.20 reads config.yaml first too; nothing to warn about")
}

func readKeyFixture(t *testing.T, name string) []string {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	require.NoError(t, err)
	defer f.Close()
	var keys []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" && !strings.HasPrefix(l, "#") {
			keys = append(keys, l)
		}
	}
	require.NoError(t, sc.Err())
	slices.Sort(keys)
	return keys
}

// notConfigKeys are strings of Flink 1.20's *Options classes that look like keys and are not: the
// command-line options of Flink's entry points.
var notConfigKeys = map[string]bool{"webui-port": true}

// yarnAMSettings are replacements that are not Flink keys (removedkeys.go's replacement).
var yarnAMSettings = map[string]bool{"am.memory": true, "taskexecutor.memory": true, "HADOOP_CONF_DIR": true}

// The table of removed keys is exactly what Flink 1.20.5's jars declare and Flink 2.3.0's do not, and
// each replacement is a key Flink 2.3.0 declares.
func TestRemovedInFlink2IsWhatFlink2Dropped(t *testing.T) {
	k120, k23 := readKeyFixture(t, "flink-keys-1.20.5.txt"), readKeyFixture(t, "flink-keys-2.3.0.txt")
	var dropped []string
	for _, k := range k120 {
		if _, still := slices.BinarySearch(k23, k); !still && !notConfigKeys[k] {
			dropped = append(dropped, k)
		}
	}
	table := make([]string, 0, len(removedInFlink2))
	for k, use := range removedInFlink2 {
		table = append(table, k)
		if use == "" || yarnAMSettings[use] {
			continue
		}
		_, ok := slices.BinarySearch(k23, use)
		assert.True(t, ok, "%s: its replacement %s is not a key of Flink 2.3.0", k, use)
	}
	slices.Sort(table)
	assert.Equal(t, dropped, table)
	// The deprecated names Flink 2.3 still reads stay allowed (its options declare them).
	for _, k := range []string{"state.backend", "env.java.opts", "high-availability", "state.checkpoints.dir", "restart-strategy", "taskmanager.network.memory.min", "state.savepoints.dir"} {
		_, removed := RemovedInFlink2(k)
		assert.False(t, removed, k)
		_, ok := slices.BinarySearch(k23, k)
		assert.True(t, ok, "%s is still declared by Flink 2.3.0", k)
	}
}

// Every key Flink 2.0's release notes list as removed is in the table, or still declared by Flink
// 2.3.0 as a deprecated name of another key (and read), or declared by neither version's lib/ (a
// connector's or the SQL client's key, not yarn-am's to judge).
func TestReleaseNotesRemovedKeys(t *testing.T) {
	k120, k23 := readKeyFixture(t, "flink-keys-1.20.5.txt"), readKeyFixture(t, "flink-keys-2.3.0.txt")
	stillRead, elsewhere := 0, 0
	for _, k := range readKeyFixture(t, "flink-2.0-removed-config.txt") {
		_, removed := RemovedInFlink2(k)
		_, in23 := slices.BinarySearch(k23, k)
		_, in120 := slices.BinarySearch(k120, k)
		switch {
		case removed:
		case in23:
			stillRead++
		case !in120:
			elsewhere++
		default:
			t.Errorf("%s: Flink 1.20.5 declares it, Flink 2.3.0 does not, and the table lacks it", k)
		}
	}
	t.Logf("release notes: %d keys still read by Flink 2.3.0 under a deprecated name, %d outside lib/", stillRead, elsewhere)
	assert.Equal(t, 3, elsewhere, "sql-client.display.max-column-width, state.backend.forst.remote-dir, streaming-source.consume-order")
}

// CheckRemovedKeys refuses, for a Flink 2 home only, every removed key naming the key, its value
// (bounded) and the replacement.
func TestCheckRemovedKeys(t *testing.T) {
	c := memConf("taskmanager.heap.size", "2g", "state.backend.async", strings.Repeat("x", 500),
		"cluster.evenly-spread-out-slots", "true", "state.backend", "rocksdb")
	require.NoError(t, CheckRemovedKeys(c, "1.20.5"))
	require.NoError(t, CheckRemovedKeys(c, ""))
	err := CheckRemovedKeys(c, "2.3.0")
	require.Error(t, err)
	msg := err.Error()
	for _, want := range []string{`"taskmanager.heap.size" = "2g"`, "taskexecutor.memory", `"state.backend.async"`, "nothing replaces it",
		`"cluster.evenly-spread-out-slots" = "true"`, `use "taskmanager.load-balance.mode" instead`, "Flink 2.3.0 does not read it"} {
		assert.Contains(t, msg, want)
	}
	assert.NotContains(t, msg, `"state.backend" =`, "Flink 2.3 reads state.backend as state.backend.type's deprecated name")
	assert.NotContains(t, msg, strings.Repeat("x", 100), "the value is bounded")
	assert.Equal(t, []string{"cluster.evenly-spread-out-slots", "state.backend.async", "taskmanager.heap.size"}, RemovedKeys(c))
	w := RemovedKeyWarning("taskmanager.heap.size", "2g", "", "1.20.5")
	assert.Contains(t, w, "works with Flink 1.20.5 but Flink 2.0 removed it")
}
