package client

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/yarn-am/yarn-am/jobfile"
)

type mapConf map[string]string

func (m mapConf) Get(k string) (string, bool) { v, ok := m[k]; return v, ok }

// TestRollingAggregationNote: check's one line names the key that keeps a job's rolled logs from
// being aggregated while it runs, and says nothing when they are, or when the job rolls nothing.
func TestRollingAggregationNote(t *testing.T) {
	rolled := jobfile.LogAggregation{RolledInclude: `\.log\.[0-9]+$`, Set: true}
	on := mapConf{KeyLogAggregationEnable: "true"}
	for name, c := range map[string]struct {
		conf mapConf
		want string
	}{
		"aggregation unset":  {mapConf{}, "log aggregation is off in HADOOP_CONF_DIR's yarn-site.xml (yarn.log-aggregation-enable = unset: false, YARN's default)"},
		"aggregation false":  {mapConf{KeyLogAggregationEnable: "false"}, "(yarn.log-aggregation-enable = false)"},
		"interval unset":     {on, "rolling log aggregation is off in HADOOP_CONF_DIR's yarn-site.xml (yarn.nodemanager.log-aggregation.roll-monitoring-interval-seconds = unset: -1, YARN's default): the NodeManagers upload the job's rolled logs only when it ends"},
		"interval -1":        {mapConf{KeyLogAggregationEnable: "true", KeyRollInterval: "-1"}, "roll-monitoring-interval-seconds = -1)"},
		"interval not a num": {mapConf{KeyLogAggregationEnable: "true", KeyRollInterval: "soon"}, "roll-monitoring-interval-seconds = soon)"},
		"below the minimum":  {mapConf{KeyLogAggregationEnable: "true", KeyRollInterval: "60"}, "yarn.nodemanager.log-aggregation.roll-monitoring-interval-seconds = 60 is below the NodeManagers' minimum, 3600 s"},
		"below its own min":  {mapConf{KeyLogAggregationEnable: "true", KeyRollInterval: "60", KeyRollIntervalMin: "120"}, "minimum, 120 s"},
		"debug lifts it":     {mapConf{KeyLogAggregationEnable: "true", KeyRollInterval: "5", KeyLogAggregationDebug: "true"}, ""},
		"an hour":            {mapConf{KeyLogAggregationEnable: "true", KeyRollInterval: "3600"}, ""},
	} {
		got := RollingAggregationNote(c.conf, rolled)
		if c.want == "" {
			assert.Empty(t, got, name)
		} else {
			assert.Contains(t, got, c.want, name)
			assert.NotContains(t, got, "\n", name)
		}
	}
	assert.Empty(t, RollingAggregationNote(mapConf{}, jobfile.LogAggregation{Include: "x", Set: true}), "a job that rolls nothing")
}
