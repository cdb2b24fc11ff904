package flinkdist

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Keys Flink 2 no longer reads (docs/flink.md#flink-2). Flink 2.0 removed the configuration options
// deprecated long enough (its release notes list them) and the legacy ConfigConstants; Flink then
// ignores such a key without a word, as it ignores any key it does not know. The table is the facts
// of both versions' own jars: every key the *Options classes and ConfigConstants of Flink 1.20.5's
// lib/ declare (KnownKeys) that those of Flink 2.3.0's do not, testdata/flink-keys-1.20.5.txt less
// testdata/flink-keys-2.3.0.txt (TestRemovedInFlink2IsWhatFlink2Dropped; the fixtures are the homes'
// own KnownKeys, TestKeyFixturesAreTheHomesKeys). A key the release notes list that Flink 2 still
// reads as a deprecated name of another (state.backend for state.backend.type, env.java.opts for
// env.java.opts.all, taskmanager.network.memory.min for taskmanager.memory.network.min) is not here:
// Flink 2.3 still honours it.
//
// The value is what replaces the key: another key (from the deprecation notes of Flink 1.20's
// options and Flink's memory migration guide), a job-file setting (am.memory, taskexecutor.memory:
// yarn-am sets the process sizes from them), HADOOP_CONF_DIR, or "" when nothing does.
var removedInFlink2 = map[string]string{
	"akka.transport.heartbeat.interval":                                     "",
	"akka.transport.heartbeat.pause":                                        "",
	"akka.transport.threshold":                                              "",
	"akka.watch.heartbeat.interval":                                         "",
	"akka.watch.heartbeat.pause":                                            "",
	"akka.watch.threshold":                                                  "",
	"cluster.evenly-spread-out-slots":                                       "taskmanager.load-balance.mode",
	"containerized.heap-cutoff-min":                                         "taskmanager.memory.jvm-overhead.min",
	"containerized.heap-cutoff-ratio":                                       "taskmanager.memory.jvm-overhead.fraction",
	"execution-retries.default":                                             "restart-strategy.fixed-delay.attempts",
	"execution-retries.delay":                                               "restart-strategy.fixed-delay.delay",
	"execution.async-state.buffer-size":                                     "",
	"execution.async-state.buffer-timeout":                                  "",
	"execution.async-state.in-flight-records-limit":                         "",
	"execution.checkpointing.force":                                         "",
	"fine-grained.shuffle-mode.all-blocking":                                "",
	"flink.base.dir.path":                                                   "",
	"fs.hdfs.hadoopconf":                                                    "HADOOP_CONF_DIR",
	"fs.hdfs.hdfsdefault":                                                   "HADOOP_CONF_DIR",
	"fs.hdfs.hdfssite":                                                      "HADOOP_CONF_DIR",
	"high-availability.job.delay":                                           "",
	"high-availability.zookeeper.path.checkpoint-counter":                   "",
	"high-availability.zookeeper.path.checkpoints":                          "",
	"high-availability.zookeeper.path.latch":                                "",
	"high-availability.zookeeper.path.leader":                               "",
	"high-availability.zookeeper.path.mesos-workers":                        "",
	"high-availability.zookeeper.path.running-registry":                     "",
	"jobmanager.heap.mb":                                                    "am.memory",
	"jobmanager.heap.size":                                                  "am.memory",
	"jobmanager.web.backpressure.cleanup-interval":                          "",
	"jobmanager.web.backpressure.delay-between-samples":                     "",
	"jobmanager.web.backpressure.num-samples":                               "",
	"jobmanager.web.backpressure.refresh-interval":                          "",
	"jobmanager.web.checkpoints.disable":                                    "",
	"jobmanager.web.ssl.enabled":                                            "security.ssl.rest.enabled",
	"local.number-jobmanager":                                               "",
	"local.number-resourcemanager":                                          "",
	"local.start-webserver":                                                 "",
	"mesos.failover-timeout":                                                "",
	"mesos.initial-tasks":                                                   "",
	"mesos.master":                                                          "",
	"mesos.maximum-failed-tasks":                                            "",
	"mesos.resourcemanager.artifactserver.port":                             "",
	"mesos.resourcemanager.artifactserver.ssl.enabled":                      "",
	"mesos.resourcemanager.framework.name":                                  "",
	"mesos.resourcemanager.framework.principal":                             "",
	"mesos.resourcemanager.framework.role":                                  "",
	"mesos.resourcemanager.framework.secret":                                "",
	"mesos.resourcemanager.framework.user":                                  "",
	"pipeline.auto-type-registration":                                       "pipeline.serialization-config",
	"pipeline.default-kryo-serializers":                                     "pipeline.serialization-config",
	"pipeline.registered-kryo-types":                                        "pipeline.serialization-config",
	"pipeline.registered-pojo-types":                                        "pipeline.serialization-config",
	"pipeline.time-characteristic":                                          "",
	"recovery.job.delay":                                                    "",
	"recovery.zookeeper.path.checkpoint-counter":                            "",
	"recovery.zookeeper.path.checkpoints":                                   "",
	"recovery.zookeeper.path.latch":                                         "",
	"recovery.zookeeper.path.leader":                                        "",
	"recovery.zookeeper.path.mesos-workers":                                 "",
	"resourcemanager.taskmanager-release.wait.result.consumed":              "",
	"security.ssl.enabled":                                                  "security.ssl.internal.enabled",
	"state.backend.async":                                                   "",
	"state.backend.rocksdb.checkpointdir":                                   "state.backend.rocksdb.localdir",
	"table.exec.deduplicate.insert-and-updateafter-sensitive.enabled":       "table.exec.deduplicate.insert-update-after-sensitive-enabled",
	"table.exec.deduplicate.mini-batch.compact-changes.enabled":             "table.exec.deduplicate.mini-batch.compact-changes-enabled",
	"table.exec.legacy-transformation-uids":                                 "table.exec.uid.generation",
	"table.exec.shuffle-mode":                                               "execution.batch-shuffle-mode",
	"table.exec.topn-cache-size":                                            "table.exec.rank.topn-cache-size",
	"table.optimizer.source.aggregate-pushdown-enabled":                     "",
	"table.optimizer.source.predicate-pushdown-enabled":                     "",
	"table.optimizer.sql-to-rel.project.merge.enabled":                      "table.optimizer.sql2rel.project-merge.enabled",
	"taskmanager.exit-on-fatal-akka-error":                                  "",
	"taskmanager.heap.mb":                                                   "taskexecutor.memory",
	"taskmanager.heap.size":                                                 "taskexecutor.memory",
	"taskmanager.hostname":                                                  "taskmanager.host",
	"taskmanager.initial-registration-pause":                                "cluster.registration.initial-timeout",
	"taskmanager.max-registration-pause":                                    "cluster.registration.max-timeout",
	"taskmanager.memory.fraction":                                           "taskmanager.memory.managed.fraction",
	"taskmanager.memory.off-heap":                                           "",
	"taskmanager.memory.preallocate":                                        "",
	"taskmanager.net.client.numThreads":                                     "",
	"taskmanager.net.num-arenas":                                            "",
	"taskmanager.net.sendReceiveBufferSize":                                 "",
	"taskmanager.net.server.backlog":                                        "",
	"taskmanager.net.server.numThreads":                                     "",
	"taskmanager.net.transport":                                             "",
	"taskmanager.network.batch-shuffle.compression.enabled":                 "",
	"taskmanager.network.blocking-shuffle.compression.enabled":              "",
	"taskmanager.network.blocking-shuffle.type":                             "",
	"taskmanager.network.defaultIOMode":                                     "",
	"taskmanager.network.hybrid-shuffle.enable-new-mode":                    "",
	"taskmanager.network.hybrid-shuffle.num-retained-in-memory-regions-max": "",
	"taskmanager.network.hybrid-shuffle.spill-index-region-group-size":      "",
	"taskmanager.network.hybrid-shuffle.spill-index-segment-size":           "",
	"taskmanager.network.max-num-tcp-connections":                           "",
	"taskmanager.network.memory.buffers-per-channel":                        "",
	"taskmanager.network.memory.floating-buffers-per-gate":                  "",
	"taskmanager.network.memory.max-buffers-per-channel":                    "",
	"taskmanager.network.memory.max-overdraft-buffers-per-gate":             "",
	"taskmanager.network.netty.client.numThreads":                           "",
	"taskmanager.network.netty.num-arenas":                                  "",
	"taskmanager.network.netty.sendReceiveBufferSize":                       "",
	"taskmanager.network.netty.server.backlog":                              "",
	"taskmanager.network.netty.server.numThreads":                           "",
	"taskmanager.network.netty.transport":                                   "",
	"taskmanager.network.numberOfBuffers":                                   "taskmanager.memory.network.min",
	"taskmanager.network.sort-shuffle.min-parallelism":                      "",
	"taskmanager.refused-registration-pause":                                "cluster.registration.refused-registration-delay",
	"taskmanager.registration.initial-backoff":                              "cluster.registration.initial-timeout",
	"taskmanager.registration.max-backoff":                                  "cluster.registration.max-timeout",
	"taskmanager.registration.refused-backoff":                              "cluster.registration.refused-registration-delay",
	"traces.report-events-as-spans":                                         "",
	"web.backpressure.cleanup-interval":                                     "",
	"web.backpressure.delay-between-samples":                                "",
	"web.backpressure.num-samples":                                          "",
	"web.backpressure.refresh-interval":                                     "",
	"web.ssl.enabled":                                                       "security.ssl.rest.enabled",
	"yarn.heap-cutoff-min":                                                  "taskmanager.memory.jvm-overhead.min",
	"yarn.heap-cutoff-ratio":                                                "taskmanager.memory.jvm-overhead.fraction",
	"yarn.maximum-failed-containers":                                        "",
	"yarn.reallocate-failed":                                                "",
}

// RemovedInFlink2 returns what replaces key in Flink 2 ("" when nothing does) and whether key is one
// Flink 2 no longer reads.
func RemovedInFlink2(key string) (use string, removed bool) {
	use, removed = removedInFlink2[key]
	return use, removed
}

// RemovedKeys returns the keys of c that Flink 2 no longer reads, sorted.
func RemovedKeys(c *Config) []string {
	var out []string
	for _, k := range c.Keys() {
		if _, ok := removedInFlink2[k]; ok {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// replacement says what to set instead of a removed key.
func replacement(key string) string {
	switch use := removedInFlink2[key]; use {
	case "":
		return "nothing replaces it: leave it out"
	case "am.memory":
		return "size the JobManager with the job file's am.memory instead (yarn-am makes its jobmanager.memory.process.size from it)"
	case "taskexecutor.memory":
		return "size the TaskManagers with the job file's taskexecutor.memory instead (yarn-am makes their taskmanager.memory.process.size from it)"
	case "HADOOP_CONF_DIR":
		return "leave it out: the containers read Hadoop's configuration from HADOOP_CONF_DIR, which the NodeManager sets"
	default:
		return fmt.Sprintf("use %q instead", use)
	}
}

// RemovedKeyError is the refusal of a key Flink 2 no longer reads, set for a Flink 2 home; from is
// where it was set, as " (from ...)", or "".
func RemovedKeyError(key, value, from, flinkVersion string) error {
	return fmt.Errorf("flink: key %q = %s%s: Flink %s does not read it (Flink 2.0 removed it; Flink would ignore it without a word): %s (docs/flink.md#flink-2)",
		key, shown(value), from, flinkVersion, replacement(key))
}

// RemovedKeyWarning is the warning for a key Flink 2 no longer reads, set for a Flink 1.x home, which
// still reads it; from as RemovedKeyError's.
func RemovedKeyWarning(key, value, from, flinkVersion string) string {
	return fmt.Sprintf("flink: key %q = %s%s works with Flink %s but Flink 2.0 removed it (Flink 2 would ignore it): %s (docs/flink.md#flink-2)",
		key, shown(value), from, flinkVersion, strings.Replace(replacement(key), "leave it out", "drop it", 1))
}

// CheckRemovedKeys refuses the keys of c that Flink 2 no longer reads when flinkVersion is Flink 2 or
// later: a key Flink ignores would leave a setting the user relies on (a memory size, a restart
// strategy) silently undone. A Flink 1.x (or unknown) version refuses none.
func CheckRemovedKeys(c *Config, flinkVersion string) error {
	if !IsFlink2(flinkVersion) {
		return nil
	}
	var errs []error
	for _, k := range RemovedKeys(c) {
		v, _ := c.Get(k)
		errs = append(errs, RemovedKeyError(k, v, "", flinkVersion))
	}
	return errors.Join(errs...)
}
