package yarnam.minicluster;

import java.io.File;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.permission.FsPermission;
import org.apache.hadoop.hdfs.HdfsConfiguration;
import org.apache.hadoop.hdfs.MiniDFSCluster;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.util.VersionInfo;
import org.apache.hadoop.yarn.api.records.NodeReport;
import org.apache.hadoop.yarn.api.records.NodeState;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.util.resource.ResourceUtils;

import sun.misc.Signal;

/**
 * The yarn-am mini cluster harness: MiniDFSCluster + MiniYARNCluster on loopback for the Go
 * integration tests and benchmarks. See testdata/minicluster/README.md for what it starts, the
 * files it writes and how `make minicluster-up` drives it.
 *
 * <p>Seams: {@link Options} (flags), {@link SecureMode} (--secure: MiniKdc, keytabs, security keys),
 * {@link AddressedYarnCluster} (per-NM loopback addresses), {@link #yarnConf} (every YARN key the
 * harness sets, in one place).
 */
public final class Main {
  static final String GPU = "yarn.io/gpu";
  static final String FPGA = "yarn.io/fpga";
  static final String LOOPBACK = "127.0.0.1";

  /** JVM options that Hadoop 3.4 needs on Java 17 (the HADOOP-19310 list). */
  static final String JAVA17_OPTS = String.join(" ",
      "-XX:+IgnoreUnrecognizedVMOptions",
      "--add-opens=java.base/java.lang=ALL-UNNAMED",
      "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
      "--add-opens=java.base/java.io=ALL-UNNAMED",
      "--add-opens=java.base/java.net=ALL-UNNAMED",
      "--add-opens=java.base/java.nio=ALL-UNNAMED",
      "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
      "--add-opens=java.base/java.math=ALL-UNNAMED",
      "--add-opens=java.base/java.text=ALL-UNNAMED",
      "--add-opens=java.base/java.util=ALL-UNNAMED",
      "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
      "--add-opens=java.base/java.util.zip=ALL-UNNAMED",
      "--add-opens=java.base/sun.security.util=ALL-UNNAMED",
      "--add-opens=java.base/sun.security.x509=ALL-UNNAMED");

  /** The HA pair's ids (rm1 alone without --ha), as yarn.resourcemanager.ha.rm-ids names them. */
  static final String[] RM_IDS = {"rm1", "rm2"};
  static final String NM_EXPIRY = "yarn.nm.liveness-monitor.expiry-interval-ms";
  // Who takes SchedulingRequests with placement constraints (Hadoop 3.1+; default disabled).
  static final String PLACEMENT_HANDLER = "yarn.resourcemanager.placement-constraints.handler";

  private final Options opts;
  private int[] rm2Ports;
  private MiniDFSCluster dfs;
  private AddressedYarnCluster yarn;
  private SecureMode secure;
  private boolean stopped;

  private Main(Options opts) {
    this.opts = opts;
  }

