package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/yarn-am/yarn-am/contract"
)

// TestSavepointAndStopRefuseBadInputBeforeTheCluster: savepoint's --dir and stop's --savepoint take
// a directory as a URI or an absolute path, --timeout at most 30m, one application id; an application
// whose secret this user does not keep is refused naming why; all before the cluster is asked.
func TestSavepointAndStopRefuseBadInputBeforeTheCluster(t *testing.T) {
	t.Setenv("YARN_AM_CONFIG_DIR", t.TempDir())
	t.Setenv("HADOOP_CONF_DIR", t.TempDir())
	const app = "application_1700000000000_0001"
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"savepoint", app, "--dir", "savepoints"}, contract.ExitUsage, `--dir "savepoints": not a URI or an absolute path; want a directory the JobManager can write, e.g. file:///tmp/savepoints`},
		{[]string{"savepoint", app, "--dir", "file://"}, contract.ExitUsage, `--dir "file://": not a URI or an absolute path`},
		{[]string{"savepoint", app, "--dir", "/sp\n"}, contract.ExitUsage, `--dir "/sp\n": a space at an end, a line break or NUL`},
		{[]string{"savepoint", app, "--dir", "/" + strings.Repeat("x", 4096)}, contract.ExitUsage, "--dir \"/xxxx"},
		{[]string{"savepoint", app, "--timeout", "31m"}, contract.ExitUsage, "--timeout 31m0s: at most 30m0s"},
		{[]string{"savepoint", app, "--timeout", "soon"}, contract.ExitUsage, "--timeout"},
		{[]string{"savepoint"}, contract.ExitUsage, "one application id"},
		{[]string{"savepoint", "app_1"}, contract.ExitUsage, "app_1"},
		{[]string{"savepoint", app, "--dir", "hdfs:///sp"}, contract.ExitInvalidInput, "only the user who submitted it"},
		{[]string{"stop", app, "--savepoint", "savepoints"}, contract.ExitUsage, `--savepoint "savepoints": not a URI or an absolute path`},
		{[]string{"stop", app, "--timeout", "31m"}, contract.ExitUsage, "--timeout 31m0s: at most 30m0s"},
		{[]string{"stop", app, "--savepoint", "file:///sp"}, contract.ExitInvalidInput, "only the user who submitted it"},
	} {
		var out, errb bytes.Buffer
		code := run(tc.args, &out, &errb)
		assert.Equal(t, tc.code, code, "%q: %s", tc.args, errb.String())
		assert.Contains(t, errb.String(), tc.want, "%q", tc.args)
		assert.Empty(t, out.String(), "%q", tc.args)
	}
}

// TestStopAndSavepointPrintTheFrameworksName: stop and savepoint print what the framework kept under
// the name it gives ("Savepoint: <path>" for Flink), "State" when it gives none; a name is cut to 40
// bytes, and neither carries a terminal escape to the user's terminal (client.Sanitize).
func TestStopAndSavepointPrintTheFrameworksName(t *testing.T) {
	for _, c := range []struct{ what, where, want string }{
		{"Savepoint", "file:/tmp/sp/savepoint-0a1b2c-0123456789ab", "Savepoint: file:/tmp/sp/savepoint-0a1b2c-0123456789ab\n"},
		{"", "file:///state/1", "State: file:///state/1\n"},
		{strings.Repeat("n", 50), "x", strings.Repeat("n", 40) + ": x\n"},
	} {
		var b strings.Builder
		printKept(&b, c.what, c.where)
		assert.Equal(t, c.want, b.String())
	}
	var b strings.Builder
	printKept(&b, "Snap\x1b[2Jshot", "file:///sp/\x1b]0;x\x07a")
	assert.NotContains(t, b.String(), "\x1b")
	assert.True(t, strings.HasPrefix(b.String(), "Snapshot: file:///sp/"), "%q", b.String())
}
