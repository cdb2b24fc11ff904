package yarnam.minicluster;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.Arrays;

import org.apache.hadoop.security.UserGroupInformation;

/**
 * {@code KeytabLogin PRINCIPAL KEYTAB CLASS ARGS...}: logs in from the keytab, then runs CLASS's
 * main as that user. hadoop-java.sh puts it in front of every Java main on a Kerberized mini
 * cluster (the test user's principal and keytab from .minicluster/env), so Hadoop's own clients
 * (DistributedShell, {@link SecureCheck}) need no kinit.
 */
public final class KeytabLogin {
  private KeytabLogin() {}

  public static void main(String[] args) throws Exception {
    if (args.length < 3) {
      System.err.println("usage: yarnam.minicluster.KeytabLogin PRINCIPAL KEYTAB CLASS [ARGS...]");
      System.exit(2);
    }
    // Reads HADOOP_CONF_DIR's core-site.xml (on the classpath): hadoop.security.authentication.
    UserGroupInformation.setConfiguration(new org.apache.hadoop.conf.Configuration());
    UserGroupInformation.loginUserFromKeytab(args[0], args[1]);
    Method main = Class.forName(args[2]).getMethod("main", String[].class);
    String[] rest = Arrays.copyOfRange(args, 3, args.length);
    Throwable failed = UserGroupInformation.getLoginUser().doAs(
        (java.security.PrivilegedExceptionAction<Throwable>) () -> {
          try {
            main.invoke(null, (Object) rest);
            return null;
          } catch (InvocationTargetException e) {
            return e.getCause();
          }
        });
    if (failed != null) {
      System.err.println("minicluster: " + args[2] + " failed: " + failed);
      failed.printStackTrace();
      System.exit(1);
    }
  }
}
