package yarnam.minicluster;

import java.io.File;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Command-line options of the harness. Every port defaults to 0, which means "pick a free port on
 * 127.0.0.1 at start"; the chosen ports end up in the written configuration and the ready line.
 */
final class Options {
  File confDir;
  File workDir;
  List<String> nmHosts = new ArrayList<>(Arrays.asList("127.0.0.2", "127.0.0.3"));
  int rmPort;
  int schedulerPort;
  int trackerPort;
  int adminPort;
  int webPort;
  int nnPort;
  int nnHttpPort;
  int nmMemoryMb = 8192;
  int nmVcores = 8;
  int nmGpus = 4;
  int nmFpgas = 2;
  int heartbeatMs = 250;
  int readyTimeoutSec = 240;
  String user;
  // Fault controls (see Controls): HA pair, RM recovery, NM liveness expiry, the command dir.
  boolean ha;
  boolean recovery;
  // Node labels (NodeLabels): NodeManager 1 in an exclusive gpu partition.
  boolean labels;
  // Preemption (Preemption): queues batch and urgent, the CapacityScheduler's preemption monitor.
  boolean preemption;
  // yarn.resourcemanager.placement-constraints.handler (--placement-handler; null: Hadoop's
  // default, disabled): who takes SchedulingRequests with placement constraints.
  String placementHandler;
  int nmExpiryMs;
  int amMaxAttempts;
  File controlDir;
  // Log aggregation to HDFS (TFile or IFile).
  String logAggregationFormat = "TFile";
  String remoteLogDir = "/tmp/logs";
  // Rolling log aggregation every logRollSec seconds (0: off, YARN's default -1).
  int logRollSec;
  // Kerberos mode (MiniKdc, see SecureMode); the other secure flags need --secure.
  boolean secure;
  String rpcProtection;
  File kerberosDir;
  String realm = "YARNAM.TEST";
  int kdcPort;
  String testUser = "yarnam";
  int tokenRenewSec = 60;
  int tokenMaxLifetimeSec = 180;
  int keyRollingSec = 90;
  int livenessExpiryMs = 20000;
  String dataTransferProtection = "";
  private boolean secureFlagSeen;

