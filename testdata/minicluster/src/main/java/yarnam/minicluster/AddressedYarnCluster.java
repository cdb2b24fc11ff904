package yarnam.minicluster;

import java.io.File;
import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.List;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.ha.HAServiceProtocol;
import org.apache.hadoop.service.Service;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.MiniYARNCluster;
import org.apache.hadoop.yarn.server.nodemanager.Context;
import org.apache.hadoop.yarn.server.nodemanager.LocalDirsHandlerService;
import org.apache.hadoop.yarn.server.nodemanager.NodeManager;
import org.apache.hadoop.yarn.server.nodemanager.ResourceView;
import org.apache.hadoop.yarn.server.nodemanager.webapp.WebServer;
import org.apache.hadoop.yarn.server.resourcemanager.ResourceManager;
import org.apache.hadoop.yarn.server.security.ApplicationACLsManager;
import org.apache.hadoop.yarn.webapp.WebApp;

/**
 * A MiniYARNCluster whose NodeManagers each listen on their own loopback address (127.0.0.2,
 * 127.0.0.3, ...) and keep their local and log dirs at known absolute paths.
 *
 * <p>Why the detour: MiniYARNCluster's per-NM wrapper overwrites yarn.nodemanager.address,
 * .localizer.address and .webapp.address with "localhost:0" and puts the dirs under
 * ./target/NAME, right before it calls init on the NodeManager it created; there is no factory
 * method for that NodeManager. So this class swaps each freshly created NodeManager (at the moment
 * the cluster registers the matching wrapper through addService) for a subclass that rewrites
 * those keys in the configuration it is given, before NodeManager.serviceInit reads them. With
 * yarn.nodemanager.bind-host set too, the ContainerManager uses the host of the address as the
 * NodeId host, so the RM sees nodes "127.0.0.2:PORT" and "127.0.0.3:PORT".
 */
final class AddressedYarnCluster extends MiniYARNCluster {
  private final List<String> hosts;
  private final File workDir;
  private int wrappersSeen;
  private final List<WebServer> nmWebServers = new ArrayList<>();
  private final SecureMode secure;
  private final int numRms;
  private final String remoteLogDir;

  /**
   * {@code secure} is null without --secure; with it each NM inits and starts as the NM user.
   * {@code numRms} 2 makes an HA pair (manual failover; rm1 is made active before any NM starts).
   * {@code remoteLogDir} is each NM's yarn.nodemanager.remote-app-log-dir.
   */
  AddressedYarnCluster(String name, List<String> hosts, File workDir, SecureMode secure, int numRms,
      String remoteLogDir) {
    super(name, numRms, hosts.size(), 1, 1);
    this.hosts = hosts;
    this.workDir = workDir;
    this.secure = secure;
    this.numRms = numRms;
    this.remoteLogDir = remoteLogDir;
  }

  int numRms() {
    return numRms;
  }

  /** Index of the ResourceManager that is ACTIVE now, or -1 (none, or all stopped). */
  synchronized int activeIndex() {
    for (int i = 0; i < numRms; i++) {
      ResourceManager rm = getResourceManager(i);
      if (rm != null && rm.getRMContext().getHAServiceState()
          == HAServiceProtocol.HAServiceState.ACTIVE) {
        return i;
      }
    }
    return -1;
  }

  /** Makes ResourceManager {@code i} active through its admin service, as `yarn rmadmin` would. */
  synchronized void transitionToActive(int i) throws Exception {
    ResourceManager rm = getResourceManager(i);
    if (rm == null) {
      throw new IllegalStateException("ResourceManager " + i + " is stopped");
    }
    rm.getRMContext().getRMAdminService().transitionToActive(
        new HAServiceProtocol.StateChangeRequestInfo(
            HAServiceProtocol.RequestSource.REQUEST_BY_USER));
  }

  /** The local dir of NodeManager {@code i} (absolute). */
  static File localDir(File workDir, int i) {
    return new File(workDir, "nm-" + i + "/local");
  }

  /** The container log dir of NodeManager {@code i} (absolute). */
  static File logDir(File workDir, int i) {
    return new File(workDir, "nm-" + i + "/logs");
  }

  /**
   * Gives the RM's and each NM's web app its own request dispatch (see {@link WebAppIsolation});
   * call after start.
   */
  void isolateWebApps() throws ReflectiveOperationException {
    for (int i = 0; i < numRms; i++) {
      isolateRmWebApp(i);
    }
    synchronized (nmWebServers) {
      for (int i = 0; i < nmWebServers.size(); i++) {
        WebServer ws = nmWebServers.get(i);
        WebAppIsolation.isolate(
            (WebApp) WebAppIsolation.read(ws, WebServer.class, "webApp"), "NodeManager " + i);
      }
    }
  }

