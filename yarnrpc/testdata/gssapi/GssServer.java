// A Kerberos KDC (Hadoop's MiniKdc, Apache Kerby) and the JDK's GSSAPI SASL server (the one Hadoop
// servers use) in one JVM, driven over stdin/stdout, so that yarnrpc's Go GSSAPI client and gokrb5
// login can be checked against the real implementations without a Hadoop cluster. Used by
// gssapi_java_test.go (integration tag).
//
// Usage: java -cp <minikdc + kerby jars> GssServer.java <work dir> <qop>
// qop is Sasl.QOP syntax: auth, auth-int, auth-conf or a comma list.
//
// At start it creates the service principal rm/localhost and the user alice (keytabs in the work
// dir), writes alice's ticket cache (as kinit would) and prints one line:
//   READY <krb5.conf> <alice keytab> <alice ticket cache> <realm>
// Then (one base64 line each way) it reads the client's tokens and answers "C <base64 challenge>"
// until the server completes, which it reports as "DONE <qop> <authorization id>", or "ERR <message>".
// With a security layer it then echoes: for every wrapped line it unwraps the message and answers
// with wrap("echo:" + message), until stdin ends.
import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.security.PrivilegedExceptionAction;
import java.util.Base64;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import javax.security.auth.Subject;
import javax.security.auth.callback.Callback;
import javax.security.auth.login.AppConfigurationEntry;
import javax.security.auth.login.Configuration;
import javax.security.auth.login.LoginContext;
import javax.security.sasl.AuthorizeCallback;
import javax.security.sasl.Sasl;
import javax.security.sasl.SaslServer;
import org.apache.hadoop.minikdc.MiniKdc;
import org.apache.kerby.kerberos.kerb.client.KrbClient;
import org.apache.kerby.kerberos.kerb.type.ticket.TgtTicket;

public class GssServer {
  public static void main(String[] args) throws Exception {
    File dir = new File(args[0]);
    String qop = args[1];
    Properties conf = MiniKdc.createConf();
    conf.setProperty(MiniKdc.KDC_BIND_ADDRESS, "127.0.0.1");
    MiniKdc kdc = new MiniKdc(conf, dir);
    kdc.start();
    // The KDC's threads keep the JVM alive: it is stopped on every way out (an early end of stdin, an
    // ERR), or the test's cleanup would wait on this JVM until go test's timeout.
    try {
      String realm = kdc.getRealm();
      File serviceKeytab = new File(dir, "rm.keytab");
      File userKeytab = new File(dir, "alice.keytab");
      File ccache = new File(dir, "krb5cc_alice");
      kdc.createPrincipal(serviceKeytab, "rm/localhost");
      kdc.createPrincipal(userKeytab, "alice");

      KrbClient kinit = new KrbClient(kdc.getKrb5conf().getParentFile());
      kinit.init();
      TgtTicket tgt = kinit.requestTgt("alice@" + realm, userKeytab);
      kinit.storeTicket(tgt, ccache);

      Map<String, String> opts = new HashMap<>();
      opts.put("useKeyTab", "true");
      opts.put("keyTab", serviceKeytab.getAbsolutePath());
      opts.put("principal", "rm/localhost@" + realm);
      opts.put("storeKey", "true");
      opts.put("doNotPrompt", "true");
      opts.put("isInitiator", "false");
      Configuration jaas = new Configuration() {
        @Override
        public AppConfigurationEntry[] getAppConfigurationEntry(String name) {
          return new AppConfigurationEntry[] {new AppConfigurationEntry(
              "com.sun.security.auth.module.Krb5LoginModule",
              AppConfigurationEntry.LoginModuleControlFlag.REQUIRED, opts)};
        }
      };
      LoginContext lc = new LoginContext("server", new Subject(), null, jaas);
      lc.login();

      Map<String, String> props = new HashMap<>();
      props.put(Sasl.QOP, qop);
      props.put(Sasl.SERVER_AUTH, "true");
      SaslServer server = Subject.doAs(lc.getSubject(), (PrivilegedExceptionAction<SaslServer>) () ->
          Sasl.createSaslServer("GSSAPI", "rm", "localhost", props, callbacks -> {
            for (Callback cb : callbacks) {
              if (cb instanceof AuthorizeCallback) {
                AuthorizeCallback ac = (AuthorizeCallback) cb;
                ac.setAuthorized(ac.getAuthenticationID().equals(ac.getAuthorizationID()));
              }
            }
          }));

      Base64.Encoder enc = Base64.getEncoder();
      BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
      System.out.println("READY " + kdc.getKrb5conf().getAbsolutePath() + " " + userKeytab.getAbsolutePath()
          + " " + ccache.getAbsolutePath() + " " + realm);
      System.out.flush();
      try {
        while (!server.isComplete()) {
          String line = in.readLine();
          if (line == null) {
            return;
          }
          byte[] tok = Base64.getDecoder().decode(line.trim());
          byte[] out = Subject.doAs(lc.getSubject(), (PrivilegedExceptionAction<byte[]>) () -> server.evaluateResponse(tok));
          if (server.isComplete()) {
            System.out.println("DONE " + server.getNegotiatedProperty(Sasl.QOP) + " " + server.getAuthorizationID());
          } else {
            System.out.println("C " + enc.encodeToString(out == null ? new byte[0] : out));
          }
          System.out.flush();
        }
      } catch (Exception e) {
        System.out.println("ERR " + e.getMessage().replace('\n', ' '));
        System.out.flush();
        return;
      }
      if ("auth".equals(server.getNegotiatedProperty(Sasl.QOP))) {
        in.readLine();
        return;
      }
      for (String line = in.readLine(); line != null; line = in.readLine()) {
        try {
          byte[] wrapped = Base64.getDecoder().decode(line.trim());
          byte[] msg = server.unwrap(wrapped, 0, wrapped.length);
          byte[] reply = ("echo:" + new String(msg, StandardCharsets.UTF_8)).getBytes(StandardCharsets.UTF_8);
          System.out.println(enc.encodeToString(server.wrap(reply, 0, reply.length)));
        } catch (Exception e) {
          System.out.println("ERR " + e.getMessage().replace('\n', ' '));
          System.out.flush();
          return;
        }
        System.out.flush();
      }
    } finally {
      kdc.stop();
    }
  }
}
