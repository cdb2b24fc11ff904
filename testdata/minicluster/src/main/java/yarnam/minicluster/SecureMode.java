package yarnam.minicluster;

import java.io.File;
import java.io.IOException;
import java.io.Writer;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.PrivilegedExceptionAction;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Properties;
import java.util.Set;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.minikdc.MiniKdc;
import org.apache.hadoop.security.UserGroupInformation;

/**
 * Kerberos mode of the harness (--secure): a MiniKdc in this JVM on 127.0.0.1, one principal per
 * Hadoop role with a keytab each, a test user, and every security key the cluster and its clients
 * need.
 *
 * <p>Principals: {@code ROLE/HOST@REALM} for ROLE in rm, nm, nn, dn, HTTP and every HOST a server
 * of this JVM may substitute for _HOST (localhost, 127.0.0.1, the NM addresses, this machine's
 * names), so whichever host Hadoop picks the login works. The configuration names them in the
 * _HOST form (rm/_HOST@REALM); a client substitutes the canonical name of the server's address,
 * which for 127.0.0.1 is "localhost".
 *
 * <p>One JVM, several server identities: Hadoop keeps one static login user per JVM, and an RPC
 * server answers SASL GSSAPI as the user current in its reader threads. So HDFS is built and YARN's
 * RM started inside {@code doAs} of their own keytab logins ({@link #asHdfs}, {@link #asRm}), and
 * each NodeManager inits and starts inside the NM's ({@link #asNm}); threads created there inherit
 * that user (Java 17). auth_to_local maps rm and nm to "yarn", nn and dn to "hdfs", as real
 * clusters do; once HDFS is up the static login user becomes rm ({@link #loginStaticAsRm}), so the
 * RM renews the apps' HDFS tokens as "yarn".
 */
final class SecureMode {
  static final String[] ROLES = {"rm", "nm", "nn", "dn", "HTTP"};

  private final Options opts;
  private final File dir;
  private MiniKdc kdc;
  private final Set<String> hosts = new LinkedHashSet<>();
  private UserGroupInformation nnUgi;
  private UserGroupInformation rmUgi;
  private UserGroupInformation nmUgi;

  SecureMode(Options opts) {
    this.opts = opts;
    this.dir = opts.kerberosDir;
  }

  String realm() {
    return opts.realm;
  }

  /** host:port of the KDC (TCP). */
  String kdcAddress() {
    return Main.LOOPBACK + ":" + kdc.getPort();
  }

  /** The test user's principal, e.g. yarnam@YARNAM.TEST. */
  String testPrincipal() {
    return opts.testUser + "@" + opts.realm;
  }

  File testKeytab() {
    return new File(dir, opts.testUser + ".keytab");
  }

  File keytab(String role) {
    return new File(dir, role + ".keytab");
  }

  File krb5Conf() {
    return new File(dir, "krb5.conf");
  }

  /** Starts the KDC, creates every principal and keytab, writes krb5.conf. */
  void startKdc() throws Exception {
    if (!dir.isDirectory() && !dir.mkdirs()) {
      throw new IOException("--kerberos-dir " + dir + ": cannot create it");
    }
    Properties kc = MiniKdc.createConf();
    kc.setProperty(MiniKdc.ORG_NAME, opts.realm.split("\\.")[0]);
    kc.setProperty(MiniKdc.ORG_DOMAIN, opts.realm.substring(opts.realm.indexOf('.') + 1));
    kc.setProperty(MiniKdc.KDC_BIND_ADDRESS, Main.LOOPBACK);
    kc.setProperty(MiniKdc.KDC_PORT, String.valueOf(opts.kdcPort));
    kc.setProperty(MiniKdc.TRANSPORT, "TCP");
    File kdcDir = new File(dir, "kdc");
    if (!kdcDir.mkdirs() && !kdcDir.isDirectory()) {
      throw new IOException("cannot create " + kdcDir);
    }
    kdc = new MiniKdc(kc, kdcDir);
    kdc.start();
    if (!kdc.getRealm().equals(opts.realm)) {
      throw new IOException("--realm " + opts.realm + ": MiniKdc made realm " + kdc.getRealm()
          + "; use a realm of the form NAME.DOMAIN in capitals, e.g. YARNAM.TEST");
    }

    hosts.add("localhost");
    hosts.add(Main.LOOPBACK);
    hosts.addAll(opts.nmHosts);
    InetAddress local = InetAddress.getLocalHost();
    hosts.add(local.getHostName().toLowerCase(Locale.ROOT));
    hosts.add(local.getCanonicalHostName().toLowerCase(Locale.ROOT));
    for (String role : ROLES) {
      List<String> ps = new ArrayList<>();
      for (String h : hosts) {
        ps.add(role + "/" + h);
      }
      kdc.createPrincipal(keytab(role), ps.toArray(new String[0]));
    }
    kdc.createPrincipal(testKeytab(), opts.testUser);
    for (String role : ROLES) {
      ownerOnly(keytab(role));
    }
    ownerOnly(testKeytab());
    writeKrb5Conf();
    writeJvmSite();
    System.err.println("minicluster: MiniKdc realm " + opts.realm + " at " + kdcAddress()
        + "; service principals ROLE/HOST for roles " + String.join(",", ROLES) + " and hosts "
        + String.join(",", hosts) + "; test user " + testPrincipal());
  }

