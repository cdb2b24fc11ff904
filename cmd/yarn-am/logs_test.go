package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// TestFlagErrorsSayWhatTheFlagTakes: a value of the wrong form names the flag, the value and what the
// flag takes, from its type; only a boolean flag says "not true or false".
func TestFlagErrorsSayWhatTheFlagTakes(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"logs", "application_1_0001", "--tail", "abc"}, `--tail "abc": not a whole number`},
		{[]string{"logs", "application_1_0001", "--tail", "99999999999999999999"}, `--tail "99999999999999999999": out of range for a whole number`},
		{[]string{"logs", "application_1_0001", "--follow=5"}, `--follow "5": not true or false`},
		{[]string{"logs", "application_1_0001", "--timeout", "5"}, `--timeout "5": needs a unit, e.g. 5s or 5m`},
		{[]string{"am", "--heartbeat-fast", "5"}, `--heartbeat-fast "5": needs a unit, e.g. 5ms or 5s`},
		{[]string{"am", "--heartbeat-fast", "soon"}, `--heartbeat-fast "soon": not a duration; write a number with a unit, e.g. 200ms, 5s, 2m`},
		{[]string{"status", "application_1_0001", "--json=maybe"}, `--json "maybe": not true or false`},
	} {
		_, errs, code := runCmd(c.args...)
		assert.Equal(t, contract.ExitUsage, code, "%v: %s", c.args, errs)
		assert.Contains(t, errs, c.want, "%v", c.args)
		if !strings.Contains(c.want, "true or false") {
			assert.NotContains(t, errs, "true or false", "%v: only boolean flags take true or false", c.args)
		}
	}
}

// TestLogsExitCodes: logs uses the one exit-code table (docs/running.md#exit-codes): a bad
// HADOOP_CONF_DIR is invalid input (3), a ResourceManager nothing listens on is unreachable (4)
// within --timeout, an application the ResourceManager does not know is 5, an HDFS that cannot be
// reached for an ended application's logs is 4.
func TestLogsExitCodes(t *testing.T) {
	t.Run("bad HADOOP_CONF_DIR", func(t *testing.T) {
		t.Setenv("HADOOP_CONF_DIR", "/nonexistent/conf")
		_, errs, code := runCmd("logs", "application_1_0001")
		assert.Equal(t, contract.ExitInvalidInput, code, errs)
		assert.Contains(t, errs, "/nonexistent/conf")
	})
	t.Run("unreachable ResourceManager", func(t *testing.T) {
		conf := t.TempDir()
		site := fmt.Sprintf("<configuration><property><name>yarn.resourcemanager.address</name><value>127.0.0.1:%d</value></property></configuration>", closedPort(t))
		require.NoError(t, os.WriteFile(filepath.Join(conf, "yarn-site.xml"), []byte(site), 0o644))
		t.Setenv("HADOOP_CONF_DIR", conf)
		t.Setenv("YARN_CONF_DIR", "")
		start := time.Now()
		_, errs, code := runCmd("logs", "application_1_0001", "--timeout", "2s")
		assert.Equal(t, contract.ExitUnreachable, code, errs)
		assert.Less(t, time.Since(start), 30*time.Second, "gives up within its timeout and some seconds")
	})
	t.Run("unknown application", func(t *testing.T) {
		newFakeRM(t)
		_, errs, code := runCmd("logs", "application_1700000000000_0001")
		assert.Equal(t, contract.ExitRejected, code, errs)
		assert.Contains(t, errs, "does not know application_1700000000000_0001")
	})
	t.Run("unreachable HDFS", func(t *testing.T) {
		f := newFakeRM(t) // fs.defaultFS is a port nothing listens on
		f.Reports = append(f.Reports, report(hadooppb.YarnApplicationStateProto_FINISHED, hadooppb.FinalApplicationStatusProto_APP_SUCCEEDED, "", ""))
		_, errs, code := runCmd("logs", "application_1700000000000_0001", "--timeout", "5s")
		assert.Equal(t, contract.ExitUnreachable, code, errs)
	})
}
