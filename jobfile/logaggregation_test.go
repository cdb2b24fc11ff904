package jobfile

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func loadLogAggJob(t *testing.T, table string) (*Job, error) {
	t.Helper()
	dir := t.TempDir()
	p := filepath.Join(dir, "job.toml")
	require.NoError(t, os.WriteFile(p, []byte(table+"\n[taskexecutor]\ncommand = \"./w\"\n"), 0o644))
	return LoadJob(p)
}

// TestLogAggregationTable: [log-aggregation] is read into the submission's patterns; a job without it
// gives none; each bad value is refused naming the key and the value.
func TestLogAggregationTable(t *testing.T) {
	j, err := loadLogAggJob(t, "")
	require.NoError(t, err)
	assert.Equal(t, LogAggregation{}, j.LogAggregation)
	j, err = loadLogAggJob(t, "[log-aggregation]\ninclude = 'std(out|err)'\nexclude = '\\.hprof$'\nrolled-include = '^worker\\.log\\.[0-9]+$'\nrolled-exclude = 'secret'\n")
	require.NoError(t, err)
	assert.Equal(t, LogAggregation{Include: "std(out|err)", Exclude: `\.hprof$`, RolledInclude: `^worker\.log\.[0-9]+$`, RolledExclude: "secret", Set: true}, j.LogAggregation)
	for table, msg := range map[string]string{
		"[log-aggregation]\nrolled-includes = 'x'\n":      `unknown key "log-aggregation.rolled-includes" (did you mean "log-aggregation.rolled-include"?)`,
		"[log-aggregation]\ninclude = 'a(?=b)'\n":         `log-aggregation.include = "a(?=b)": not a regular expression yarn-am can check (invalid or unsupported Perl syntax`,
		"[log-aggregation]\nexclude = 3\n":                `log-aggregation.exclude`,
		"[log-aggregation]\nrolled-exclude = \"a\\nb\"\n": `log-aggregation.rolled-exclude = "a\nb": holds a NUL, a line break or invalid UTF-8`,
		"log-aggregation = 'x'\n":                         `log-aggregation = "x": want a table`,
	} {
		_, err := loadLogAggJob(t, table)
		assert.ErrorContains(t, err, msg, table)
	}
	long := make([]byte, maxPatternLen+1)
	for i := range long {
		long[i] = 'a'
	}
	_, err = loadLogAggJob(t, "[log-aggregation]\ninclude = '"+string(long)+"'\n")
	assert.ErrorContains(t, err, "longer than 1024 bytes")
}
