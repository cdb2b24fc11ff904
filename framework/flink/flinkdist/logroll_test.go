package flinkdist

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLog4jPropertiesRollsByTheKeys: the size and count reach log4j's policy and Delete action (the
// count less the file being written), the parts are numbered up, and the defaults fill a zero roll.
// TestLog4jRollsWithTheHomesLog4j runs it through each Flink version's log4j.
func TestLog4jPropertiesRollsByTheKeys(t *testing.T) {
	p, err := LogRoll{File: "/logs/c1/taskmanager.log", MaxSize: 256 << 10, MaxFiles: 4}.Log4jProperties()
	require.NoError(t, err)
	for _, line := range []string{
		"appender.main.type = RollingFile",
		"appender.main.fileName = ${sys:log.file}",
		"appender.main.filePattern = ${sys:log.file}.%i",
		"appender.main.policies.size.size = 262144",
		"appender.main.strategy.fileIndex = nomax",
		"appender.main.strategy.action.basePath = /logs/c1",
		"appender.main.strategy.action.condition.glob = taskmanager.log.*",
		"appender.main.strategy.action.condition.nested.type = IfAccumulatedFileCount",
		"appender.main.strategy.action.condition.nested.exceeds = 3",
	} {
		assert.Contains(t, strings.Split(p, "\n"), line)
	}
	p, err = LogRoll{File: "/logs/c1/jobmanager.log"}.Log4jProperties()
	require.NoError(t, err)
	assert.Contains(t, p, "appender.main.policies.size.size = 67108864\n")
	assert.Contains(t, p, "appender.main.strategy.action.condition.nested.exceeds = 4\n")
	for _, bad := range []string{"/logs/${env:X}/jobmanager.log", "/logs/100%/jobmanager.log", "relative/jobmanager.log", "/logs/a*b/jobmanager.log", "/logs/x\n/jobmanager.log"} {
		_, err := LogRoll{File: bad}.Log4jProperties()
		assert.ErrorContains(t, err, "want an absolute path without $, %, \\, glob characters, line breaks or surrounding spaces", bad)
	}
	_, err = LogRoll{File: "/l/jobmanager.log", MaxSize: 1 << 20, MaxFiles: 1}.Log4jProperties()
	assert.ErrorContains(t, err, "at least 2 files")
}

// TestWriteConfDirRefusesTheKeysWithAHomesLog4j: a provided home is first read in the container; its
// own conf/log4j.properties would take the place of the roll the job asked for, so the process does
// not start, naming the keys and the file. Without the keys the home's file is used.
func TestWriteConfDirRefusesTheKeysWithAHomesLog4j(t *testing.T) {
	h := &Home{ConfDir: t.TempDir()}
	require.NoError(t, os.WriteFile(filepath.Join(h.ConfDir, "log4j.properties"), []byte("# the home's\n"), 0o644))
	roll := &LogRoll{File: "/l/jobmanager.log", MaxFiles: 3, Set: true}
	err := WriteConfDir(t.TempDir(), NewConfig(), h, roll)
	require.ErrorContains(t, err, "[flink] log-max-size and log-max-files set how yarn-am's log4j configuration rolls, but the Flink home has its own "+filepath.Join(h.ConfDir, "log4j.properties"))
	dir := t.TempDir()
	roll.Set = false
	require.NoError(t, WriteConfDir(dir, NewConfig(), h, roll))
	b, err := os.ReadFile(filepath.Join(dir, "log4j.properties"))
	require.NoError(t, err)
	assert.Equal(t, "# the home's\n", string(b))
	dir = t.TempDir()
	require.NoError(t, WriteConfDir(dir, NewConfig(), &Home{ConfDir: t.TempDir()}, roll))
	b, err = os.ReadFile(filepath.Join(dir, "log4j.properties"))
	require.NoError(t, err)
	assert.Contains(t, string(b), "appender.main.type = RollingFile\n")
}
