//go:build flink

package flinkdist

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/yarn-am/yarn-am/yarnrpc"
)

// tokenDriver plays Flink's DelegationTokenManager and a TaskManager's receiver repository against
// the jar: ServiceLoader finds both classes, the provider reads the token file, the receiver hands
// the tokens to the current Hadoop user. Between its two rounds it does what the AM does, a new
// token file over the old one (args[0]).
const tokenDriver = `import java.nio.file.*;
import java.util.*;
import org.apache.flink.core.security.token.*;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.security.*;
import org.apache.hadoop.security.token.Token;

public class TokenDriver {
  public static void main(String[] args) throws Exception {
    DelegationTokenProvider p = null;
    for (DelegationTokenProvider x : ServiceLoader.load(DelegationTokenProvider.class)) {
      System.out.println("provider " + x.serviceName() + " " + x.getClass().getName());
      if (x.serviceName().equals("` + tokenService + `")) p = x;
    }
    DelegationTokenReceiver r = null;
    for (DelegationTokenReceiver x : ServiceLoader.load(DelegationTokenReceiver.class)) {
      System.out.println("receiver " + x.serviceName() + " " + x.getClass().getName());
      if (x.serviceName().equals("` + tokenService + `")) r = x;
    }
    p.init(new org.apache.flink.configuration.Configuration());
    r.init(new org.apache.flink.configuration.Configuration());
    System.out.println("required " + p.delegationTokensRequired());
    for (int round = 1; round <= 2; round++) {
      if (round == 2) Files.copy(Paths.get(args[0]), Paths.get(System.getenv("` + EnvTokens + `")), StandardCopyOption.REPLACE_EXISTING);
      long before = System.currentTimeMillis();
      DelegationTokenProvider.ObtainedDelegationTokens t = p.obtainDelegationTokens();
      long after = System.currentTimeMillis();
      r.onNewTokensObtained(t.getTokens());
      Credentials c = UserGroupInformation.getCurrentUser().getCredentials();
      System.out.println("round " + round + " bytes " + t.getTokens().length + " before " + before + " after " + after
          + " validUntil " + t.getValidUntil().get() + " tokens " + c.numberOfTokens());
      for (Map.Entry<Text, Token<?>> e : new TreeMap<Text, Token<?>>(c.getTokenMap()).entrySet()) {
        StringBuilder id = new StringBuilder();
        for (byte b : e.getValue().getIdentifier()) id.append(String.format("%02x", b));
        System.out.println("round " + round + " token " + e.getKey() + " " + e.getValue().getKind() + " " + e.getValue().getService() + " " + id);
      }
    }
  }
}
`

