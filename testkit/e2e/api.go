//go:build integration

package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/yarnrpc"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// PlainBase waits for the AM to register and returns its tracking (plain HTTP) address.
func (c *Cluster) PlainBase(t *testing.T, a *App) string {
	t.Helper()
	var base string
	require.Eventually(t, func() bool {
		r := c.Report(t, a)
		if r.GetYarnApplicationState() >= hadooppb.YarnApplicationStateProto_FINISHED {
			t.Fatalf("%s ended before its AM registered: %s", yarnrpc.FormatApplicationID(a.ID), r.GetDiagnostics())
		}
		if r.GetRpcPort() <= 0 || r.GetHost() == "" || r.GetHost() == "N/A" {
			return false
		}
		base = fmt.Sprintf("http://%s:%d/", r.GetHost(), r.GetRpcPort())
		return true
	}, 2*time.Minute, 100*time.Millisecond, "the AM registers")
	return base
}
