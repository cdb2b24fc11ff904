package yarnam.minicluster;

import java.io.File;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.api.records.NodeLabel;
import org.apache.hadoop.yarn.api.records.NodeReport;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.ResourceManager;
import org.apache.hadoop.yarn.server.resourcemanager.nodelabels.RMNodeLabelsManager;

/**
 * The node-label control (--labels; README.md, "Node labels"): the cluster has two exclusive labels,
 * {@code gpu} and {@code fpga}; NodeManager 1 (the first node by address) is in the {@code gpu}
 * partition; queue root.default may use {@code gpu} (100% of it) and not {@code fpga}, which no node
 * carries. The CapacityScheduler keys are set before the RM starts; the labels are added to the
 * cluster and mapped to the node through the RM's label manager once the NodeManagers run.
 */
final class NodeLabels {
  static final String GPU_LABEL = "gpu";
  static final String OTHER_LABEL = "fpga";

  private NodeLabels() {}

  /** The RM keys: labels on, a file-system label store in the work dir, the queues' label rights. */
  static void configure(YarnConfiguration c, File workDir) {
    c.setBoolean(YarnConfiguration.NODE_LABELS_ENABLED, true);
    c.set(YarnConfiguration.FS_NODE_LABELS_STORE_ROOT_DIR,
        new File(workDir, "rm/node-labels").toURI().toString());
    String root = "yarn.scheduler.capacity.root";
    c.set(root + ".accessible-node-labels." + GPU_LABEL + ".capacity", "100");
    c.set(root + ".default.accessible-node-labels", GPU_LABEL);
    c.set(root + ".default.accessible-node-labels." + GPU_LABEL + ".capacity", "100");
    c.set(root + ".default.accessible-node-labels." + GPU_LABEL + ".maximum-capacity", "100");
  }

  /** Adds both labels to the cluster and puts the first node (by address) in the gpu partition. */
  static NodeId assign(ResourceManager rm, List<NodeReport> nodes) throws Exception {
    RMNodeLabelsManager m = rm.getRMContext().getNodeLabelManager();
    m.addToCluserNodeLabels(Arrays.asList(
        NodeLabel.newInstance(GPU_LABEL, true), NodeLabel.newInstance(OTHER_LABEL, true)));
    NodeId first = null;
    for (NodeReport n : nodes) {
      if (first == null || n.getNodeId().toString().compareTo(first.toString()) < 0) {
        first = n.getNodeId();
      }
    }
    Set<String> labels = new HashSet<>(Collections.singleton(GPU_LABEL));
    Map<NodeId, Set<String>> map = Collections.singletonMap(first, labels);
    m.replaceLabelsOnNode(map);
    System.err.println("minicluster: node labels " + GPU_LABEL + "," + OTHER_LABEL + "; node "
        + first + " is in the " + GPU_LABEL + " partition");
    return first;
  }
}
