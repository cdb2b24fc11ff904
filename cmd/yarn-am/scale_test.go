package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/yarn-am/yarn-am/contract"
)

// TestScaleRefusesBadInputBeforeTheCluster: a bad N is a usage error, and an application whose secret
// this user does not keep is refused naming why, both without contacting the cluster.
func TestScaleRefusesBadInputBeforeTheCluster(t *testing.T) {
	t.Setenv("YARN_AM_CONFIG_DIR", t.TempDir())
	t.Setenv("HADOOP_CONF_DIR", t.TempDir())
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"application_1700000000000_0001", "three"}, contract.ExitUsage, `N = "three": want a number of TaskExecutors from 0 to 100000`},
		{[]string{"application_1700000000000_0001", "100001"}, contract.ExitUsage, "want a number of TaskExecutors"},
		{[]string{"app_1", "2"}, contract.ExitUsage, "app_1"},
		{[]string{"application_1700000000000_0001", "2"}, contract.ExitInvalidInput, "only the user who submitted it"},
	} {
		var out, errb bytes.Buffer
		code := run(append([]string{"scale"}, tc.args...), &out, &errb)
		assert.Equal(t, tc.code, code, "%v: %s", tc.args, errb.String())
		assert.Contains(t, errb.String(), tc.want, "%v", tc.args)
	}
}