  static final String USAGE = String.join("\n",
      "usage: yarnam.minicluster.Main --conf-dir DIR --work-dir DIR [flags]",
      "",
      "Starts MiniDFSCluster (1 DataNode) and MiniYARNCluster (1 RM, 2 NMs) on loopback, writes",
      "core-site.xml, yarn-site.xml, hdfs-site.xml and resource-types.xml to --conf-dir, prints",
      "  MINICLUSTER READY rm=HOST:PORT web=http://HOST:PORT hdfs=hdfs://HOST:PORT conf=DIR",
      "and runs until SIGTERM/SIGINT (then stops YARN, then HDFS, and exits 0).",
      "",
      "flags:",
      "  --conf-dir DIR          where the client configuration is written (required)",
      "  --work-dir DIR          data, NM local and log dirs (required; wiped at start)",
      "  --nm-hosts A,B          one loopback address per NodeManager (default 127.0.0.2,127.0.0.3)",
      "  --rm-port N             yarn.resourcemanager.address port (0 = free port)",
      "  --scheduler-port N      yarn.resourcemanager.scheduler.address port (0 = free port)",
      "  --tracker-port N        yarn.resourcemanager.resource-tracker.address port (0 = free port)",
      "  --admin-port N          yarn.resourcemanager.admin.address port (0 = free port)",
      "  --web-port N            yarn.resourcemanager.webapp.address port (0 = free port)",
      "  --nn-port N             NameNode RPC port (0 = free port)",
      "  --nn-http-port N        NameNode HTTP port (0 = free port)",
      "  --nm-memory-mb N        memory per NodeManager (default 8192)",
      "  --nm-vcores N           vcores per NodeManager (default 8)",
      "  --nm-gpus N             yarn.io/gpu per NodeManager (default 4)",
      "  --nm-fpgas N            yarn.io/fpga per NodeManager (default 2)",
      "  --heartbeat-ms N        NM heartbeat interval (default 250)",
      "  --ready-timeout-sec N   how long to wait for all NMs to be RUNNING (default 240)",
      "  --user NAME             owner of /user/NAME in HDFS (default $HADOOP_USER_NAME, else the OS user)",
      "",
      "Fault controls (commands through --control-dir; see Controls and README.md):",
      "  --ha                    two ResourceManagers rm1 (active) and rm2 (standby), manual failover,",
      "                          work-preserving recovery from a file-system state store",
      "  --recovery              one ResourceManager with work-preserving recovery (restartable)",
      "  --nm-expiry-ms N        yarn.nm.liveness-monitor.expiry-interval-ms (default: 10000 with --ha",
      "                          or --recovery, else Hadoop's 600000, or 20000 with --secure)",
      "  --am-max-attempts N     yarn.resourcemanager.am.max-attempts (default Hadoop's 2; the chaos soak",
      "                          kills AMs many times)",
      "  --control-dir DIR       where the harness takes commands (default: CONF_DIR/../control)",
      "  --labels                node labels gpu and fpga; NodeManager 1 in the exclusive gpu",
      "                          partition, which queue default may use (not fpga)",
      "  --preemption            queues batch and urgent (50% each, maximum 100%) instead of default,",
      "                          the preemption monitor on, max_wait_before_kill 10 s",
      "  --placement-handler H   yarn.resourcemanager.placement-constraints.handler: disabled (Hadoop's",
      "                          default), placement-processor or scheduler",
      "",
      "Log aggregation (always on, to HDFS):",
      "  --log-aggregation-format F  TFile (default) or IFile",
      "  --remote-log-dir PATH   yarn.nodemanager.remote-app-log-dir on HDFS (default /tmp/logs)",
      "  --log-roll-sec N        rolling log aggregation every N s (roll-monitoring-interval-seconds,",
      "                          with debug-enabled to allow less than 3600); default off",
      "",
      "Kerberos mode (every flag below but --secure needs --secure):",
      "  --secure                MiniKdc in this JVM, hadoop.security.authentication=kerberos",
      "  --kerberos-dir DIR      keytabs, krb5.conf and the KDC's files (default: CONF_DIR/../kerberos)",
      "  --rpc-protection P      hadoop.rpc.protection: authentication, integrity or privacy",
      "                          (default authentication)",
      "  --realm R               Kerberos realm, NAME.DOMAIN in capitals (default YARNAM.TEST)",
      "  --kdc-port N            KDC TCP port on 127.0.0.1 (0 = free port)",
      "  --test-user NAME        test user principal NAME@REALM, keytab DIR/NAME.keytab, owner of",
      "                          /user/NAME (default yarnam; --user is ignored with --secure)",
      "  --token-renew-sec N     RM and HDFS delegation token renew interval (default 60)",
      "  --token-max-lifetime-sec N  RM and HDFS delegation token max lifetime (default 180)",
      "  --key-rolling-sec N     AM-RM, NM and container token master key rolling interval; YARN",
      "                          wants more than 3 x --liveness-expiry-ms (default 90)",
      "  --liveness-expiry-ms N  AM and NM liveness expiry (default 20000)",
      "  --data-transfer-protection P  dfs.data.transfer.protection: authentication, integrity or",
      "                          privacy (default: unset, plain data transfer with block tokens)");

