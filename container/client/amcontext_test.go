package client

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/contract/amtls"
	"github.com/yarn-am/yarn-am/jobfile"
	"github.com/yarn-am/yarn-am/yarnrpc"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

func testAMOptions(t *testing.T) AMOptions {
	t.Helper()
	p := writeJob(t, `
name = "ctx-test"
queue = "gpus"
tags = ["demo", "yarn-am"]
priority = 2
max-attempts = 3
[am]
memory = 300
vcores = 2
[taskexecutor]
command = "./worker"
`)
	job, err := jobfile.LoadJob(p)
	require.NoError(t, err)
	st := &Staged{
		Dir:    "/user/alice/.yarn-am/application_1700000000000_0003",
		DirURI: "hdfs://nn:8020/user/alice/.yarn-am/application_1700000000000_0003",
		AM: []contract.LocalResource{
			{Alias: "yarn-am", URL: "hdfs://nn:8020/s/yarn-am", Size: 10, Timestamp: 11, Type: "FILE", Visibility: "APPLICATION"},
			{Alias: "job.toml", URL: "hdfs://nn:8020/s/job.toml", Size: 1, Timestamp: 2, Type: "FILE", Visibility: "APPLICATION"},
		},
		Defines: []string{"external-resource.gpu.param.discovery-script.path=./d.sh"},
	}
	return AMOptions{
		AppID: &hadooppb.ApplicationIdProto{ClusterTimestamp: proto.Int64(1700000000000), Id: proto.Int32(3)},
		Job:   job, Staged: st, User: "alice", Secret: strings.Repeat("ab", 32),
	}
}

func TestSubmissionContextFollowsTheContract(t *testing.T) {
	o := testAMOptions(t)
	sc, err := SubmissionContext(o)
	require.NoError(t, err)
	assert.Equal(t, "ctx-test", sc.GetApplicationName())
	assert.Equal(t, "gpus", sc.GetQueue())
	assert.Equal(t, int32(2), sc.GetPriority().GetPriority())
	assert.Equal(t, "YARN-AM", sc.GetApplicationType())
	assert.Equal(t, []string{"demo", "yarn-am"}, sc.GetApplicationTags(), "the job's tags plus yarn-am, once")
	assert.Equal(t, int32(3), sc.GetMaxAppAttempts())
	assert.Equal(t, int64(300), sc.GetResource().GetMemory())
	assert.Equal(t, int32(2), sc.GetResource().GetVirtualCores())

	clc := sc.GetAmContainerSpec()
	env := map[string]string{}
	for _, e := range clc.GetEnvironment() {
		env[e.GetKey()] = e.GetValue()
	}
	assert.Equal(t, map[string]string{
		"HADOOP_CONF_DIR":     "$PWD",
		"YARN_AM_STAGING_DIR": "hdfs://nn:8020/user/alice/.yarn-am/application_1700000000000_0003",
		"HADOOP_USER_NAME":    "alice",
		"YARN_AM_LOG_LEVEL":   "info",
		contract.EnvDefines:   contract.EncodeDefines([]string{"external-resource.gpu.param.discovery-script.path=./d.sh"}),
	}, env)

	require.Len(t, clc.GetLocalResources(), 2)
	assert.Equal(t, "job.toml", clc.GetLocalResources()[0].GetKey())
	assert.Equal(t, "/s/yarn-am", clc.GetLocalResources()[1].GetValue().GetResource().GetFile())

	creds, err := yarnrpc.ParseCredentials(clc.GetTokens())
	require.NoError(t, err, "tokens are an HDTS stream")
	assert.Equal(t, []byte(strings.Repeat("ab", 32)), creds.Secrets["yarn-am.secret"])
	assert.Empty(t, creds.Tokens)

	require.Len(t, clc.GetCommand(), 1)
	assert.Equal(t, "./yarn-am am --job job.toml 1><LOG_DIR>/am.stdout 2><LOG_DIR>/am.stderr", clc.GetCommand()[0],
		"no -D value on the command line (contract.EnvDefines)")

	assert.NotContains(t, creds.Secrets, contract.TLSCACertAlias, "no authority given: none in the credentials (the AM makes one)")

	// The TLS authority travels in the AM's credentials: certificate and key.
	o.TLSCACert, o.TLSCAKey, err = NewTLSAuthority("application_1700000000000_0003")
	require.NoError(t, err)
	sc, err = SubmissionContext(o)
	require.NoError(t, err)
	creds, err = yarnrpc.ParseCredentials(sc.GetAmContainerSpec().GetTokens())
	require.NoError(t, err)
	assert.Equal(t, o.TLSCACert, creds.Secrets[contract.TLSCACertAlias])
	assert.Equal(t, o.TLSCAKey, creds.Secrets[contract.TLSCAKeyAlias])
	_, err = amtls.ServerCertificate(creds.Secrets[contract.TLSCACertAlias], creds.Secrets[contract.TLSCAKeyAlias], "10.0.0.7")
	require.NoError(t, err, "the AM can issue its certificate from them")

	o.Queue, o.Name = "other", "renamed"
	sc, err = SubmissionContext(o)
	require.NoError(t, err)
	assert.Equal(t, "other", sc.GetQueue())
	assert.Equal(t, "renamed", sc.GetApplicationName())
}

