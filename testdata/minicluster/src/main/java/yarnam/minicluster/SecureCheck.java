package yarnam.minicluster;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Date;
import java.util.List;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.security.Credentials;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.token.Token;
import org.apache.hadoop.yarn.api.records.NodeReport;
import org.apache.hadoop.yarn.api.records.NodeState;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.util.ConverterUtils;

/**
 * Java-side proof that a Kerberized mini cluster serves Kerberos clients: as the current user (run
 * it through hadoop-java.sh, which logs in from the test keytab), lists the RUNNING nodes, lists
 * HDFS /, writes and reads back a file in the user's home (block tokens), and fetches an RM and an
 * HDFS delegation token with renewer "yarn" (kind, service, renewer, max date: never the
 * password). Exit 0 when all of it worked, 1 otherwise.
 */
public final class SecureCheck {
  private SecureCheck() {}

  public static void main(String[] args) throws Exception {
    Configuration conf = new YarnConfiguration();
    UserGroupInformation ugi = UserGroupInformation.getCurrentUser();
    System.out.println("user " + ugi.getUserName() + " short " + ugi.getShortUserName()
        + " auth " + ugi.getAuthenticationMethod() + " security "
        + UserGroupInformation.isSecurityEnabled() + " rpc-protection "
        + conf.get("hadoop.rpc.protection"));
    if (!UserGroupInformation.isSecurityEnabled() || !ugi.hasKerberosCredentials()) {
      throw new IOException("not a Kerberos login: is hadoop.security.authentication=kerberos in"
          + " $HADOOP_CONF_DIR/core-site.xml and did KeytabLogin run?");
    }

    YarnClient yc = YarnClient.createYarnClient();
    yc.init(conf);
    yc.start();
    try {
      List<NodeReport> nodes = yc.getNodeReports(NodeState.RUNNING);
      for (NodeReport n : nodes) {
        System.out.println("node " + n.getNodeId() + " " + n.getCapability());
      }
      if (nodes.isEmpty()) {
        throw new IOException("the RM reports no RUNNING nodes");
      }
      org.apache.hadoop.yarn.api.records.Token rmdt = yc.getRMDelegationToken(new Text("yarn"));
      Token<?> t = ConverterUtils.convertFromYarn(rmdt, (Text) null);
      System.out.println("rm-delegation-token kind " + t.getKind() + " id " + t.decodeIdentifier());
    } finally {
      yc.stop();
    }

    FileSystem fs = FileSystem.get(conf);
    for (FileStatus st : fs.listStatus(new Path("/"))) {
      System.out.println("hdfs " + st.getPermission() + " " + st.getOwner() + " " + st.getPath());
    }
    Path p = new Path(fs.getHomeDirectory(), "secure-check.txt");
    byte[] want = ("written by " + ugi.getShortUserName()).getBytes(StandardCharsets.UTF_8);
    try (FSDataOutputStream out = fs.create(p, true)) {
      out.write(want);
    }
    byte[] got = new byte[want.length];
    try (FSDataInputStream in = fs.open(p)) {
      in.readFully(got);
    }
    if (!new String(got, StandardCharsets.UTF_8).equals(new String(want, StandardCharsets.UTF_8))) {
      throw new IOException("read back " + new String(got, StandardCharsets.UTF_8) + " from " + p);
    }
    System.out.println("hdfs write+read ok " + p + " owner " + fs.getFileStatus(p).getOwner());
    fs.delete(p, false);

    Credentials creds = new Credentials();
    Token<?>[] hdts = fs.addDelegationTokens("yarn", creds);
    for (Token<?> t : hdts) {
      System.out.println("hdfs-delegation-token kind " + t.getKind() + " service " + t.getService()
          + " id " + t.decodeIdentifier());
    }
    if (hdts.length == 0) {
      throw new IOException("the NameNode gave no delegation token");
    }
    System.out.println("SECURE CHECK OK at " + new Date());
  }
}
