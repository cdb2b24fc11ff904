package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/contract"
)

// TestUnreachableClusterExits4: a valid job checked against a ResourceManager port nothing listens on
// exits 4 (unreachable), within its --timeout and some seconds.
func TestUnreachableClusterExits4(t *testing.T) {
	port := closedPort(t)
	conf := t.TempDir()
	site := fmt.Sprintf("<configuration><property><name>yarn.resourcemanager.address</name><value>127.0.0.1:%d</value></property></configuration>", port)
	require.NoError(t, os.WriteFile(filepath.Join(conf, "yarn-site.xml"), []byte(site), 0o644))
	t.Setenv("HADOOP_CONF_DIR", conf)
	job := filepath.Join(t.TempDir(), "job.toml")
	require.NoError(t, os.WriteFile(job, []byte(okJob), 0o644))
	for _, args := range [][]string{{"check", job, "--timeout", "2s"}, {"list", "--timeout", "2s"}, {"cluster", "--timeout", "2s"}} {
		start := time.Now()
		_, errs, code := runCmd(args...)
		assert.Equal(t, contract.ExitUnreachable, code, "%v: %s", args, errs)
		assert.Less(t, time.Since(start), 30*time.Second, "%v gives up within its timeout and some seconds", args)
	}
}
