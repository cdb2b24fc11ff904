package yarnam.minicluster;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.StandardCopyOption;
import java.util.Arrays;

import org.apache.hadoop.service.Service;
import org.apache.hadoop.yarn.api.records.NodeState;
import org.apache.hadoop.yarn.server.nodemanager.NodeManager;
import org.apache.hadoop.yarn.server.resourcemanager.ResourceManager;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.RMNode;

/**
 * The fault controls: commands that `minicluster.sh failover|rm-restart|nm-stop|nm-start` hand to the
 * running harness through a directory (--control-dir).
 *
 * <p>Protocol: the script writes one line ("failover", "rm-restart", "nm-stop N" or "nm-start N") to
 * {@code DIR/ID.cmd} (written elsewhere and renamed in, so it is never seen half-written). This
 * class polls the directory, renames the file to {@code ID.running}, runs the command and writes
 * {@code DIR/ID.out} the same way: "OK " and the done line ("MINICLUSTER FAILOVER DONE ..."), or
 * "ERR " and what went wrong. One command runs at a time, in arrival (name) order.
 */
final class Controls {
  private final Options opts;
  private final AddressedYarnCluster yarn;
  private final String[] rmIds;
  private final String[] rmAddresses;

  Controls(Options opts, AddressedYarnCluster yarn, String[] rmIds, String[] rmAddresses) {
    this.opts = opts;
    this.yarn = yarn;
    this.rmIds = rmIds;
    this.rmAddresses = rmAddresses;
  }

  /** Starts the polling thread (a daemon: it never keeps the JVM alive). */
  void start() throws IOException {
    File dir = opts.controlDir;
    if (!dir.isDirectory() && !dir.mkdirs()) {
      throw new IOException("--control-dir " + dir + ": cannot create it");
    }
    Thread t = new Thread(this::loop, "minicluster-controls");
    t.setDaemon(true);
    t.start();
  }

  private void loop() {
    while (true) {
      File[] cmds = opts.controlDir.listFiles((d, n) -> n.endsWith(".cmd"));
      if (cmds != null && cmds.length > 0) {
        Arrays.sort(cmds);
        for (File cmd : cmds) {
          handle(cmd);
        }
      }
      try {
        Thread.sleep(200);
      } catch (InterruptedException e) {
        return;
      }
    }
  }