  static Options parse(String[] args) {
    Options o = new Options();
    for (int i = 0; i < args.length; i++) {
      String a = args[i];
      if (a.equals("-h") || a.equals("--help")) {
        throw new UsageException(null);
      }
      if (a.equals("--secure")) {
        o.secure = true;
        continue;
      }
      if (a.equals("--ha")) {
        o.ha = true;
        continue;
      }
      if (a.equals("--recovery")) {
        o.recovery = true;
        continue;
      }
      if (a.equals("--labels")) {
        o.labels = true;
        continue;
      }
      if (a.equals("--preemption")) {
        o.preemption = true;
        continue;
      }
      if (i + 1 >= args.length) {
        throw new UsageException("flag " + a + " needs a value");
      }
      String v = args[++i];
      switch (a) {
        case "--conf-dir": o.confDir = new File(v).getAbsoluteFile(); break;
        case "--work-dir": o.workDir = new File(v).getAbsoluteFile(); break;
        case "--placement-handler":
          if (!v.equals("disabled") && !v.equals("placement-processor") && !v.equals("scheduler")) {
            throw new UsageException("--placement-handler " + v
                + ": want disabled, placement-processor or scheduler");
          }
          o.placementHandler = v;
          break;
        case "--nm-hosts": o.nmHosts = new ArrayList<>(Arrays.asList(v.split(","))); break;
        case "--rm-port": o.rmPort = port(a, v); break;
        case "--scheduler-port": o.schedulerPort = port(a, v); break;
        case "--tracker-port": o.trackerPort = port(a, v); break;
        case "--admin-port": o.adminPort = port(a, v); break;
        case "--web-port": o.webPort = port(a, v); break;
        case "--nn-port": o.nnPort = port(a, v); break;
        case "--nn-http-port": o.nnHttpPort = port(a, v); break;
        case "--nm-memory-mb": o.nmMemoryMb = positive(a, v); break;
        case "--nm-vcores": o.nmVcores = positive(a, v); break;
        case "--nm-gpus": o.nmGpus = nonNegative(a, v); break;
        case "--nm-fpgas": o.nmFpgas = nonNegative(a, v); break;
        case "--heartbeat-ms": o.heartbeatMs = positive(a, v); break;
        case "--ready-timeout-sec": o.readyTimeoutSec = positive(a, v); break;
        case "--user": o.user = v; break;
        case "--nm-expiry-ms": o.nmExpiryMs = positive(a, v); break;
        case "--am-max-attempts": o.amMaxAttempts = positive(a, v); break;
        case "--control-dir": o.controlDir = new File(v).getAbsoluteFile(); break;
        case "--log-aggregation-format": o.logAggregationFormat = logFormat(a, v); break;
        case "--remote-log-dir": o.remoteLogDir = absolutePath(a, v); break;
        case "--log-roll-sec": o.logRollSec = positive(a, v); break;
        case "--rpc-protection": o.rpcProtection = qop(a, v); o.secureFlagSeen = true; break;
        case "--kerberos-dir": o.kerberosDir = new File(v).getAbsoluteFile(); o.secureFlagSeen = true; break;
        case "--realm": o.realm = realm(a, v); o.secureFlagSeen = true; break;
        case "--kdc-port": o.kdcPort = port(a, v); o.secureFlagSeen = true; break;
        case "--test-user": o.testUser = name(a, v); o.secureFlagSeen = true; break;
        case "--token-renew-sec": o.tokenRenewSec = positive(a, v); o.secureFlagSeen = true; break;
        case "--token-max-lifetime-sec": o.tokenMaxLifetimeSec = positive(a, v); o.secureFlagSeen = true; break;
        case "--key-rolling-sec": o.keyRollingSec = positive(a, v); o.secureFlagSeen = true; break;
        case "--liveness-expiry-ms": o.livenessExpiryMs = positive(a, v); o.secureFlagSeen = true; break;
        case "--data-transfer-protection": o.dataTransferProtection = qop(a, v); o.secureFlagSeen = true; break;
        default: throw new UsageException("unknown flag " + a);
      }
    }
    if (o.confDir == null || o.workDir == null) {
      throw new UsageException("--conf-dir and --work-dir are required");
    }
    if (o.nmHosts.isEmpty()) {
      throw new UsageException("--nm-hosts needs at least one address, e.g. 127.0.0.2,127.0.0.3");
    }
    if (o.controlDir == null) {
      o.controlDir = new File(o.confDir.getParentFile(), "control");
    }
    if (o.preemption && (o.ha || o.recovery || o.labels)) {
      throw new UsageException("--preemption with --ha, --recovery or --labels: the preemption"
          + " control runs on the plain cluster only");
    }
    if (o.labels && (o.ha || o.recovery)) {
      throw new UsageException("--labels with --ha or --recovery: the node-label control runs on"
          + " the plain cluster only");
    }
    if ((o.ha || o.recovery) && o.secure) {
      throw new UsageException((o.ha ? "--ha" : "--recovery") + " with --secure: the fault controls"
          + " run on the plain cluster only; drop --secure or the fault flag");
    }
    if (o.nmExpiryMs == 0 && (o.ha || o.recovery)) {
      // Long enough for a busy 2-core machine's heartbeats (250 ms apart), short enough for a test.
      o.nmExpiryMs = 10000;
    }
    if (o.nmExpiryMs != 0 && o.nmExpiryMs < 4 * o.heartbeatMs) {
      throw new UsageException("--nm-expiry-ms=" + o.nmExpiryMs + ": want at least 4 x"
          + " --heartbeat-ms (" + o.heartbeatMs + "), or a live node may be declared LOST");
    }
    if (o.secureFlagSeen && !o.secure) {
      throw new UsageException("Kerberos flags (--rpc-protection, --realm, --token-*, ...) need"
          + " --secure");
    }
    if (o.secure) {
      if (o.rpcProtection == null) {
        o.rpcProtection = "authentication";
      }
      if (o.kerberosDir == null) {
        o.kerberosDir = new File(o.confDir.getParentFile(), "kerberos");
      }
      if (o.tokenMaxLifetimeSec < o.tokenRenewSec) {
        throw new UsageException("--token-max-lifetime-sec=" + o.tokenMaxLifetimeSec
            + ": want at least --token-renew-sec (" + o.tokenRenewSec + ")");
      }
      if (o.keyRollingSec * 1000L <= 3L * o.livenessExpiryMs) {
        throw new UsageException("--key-rolling-sec=" + o.keyRollingSec + ": YARN wants more than 3 x"
            + " --liveness-expiry-ms (" + o.livenessExpiryMs + " ms), i.e. more than "
            + (3L * o.livenessExpiryMs / 1000) + " s");
      }
      // The cluster's users are Kerberos principals now: /user/NAME is the test user's.
      o.user = o.testUser;
    }
    if (o.user == null || o.user.isEmpty()) {
      String env = System.getenv("HADOOP_USER_NAME");
      o.user = env != null && !env.isEmpty() ? env : System.getProperty("user.name");
    }
    return o;
  }

