package flinkdist

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func gpuConf(amount string) *Config {
	c := NewConfig()
	c.Set(keyExternalRes, "gpu;fpga")
	c.Set("external-resource.gpu.amount", amount)
	c.Set("external-resource.gpu.driver-factory.class", gpuDriverFactory)
	c.Set("external-resource.gpu.param.discovery-script.path", "plugins/external-resource-gpu/nvidia-gpu-discovery.sh")
	c.Set("external-resource.gpu.param.discovery-script.args", "--enable-coordination-mode")
	c.Set("external-resource.fpga.amount", "1")
	c.Set(keyTMProcessSize, "1728m")
	return c
}

// The TaskManager's GPU driver is pointed at a script that prints yarn-am's indexes, and the script,
// run as Flink's driver runs it (path, amount, args), prints exactly them.
func TestConfigureFeedsTheGPUDriverYarnAMsIndexes(t *testing.T) {
	h := fakeHome(t, "a: b\n")
	dir := t.TempDir()
	conf, scripts, err := configure(RoleTaskManager, Spec{Home: h, Conf: gpuConf("2"), Dir: dir, MemoryMiB: 1024,
		GPUs: map[string][]string{"gpu": {"3", "1"}, "fpga": {"0"}}})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, discoveryScriptName("gpu"))
	if got, _ := conf.Get("external-resource.gpu.param.discovery-script.path"); got != path {
		t.Errorf("discovery-script.path %q, want %q", got, path)
	}
	if got, _ := conf.Get("external-resource.gpu.param.discovery-script.args"); got != "" {
		t.Errorf("discovery-script.args %q: the user's nvidia arguments must not reach our script", got)
	}
	if got, _ := conf.Get(keyTMProcessSize); got != "1024m" {
		t.Errorf("process size %q, want the container's 1024m", got)
	}
	if len(scripts) != 1 || scripts[path] == "" {
		t.Fatalf("scripts %v: want one, for gpu only (fpga has no Flink driver)", scripts)
	}
	// Prepare writes and runs the script before Flink's memory calculator (here a java that fails; two
	// external resources with an amount are left to it).
	if _, err := Prepare(context.Background(), RoleTaskManager, Spec{Home: h, Conf: gpuConf("2"), Dir: dir, Java: "/bin/false",
		GPUs: map[string][]string{"gpu": {"3", "1"}}}); err == nil || !strings.Contains(err.Error(), "BashJavaUtils") {
		t.Fatalf("Prepare with a java that fails: %v", err)
	}
	// That configuration has two external resources with an amount, which BashJavaUtils computes; with
	// one, the memory flags are computed here and no java runs (docs/flink.md#memory).
	oneGPU := gpuConf("2")
	oneGPU.Delete("external-resource.fpga.amount")
	p, err := Prepare(context.Background(), RoleTaskManager, Spec{Home: h, Conf: oneGPU, Dir: dir, Java: "/bin/false",
		MemoryMiB: 1024, GPUs: map[string][]string{"gpu": {"3", "1"}}})
	if err != nil {
		t.Fatalf("Prepare with computed memory flags: %v", err)
	}
	line := strings.Join(p.Argv, " ")
	for _, want := range []string{"/bin/false -Xmx161061270 -Xms161061270 -XX:MaxDirectMemorySize=201326592 -XX:MaxMetaspaceSize=268435456 ",
		` -D external-resource.gpu.amount=2 -D external-resources="gpu" -D taskmanager.cpu.cores=1.0 `} {
		if !strings.Contains(line, want) {
			t.Errorf("command line %q lacks %q", line, want)
		}
	}
	if want := "computed by yarn-am from Flink " + h.Version + "'s memory model"; p.MemoryFrom != want {
		t.Errorf("MemoryFrom %q, want %q", p.MemoryFrom, want)
	}
	if err := checkDiscoveryScript(context.Background(), path, discoveryScript("gpu", []string{"9"})); err == nil ||
		!strings.Contains(err.Error(), `printed "3,1", want "9"`) {
		t.Errorf("a script printing other indexes: %v", err)
	}
	if err := checkDiscoveryScript(context.Background(), filepath.Join(dir, "missing.sh"), ""); err == nil ||
		!strings.Contains(err.Error(), "the TaskManager does not start") {
		t.Errorf("a script that does not run: %v", err)
	}
	out, err := exec.Command(path, "2", "null").Output()
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != "3,1\n" {
		t.Errorf("script printed %q, want the indexes in yarn-am's order, comma separated", out)
	}
	if s := conf.Clone(); s == conf {
		t.Error("Clone returned the same configuration")
	}
}

