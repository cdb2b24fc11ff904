package client

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/yarn-am/yarn-am/jobfile"
)

// The NodeManager keys of YARN's rolling log aggregation that check reads from the client's site
// files (docs/job-file.md#log-aggregation).
const (
	KeyLogAggregationEnable = "yarn.log-aggregation-enable"
	KeyRollInterval         = "yarn.nodemanager.log-aggregation.roll-monitoring-interval-seconds"
	KeyRollIntervalMin      = "yarn.nodemanager.log-aggregation.roll-monitoring-interval-seconds.min"
	KeyLogAggregationDebug  = "yarn.nodemanager.log-aggregation.debug-enabled"
)

// defaultRollIntervalMin is the NodeManagers' smallest roll interval unless debug-enabled (Hadoop's
// LogAggregationService; a key of its own, KeyRollIntervalMin, since Hadoop 3.3).
const defaultRollIntervalMin = 3600

// conf is what RollingAggregationNote reads of the site files.
type conf interface {
	Get(key string) (string, bool)
}

// RollingAggregationNote says, in one line, when the job's rolled logs would not be aggregated while
// it runs, naming the key: log aggregation off, rolling aggregation off (the interval -1, YARN's
// default), or an interval the NodeManagers raise to their minimum. "" when the job asks for no
// rolled logs or the cluster aggregates them as asked. The client's site files stand for the
// NodeManagers', which may differ: the line says whose it read.
func RollingAggregationNote(c conf, la jobfile.LogAggregation) string {
	if la.RolledInclude == "" {
		return ""
	}
	get := func(k string) string { v, _ := c.Get(k); return strings.TrimSpace(v) }
	if on := get(KeyLogAggregationEnable); !strings.EqualFold(on, "true") {
		if on == "" {
			on = "unset: false, YARN's default"
		}
		return fmt.Sprintf("log aggregation is off in HADOOP_CONF_DIR's yarn-site.xml (%s = %s): the job's rolled logs stay on the NodeManagers' disks (a bounded count of each) and yarn-am logs reads the current files only", KeyLogAggregationEnable, on)
	}
	v := get(KeyRollInterval)
	iv, err := strconv.ParseInt(v, 10, 64)
	if v == "" {
		iv, err = -1, nil
	}
	if err != nil || iv <= 0 {
		shown := v
		if v == "" {
			shown = "unset: -1, YARN's default"
		}
		return fmt.Sprintf("rolling log aggregation is off in HADOOP_CONF_DIR's yarn-site.xml (%s = %s): the NodeManagers upload the job's rolled logs only when it ends; set it on the NodeManagers (at least %d s) for yarn-am logs to read them while it runs", KeyRollInterval, shown, defaultRollIntervalMin)
	}
	least := int64(defaultRollIntervalMin)
	if m, err := strconv.ParseInt(get(KeyRollIntervalMin), 10, 64); err == nil && m > 0 {
		least = m
	}
	if iv < least && !strings.EqualFold(get(KeyLogAggregationDebug), "true") {
		return fmt.Sprintf("%s = %d is below the NodeManagers' minimum, %d s (%s; %s lifts it): they aggregate the job's rolled logs every %d s", KeyRollInterval, iv, least, KeyRollIntervalMin, KeyLogAggregationDebug, least)
	}
	return ""
}