  /** The same for the web app of ResourceManager {@code i} alone (after it was restarted). */
  void isolateRmWebApp(int i) throws ReflectiveOperationException {
    ResourceManager rm = getResourceManager(i);
    if (rm != null) {
      WebAppIsolation.isolate(
          (WebApp) WebAppIsolation.read(rm, ResourceManager.class, "webApp"), "ResourceManager " + i);
    }
  }

  @Override
  protected void addService(Service service) {
    // MiniYARNCluster.serviceInit creates nodeManagers[i] and then adds its wrapper i, in order.
    if (service.getClass().getName().endsWith("$NodeManagerWrapper")) {
      int index = wrappersSeen++;
      replaceNodeManager(index, new AddressedNodeManager(index));
    }
    super.addService(service);
  }

  /**
   * Starts a new NodeManager {@code index} in place of the stopped one, with the stopped one's
   * configuration (same host, dirs and resources; new ports, so the RM sees a new NodeId), and gives
   * its web app its own dispatch. A stopped Service cannot start again, hence the new instance.
   */
  NodeManager restartNodeManager(int index) throws Exception {
    NodeManager old = getNodeManager(index);
    if (old.getServiceState() != Service.STATE.STOPPED) {
      throw new IllegalStateException("NodeManager " + index + " is " + old.getServiceState());
    }
    Configuration conf = new YarnConfiguration(old.getConfig());
    NodeManager nm = new AddressedNodeManager(index);
    replaceNodeManager(index, nm);
    int before;
    synchronized (nmWebServers) {
      before = nmWebServers.size();
    }
    nm.init(conf);
    nm.start();
    synchronized (nmWebServers) {
      for (int i = before; i < nmWebServers.size(); i++) {
        WebAppIsolation.isolate((WebApp) WebAppIsolation.read(nmWebServers.get(i), WebServer.class,
            "webApp"), "NodeManager " + index);
      }
    }
    return nm;
  }

  private void replaceNodeManager(int index, NodeManager nm) {
    try {
      Field f = MiniYARNCluster.class.getDeclaredField("nodeManagers");
      f.setAccessible(true);
      NodeManager[] nms = (NodeManager[]) f.get(this);
      nms[index] = nm;
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("MiniYARNCluster.nodeManagers not found: this Hadoop version"
          + " changed its internals; per-NM loopback addresses need a new seam", e);
    }
  }

  /** A CustomNodeManager (keeps the mini cluster's hooks) that binds to its own address. */
  private final class AddressedNodeManager extends MiniYARNCluster.CustomNodeManager {
    private final int index;

    AddressedNodeManager(int index) {
      AddressedYarnCluster.this.super();
      this.index = index;
    }

    @Override
    protected void serviceInit(Configuration conf) throws Exception {
      // conf is the wrapper's private copy for this NM, so changing it affects this NM only.
      String host = hosts.get(index);
      conf.set("yarn.nodemanager.hostname", host);
      conf.set(YarnConfiguration.NM_BIND_HOST, host);
      conf.set(YarnConfiguration.NM_ADDRESS, host + ":0");
      conf.set(YarnConfiguration.NM_LOCALIZER_ADDRESS, host + ":0");
      conf.set(YarnConfiguration.NM_WEBAPP_ADDRESS, host + ":0");
      File local = localDir(workDir, index);
      File logs = logDir(workDir, index);
      if ((!local.mkdirs() && !local.isDirectory()) || (!logs.mkdirs() && !logs.isDirectory())) {
        throw new IllegalStateException("cannot create NM dirs " + local + " and " + logs);
      }
      conf.set(YarnConfiguration.NM_LOCAL_DIRS, local.getAbsolutePath());
      conf.set(YarnConfiguration.NM_LOG_DIRS, logs.getAbsolutePath());
      // MiniYARNCluster points this at a local dir per NM; aggregated logs belong on HDFS.
      conf.set(YarnConfiguration.NM_REMOTE_APP_LOG_DIR, remoteLogDir);
      if (secure == null) {
        super.serviceInit(conf);
        return;
      }
      secure.asNm(() -> {
        super.serviceInit(conf);
        return null;
      });
    }

    @Override
    protected void serviceStart() throws Exception {
      // An NM registers while it starts, and only with an active RM: in an HA pair (manual
      // failover) make rm1 active first.
      if (numRms > 1) {
        synchronized (AddressedYarnCluster.this) {
          if (activeIndex() < 0) {
            transitionToActive(0);
          }
        }
      }
      if (secure == null) {
        super.serviceStart();
        return;
      }
      secure.asNm(() -> {
        super.serviceStart();
        return null;
      });
    }

    @Override
    protected WebServer createWebServer(Context nmContext, ResourceView resourceView,
        ApplicationACLsManager aclsManager, LocalDirsHandlerService dirsHandler) {
      WebServer ws = super.createWebServer(nmContext, resourceView, aclsManager, dirsHandler);
      synchronized (nmWebServers) {
        nmWebServers.add(ws);
      }
      return ws;
    }
  }
}