  /**
   * Writes the core security keys to kerberos/jvm-site/core-site.xml, which minicluster.sh puts on
   * this JVM's classpath: code that builds a fresh Configuration inside the harness (the
   * NodeManagers' in-process ContainerLocalizer, with DefaultContainerExecutor) must see
   * hadoop.rpc.protection, or its DIGEST-MD5 client offers "auth" only and a cluster with integrity
   * or privacy refuses it ("No common protection layer").
   */
  void writeJvmSite() throws IOException {
    Configuration c = new Configuration(false);
    applyCore(c);
    java.util.Map<String, String> m = new java.util.TreeMap<>();
    for (java.util.Map.Entry<String, String> e : c) {
      m.put(e.getKey(), e.getValue());
    }
    ConfigWriter.write(m, new File(dir, "jvm-site"), "core-site.xml");
  }

  private void applyCore(Configuration c) {
    c.set("hadoop.security.authentication", "kerberos");
    c.setBoolean("hadoop.security.authorization", false);
    c.set("hadoop.rpc.protection", opts.rpcProtection);
    c.set("hadoop.security.auth_to_local", String.join("\n",
        "RULE:[2:$1@$0](rm@" + opts.realm + ")s/.*/yarn/",
        "RULE:[2:$1@$0](nm@" + opts.realm + ")s/.*/yarn/",
        "RULE:[2:$1@$0](nn@" + opts.realm + ")s/.*/hdfs/",
        "RULE:[2:$1@$0](dn@" + opts.realm + ")s/.*/hdfs/",
        "DEFAULT"));
    // Web UIs stay plain HTTP without SPNEGO so tests can curl them.
    c.set("hadoop.http.authentication.type", "simple");
    c.setBoolean("hadoop.http.authentication.simple.anonymous.allowed", true);
  }

  /** The Kerberos and security keys for core-site/hdfs-site/yarn-site (all in one conf). */
  void apply(Configuration c) {
    String r = "@" + opts.realm;
    applyCore(c);

    // HDFS.
    c.set("dfs.namenode.kerberos.principal", "nn/_HOST" + r);
    c.set("dfs.namenode.keytab.file", keytab("nn").getAbsolutePath());
    c.set("dfs.datanode.kerberos.principal", "dn/_HOST" + r);
    c.set("dfs.datanode.keytab.file", keytab("dn").getAbsolutePath());
    c.set("dfs.web.authentication.kerberos.principal", "HTTP/_HOST" + r);
    c.set("dfs.web.authentication.kerberos.keytab", keytab("HTTP").getAbsolutePath());
    c.set("dfs.namenode.kerberos.internal.spnego.principal", "HTTP/_HOST" + r);
    c.setBoolean("dfs.block.access.token.enable", true);
    // No jsvc and no privileged ports: the DataNode accepts plain ports in this test mode.
    c.setBoolean("ignore.secure.ports.for.testing", true);
    if (!opts.dataTransferProtection.isEmpty()) {
      c.set("dfs.data.transfer.protection", opts.dataTransferProtection);
    }
    c.setLong("dfs.namenode.delegation.token.renew-interval", opts.tokenRenewSec * 1000L);
    c.setLong("dfs.namenode.delegation.token.max-lifetime", opts.tokenMaxLifetimeSec * 1000L);
    c.setLong("dfs.namenode.delegation.key.update-interval", opts.tokenMaxLifetimeSec * 1000L);

    // YARN.
    c.set("yarn.resourcemanager.principal", "rm/_HOST" + r);
    c.set("yarn.resourcemanager.keytab", keytab("rm").getAbsolutePath());
    c.set("yarn.nodemanager.principal", "nm/_HOST" + r);
    c.set("yarn.nodemanager.keytab", keytab("nm").getAbsolutePath());
    c.set("yarn.resourcemanager.webapp.spnego-principal", "HTTP/_HOST" + r);
    c.set("yarn.resourcemanager.webapp.spnego-keytab-file", keytab("HTTP").getAbsolutePath());
    c.set("yarn.nodemanager.webapp.spnego-principal", "HTTP/_HOST" + r);
    c.set("yarn.nodemanager.webapp.spnego-keytab-file", keytab("HTTP").getAbsolutePath());
    c.setLong("yarn.resourcemanager.delegation.token.renew-interval", opts.tokenRenewSec * 1000L);
    c.setLong("yarn.resourcemanager.delegation.token.max-lifetime",
        opts.tokenMaxLifetimeSec * 1000L);
    c.setLong("yarn.resourcemanager.delegation.key.update-interval",
        opts.tokenMaxLifetimeSec * 1000L);
    // Master keys roll only when the interval exceeds 3 x the liveness expiry (YARN checks), so
    // short rolling needs short AM and NM expiry intervals too.
    c.setLong("yarn.am.liveness-monitor.expiry-interval-ms", opts.livenessExpiryMs);
    c.setLong("yarn.nm.liveness-monitor.expiry-interval-ms", opts.livenessExpiryMs);
    c.setLong("yarn.resourcemanager.am-rm-tokens.master-key-rolling-interval-secs",
        opts.keyRollingSec);
    c.setLong("yarn.resourcemanager.nm-tokens.master-key-rolling-interval-secs", opts.keyRollingSec);
    c.setLong("yarn.resourcemanager.container-tokens.master-key-rolling-interval-secs",
        opts.keyRollingSec);
    // Containers find the KDC the way processes on a real node find /etc/krb5.conf: Java through
    // java.security.krb5.conf (JDK_JAVA_OPTIONS, last in Main's admin env), others through
    // KRB5_CONFIG.
    String env = c.get("yarn.nodemanager.admin-env", "");
    if (env.contains("JDK_JAVA_OPTIONS=")) {
      env += " -Djava.security.krb5.conf=" + krb5Conf().getAbsolutePath();
    }
    c.set("yarn.nodemanager.admin-env", env + (env.isEmpty() ? "" : ",") + "KRB5_CONFIG="
        + krb5Conf().getAbsolutePath());
  }

