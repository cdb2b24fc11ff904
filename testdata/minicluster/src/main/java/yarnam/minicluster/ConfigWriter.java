package yarnam.minicluster;

import java.io.File;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.StandardCopyOption;
import java.util.Map;
import java.util.TreeMap;

import org.apache.hadoop.conf.Configuration;

/**
 * Writes Hadoop-style XML configuration files for clients (the Go side reads them).
 *
 * <p>Values are written with variables already expanded (Configuration.get, not the raw value), so a
 * reader needs no ${...} substitution. Each file is written to a temp file in the same directory
 * and renamed into place, so a reader never sees a half-written file.
 */
final class ConfigWriter {
  private ConfigWriter() {}

  /** Writes every key of {@code conf} (defaults included) to {@code dir/name}. */
  static void writeAll(Configuration conf, File dir, String name) throws IOException {
    writeAllBut(conf, dir, name, null);
  }

  /**
   * Writes every property of {@code conf} but those whose name starts with {@code skipPrefix} (null:
   * none). hdfs-site.xml leaves out "yarn.": the HDFS configuration carries YARN's defaults from
   * before the RM started (yarn.resourcemanager.address 0.0.0.0:8032), and a client that reads
   * hdfs-site.xml after yarn-site.xml (Flink's YARN client does) would take those.
   */
  static void writeAllBut(Configuration conf, File dir, String name, String skipPrefix) throws IOException {
    Map<String, String> props = new TreeMap<>();
    for (Map.Entry<String, String> e : conf) {
      if (skipPrefix != null && e.getKey().startsWith(skipPrefix)) {
        continue;
      }
      String v = conf.get(e.getKey());
      if (v != null) {
        props.put(e.getKey(), v);
      }
    }
    write(props, dir, name);
  }

  /** Writes exactly {@code props} to {@code dir/name}. */
  static void write(Map<String, String> props, File dir, String name) throws IOException {
    if (!dir.isDirectory() && !dir.mkdirs()) {
      throw new IOException("cannot create config dir " + dir);
    }
    File tmp = File.createTempFile("." + name + ".", ".tmp", dir);
    try (Writer w = new OutputStreamWriter(Files.newOutputStream(tmp.toPath()),
        StandardCharsets.UTF_8)) {
      w.write("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
      w.write("<!-- written by the yarn-am mini cluster harness (testdata/minicluster) -->\n");
      w.write("<configuration>\n");
      for (Map.Entry<String, String> e : new TreeMap<>(props).entrySet()) {
        w.write("  <property><name>" + escape(e.getKey()) + "</name><value>"
            + escape(e.getValue()) + "</value></property>\n");
      }
      w.write("</configuration>\n");
    }
    Files.move(tmp.toPath(), new File(dir, name).toPath(), StandardCopyOption.ATOMIC_MOVE,
        StandardCopyOption.REPLACE_EXISTING);
  }

  private static String escape(String s) {
    StringBuilder b = new StringBuilder(s.length());
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '&': b.append("&amp;"); break;
        case '<': b.append("&lt;"); break;
        case '>': b.append("&gt;"); break;
        case '"': b.append("&quot;"); break;
        case '\'': b.append("&apos;"); break;
        default:
          // XML 1.0 cannot carry most control characters; Hadoop values never need them.
          if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') {
            b.append(' ');
          } else {
            b.append(c);
          }
      }
    }
    return b.toString();
  }
}
