package flink

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/yarn-am/yarn-am/framework/flink/flinkdist"
)

// The JobManager's port keys take what Flink binds: one port from 0 to 65535 (jobmanager.rpc.port,
// rest.port), or for rest.bind-port also a range and a list; anything else is refused naming the key,
// the value (bounded) and what is valid (docs/flink.md#what-check-refuses).
func TestCheckPortsRefusesWhatFlinkCannotBind(t *testing.T) {
	ok := map[string][]string{
		keyRPCPort:      {"0", "6123", " 6123 ", "65535"},
		keyRESTPort:     {"0", "8081"},
		keyRESTBindPort: {"0", "8081", "50100-50200", "50100,50101", "50100-50110, 50120", "7000-7000"},
	}
	for k, vs := range ok {
		for _, v := range vs {
			c := flinkdist.NewConfig()
			c.Set(k, v)
			assert.NoError(t, checkPorts(c, nil), "%s = %q", k, v)
		}
	}
	bad := map[string][]string{
		keyRPCPort:      {"-1", "70000", "abc", "6123.5", "", "+6123", "0x1f", "99999999999999999999"},
		keyRESTPort:     {"-1", "70000", "abc", "6123.5"},
		keyRESTBindPort: {"-1", "70000", "abc", "6123.5", "50200-50100", "50100-", "50100,,50101", "1-70000", strings.Repeat("1,", 2000) + "1"},
	}
	for k, vs := range bad {
		for _, v := range vs {
			c := flinkdist.NewConfig()
			c.Set(k, v)
			err := checkPorts(c, func(k string) string { return " (from -D " + k + ")" })
			if assert.Error(t, err, "%s = %q", k, v) {
				assert.Contains(t, err.Error(), k+" = ", "names the key")
				assert.Contains(t, err.Error(), "(from -D "+k+")", "says where it was set")
				assert.Contains(t, err.Error(), "from 0 (any free port) to 65535", "says what is valid")
				assert.Less(t, len(err.Error()), 600, "the value is bounded: %s", err)
			}
		}
	}
	c := flinkdist.NewConfig()
	c.Set(keyRPCPort, "abc")
	c.Set(keyRESTBindPort, "70000")
	err := checkPorts(c, nil)
	assert.ErrorContains(t, err, keyRPCPort)
	assert.ErrorContains(t, err, keyRESTBindPort, "every bad key, not the first alone")
}