  /** Logs the service users in (after {@link #apply} and UserGroupInformation.setConfiguration). */
  void loginServices() throws IOException {
    nnUgi = login("nn");
    rmUgi = login("rm");
    nmUgi = login("nm");
  }

  /**
   * Makes rm/localhost the JVM's static login user, as in a real RM process: MiniYARNCluster's RM
   * and NMs skip their own keytab logins, and the RM renews HDFS delegation tokens of submitted apps
   * as the login user, which must map to the tokens' renewer "yarn". Call once HDFS is up (its
   * NameNode and DataNode logged in as nn and dn on the way).
   */
  void loginStaticAsRm() throws IOException {
    UserGroupInformation.loginUserFromKeytab("rm/localhost@" + opts.realm,
        keytab("rm").getAbsolutePath());
  }

  private UserGroupInformation login(String role) throws IOException {
    String p = role + "/localhost@" + opts.realm;
    return UserGroupInformation.loginUserFromKeytabAndReturnUGI(p, keytab(role).getAbsolutePath());
  }

  <T> T asHdfs(PrivilegedExceptionAction<T> a) throws Exception {
    return nnUgi.doAs(a);
  }

  <T> T asRm(PrivilegedExceptionAction<T> a) throws Exception {
    return rmUgi.doAs(a);
  }

  <T> T asNm(PrivilegedExceptionAction<T> a) throws Exception {
    return nmUgi == null ? a.run() : nmUgi.doAs(a);
  }

  void stop() {
    if (kdc != null) {
      kdc.stop();
    }
  }

  /**
   * krb5.conf for clients outside this JVM (Go's gokrb5, MIT kinit, Java through
   * java.security.krb5.conf): TCP only, no DNS. The enctypes are the AES ones gokrb5 and Java 17
   * support; the KDC (Apache Kerby 2.0.3, no SHA-2 enctypes) makes aes128-cts-hmac-sha1-96 and
   * des3-cbc-sha1 keys, so tickets come out as aes128-cts-hmac-sha1-96 (etype 17).
   */
  private void writeKrb5Conf() throws IOException {
    String enc = "aes256-cts-hmac-sha384-192 aes128-cts-hmac-sha256-128 aes256-cts-hmac-sha1-96"
        + " aes128-cts-hmac-sha1-96";
    String text = String.join("\n",
        "# written by the yarn-am mini cluster harness (testdata/minicluster), MiniKdc on "
            + kdcAddress(),
        "[libdefaults]",
        "  default_realm = " + opts.realm,
        "  dns_lookup_kdc = false",
        "  dns_lookup_realm = false",
        "  dns_canonicalize_hostname = false",
        "  rdns = false",
        "  udp_preference_limit = 1",
        "  forwardable = true",
        "  renew_lifetime = 7d",
        "  ticket_lifetime = 24h",
        "  default_tkt_enctypes = " + enc,
        "  default_tgs_enctypes = " + enc,
        "  permitted_enctypes = " + enc,
        "",
        "[realms]",
        "  " + opts.realm + " = {",
        "    kdc = " + kdcAddress(),
        "    admin_server = " + kdcAddress(),
        "  }",
        "",
        "[domain_realm]",
        "  localhost = " + opts.realm,
        "  127.0.0.1 = " + opts.realm,
        "");
    File tmp = File.createTempFile(".krb5.conf.", ".tmp", dir);
    try (Writer w = Files.newBufferedWriter(tmp.toPath(), StandardCharsets.UTF_8)) {
      w.write(text);
    }
    Files.move(tmp.toPath(), krb5Conf().toPath(), StandardCopyOption.ATOMIC_MOVE,
        StandardCopyOption.REPLACE_EXISTING);
  }

  private static void ownerOnly(File f) throws IOException {
    Files.setPosixFilePermissions(f.toPath(), PosixFilePermissions.fromString("rw-------"));
  }
}
