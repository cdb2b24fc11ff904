package yarnam.minicluster;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.hadoop.yarn.api.records.NodeReport;
import org.apache.hadoop.yarn.server.resourcemanager.ResourceManager;

/**
 * Node attributes of the placement cluster (--placement-handler; README.md, "Placement
 * constraints"): every NodeManager's host carries the centrally set attribute
 * {@code rm.yarn.io/gpu_model}, {@value #LAST} on the last node by address and {@value #OTHERS} on
 * the others, so a job's {@code node-attributes} condition has a node that meets it and nodes that
 * do not. Node attributes are Hadoop 3.2+: the RM's manager is reached by reflection, so this file
 * still compiles against 3.1, where the cluster starts without them (a message says so).
 */
final class NodeAttributes {
  static final String NAME = "gpu_model";
  static final String LAST = "H200";
  static final String OTHERS = "A100";

  private NodeAttributes() {}

  /** Sets rm.yarn.io/gpu_model on each node's host; false (and why on stderr) where the RM has none. */
  static boolean assign(ResourceManager rm, List<NodeReport> nodes) throws Exception {
    Class<?> attr;
    Class<?> type;
    try {
      attr = Class.forName("org.apache.hadoop.yarn.api.records.NodeAttribute");
      type = Class.forName("org.apache.hadoop.yarn.api.records.NodeAttributeType");
    } catch (ClassNotFoundException e) {
      System.err.println("minicluster: this Hadoop has no node attributes (3.2+); none are set");
      return false;
    }
    Object context = rm.getRMContext();
    Method getManager = context.getClass().getMethod("getNodeAttributesManager");
    Object manager = getManager.invoke(context);
    String prefix = (String) attr.getField("PREFIX_CENTRALIZED").get(null);
    @SuppressWarnings({"unchecked", "rawtypes"})
    Object string = Enum.valueOf((Class) type, "STRING");
    Method newInstance = attr.getMethod("newInstance", String.class, String.class, type, String.class);
    List<String> hosts = new ArrayList<>();
    for (NodeReport n : nodes) {
      hosts.add(n.getNodeId().getHost());
    }
    Collections.sort(hosts);
    Map<String, Set<Object>> mapping = new HashMap<>();
    for (int i = 0; i < hosts.size(); i++) {
      String value = i == hosts.size() - 1 ? LAST : OTHERS;
      mapping.put(hosts.get(i), Collections.singleton(newInstance.invoke(null, prefix, NAME, string, value)));
      System.err.println("minicluster: node attribute " + prefix + "/" + NAME + "=" + value + " on host " + hosts.get(i));
    }
    manager.getClass().getMethod("addNodeAttributes", Map.class).invoke(manager, mapping);
    return true;
  }
}