  public static void main(String[] args) {
    Options opts;
    try {
      opts = Options.parse(args);
    } catch (Options.UsageException e) {
      if (e.getMessage() != null) {
        System.err.println("minicluster: " + e.getMessage());
      }
      System.err.println(Options.USAGE);
      System.exit(e.getMessage() == null ? 0 : 2);
      return;
    }
    Main m = new Main(opts);
    // SIGTERM/SIGINT: stop YARN, then HDFS, then exit 0 (a plain JVM would exit 143/130).
    Signal.handle(new Signal("TERM"), sig -> m.stopAndExit("SIGTERM"));
    Signal.handle(new Signal("INT"), sig -> m.stopAndExit("SIGINT"));
    Runtime.getRuntime().addShutdownHook(new Thread(m::stop, "minicluster-stop"));
    try {
      m.start();
    } catch (Throwable t) {
      System.err.println("minicluster: start failed: " + t);
      t.printStackTrace();
      m.stop();
      System.exit(1);
    }
    try {
      new CountDownLatch(1).await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private void stopAndExit(String why) {
    // Runs on a fresh thread so the JVM's signal dispatcher is not blocked while services stop.
    new Thread(() -> {
      System.err.println("minicluster: " + why + ": stopping YARN, then HDFS");
      stop();
      System.err.println("minicluster: stopped");
      System.exit(0);
    }, "minicluster-signal").start();
  }

  private synchronized void stop() {
    if (stopped) {
      return;
    }
    stopped = true;
    if (yarn != null) {
      // Each NM takes ~15 s to stop with containers running (it waits for them, then for its
      // deletion service, which holds the debug-delayed deletions); stop them side by side.
      List<Thread> nmStops = new ArrayList<>();
      for (int i = 0; i < opts.nmHosts.size(); i++) {
        final int index = i;
        Thread t = new Thread(() -> {
          try {
            yarn.getNodeManager(index).stop();
          } catch (Throwable e) {
            System.err.println("minicluster: stopping NodeManager " + index + ": " + e);
          }
        }, "minicluster-stop-nm-" + i);
        t.start();
        nmStops.add(t);
      }
      for (Thread t : nmStops) {
        try {
          t.join(45_000);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      try {
        yarn.stop();
      } catch (Throwable t) {
        System.err.println("minicluster: stopping YARN: " + t);
      }
    }
    if (dfs != null) {
      try {
        dfs.shutdown();
      } catch (Throwable t) {
        System.err.println("minicluster: stopping HDFS: " + t);
      }
    }
    if (secure != null) {
      try {
        secure.stop();
      } catch (Throwable t) {
        System.err.println("minicluster: stopping MiniKdc: " + t);
      }
    }
  }

  private void start() throws Exception {
    File work = opts.workDir;
    if (!work.isDirectory() && !work.mkdirs()) {
      throw new IOException("--work-dir " + work + ": cannot create it");
    }
    // Indexes 7..11: rm2 of the HA pair, the same five addresses on free ports (picked together
    // with the others so none repeats).
    int[] all = freePorts(opts.rmPort, opts.schedulerPort, opts.trackerPort, opts.adminPort,
        opts.webPort, opts.nnPort, opts.nnHttpPort, 0, 0, 0, 0, 0);
    int[] ports = java.util.Arrays.copyOfRange(all, 0, 7);
    rm2Ports = opts.ha ? java.util.Arrays.copyOfRange(all, 7, 12) : null;

    // HDFS first: YARN's configuration builds on it (fs.defaultFS).
    Configuration hconf = new HdfsConfiguration();
    hconf.setInt("dfs.replication", 1);
    if (opts.secure) {
      long t0 = System.currentTimeMillis();
      secure = new SecureMode(opts);
      secure.startKdc();
      secure.apply(hconf);
      UserGroupInformation.setConfiguration(hconf);
      secure.loginServices();
      System.err.println("minicluster: Kerberos ready in " + (System.currentTimeMillis() - t0)
          + " ms (hadoop.rpc.protection=" + opts.rpcProtection + ")");
    }
    dfs = asHdfs(() -> {
      MiniDFSCluster c = new MiniDFSCluster.Builder(hconf, new File(work, "dfs"))
          .numDataNodes(1)
          .nameNodePort(ports[5])
          .nameNodeHttpPort(ports[6])
          .format(true)
          .build();
      c.waitActive();
      return c;
    });
    String defaultFs = "hdfs://" + LOOPBACK + ":" + dfs.getNameNodePort();
    Configuration dfsConf = new Configuration(dfs.getConfiguration(0));
    dfsConf.set(FileSystem.FS_DEFAULT_NAME_KEY, defaultFs);
    // The started NameNode reports these as "localhost:PORT"; clients get the address it listens on.
    dfsConf.set("dfs.namenode.rpc-address", LOOPBACK + ":" + dfs.getNameNodePort());
    dfsConf.set("dfs.namenode.http-address", LOOPBACK + ":" + ports[6]);
    asHdfs(() -> {
      prepareHdfs(dfsConf);
      return null;
    });
    System.err.println("minicluster: HDFS up at " + defaultFs);
    if (secure != null) {
      secure.loginStaticAsRm();
    }

    YarnConfiguration yconf = yarnConf(dfsConf, ports);
    if (secure != null) {
      secure.apply(yconf);
    }
    if (opts.nmExpiryMs > 0) {
      // After the secure keys (they set their own expiry): --nm-expiry-ms is the last word.
      yconf.setLong(NM_EXPIRY, opts.nmExpiryMs);
    }
    if (opts.amMaxAttempts > 0) {
      yconf.setInt(YarnConfiguration.RM_AM_MAX_ATTEMPTS, opts.amMaxAttempts);
    }
    ResourceUtils.resetResourceTypes(yconf);
    if (opts.labels) {
      NodeLabels.configure(yconf, work);
    }
    if (opts.preemption) {
      Preemption.configure(yconf);
    }
    if (opts.placementHandler != null) {
      yconf.set(PLACEMENT_HANDLER, opts.placementHandler);
    }
    if (opts.ha) {
      // A transition to active reloads the scheduler and node settings from the RM's configuration
      // provider, not from the Configuration it was started with; the default one reads the
      // classpath, where Hadoop's own capacity-scheduler.xml (max 4 vcores, no GPUs) would win and
      // the transition fail ("maximum allocation size can not be decreased"). So both RMs read
      // this configuration back from a directory.
      File rmConf = new File(work, "rm-conf");
      yconf.set("yarn.resourcemanager.configuration.provider-class",
          "org.apache.hadoop.yarn.FileSystemBasedConfigurationProvider");
      yconf.set("yarn.resourcemanager.configuration.file-system-based-store",
          rmConf.toURI().toString());
      ConfigWriter.writeAll(yconf, rmConf, "capacity-scheduler.xml");
      ConfigWriter.writeAll(yconf, rmConf, "yarn-site.xml");
    }
    yarn = new AddressedYarnCluster("yarn-am-minicluster", opts.nmHosts, work, secure,
        opts.ha ? 2 : 1, opts.remoteLogDir);
    asRm(() -> {
      yarn.init(yconf);
      yarn.start();
      return null;
    });
    yarn.isolateWebApps();
    List<NodeReport> nodes = asRm(() -> waitForNodes(yarn.getConfig()));
    if (opts.labels) {
      NodeLabels.assign(yarn.getResourceManager(0), nodes);
    }
    if (opts.placementHandler != null) {
      NodeAttributes.assign(yarn.getResourceManager(0), nodes);
    }

    writeConfig(dfsConf, clientYarnConf(yarn.getConfig(), ports));
    String[] rmIds = opts.ha ? new String[] {RM_IDS[0], RM_IDS[1]} : new String[] {RM_IDS[0]};
    String[] rmAddrs = opts.ha
        ? new String[] {LOOPBACK + ":" + ports[0], LOOPBACK + ":" + rm2Ports[0]}
        : new String[] {LOOPBACK + ":" + ports[0]};
    String[] rmWebs = opts.ha
        ? new String[] {"http://" + LOOPBACK + ":" + ports[4], "http://" + LOOPBACK + ":" + rm2Ports[4]}
        : new String[] {"http://" + LOOPBACK + ":" + ports[4]};
    new Controls(opts, yarn, rmIds, rmAddrs).start();
    List<String> rms = new ArrayList<>();
    List<String> webs = new ArrayList<>();
    for (int i = 0; i < rmIds.length; i++) {
      rms.add(rmIds[i] + "=" + rmAddrs[i]);
      webs.add(rmIds[i] + "=" + rmWebs[i]);
    }
    List<String> addrs = new ArrayList<>();
    for (NodeReport n : nodes) {
      addrs.add(n.getNodeId().toString());
    }
    Collections.sort(addrs);
    System.out.println("MINICLUSTER READY rm=" + LOOPBACK + ":" + ports[0]
        + " web=http://" + LOOPBACK + ":" + ports[4]
        + " hdfs=" + defaultFs
        + " conf=" + opts.confDir
        + " nodes=" + String.join(",", addrs)
        + " user=" + opts.user
        + " hadoop=" + VersionInfo.getVersion()
        + " mode=" + (opts.ha ? "ha" : opts.recovery ? "recovery" : opts.labels ? "labels"
            : opts.preemption ? "preemption" : "plain")
        + " rms=" + String.join(",", rms)
        + " webs=" + String.join(",", webs)
        + " control=" + opts.controlDir
        + " nmexpiryms=" + yarn.getConfig().getLong(NM_EXPIRY, 600000)
        + " remotelogdir=" + opts.remoteLogDir
        + " placement=" + yarn.getConfig().get(PLACEMENT_HANDLER, "disabled")
        + (secure == null ? "" : " realm=" + opts.realm
            + " kdc=" + secure.kdcAddress()
            + " principal=" + secure.testPrincipal()
            + " keytab=" + secure.testKeytab().getAbsolutePath()
            + " krb5conf=" + secure.krb5Conf().getAbsolutePath()
            + " rpcprotection=" + opts.rpcProtection));
    System.out.flush();
  }

  private <T> T asHdfs(java.security.PrivilegedExceptionAction<T> a) throws Exception {
    return secure == null ? a.run() : secure.asHdfs(a);
  }

  private <T> T asRm(java.security.PrivilegedExceptionAction<T> a) throws Exception {
    return secure == null ? a.run() : secure.asRm(a);
  }

  /** Creates /user/USER (owned by USER) and /tmp (1777), as on a real cluster. */
  private void prepareHdfs(Configuration conf) throws IOException {
    FileSystem fs = dfs.getFileSystem();
    Path home = new Path("/user/" + opts.user);
    fs.mkdirs(home);
    fs.setOwner(home, opts.user, null);
    Path tmp = new Path("/tmp");
    fs.mkdirs(tmp);
    fs.setPermission(tmp, new FsPermission((short) 01777));
  }

  /** Every YARN key the harness sets, in one place. */
  private YarnConfiguration yarnConf(Configuration base, int[] ports) {
    YarnConfiguration c = new YarnConfiguration(base);
    // Fixed, known ports; without both flags MiniYARNCluster rewrites RM addresses to port 0.
    c.setBoolean(YarnConfiguration.YARN_MINICLUSTER_FIXED_PORTS, true);
    c.setBoolean(YarnConfiguration.YARN_MINICLUSTER_USE_RPC, true);
    c.set(YarnConfiguration.RM_HOSTNAME, LOOPBACK);
    c.set(YarnConfiguration.RM_ADDRESS, LOOPBACK + ":" + ports[0]);
    c.set(YarnConfiguration.RM_SCHEDULER_ADDRESS, LOOPBACK + ":" + ports[1]);
    c.set(YarnConfiguration.RM_RESOURCE_TRACKER_ADDRESS, LOOPBACK + ":" + ports[2]);
    c.set(YarnConfiguration.RM_ADMIN_ADDRESS, LOOPBACK + ":" + ports[3]);
    c.set(YarnConfiguration.RM_WEBAPP_ADDRESS, LOOPBACK + ":" + ports[4]);
    c.setBoolean(YarnConfiguration.TIMELINE_SERVICE_ENABLED, false);
    // Without a scheme MiniYARNCluster's default for this resolves against fs.defaultFS (HDFS).
    // The key by name: YarnConfiguration.FS_NODE_ATTRIBUTE_STORE_ROOT_DIR is not in Hadoop 3.1.
    c.set("yarn.node-attribute.fs-store.root-dir",
        new File(opts.workDir, "rm/node-attributes").toURI().toString());

    // Countable resource types; every NM of this JVM reports the same amounts.
    c.set(YarnConfiguration.RESOURCE_TYPES, GPU + "," + FPGA);
    c.setInt(YarnConfiguration.RESOURCE_TYPES + "." + GPU + ".maximum-allocation", opts.nmGpus);
    c.setInt(YarnConfiguration.RESOURCE_TYPES + "." + FPGA + ".maximum-allocation", opts.nmFpgas);
    c.setInt(YarnConfiguration.NM_RESOURCES_PREFIX + GPU, opts.nmGpus);
    c.setInt(YarnConfiguration.NM_RESOURCES_PREFIX + FPGA, opts.nmFpgas);
    c.setInt(YarnConfiguration.YARN_MINICLUSTER_NM_PMEM_MB, opts.nmMemoryMb);
    c.setInt(YarnConfiguration.NM_PMEM_MB, opts.nmMemoryMb);
    c.setInt(YarnConfiguration.NM_VCORES, opts.nmVcores);
    c.setInt(YarnConfiguration.RM_SCHEDULER_MAXIMUM_ALLOCATION_MB, opts.nmMemoryMb);
    c.setInt(YarnConfiguration.RM_SCHEDULER_MAXIMUM_ALLOCATION_VCORES, opts.nmVcores);

    // CapacityScheduler with DRF (the default calculator ignores everything but memory).
    c.set(YarnConfiguration.RM_SCHEDULER,
        "org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CapacityScheduler");
    c.set("yarn.scheduler.capacity.resource-calculator",
        "org.apache.hadoop.yarn.util.resource.DominantResourceCalculator");
    c.set("yarn.scheduler.capacity.root.queues", "default");
    c.set("yarn.scheduler.capacity.root.default.capacity", "100");
    c.set("yarn.scheduler.capacity.root.default.maximum-capacity", "100");
    // The default 10% of 16 GB lets only one AM run at a time; tests run a few side by side.
    c.set("yarn.scheduler.capacity.maximum-am-resource-percent", "0.5");

    // Settings real AM tests need.
    c.setBoolean(YarnConfiguration.NM_VMEM_CHECK_ENABLED, false);
    c.setBoolean(YarnConfiguration.NM_PMEM_CHECK_ENABLED, false);
    c.setFloat(YarnConfiguration.NM_MAX_PER_DISK_UTILIZATION_PERCENTAGE, 99.9f);
    c.setLong(YarnConfiguration.NM_MIN_PER_DISK_FREE_SPACE_MB, 0);
    c.setInt(YarnConfiguration.DEBUG_NM_DELETE_DELAY_SEC, 600);
    c.setLong(YarnConfiguration.RM_NM_HEARTBEAT_INTERVAL_MS, opts.heartbeatMs);
    // Aggregated logs on HDFS at application end (the default roll interval -1), kept a day and
    // read back by `yarn logs` (README.md, "Log aggregation"). The NM keeps its local copy for
    // DEBUG_NM_DELETE_DELAY_SEC above, so tests that read the NM log dirs still find them.
    c.setBoolean(YarnConfiguration.LOG_AGGREGATION_ENABLED, true);
    c.set(YarnConfiguration.NM_REMOTE_APP_LOG_DIR, opts.remoteLogDir);
    c.set("yarn.log-aggregation.file-formats", opts.logAggregationFormat);
    c.set("yarn.log-aggregation.file-controller.TFile.class",
        "org.apache.hadoop.yarn.logaggregation.filecontroller.tfile.LogAggregationTFileController");
    c.set("yarn.log-aggregation.file-controller.IFile.class",
        "org.apache.hadoop.yarn.logaggregation.filecontroller.ifile.LogAggregationIndexedFileController");
    c.setLong("yarn.log-aggregation.retain-seconds", 86400);
    c.setLong("yarn.log-aggregation.retain-check-interval-seconds", 3600);
    if (opts.logRollSec > 0) {
      // Rolling log aggregation for one cluster (LOG_ROLL_SEC=N; README.md, "Log aggregation"):
      // below the NodeManager's 3600 s minimum only with debug-enabled.
      c.setLong("yarn.nodemanager.log-aggregation.roll-monitoring-interval-seconds", opts.logRollSec);
      c.setBoolean("yarn.nodemanager.log-aggregation.debug-enabled", true);
    }
    faultKeys(c, ports);
    // Java launched in containers (DistributedShell's AM, its workers) gets the Java 17 options
    // without any client flag; JDK_JAVA_OPTIONS is read by the `java` launcher only.
    c.set(YarnConfiguration.NM_ADMIN_USER_ENV,
        "MALLOC_ARENA_MAX=$MALLOC_ARENA_MAX,JDK_JAVA_OPTIONS=" + JAVA17_OPTS);
    // There is no Hadoop install here: Java AMs (DistributedShell) get the harness's own jars.
    List<String> cp = new ArrayList<>();
    cp.add(opts.confDir.getAbsolutePath());
    for (String e : System.getProperty("java.class.path").split(File.pathSeparator)) {
      if (!e.isEmpty()) {
        cp.add(new File(e).getAbsolutePath());
      }
    }
    c.setStrings(YarnConfiguration.YARN_APPLICATION_CLASSPATH, cp.toArray(new String[0]));
    return c;
  }

  /**
   * The keys of the fault modes: an HA pair with manual failover (--ha) or one restartable RM
   * (--recovery), both with work-preserving recovery from a file-system state store on local disk
   * (both RMs of the pair read the same directory), and reconnect intervals short enough that NMs
   * and clients find the new RM within seconds.
   */
  private void faultKeys(YarnConfiguration c, int[] ports) {
    if (!opts.ha && !opts.recovery) {
      return;
    }
    c.setBoolean(YarnConfiguration.RECOVERY_ENABLED, true);
    c.setBoolean("yarn.resourcemanager.work-preserving-recovery.enabled", true);
    c.set(YarnConfiguration.RM_STORE,
        "org.apache.hadoop.yarn.server.resourcemanager.recovery.FileSystemRMStateStore");
    c.set("yarn.resourcemanager.fs.state-store.uri",
        new File(opts.workDir, "rm-state").toURI().toString());
    c.setLong("yarn.resourcemanager.connect.retry-interval.ms", 500);
    c.setLong("yarn.client.failover-sleep-base-ms", 200);
    c.setLong("yarn.client.failover-sleep-max-ms", 1000);
    if (!opts.ha) {
      return;
    }
    c.setBoolean(YarnConfiguration.RM_HA_ENABLED, true);
    c.set(YarnConfiguration.RM_HA_IDS, RM_IDS[0] + "," + RM_IDS[1]);
    c.set(YarnConfiguration.RM_CLUSTER_ID, "yarn-am-minicluster");
    // No ZooKeeper here: the harness drives transitions itself (Controls.failover).
    c.setBoolean("yarn.resourcemanager.ha.automatic-failover.enabled", false);
    c.setBoolean("yarn.resourcemanager.ha.automatic-failover.embedded", false);
    setRmAddresses(c, RM_IDS[0], ports);
    setRmAddresses(c, RM_IDS[1], rm2Ports);
  }

  /** The per-RM keys of an HA configuration: yarn.resourcemanager.address.rm1 and the like. */
  private static void setRmAddresses(Configuration c, String id, int[] p) {
    c.set(YarnConfiguration.RM_ADDRESS + "." + id, LOOPBACK + ":" + p[0]);
    c.set(YarnConfiguration.RM_SCHEDULER_ADDRESS + "." + id, LOOPBACK + ":" + p[1]);
    c.set(YarnConfiguration.RM_RESOURCE_TRACKER_ADDRESS + "." + id, LOOPBACK + ":" + p[2]);
    c.set(YarnConfiguration.RM_ADMIN_ADDRESS + "." + id, LOOPBACK + ":" + p[3]);
    c.set(YarnConfiguration.RM_WEBAPP_ADDRESS + "." + id, LOOPBACK + ":" + p[4]);
    c.set(YarnConfiguration.RM_HOSTNAME + "." + id, LOOPBACK);
  }

  /** Waits until the RM reports every NM RUNNING with its GPUs, and returns their reports. */
  private List<NodeReport> waitForNodes(Configuration conf) throws Exception {
    YarnClient client = YarnClient.createYarnClient();
    client.init(new YarnConfiguration(conf));
    client.start();
    try {
      long deadline = System.currentTimeMillis() + opts.readyTimeoutSec * 1000L;
      long nextNote = 0;
      while (true) {
        List<NodeReport> running = client.getNodeReports(NodeState.RUNNING);
        int withGpus = 0;
        for (NodeReport n : running) {
          if (n.getCapability().getResourceValue(GPU) == opts.nmGpus) {
            withGpus++;
          }
        }
        if (running.size() == opts.nmHosts.size() && withGpus == running.size()) {
          for (NodeReport n : running) {
            System.err.println("minicluster: node " + n.getNodeId() + " http="
                + n.getHttpAddress() + " capability=" + n.getCapability());
          }
          return running;
        }
        long now = System.currentTimeMillis();
        if (now > deadline) {
          throw new IOException("after " + opts.readyTimeoutSec + " s the RM reports "
              + running.size() + " RUNNING NodeManagers (" + withGpus + " with " + opts.nmGpus
              + " " + GPU + "), want " + opts.nmHosts.size() + ": " + running);
        }
        if (now >= nextNote) {
          System.err.println("minicluster: waiting for NodeManagers: " + running.size() + " of "
              + opts.nmHosts.size() + " RUNNING");
          nextNote = now + 5000;
        }
        Thread.sleep(200);
      }
    } finally {
      client.stop();
    }
  }

  /**
   * The started cluster's configuration with the RM addresses pinned to 127.0.0.1: once bound, the
   * RM rewrites them with the resolved host name ("localhost"), which a client may resolve to ::1
   * where nothing listens.
   */
  private Configuration clientYarnConf(Configuration started, int[] ports) {
    Configuration c = new Configuration(started);
    if (opts.ha) {
      // What an HA client sees on a real cluster: the ids and the per-RM addresses only; the
      // unsuffixed addresses and ha.id belong to one RM's own configuration.
      for (String k : new String[] {YarnConfiguration.RM_ADDRESS,
          YarnConfiguration.RM_SCHEDULER_ADDRESS, YarnConfiguration.RM_RESOURCE_TRACKER_ADDRESS,
          YarnConfiguration.RM_ADMIN_ADDRESS, YarnConfiguration.RM_WEBAPP_ADDRESS,
          YarnConfiguration.RM_HA_ID, YarnConfiguration.RM_HOSTNAME}) {
        c.unset(k);
      }
      setRmAddresses(c, RM_IDS[0], ports);
      setRmAddresses(c, RM_IDS[1], rm2Ports);
      return c;
    }
    c.set(YarnConfiguration.RM_ADDRESS, LOOPBACK + ":" + ports[0]);
    c.set(YarnConfiguration.RM_SCHEDULER_ADDRESS, LOOPBACK + ":" + ports[1]);
    c.set(YarnConfiguration.RM_RESOURCE_TRACKER_ADDRESS, LOOPBACK + ":" + ports[2]);
    c.set(YarnConfiguration.RM_ADMIN_ADDRESS, LOOPBACK + ":" + ports[3]);
    c.set(YarnConfiguration.RM_WEBAPP_ADDRESS, LOOPBACK + ":" + ports[4]);
    return c;
  }

  private void writeConfig(Configuration dfsConf, Configuration yarnConf) throws IOException {
    File dir = opts.confDir;
    Map<String, String> rt = new LinkedHashMap<>();
    rt.put(YarnConfiguration.RESOURCE_TYPES, GPU + "," + FPGA);
    rt.put(YarnConfiguration.RESOURCE_TYPES + "." + GPU + ".maximum-allocation",
        String.valueOf(opts.nmGpus));
    rt.put(YarnConfiguration.RESOURCE_TYPES + "." + FPGA + ".maximum-allocation",
        String.valueOf(opts.nmFpgas));
    ConfigWriter.write(rt, dir, "resource-types.xml");
    ConfigWriter.writeAllBut(dfsConf, dir, "hdfs-site.xml", "yarn.");
    ConfigWriter.writeAll(yarnConf, dir, "yarn-site.xml");
    // core-site.xml last: its presence with fs.defaultFS means the set is complete.
    ConfigWriter.writeAll(yarnConf, dir, "core-site.xml");
  }

  /**
   * Returns the wanted ports, with each 0 replaced by a free port on 127.0.0.1. All sockets are
   * held open together so the picked ports are distinct. The ports come from 20000-32767, below
   * Linux's ephemeral range: a port picked now and bound later (rm2's after a failover, the RM's
   * again after a restart) must not be taken meanwhile by a connection's or a listener's
   * kernel-chosen port, which failed a failover under load ("Address already in use").
   */
  static int[] freePorts(int... wanted) throws IOException {
    int[] out = wanted.clone();
    List<ServerSocket> held = new ArrayList<>();
    java.util.Random rnd = new java.util.Random();
    try {
      for (int i = 0; i < out.length; i++) {
        if (out[i] != 0) {
          continue;
        }
        for (int attempt = 0; out[i] == 0; attempt++) {
          int p = 20000 + rnd.nextInt(12768);
          try {
            ServerSocket s = new ServerSocket(p, 1, InetAddress.getByName(LOOPBACK));
            held.add(s);
            out[i] = p;
          } catch (IOException taken) {
            if (attempt > 500) {
              throw new IOException("no free port in 20000-32767 on " + LOOPBACK, taken);
            }
          }
        }
      }
    } finally {
      for (ServerSocket s : held) {
        s.close();
      }
    }
    return out;
  }
}
