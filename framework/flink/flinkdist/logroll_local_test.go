//go:build flink

package flinkdist

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestLog4jRollsWithTheHomesLog4j: yarn-am's rolling configuration (LogRoll.Log4jProperties) read by
// the log4j of the home's lib/ (2.24 in Flink 1.20.5, 2.25 in 2.3.0; make test-flink-memory runs it
// against each): a JVM that logs 1.5 MiB through it at 64 KiB × 3 leaves jobmanager.log and two parts
// numbered up (not shifted back to .1), each at most the size before its last event. Without the
// Delete action's nested count, log4j would keep every part; with a configuration it cannot read, it
// logs to stderr and writes nothing.
func TestLog4jRollsWithTheHomesLog4j(t *testing.T) {
	home := needFlinkHome(t)
	dir := t.TempDir()
	logs := filepath.Join(dir, "logs")
	if err := os.Mkdir(logs, 0o755); err != nil {
		t.Fatal(err)
	}
	roll := LogRoll{File: filepath.Join(logs, "jobmanager.log"), MaxSize: 64 << 10, MaxFiles: 3}
	props, err := roll.Log4jProperties()
	if err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(dir, "log4j.properties")
	src := filepath.Join(dir, "Spam.java")
	prog := `import org.apache.logging.log4j.LogManager;
public class Spam {
  public static void main(String[] a) {
    var l = LogManager.getLogger("spam");
    for (int i = 0; i < 10000; i++) l.info("line {} {}", i, "x".repeat(120));
  }
}
`
	for p, body := range map[string]string{conf: props, src: prog} {
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, Spec{}.java(), "-cp", filepath.Join(home.Dir, "lib")+"/*",
		"-Dlog.file="+roll.File, "-Dlog4j.configurationFile=file:"+conf, src)
	out, err := cmd.CombinedOutput()
	if err != nil || len(out) > 0 {
		t.Fatalf("java %s: %v; it printed (a log4j configuration problem is printed here):\n%s", src, err, out)
	}
	entries, err := os.ReadDir(logs)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	eventStart := regexp.MustCompile(`(?m)^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} `)
	for _, e := range entries {
		names = append(names, e.Name())
		data, err := os.ReadFile(filepath.Join(logs, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		starts := eventStart.FindAllIndex(data, -1)
		if len(starts) == 0 {
			t.Fatalf("%s holds no log event", e.Name())
		}
		if before := starts[len(starts)-1][0]; before > int(roll.MaxSize) {
			t.Errorf("%s: %d bytes before its last event, more than the %d it rolls past", e.Name(), before, roll.MaxSize)
		}
	}
	if len(names) != 3 {
		t.Fatalf("want jobmanager.log and 2 parts, got %v", names)
	}
	// 1.5 MiB in 64 KiB parts: more than 20 rolls, so the parts kept are numbered above 20.
	for _, n := range names {
		if n == "jobmanager.log" {
			continue
		}
		i, err := strconv.Atoi(strings.TrimPrefix(n, "jobmanager.log."))
		if err != nil || i <= 20 {
			t.Errorf("part %s: want jobmanager.log.<n> with n above 20 (numbered up, the oldest deleted)", n)
		}
	}
}