func TestAMCommandFlags(t *testing.T) {
	o := testAMOptions(t)
	o.Staged.AM = append(o.Staged.AM, contract.LocalResource{Alias: "flink-conf.yaml", URL: "hdfs://nn/f"})
	o.Defines = []string{"external-resource.gpu.amount=2"}
	o.Service = true
	o.Driver = `python3 drive.py --name "it's" $HOME`
	cmd := AMCommand(o)
	assert.True(t, strings.HasPrefix(cmd, "./yarn-am am --job job.toml --flink-conf flink-conf.yaml --service --driver "), cmd)
}

// The -D values (am.env, taskexecutor.env, Flink keys such as s3.secret-key) are not on the AM's
// command line, which every user of its node can read (ps); they travel in its environment, in
// order, the user's before staging's, unchanged by the launch script's double quotes.
func TestDefinesTravelInTheEnvironment(t *testing.T) {
	o := testAMOptions(t)
	o.Defines = []string{"s3.secret-key=hunter2-$HOME-`id`-\"q\"", "am.env.TOKEN=abc\ndef"}
	cmd := AMCommand(o)
	for _, d := range append(append([]string{}, o.Defines...), o.Staged.Defines...) {
		_, v, _ := strings.Cut(d, "=")
		assert.NotContains(t, cmd, v)
	}
	assert.NotContains(t, cmd, "-D")
	env := AMEnvironment(o)
	got, err := contract.DecodeDefines(env[contract.EnvDefines])
	require.NoError(t, err)
	assert.Equal(t, append(append([]string{}, o.Defines...), o.Staged.Defines...), got)
	assert.Regexp(t, `^[A-Za-z0-9+/=]+$`, env[contract.EnvDefines], "nothing the launch script's double quotes would expand")
	o.Defines, o.Staged.Defines = nil, nil
	assert.NotContains(t, AMEnvironment(o), contract.EnvDefines)
}

// TestAMCommandSurvivesTheLaunchScript runs the command through the same two shell layers as YARN's
// launch script (`exec /bin/bash -c "<command>"`) and checks the AM receives the driver command
// byte for byte.
func TestAMCommandSurvivesTheLaunchScript(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	dir := t.TempDir()
	// A stand-in for ./yarn-am that prints its arguments one per line.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "yarn-am"), []byte("#!/bin/bash\nprintf '%s\\n' \"$@\"\n"), 0o755))
	o := testAMOptions(t)
	o.Staged.Defines = nil
	driver := `python3 drive.py --name "it's \"quoted\"" $HOME ` + "`date` \\n; echo done"
	o.Driver = driver
	o.Defines = []string{"external-resource.gpu.param.discovery-script.args=--enable-coordination --coordination-file '/tmp/a b'"}
	cmd := strings.ReplaceAll(AMCommand(o), "<LOG_DIR>", dir)
	script := "#!/bin/bash\nexec /bin/bash -c \"" + cmd + "\"\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "launch.sh"), []byte(script), 0o755))
	c := exec.Command("bash", "launch.sh")
	c.Dir = dir
	out, err := c.CombinedOutput()
	require.NoError(t, err, string(out))
	got, err := os.ReadFile(filepath.Join(dir, "am.stdout"))
	require.NoError(t, err)
	assert.Equal(t, []string{"am", "--job", "job.toml", "--driver", driver},
		strings.Split(strings.TrimSuffix(string(got), "\n"), "\n"))
}