// A TaskManager whose GPUs were not discovered, or fewer than configured, is refused: it must not
// run the job without them, as Flink's own driver would after a warning.
func TestConfigureRefusesATaskManagerWithoutItsGPUs(t *testing.T) {
	h := fakeHome(t, "a: b\n")
	for _, tc := range []struct {
		amount string
		gpus   map[string][]string
		want   string
	}{
		{"2", nil, `the TaskManager does not start: resource "gpu" has 0 discovered indexes [] but external-resource.gpu.amount is 2`},
		{"2", map[string][]string{"gpu": {"0"}}, "has 1 discovered indexes [0]"},
		{"2", map[string][]string{"gpu": {"0", "0"}}, `index "0" is not a distinct index`},
		{"1", map[string][]string{"gpu": {"0; rm -rf /"}}, `index "0; rm -rf /" is not a distinct index`},
		{"two", map[string][]string{"gpu": {"0"}}, `external-resource.gpu.amount is "two": want a positive integer`},
	} {
		_, _, err := configure(RoleTaskManager, Spec{Home: h, Conf: gpuConf(tc.amount), Dir: t.TempDir(), GPUs: tc.gpus})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("amount %s, gpus %v: error %v, want %q", tc.amount, tc.gpus, err, tc.want)
		}
	}
	// The JobManager gets no GPUs and needs none.
	if _, scripts, err := configure(RoleSession, Spec{Home: h, Conf: gpuConf("2"), Dir: t.TempDir()}); err != nil || len(scripts) != 0 {
		t.Errorf("session JobManager: %v %v", scripts, err)
	}
	if _, _, err := configure(RoleApplication, Spec{Home: h, Conf: gpuConf("2"), Dir: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "needs the job's jar") {
		t.Errorf("application without a jar: %v", err)
	}
	if _, _, err := configure("worker", Spec{Home: h, Conf: gpuConf("2")}); err == nil || !strings.Contains(err.Error(), `role "worker": valid roles are`) {
		t.Errorf("bad role: %v", err)
	}
}

// What Flink 1.20.5's BashJavaUtils printed (make test-flink-local runs the real one).
const bashJavaUtilsTM = `INFO  [] - Final TaskExecutor Memory configuration:
INFO  [] -   Total Process Memory:          1024.000mb (1073741824 bytes)
BASH_JAVA_UTILS_EXEC_RESULT:-Xmx161061270 -Xms161061270 -XX:MaxDirectMemorySize=201326592 -XX:MaxMetaspaceSize=268435456
BASH_JAVA_UTILS_EXEC_RESULT:-D taskmanager.memory.network.min=67108864b -D taskmanager.cpu.cores=2.0 -D external-resources="gpu" -D taskmanager.numberOfTaskSlots=2
`

func TestParseResourceParams(t *testing.T) {
	p, err := parseResourceParams([]byte(bashJavaUtilsTM), RoleTaskManager)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(p.JVM, " ") != "-Xmx161061270 -Xms161061270 -XX:MaxDirectMemorySize=201326592 -XX:MaxMetaspaceSize=268435456" {
		t.Errorf("JVM %v", p.JVM)
	}
	want := []string{"taskmanager.memory.network.min=67108864b", "taskmanager.cpu.cores=2.0", `external-resources="gpu"`, "taskmanager.numberOfTaskSlots=2"}
	if strings.Join(p.Dynamic, " ") != strings.Join(want, " ") {
		t.Errorf("dynamic %v, want %v", p.Dynamic, want)
	}
	jm, err := parseResourceParams([]byte("BASH_JAVA_UTILS_EXEC_RESULT:-Xmx201326592 -Xms201326592 -XX:MaxMetaspaceSize=268435456\n"), RoleApplication)
	if err != nil || len(jm.JVM) != 3 || len(jm.Dynamic) != 0 {
		t.Errorf("JobManager: %+v %v", jm, err)
	}
	for _, bad := range []string{
		"INFO only logging\n",
		"BASH_JAVA_UTILS_EXEC_RESULT:-Xmx1\n",                                 // a TaskManager needs two lines
		"BASH_JAVA_UTILS_EXEC_RESULT:-Xmx1\nBASH_JAVA_UTILS_EXEC_RESULT:-D\n", // -D without key=value
		"BASH_JAVA_UTILS_EXEC_RESULT:rm\nBASH_JAVA_UTILS_EXEC_RESULT:-D a=b\n",
	} {
		if _, err := parseResourceParams([]byte(bad), RoleTaskManager); err == nil {
			t.Errorf("%q was accepted", bad)
		}
	}
}

