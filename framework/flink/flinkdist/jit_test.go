package flinkdist

import (
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// The late-C2 flags go after the memory (and class-data) flags and before env.java.opts.*, so that a
// threshold the job sets itself is the one the JVM takes (docs/flink.md#the-jit-at-start).
func TestBuildCommandPutsTheJITFlagsBeforeTheJobsJavaOptions(t *testing.T) {
	h := fakeHome(t, "a: b\n")
	conf := NewConfig()
	conf.Set(KeyJavaOptsTM, "-XX:Tier4InvocationThreshold=7")
	s := Spec{Home: h, Java: "/jdk/bin/java", Dir: "/w", LogDir: "/logs", JIT: LateC2Flags}
	p, err := buildCommand(RoleTaskManager, s, conf, "/w/conf", ResourceParams{JVM: []string{"-Xmx1"}})
	if err != nil {
		t.Fatal(err)
	}
	argv := strings.Join(p.Argv, " ")
	want := "/jdk/bin/java -Xmx1 " + strings.Join(LateC2Flags, " ") + " -XX:Tier4InvocationThreshold=7 -Dlog.file="
	if !strings.HasPrefix(argv, want) {
		t.Errorf("argv\n%s\nwant it to start\n%s", argv, want)
	}
	s.JIT = nil
	p, _ = buildCommand(RoleTaskManager, s, conf, "/w/conf", ResourceParams{JVM: []string{"-Xmx1"}})
	if argv := strings.Join(p.Argv, " "); strings.Contains(argv, "Tier4CompileThreshold") {
		t.Errorf("jit-late-c2 = false: argv %s still raises the C2 thresholds", argv)
	}
}

// A real JVM takes every flag at the value LateC2Flags gives it (a misspelt flag would be dropped
// without a word under Flink's -XX:+IgnoreUnrecognizedVMOptions), and a flag after them wins.
func TestLateC2FlagsAreTheJVMsFinalValues(t *testing.T) {
	java, err := exec.LookPath("java")
	if err != nil {
		t.Fatalf("no java on the PATH: make test needs a JDK (the README's set-up): %v", err)
	}
	args := append([]string{"-XX:+IgnoreUnrecognizedVMOptions"}, LateC2Flags...)
	args = append(args, "-XX:Tier4BackEdgeThreshold=123", "-XX:+PrintFlagsFinal", "-version")
	out, err := exec.Command(java, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("java %v: %v\n%s", args, err, out)
	}
	final := func(name string) string {
		m := regexp.MustCompile(`(?m)^\s*\S+\s+` + name + `\s+= (\S+)`).FindStringSubmatch(string(out))
		if m == nil {
			t.Fatalf("-XX:+PrintFlagsFinal names no %s", name)
		}
		return m[1]
	}
	for _, f := range LateC2Flags {
		name, value, _ := strings.Cut(strings.TrimPrefix(f, "-XX:"), "=")
		if name == "Tier4BackEdgeThreshold" {
			value = "123"
		}
		if got := final(name); got != value {
			t.Errorf("%s = %s in the JVM, want %s", name, got, value)
		}
	}
}