  private static String logFormat(String flag, String v) {
    if (!v.equals("TFile") && !v.equals("IFile")) {
      throw new UsageException(flag + "=" + v + ": want TFile or IFile");
    }
    return v;
  }

  private static String absolutePath(String flag, String v) {
    if (!v.startsWith("/") || v.contains(":")) {
      throw new UsageException(flag + "=" + v + ": want an absolute HDFS path, e.g. /tmp/logs");
    }
    return v;
  }

  private static String qop(String flag, String v) {
    if (!v.equals("authentication") && !v.equals("integrity") && !v.equals("privacy")) {
      throw new UsageException(flag + "=" + v + ": want authentication, integrity or privacy");
    }
    return v;
  }

  private static String realm(String flag, String v) {
    if (!v.matches("[A-Z][A-Z0-9-]*(\\.[A-Z0-9-]+)+")) {
      throw new UsageException(flag + "=" + v + ": want NAME.DOMAIN in capitals, e.g. YARNAM.TEST");
    }
    return v;
  }

  private static String name(String flag, String v) {
    if (!v.matches("[a-z_][a-z0-9_-]*")) {
      throw new UsageException(flag + "=" + v + ": want a lower-case user name, e.g. yarnam");
    }
    return v;
  }

  private static int port(String flag, String v) {
    int p = number(flag, v);
    if (p < 0 || p > 65535) {
      throw new UsageException(flag + "=" + v + ": want a port in 0..65535 (0 = pick a free one)");
    }
    return p;
  }

  private static int positive(String flag, String v) {
    int n = number(flag, v);
    if (n <= 0) {
      throw new UsageException(flag + "=" + v + ": want a number > 0");
    }
    return n;
  }

  private static int nonNegative(String flag, String v) {
    int n = number(flag, v);
    if (n < 0) {
      throw new UsageException(flag + "=" + v + ": want a number >= 0");
    }
    return n;
  }

  private static int number(String flag, String v) {
    try {
      return Integer.parseInt(v.trim());
    } catch (NumberFormatException e) {
      throw new UsageException(flag + "=" + v + ": not a whole number");
    }
  }

  /** A bad command line: the message says which flag and what would be valid. */
  static final class UsageException extends RuntimeException {
    UsageException(String msg) {
      super(msg);
    }
  }
}
