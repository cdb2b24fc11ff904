package yarnam.minicluster;

import org.apache.hadoop.yarn.conf.YarnConfiguration;

/**
 * The preemption control (--preemption; README.md, "Preemption"): two leaf queues, {@code batch}
 * (capacity 50%, maximum 100%) and {@code urgent} (capacity 50%, maximum 100%), instead of
 * {@code default}, and the CapacityScheduler's preemption monitor on: a job in {@code batch} that
 * holds the whole cluster loses containers to one in {@code urgent} that needs its guaranteed half.
 * The monitor looks every {@link #MONITOR_INTERVAL_MS} and kills a container
 * {@link #MAX_WAIT_BEFORE_KILL_MS} after it first named it to its application (Hadoop's defaults are
 * 3 s and 15 s). It takes up to the whole need in one round (the defaults spread it over several:
 * 10% of the cluster per round, a fifth of what is left each time).
 */
final class Preemption {
  static final String BATCH = "batch";
  static final String URGENT = "urgent";
  static final long MONITOR_INTERVAL_MS = 1000;
  static final long MAX_WAIT_BEFORE_KILL_MS = 10000;
  private static final String MONITOR = "yarn.resourcemanager.monitor.capacity.preemption.";

  private Preemption() {}

  /** The queues and the monitor's keys, before the RM starts. */
  static void configure(YarnConfiguration c) {
    String root = "yarn.scheduler.capacity.root";
    c.set(root + ".queues", BATCH + "," + URGENT);
    for (String q : new String[] {BATCH, URGENT}) {
      c.set(root + "." + q + ".capacity", "50");
      c.set(root + "." + q + ".maximum-capacity", "100");
    }
    c.unset(root + ".default.capacity");
    c.unset(root + ".default.maximum-capacity");
    c.setBoolean(YarnConfiguration.RM_SCHEDULER_ENABLE_MONITORS, true);
    c.set(YarnConfiguration.RM_SCHEDULER_MONITOR_POLICIES,
        "org.apache.hadoop.yarn.server.resourcemanager.monitor.capacity."
            + "ProportionalCapacityPreemptionPolicy");
    c.setLong(MONITOR + "monitoring_interval", MONITOR_INTERVAL_MS);
    c.setLong(MONITOR + "max_wait_before_kill", MAX_WAIT_BEFORE_KILL_MS);
    c.setFloat(MONITOR + "total_preemption_per_round", 1.0f);
    c.setFloat(MONITOR + "natural_termination_factor", 1.0f);
    System.err.println("minicluster: preemption monitor on, queues " + BATCH + " and " + URGENT
        + " (50% each, maximum 100%), max_wait_before_kill " + MAX_WAIT_BEFORE_KILL_MS + " ms");
  }
}