func TestParseMemorySize(t *testing.T) {
	for in, want := range map[string]int64{"1024m": 1 << 30, "1g": 1 << 30, "1536 MB": 1536 << 20, "4096": 4096, "2k": 2048, "1t": 1 << 40} {
		if got, err := parseMemorySize(in); err != nil || got != want {
			t.Errorf("%q: %d %v, want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "m", "1x", "-1m", "99999999999t"} {
		if _, err := parseMemorySize(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// The command line has Flink's order: memory flags, env.java.opts.*, log settings, classpath, entry
// point, --configDir, the dynamic properties, then (application mode) the job's class and arguments.
func TestBuildCommandLines(t *testing.T) {
	h := fakeHome(t, "a: b\n")
	conf := NewConfig()
	conf.Set(KeyJavaDefaultOpts, "-Dadmin=1")
	conf.Set(KeyJavaOptsLegacy, "-Dold=1")
	conf.Set(keyJavaOptsJM, "-Djm=1")
	conf.Set(KeyJavaOptsTM, "-Dtm=1")
	params := ResourceParams{JVM: []string{"-Xmx1", "-Xms1"}, Dynamic: []string{"a=b"}}
	s := Spec{Home: h, Java: "/jdk/bin/java", Dir: "/w", LogDir: "/logs", UserJars: []string{"/w/job.jar"},
		MainClass: "com.example.Job", Args: []string{"--input", "it's"}}
	p, err := buildCommand(RoleApplication, s, conf, "/w/conf", params)
	if err != nil {
		t.Fatal(err)
	}
	argv := strings.Join(p.Argv, " ")
	cp := h.Classpath(s.UserJars)
	want := "/jdk/bin/java -Xmx1 -Xms1 -Dadmin=1 -Dold=1 -Djm=1 -Dlog.file=/logs/jobmanager.log " +
		"-Dlog4j.configuration=file:/w/conf/log4j.properties -Dlog4j.configurationFile=file:/w/conf/log4j.properties " +
		"-classpath " + cp + " " + applicationEntryPoint + " --configDir /w/conf -D a=b --job-classname com.example.Job --input it's"
	if argv != want {
		t.Errorf("application argv\n%s\nwant\n%s", argv, want)
	}
	env := strings.Join(p.Env, " ")
	if !strings.Contains(env, "FLINK_PLUGINS_DIR="+h.PluginsDir) || !strings.Contains(env, "FLINK_CONF_DIR=/w/conf") {
		t.Errorf("env %s", env)
	}
	if cl := p.CommandLine(); !strings.Contains(cl, `'it'\''s'`) || !strings.HasPrefix(cl, "FLINK_BIN_DIR=") {
		t.Errorf("command line %s", cl)
	}
	conf.Set(KeyJavaOptsAll, "-Dnew=1")
	tm, err := buildCommand(RoleTaskManager, s, conf, "/w/conf", params)
	if err != nil {
		t.Fatal(err)
	}
	argv = strings.Join(tm.Argv, " ")
	if !strings.Contains(argv, "-Dadmin=1 -Dnew=1 -Dtm=1 -Dlog.file=/logs/taskmanager.log") || strings.Contains(argv, "-Dold=1") ||
		!strings.HasSuffix(argv, taskManagerEntryPoint+" --configDir /w/conf -D a=b") {
		t.Errorf("TaskManager argv %s (env.java.opts.all replaces the deprecated env.java.opts; no job arguments)", argv)
	}
	sess, _ := buildCommand(RoleSession, s, conf, "/w/conf", ResourceParams{JVM: []string{"-Xmx1"}})
	if !strings.HasSuffix(strings.Join(sess.Argv, " "), sessionEntryPoint+" --configDir /w/conf") {
		t.Errorf("session argv %v", sess.Argv)
	}
}

// The line each process prints of where its memory flags came from names the home's Flink version:
// a Flink 2 home is not told its flags come from Flink 1.20's model (issue 41).
func TestMemoryFromNamesTheHomesVersion(t *testing.T) {
	for _, version := range []string{"1.20.5", "2.3.0"} {
		h := fakeHomeAt(t, version, "a: b\n")
		conf := gpuConf("1")
		conf.Delete("external-resource.fpga.amount")
		p, err := Prepare(context.Background(), RoleTaskManager, Spec{Home: h, Conf: conf, Dir: t.TempDir(), Java: "/bin/false",
			MemoryMiB: 1024, GPUs: map[string][]string{"gpu": {"0"}}})
		if err != nil {
			t.Fatalf("%s: %v", version, err)
		}
		if want := "computed by yarn-am from Flink " + version + "'s memory model"; p.MemoryFrom != want {
			t.Errorf("%s: MemoryFrom %q, want %q", version, p.MemoryFrom, want)
		}
	}
	if got := memoryModelFrom(nil); strings.Contains(got, "1.20") {
		t.Errorf("without a home: %q", got)
	}
}
