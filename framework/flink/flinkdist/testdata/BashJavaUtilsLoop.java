// Flink's own memory calculator (BashJavaUtils, the class Flink's start scripts run) asked many times in
// one JVM, for the memory tests of memory_local_test.go (flink build tag): a JVM per question cost about
// a second each, 70 questions per test per Flink home.
//
// Usage: java -cp <bash-java-utils.jar>:<flink-dist jar> BashJavaUtilsLoop.java
// Each line of stdin is "<command>\t<conf dir>" (GET_TM_RESOURCE_PARAMS or GET_JM_RESOURCE_PARAMS);
// for each, BashJavaUtils' own main runs with "--configDir <conf dir>" and prints what it prints, then
// this prints "YARNAM-LOOP-END ok", or "YARNAM-LOOP-END error <the exception>" where a JVM of its own
// would have exited non-zero. Ends at the end of stdin.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import org.apache.flink.runtime.util.bash.BashJavaUtils;

public class BashJavaUtilsLoop {
  public static void main(String[] args) throws Exception {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    for (String line = in.readLine(); line != null; line = in.readLine()) {
      String[] f = line.split("\t", 2);
      String result = "ok";
      try {
        BashJavaUtils.main(new String[] {f[0], "--configDir", f[1]});
      } catch (Throwable e) {
        result = "error " + String.valueOf(e).replace('\n', ' ').replace('\r', ' ');
      }
      System.out.flush();
      System.out.println("YARNAM-LOOP-END " + result);
      System.out.flush();
    }
  }
}
