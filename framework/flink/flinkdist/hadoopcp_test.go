package flinkdist

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// The Hadoop classpath is expanded in the container as the NodeManager would: $VAR, ${VAR} and
// {{VAR}} from the environment, dir/* kept as a Java wildcard when dir exists, other globs matched
// here; what is not on this node is dropped and said why, and it goes after Flink's own jars.
func TestExpandHadoopClasspath(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"etc/hadoop", "share/hadoop/common/lib", "share/hadoop/hdfs", "extra"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"share/hadoop/hdfs/hadoop-hdfs-client-3.4.3.jar", "share/hadoop/hdfs/hadoop-hdfs-3.4.3.jar", "extra/one.jar"} {
		if err := os.WriteFile(filepath.Join(root, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := map[string]string{"HADOOP_CONF_DIR": root + "/etc/hadoop", "HADOOP_COMMON_HOME": root, "HADOOP_HDFS_HOME": root}
	getenv := func(k string) string { return env[k] }

	cp, dropped := ExpandHadoopClasspath(DefaultYARNApplicationClasspath, getenv)
	want := []string{root + "/etc/hadoop", root + "/share/hadoop/common/*", root + "/share/hadoop/common/lib/*", root + "/share/hadoop/hdfs/*"}
	if !reflect.DeepEqual(cp, want) {
		t.Errorf("YARN's default expanded to\n%q\nwant\n%q", cp, want)
	}
	if len(dropped) != 3 || !strings.Contains(dropped[0], "no directory "+root+"/share/hadoop/hdfs/lib") ||
		dropped[1] != "$HADOOP_YARN_HOME/share/hadoop/yarn/* ($HADOOP_YARN_HOME not set)" {
		t.Errorf("dropped %q", dropped)
	}

	cp, dropped = ExpandHadoopClasspath([]string{
		"{{HADOOP_CONF_DIR}}", "${HADOOP_HDFS_HOME}/share/hadoop/hdfs/hadoop-hdfs-*.jar", root + "/extra/one.jar",
		"$HADOOP_CONF_DIR", root + "/extra/none-*.jar", root + "/extra/gone.jar", "  ",
	}, getenv)
	want = []string{root + "/etc/hadoop", root + "/share/hadoop/hdfs/hadoop-hdfs-3.4.3.jar",
		root + "/share/hadoop/hdfs/hadoop-hdfs-client-3.4.3.jar", root + "/extra/one.jar"}
	if !reflect.DeepEqual(cp, want) {
		t.Errorf("expanded to\n%q\nwant\n%q (the duplicate conf dir once, globs matched in order)", cp, want)
	}
	if len(dropped) != 2 || !strings.Contains(dropped[0], "matches nothing") || !strings.Contains(dropped[1], "no "+root+"/extra/gone.jar") {
		t.Errorf("dropped %q", dropped)
	}
}

func TestSplitYARNClasspath(t *testing.T) {
	got := SplitYARNClasspath("\n  $HADOOP_CONF_DIR,\n  $HADOOP_COMMON_HOME/share/hadoop/common/*, ,/opt/x.jar\n")
	want := []string{"$HADOOP_CONF_DIR", "$HADOOP_COMMON_HOME/share/hadoop/common/*", "/opt/x.jar"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%q, want %q", got, want)
	}
}

// The Hadoop classpath comes after the home's jars, the job's jar and flink-dist: Flink's own
// classes win over those of the cluster's Hadoop, as in Flink's YARN mode. yarn-am's own jars (the
// token jar) come last of all, where a class-data sharing archive made without them still serves.
func TestBuildPutsTheHadoopClasspathLast(t *testing.T) {
	h := fakeHome(t, "a: b\n")
	s := Spec{Home: h, Java: "/jdk/bin/java", Dir: "/w", LogDir: "/logs", UserJars: []string{"/w/job.jar"},
		HadoopClasspath: []string{"/etc/hadoop", "/opt/hadoop/share/hadoop/common/*"}, ExtraClasspath: []string{"/w/" + TokenJarName}}
	p, err := buildCommand(RoleTaskManager, s, NewConfig(), "/w/conf", ResourceParams{})
	if err != nil {
		t.Fatal(err)
	}
	want := h.Classpath(s.UserJars) + ":/etc/hadoop:/opt/hadoop/share/hadoop/common/*:/w/yarn-am-flink-tokens.jar"
	for i, a := range p.Argv {
		if a == "-classpath" {
			if p.Argv[i+1] != want {
				t.Errorf("classpath %s, want %s", p.Argv[i+1], want)
			}
			return
		}
	}
	t.Errorf("no -classpath in %v", p.Argv)
}
