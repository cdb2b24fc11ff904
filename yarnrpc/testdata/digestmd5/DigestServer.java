// A DIGEST-MD5 server from the JDK's javax.security.sasl, set up with the parameters a Hadoop server
// uses for tokens (protocol "", server name "default", QOP auth, base64 identifier as the user name
// and base64 password), driven over stdin/stdout so that yarnrpc's Go client can be checked against
// the implementation Hadoop itself relies on. Used by digestmd5_java_test.go (integration tag).
//
// Usage: java DigestServer.java <base64 identifier> <base64 password> [qop]
// qop is auth (the default), auth-int or auth-conf (Sasl.QOP syntax, e.g. "auth-conf,auth-int").
// Protocol (one base64 line each): server writes the challenge, reads the client's response, writes
// the final message and the negotiated QOP ("<base64 rspauth=...> <qop>") or
// "ERR <message>". With a security layer it then echoes: for every wrapped line the client sends it
// unwraps the message and answers with wrap("echo:" + message), until stdin ends; a message that
// does not unwrap gets "ERR <message>" and ends the exchange.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.HashMap;
import java.util.Map;
import javax.security.auth.callback.Callback;
import javax.security.auth.callback.NameCallback;
import javax.security.auth.callback.PasswordCallback;
import javax.security.sasl.AuthorizeCallback;
import javax.security.sasl.RealmCallback;
import javax.security.sasl.Sasl;
import javax.security.sasl.SaslServer;

public class DigestServer {
  public static void main(String[] args) throws Exception {
    String user = args[0];
    char[] password = args[1].toCharArray();
    Map<String, String> props = new HashMap<>();
    props.put(Sasl.QOP, args.length > 2 ? args[2] : "auth");
    props.put(Sasl.SERVER_AUTH, "true");
    SaslServer server = Sasl.createSaslServer("DIGEST-MD5", "", "default", props, callbacks -> {
      for (Callback cb : callbacks) {
        if (cb instanceof NameCallback) {
          NameCallback nc = (NameCallback) cb;
          if (!user.equals(nc.getDefaultName())) {
            throw new SecurityException("unknown user " + nc.getDefaultName());
          }
        } else if (cb instanceof PasswordCallback) {
          ((PasswordCallback) cb).setPassword(password);
        } else if (cb instanceof AuthorizeCallback) {
          AuthorizeCallback ac = (AuthorizeCallback) cb;
          ac.setAuthorized(ac.getAuthenticationID().equals(ac.getAuthorizationID()));
        } else if (cb instanceof RealmCallback) {
          RealmCallback rc = (RealmCallback) cb;
          rc.setText(rc.getDefaultText());
        }
      }
    });
    Base64.Encoder enc = Base64.getEncoder();
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    System.out.println(enc.encodeToString(server.evaluateResponse(new byte[0])));
    System.out.flush();
    byte[] response = Base64.getDecoder().decode(in.readLine().trim());
    try {
      byte[] fin = server.evaluateResponse(response);
      if (!server.isComplete()) {
        System.out.println("ERR not complete");
      } else {
        System.out.println(enc.encodeToString(fin) + " " + server.getNegotiatedProperty(Sasl.QOP));
      }
    } catch (Exception e) {
      System.out.println("ERR " + e.getMessage());
      System.out.flush();
      return;
    }
    System.out.flush();
    if ("auth".equals(server.getNegotiatedProperty(Sasl.QOP))) {
      return;
    }
    for (String line = in.readLine(); line != null; line = in.readLine()) {
      try {
        byte[] wrapped = Base64.getDecoder().decode(line.trim());
        byte[] msg = server.unwrap(wrapped, 0, wrapped.length);
        byte[] reply = ("echo:" + new String(msg, StandardCharsets.UTF_8)).getBytes(StandardCharsets.UTF_8);
        System.out.println(enc.encodeToString(server.wrap(reply, 0, reply.length)));
      } catch (Exception e) {
        System.out.println("ERR " + e.getMessage());
        System.out.flush();
        return;
      }
      System.out.flush();
    }
  }
}