// nmExpand does what a NodeManager on Linux does to a launch command before it writes the launch
// script: <LOG_DIR> becomes the log directory, <CPS> the path separator, {{ becomes $ and }} nothing.
func nmExpand(cmd, logDir string) string {
	return strings.NewReplacer("{{", "$", "}}", "").Replace(
		strings.ReplaceAll(strings.ReplaceAll(cmd, "<LOG_DIR>", logDir), "<CPS>", ":"))
}

// TestLaunchCommandsSurviveTheNodeManagersExpansion: the AM's and a TaskExecutor's command lines,
// after the NodeManager's expansion and its launch script, hand the driver and the
// worker's command to the program unchanged, and nothing in them runs in the launch script.
func TestLaunchCommandsSurviveTheNodeManagersExpansion(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran-in-the-launch-script")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "yarn-am"), []byte("#!/bin/bash\nprintf '%s\\n' \"$@\"\n"), 0o755))
	hostile := []string{
		"echo {{(touch " + marker + ")}}",
		"echo {{{HOME}}} }}{{ {{PWD}} a<CPS>b <LOG_DIR>/x '{{' \"}}\" <''CPS>",
		"echo $({{(touch " + marker + ")}}) `{{(touch " + marker + ")}}`",
	}
	run := func(cmd string) {
		t.Helper()
		script := "#!/bin/bash\nexec /bin/bash -c \"" + nmExpand(cmd, dir) + "\"\n"
		require.NoError(t, os.WriteFile(filepath.Join(dir, "launch.sh"), []byte(script), 0o755))
		c := exec.Command("bash", "launch.sh")
		c.Dir = dir
		out, err := c.CombinedOutput()
		require.NoError(t, err, string(out))
	}
	for _, h := range hostile {
		o := testAMOptions(t)
		o.Staged.Defines = nil
		o.Driver = h
		o.Defines = []string{"k=" + h}
		run(AMCommand(o))
		got, err := os.ReadFile(filepath.Join(dir, "am.stdout"))
		require.NoError(t, err)
		assert.Equal(t, []string{"am", "--job", "job.toml", "--driver", h},
			strings.Split(strings.TrimSuffix(string(got), "\n"), "\n"), "the AM's command for %q", h)

		run(contract.LauncherCommand("job.toml", "flink-conf.yaml", h))
		got, err = os.ReadFile(filepath.Join(dir, "stdout"))
		require.NoError(t, err)
		assert.Equal(t, []string{"launch", "-f", "job.toml", "--flink-conf", "flink-conf.yaml", "--", "/bin/bash", "-c", h},
			strings.Split(strings.TrimSuffix(string(got), "\n"), "\n"), "a TaskExecutor's command for %q", h)
	}
	_, err := os.Stat(marker)
	assert.True(t, os.IsNotExist(err), "a {{(cmd)}} in a command ran in the launch script")
}

func TestShellQuote(t *testing.T) {
	assert.Equal(t, "plain-word_1.2/x=y:z", contract.ShellQuote("plain-word_1.2/x=y:z"))
	assert.Equal(t, "''", contract.ShellQuote(""))
	assert.Equal(t, `'a b'`, contract.ShellQuote("a b"))
	assert.Equal(t, `'it'\''s'`, contract.ShellQuote("it's"))
}

func TestNewSecret(t *testing.T) {
	a, err := NewSecret()
	require.NoError(t, err)
	b, err := NewSecret()
	require.NoError(t, err)
	assert.Len(t, a, 64)
	assert.Regexp(t, "^[0-9a-f]{64}$", a)
	assert.NotEqual(t, a, b)
}

func TestAMLaunchContextNeedsASecret(t *testing.T) {
	o := testAMOptions(t)
	o.Secret = ""
	_, err := AMLaunchContext(o)
	assert.ErrorContains(t, err, "secret is empty")
}