// hadoopTestClasspath is the mini cluster's resolved Hadoop classpath (testdata/minicluster), which
// make minicluster-build writes: the Hadoop jars a container's JVM would have.
func hadoopTestClasspath(t *testing.T) string {
	t.Helper()
	file := filepath.Join("..", "..", "..", "testdata", "minicluster", "target", "3.4.3", "classpath.txt")
	st, err := os.Stat(file)
	if err != nil || !st.Mode().IsRegular() || st.Size() == 0 || st.Size() > 1<<20 {
		t.Fatalf("no Hadoop classpath in %s (want a file of at most 1 MiB): run make minicluster-build (%v)", file, err)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// Flink's delegation-token framework takes yarn-am's jar as its own (issue 45; tokenjar.go): a JVM
// verifying every class (-Xverify:all) loads the Go-written version-49 classes through ServiceLoader
// on Flink's interfaces, the provider returns the token file's bytes with validUntil now plus
// EnvTokensEvery, and the receiver adds the tokens to the current Hadoop user, a renewed token in
// place of the old one under its alias. make test-flink-memory runs it on each Flink home.
func TestTokenJarServesFlinksTokenFramework(t *testing.T) {
	home := needFlinkHome(t)
	hadoop := hadoopTestClasspath(t)
	java, err := exec.LookPath("java")
	if err != nil {
		t.Fatal(err)
	}
	javac, err := exec.LookPath("javac")
	if err != nil {
		t.Fatalf("javac (the test compiles its driver; the product never does): %v", err)
	}
	dir := t.TempDir()
	jar, err := WriteTokenJar(dir)
	if err != nil {
		t.Fatal(err)
	}
	first := yarnrpc.NewCredentials()
	first.Tokens["hdfs-a"] = yarnrpc.Token{Identifier: []byte{1, 2, 3}, Password: []byte("p1"), Kind: "HDFS_DELEGATION_TOKEN", Service: "127.0.0.1:8020"}
	second := yarnrpc.NewCredentials()
	second.Tokens["hdfs-a"] = yarnrpc.Token{Identifier: []byte{4, 5, 6, 7}, Password: []byte("p2"), Kind: "HDFS_DELEGATION_TOKEN", Service: "127.0.0.1:8020"}
	second.Tokens["hdfs-b"] = yarnrpc.Token{Identifier: []byte{8}, Password: []byte("p3"), Kind: "HDFS_DELEGATION_TOKEN", Service: "127.0.0.2:8020"}
	tokens, renewed := filepath.Join(dir, "tokens"), filepath.Join(dir, "tokens.renewed")
	if err := first.WriteFile(tokens); err != nil {
		t.Fatal(err)
	}
	if err := second.WriteFile(renewed); err != nil {
		t.Fatal(err)
	}
	src, classes := filepath.Join(dir, "src", "TokenDriver.java"), filepath.Join(dir, "classes")
	for _, d := range []string{filepath.Dir(src), classes} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(src, []byte(tokenDriver), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	sep := string(os.PathListSeparator)
	if out, err := exec.CommandContext(ctx, javac, "-nowarn", "-d", classes, "-cp", home.DistJar+sep+hadoop, src).CombinedOutput(); err != nil {
		t.Fatalf("javac: %v\n%s", err, out)
	}
	const every = 3_600_000
	cmd := exec.CommandContext(ctx, java, "-Xverify:all", "-cp", strings.Join([]string{jar, classes, home.DistJar, hadoop}, sep), "TokenDriver", renewed)
	cmd.Env = append(os.Environ(), EnvTokens+"="+tokens, EnvTokensEvery+"="+strconv.Itoa(every))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	t.Logf("Flink %s, the driver's output:\n%s", home.Version, out)
	if err != nil {
		t.Fatalf("java: %v\n%s", err, stderr.Bytes())
	}
	var (
		lines                = map[string]bool{}
		rounds               = map[int][]string{}
		tokenLines           = map[int][]string{}
		wantBytes            = map[int]int{1: len(first.Marshal()), 2: len(second.Marshal())}
		wantTokens           = map[int]int{1: 1, 2: 2}
		roundsSeen, problems []string
	)
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		lines[line] = true
		f := strings.Fields(line)
		if len(f) < 3 || f[0] != "round" {
			continue
		}
		n, _ := strconv.Atoi(f[1])
		if f[2] == "token" {
			tokenLines[n] = append(tokenLines[n], strings.Join(f[3:], " "))
		} else {
			rounds[n] = f
		}
	}
	for _, want := range []string{
		"provider " + tokenService + " yarnam.flink.TokenProvider",
		"receiver " + tokenService + " yarnam.flink.TokenReceiver",
		"required true",
	} {
		if !lines[want] {
			problems = append(problems, fmt.Sprintf("no line %q", want))
		}
	}
	for n := 1; n <= 2; n++ {
		f := rounds[n]
		// round N bytes B before T0 after T1 validUntil V tokens K
		if len(f) != 12 {
			problems = append(problems, fmt.Sprintf("round %d: %q", n, f))
			continue
		}
		num := func(i int) int64 { v, _ := strconv.ParseInt(f[i], 10, 64); return v }
		if int(num(3)) != wantBytes[n] {
			problems = append(problems, fmt.Sprintf("round %d: %d bytes, want the token file's %d", n, num(3), wantBytes[n]))
		}
		if v, lo, hi := num(9), num(5)+every, num(7)+every; v < lo || v > hi {
			problems = append(problems, fmt.Sprintf("round %d: validUntil %d, want between %d and %d (now plus %s)", n, v, lo, hi, EnvTokensEvery))
		}
		if int(num(11)) != wantTokens[n] {
			problems = append(problems, fmt.Sprintf("round %d: the current user holds %d tokens, want %d", n, num(11), wantTokens[n]))
		}
		roundsSeen = append(roundsSeen, strings.Join(f, " "))
	}
	want := map[int][]string{
		1: {"hdfs-a HDFS_DELEGATION_TOKEN 127.0.0.1:8020 010203"},
		2: {"hdfs-a HDFS_DELEGATION_TOKEN 127.0.0.1:8020 04050607", "hdfs-b HDFS_DELEGATION_TOKEN 127.0.0.2:8020 08"},
	}
	for n := 1; n <= 2; n++ {
		if strings.Join(tokenLines[n], "|") != strings.Join(want[n], "|") {
			problems = append(problems, fmt.Sprintf("round %d: the current user's tokens %q, want %q", n, tokenLines[n], want[n]))
		}
	}
	if len(problems) > 0 {
		t.Errorf("Flink %s:\n%s\nstderr:\n%s", home.Version, strings.Join(problems, "\n"), stderr.Bytes())
	}
	t.Logf("Flink %s: %s", home.Version, strings.Join(roundsSeen, "; "))
}
