//go:build integration

package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/yarnrpc"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// RMReport is the ResourceManager's report of application id, asked within d.
func RMReport(t *testing.T, id string, d time.Duration) *hadooppb.ApplicationReportProto {
	t.Helper()
	rm, err := RMClient()
	require.NoError(t, err)
	defer rm.Close()
	appID, err := yarnrpc.ParseApplicationID(id)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	rep, err := rm.GetApplicationReport(ctx, appID)
	require.NoError(t, err)
	return rep
}
