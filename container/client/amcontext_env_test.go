package client

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/internal/hadoop"
)

// am.env reaches the AM container (and so the driver); yarn-am's own variables are set over it
// (docs/job-file.md#the-am-container).
func TestAMEnvironmentCarriesAMEnv(t *testing.T) {
	o := testAMOptions(t)
	o.Job.AM.Env = map[string]string{"MODEL": "m1", contract.EnvLogLevel: "debug", hadoop.EnvUserName: "mallory"}
	env := AMEnvironment(o)
	assert.Equal(t, "m1", env["MODEL"])
	assert.Equal(t, "debug", env[contract.EnvLogLevel], "the job may tune the AM's log level")
	assert.Equal(t, "alice", env[hadoop.EnvUserName], "yarn-am's own values win")
	assert.Equal(t, "$PWD", env[hadoop.EnvConfDir])

	clc, err := AMLaunchContext(o)
	require.NoError(t, err)
	got := map[string]string{}
	for _, kv := range clc.GetEnvironment() {
		got[kv.GetKey()] = kv.GetValue()
	}
	assert.Equal(t, "m1", got["MODEL"])
}