  private void handle(File cmd) {
    String id = cmd.getName().substring(0, cmd.getName().length() - ".cmd".length());
    File running = new File(cmd.getParentFile(), id + ".running");
    String result;
    try {
      Files.move(cmd.toPath(), running.toPath(), StandardCopyOption.ATOMIC_MOVE);
      String line = new String(Files.readAllBytes(running.toPath()), StandardCharsets.UTF_8).trim();
      System.err.println("minicluster: control " + id + ": " + line);
      result = "OK " + run(line.split("\\s+"));
    } catch (ControlException e) {
      result = "ERR " + e.getMessage();
    } catch (Throwable t) {
      t.printStackTrace();
      result = "ERR " + t;
    }
    System.err.println("minicluster: control " + id + ": " + result);
    try {
      File tmp = new File(cmd.getParentFile(), "." + id + ".out.tmp");
      Files.write(tmp.toPath(), (result + "\n").getBytes(StandardCharsets.UTF_8));
      Files.move(tmp.toPath(), new File(cmd.getParentFile(), id + ".out").toPath(),
          StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
      Files.deleteIfExists(running.toPath());
    } catch (IOException e) {
      System.err.println("minicluster: control " + id + ": cannot write the answer: " + e);
    }
  }

  private String run(String[] words) throws Exception {
    switch (words[0]) {
      case "failover":
        return failover();
      case "rm-restart":
        return rmRestart();
      case "nm-stop":
        if (words.length != 2) {
          throw new ControlException("nm-stop needs the NodeManager's index, e.g. nm-stop 0");
        }
        return nmStop(words[1]);
      case "nm-start":
        if (words.length != 2) {
          throw new ControlException("nm-start needs the NodeManager's index, e.g. nm-start 0");
        }
        return nmStart(words[1]);
      default:
        throw new ControlException("unknown command '" + words[0]
            + "': want failover, rm-restart, nm-stop N or nm-start N");
    }
  }

  /** Stops the active RM (as a crash or an operator would) and makes the standby active. */
  private String failover() throws Exception {
    if (!opts.ha) {
      throw new ControlException("failover needs the HA cluster (make minicluster-up HA=1); this"
          + " one has a single ResourceManager");
    }
    int active = yarn.activeIndex();
    if (active < 0) {
      throw new ControlException("no ResourceManager is active now");
    }
    int standby = 1 - active;
    long t0 = System.currentTimeMillis();
    if (yarn.getResourceManager(standby) == null) {
      // Stopped by an earlier failover: start it again (as standby, from the state store) first, so
      // failovers can follow one another (the chaos soak, docs/development.md#chaos-soak).
      yarn.restartResourceManager(standby);
      yarn.isolateRmWebApp(standby);
    }
    // Stop first, then promote: the file-system state store has no fencing, so the two never write
    // it at the same time.
    yarn.stopResourceManager(active);
    yarn.transitionToActive(standby);
    waitForNodes(yarn.getResourceManager(standby), opts.nmHosts.size(), 120);
    return "MINICLUSTER FAILOVER DONE active=" + rmIds[standby] + " stopped=" + rmIds[active]
        + " rm=" + rmAddresses[standby] + " ms=" + (System.currentTimeMillis() - t0);
  }

  /** Stops the single RM and starts a new one on the same addresses, recovering from the store. */
  private String rmRestart() throws Exception {
    if (!opts.recovery && !opts.ha) {
      throw new ControlException("rm-restart needs the recovery cluster (make minicluster-up"
          + " RECOVERY=1) or the HA one (HA=1); this one has no RM state store");
    }
    int i = 0;
    if (opts.ha) {
      // The HA pair: the active RM restarts in place and is made active again (its standby is not
      // touched), as an operator restarting the active RM's process would.
      i = yarn.activeIndex();
      if (i < 0) {
        throw new ControlException("no ResourceManager is active now");
      }
    }
    long t0 = System.currentTimeMillis();
    yarn.restartResourceManager(i);
    yarn.isolateRmWebApp(i);
    if (opts.ha) {
      yarn.transitionToActive(i);
    }
    waitForNodes(yarn.getResourceManager(i), opts.nmHosts.size(), 120);
    return "MINICLUSTER RM-RESTART DONE rm=" + rmAddresses[i] + " ms="
        + (System.currentTimeMillis() - t0);
  }

  /**
   * Stops NodeManager {@code arg} without telling the RM (as a crashed host would): the RM declares
   * it LOST once yarn.nm.liveness-monitor.expiry-interval-ms has passed. Its containers are killed.
   */
  private String nmStop(String arg) throws Exception {
    int n;
    try {
      n = Integer.parseInt(arg);
    } catch (NumberFormatException e) {
      throw new ControlException("nm-stop " + arg + ": want a NodeManager index 0.."
          + (opts.nmHosts.size() - 1));
    }
    if (n < 0 || n >= opts.nmHosts.size()) {
      throw new ControlException("nm-stop " + arg + ": want a NodeManager index 0.."
          + (opts.nmHosts.size() - 1));
    }
    NodeManager nm = yarn.getNodeManager(n);
    if (nm.getServiceState() == Service.STATE.STOPPED) {
      throw new ControlException("NodeManager " + n + " is already stopped");
    }
    String node = String.valueOf(nm.getNMContext().getNodeId());
    long t0 = System.currentTimeMillis();
    // A decommissioned NM skips the unregister call on stop (the RM would mark it SHUTDOWN at once).
    nm.getNMContext().setDecommissioned(true);
    nm.stop();
    long expiry = yarn.getConfig().getLong("yarn.nm.liveness-monitor.expiry-interval-ms", 600000);
    return "MINICLUSTER NM-STOP DONE index=" + n + " node=" + node + " lost-after-ms=" + expiry
        + " ms=" + (System.currentTimeMillis() - t0);
  }

  /**
   * Starts NodeManager {@code arg} again after nm-stop: a new NodeManager on the same host and dirs
   * (new ports: the RM sees a new node; the stopped one still goes LOST at its expiry).
   */
  private String nmStart(String arg) throws Exception {
    int n;
    try {
      n = Integer.parseInt(arg);
    } catch (NumberFormatException e) {
      n = -1;
    }
    if (n < 0 || n >= opts.nmHosts.size()) {
      throw new ControlException("nm-start " + arg + ": want a NodeManager index 0.."
          + (opts.nmHosts.size() - 1));
    }
    if (yarn.getNodeManager(n).getServiceState() != Service.STATE.STOPPED) {
      throw new ControlException("NodeManager " + n + " is not stopped (nm-stop " + n + " first)");
    }
    long t0 = System.currentTimeMillis();
    NodeManager nm = yarn.restartNodeManager(n);
    String node = String.valueOf(nm.getNMContext().getNodeId());
    int active = yarn.activeIndex();
    ResourceManager rm = yarn.getResourceManager(active < 0 ? 0 : active);
    long deadline = System.currentTimeMillis() + 120_000L;
    while (true) {
      RMNode r = rm.getRMContext().getRMNodes().get(nm.getNMContext().getNodeId());
      if (r != null && r.getState() == NodeState.RUNNING) {
        break;
      }
      if (System.currentTimeMillis() > deadline) {
        throw new ControlException("after 120 s the ResourceManager has not registered " + node);
      }
      Thread.sleep(200);
    }
    return "MINICLUSTER NM-START DONE index=" + n + " node=" + node + " ms="
        + (System.currentTimeMillis() - t0);
  }

  /** Waits until {@code rm} has {@code want} RUNNING nodes (the NMs registered with it). */
  private static void waitForNodes(ResourceManager rm, int want, int seconds) throws Exception {
    long deadline = System.currentTimeMillis() + seconds * 1000L;
    while (true) {
      int running = 0;
      for (RMNode n : rm.getRMContext().getRMNodes().values()) {
        if (n.getState() == NodeState.RUNNING) {
          running++;
        }
      }
      if (running >= want) {
        return;
      }
      if (System.currentTimeMillis() > deadline) {
        throw new ControlException("after " + seconds + " s the ResourceManager has " + running
            + " RUNNING NodeManagers, want " + want);
      }
      Thread.sleep(200);
    }
  }

  /** A command that cannot run here: the message says why and what would work. */
  static final class ControlException extends Exception {
    ControlException(String msg) {
      super(msg);
    }
  }
}
