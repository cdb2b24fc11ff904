//go:build integration

package yarnrpc

import (
	"errors"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The real ResourceManager's web port configured as its RPC address: the fail-fast client says it is
// an HTTP server within seconds.
func TestFailFastAgainstRealRMWebPort(t *testing.T) {
	web := os.Getenv("YARN_AM_RM_WEB")
	if web == "" {
		t.Fatal("YARN_AM_RM_WEB is not set: start the mini cluster with 'make minicluster-up' and source .minicluster/env")
	}
	u, err := url.Parse(web)
	require.NoError(t, err)
	conf, err := LoadConfigFromEnv()
	require.NoError(t, err)
	conf.Set("yarn.resourcemanager.address", u.Host)
	err, took := callMetrics(t, conf, Auth{}, 60*time.Second, nil)
	require.Error(t, err)
	assert.Less(t, took, 10*time.Second, "gives up within 10 s")
	assert.True(t, errors.Is(err, ErrHTTPServer), "got %v", err)
	assert.Contains(t, err.Error(), u.Host+" (yarn.resourcemanager.address as set): this is an HTTP server")
	t.Log(err)

	// And the real RPC port still works with the fail-fast client.
	conf, err = LoadConfigFromEnv()
	require.NoError(t, err)
	rm, err := NewApplicationClient(conf, Auth{}, FailFast(nil))
	require.NoError(t, err)
	defer rm.Close()
	m, err := rm.GetClusterMetrics(ctx(t))
	require.NoError(t, err)
	assert.Positive(t, m.GetNumNodeManagers())
}
