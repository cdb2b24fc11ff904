package gpu

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/resources"
)

type fakeRunner struct {
	indexes  []string
	uuids    string // the "uuids=" line's value, "" for none
	err      error
	calls    []fakeCall
	releases []fakeCall
}

type fakeCall struct {
	path    string
	amount  int
	args    string
	argv    []string
	timeout time.Duration
}

func (f *fakeRunner) Discover(_ context.Context, path string, amount int, args string, timeout time.Duration) (Found, error) {
	f.calls = append(f.calls, fakeCall{path: path, amount: amount, args: args, timeout: timeout})
	return Found{Indexes: f.indexes, UUIDLine: f.uuids, HasUUIDs: f.uuids != ""}, f.err
}

func (f *fakeRunner) Release(_ context.Context, path string, args []string, timeout time.Duration) error {
	f.releases = append(f.releases, fakeCall{path: path, argv: args, timeout: timeout})
	return nil
}

func (f *fakeRunner) MarkSick(_ context.Context, path string, args []string, uuid string, timeout time.Duration) error {
	f.releases = append(f.releases, fakeCall{path: path, argv: append(append([]string{}, args...), "--mark-sick", uuid), timeout: timeout})
	return nil
}

func TestRegisteredUnderNameAndFlinkAlias(t *testing.T) {
	for _, name := range []string{"gpu", "org.apache.flink.externalresource.gpu.GPUDriverFactory"} {
		f, ok := resources.LookupDriver(name)
		require.True(t, ok, name)
		d, err := f("gpu", nil)
		require.NoError(t, err)
		assert.IsType(t, &Driver{}, d)
		assert.Implements(t, (*resources.Releaser)(nil), d)
		assert.Implements(t, (*resources.EnvProvider)(nil), d)
	}
}

func TestParseParamsDefaults(t *testing.T) {
	cfg, err := ParseParams("gpu", map[string]string{})
	require.NoError(t, err)
	assert.Equal(t, Config{Resource: "gpu", Vendor: VendorNVIDIA, Timeout: 60 * time.Second}, cfg)
}

func TestParseParamsValid(t *testing.T) {
	script := filepath.Join(t.TempDir(), "my-discovery.sh")
	require.NoError(t, os.WriteFile(script, []byte("#!/bin/sh\necho 0\n"), 0o755))
	for _, tc := range []struct {
		timeout string
		want    time.Duration
	}{{"90s", 90 * time.Second}, {"2m", 2 * time.Minute}, {"45", 45 * time.Second}, {"0.5", 500 * time.Millisecond}} {
		cfg, err := ParseParams("gpu", map[string]string{
			"discovery-script.path": script, "discovery-script.args": "--my-own-flag '/tmp/a b'",
			"discovery-script.timeout": tc.timeout, "vendor": "AMD",
		})
		require.NoError(t, err, tc.timeout)
		assert.Equal(t, Config{Resource: "gpu", Vendor: VendorAMD, ScriptPath: script,
			ScriptArgs: "--my-own-flag '/tmp/a b'", Timeout: tc.want}, cfg)
	}
}

func TestParseParamsErrors(t *testing.T) {
	dir := t.TempDir()
	notExec := filepath.Join(dir, "not-exec.sh")
	require.NoError(t, os.WriteFile(notExec, []byte("echo 0\n"), 0o644))
	wd, err := os.Getwd()
	require.NoError(t, err)
	for _, tc := range []struct {
		params map[string]string
		want   string
	}{
		{map[string]string{"vendor": "intel"},
			`external-resource.gpu.param.vendor = "intel": unknown GPU vendor; valid values: nvidia (the default), amd`},
		{map[string]string{"discovery-script.timeout": "soon"},
			`external-resource.gpu.param.discovery-script.timeout = "soon": not a duration; use a Go duration such as 90s or 2m, or plain seconds such as 60`},
		{map[string]string{"discovery-script.timeout": "0"},
			`external-resource.gpu.param.discovery-script.timeout = "0": the timeout must be positive; use a Go duration such as 90s or 2m, or plain seconds such as 60`},
		{map[string]string{"discovery-script.timeout": "-5s"},
			`external-resource.gpu.param.discovery-script.timeout = "-5s": the timeout must be positive`},
		{map[string]string{"discovery-script.args": `--coordination-file "/tmp/x`},
			`external-resource.gpu.param.discovery-script.args = "--coordination-file \"/tmp/x": arguments "--coordination-file \"/tmp/x": unterminated double quote; quote arguments as in a shell`},
		{map[string]string{"discovery-script.path": "plugins/external-resource-gpu/nvidia-gpu-discovery.sh"},
			`external-resource.gpu.param.discovery-script.path = "plugins/external-resource-gpu/nvidia-gpu-discovery.sh": the file does not exist (relative paths are resolved against the current directory: ` +
				filepath.Join(wd, "plugins/external-resource-gpu/nvidia-gpu-discovery.sh") +
				`); leave external-resource.gpu.param.discovery-script.path out to use yarn-am's built-in NVIDIA discovery script`},
		{map[string]string{"discovery-script.path": "/opt/none.sh", "vendor": "amd"},
			`external-resource.gpu.param.discovery-script.path = "/opt/none.sh": the file does not exist; leave external-resource.gpu.param.discovery-script.path out to use yarn-am's built-in AMD discovery script`},
		{map[string]string{"discovery-script.path": dir},
			`external-resource.gpu.param.discovery-script.path = "` + dir + `": this is a directory, not a script;`},
		{map[string]string{"discovery-script.path": notExec},
			`external-resource.gpu.param.discovery-script.path = "` + notExec + `": the file is not executable (chmod +x it);`},
		{map[string]string{"discovery-script.pth": "x"},
			`external-resource.gpu.param.discovery-script.pth = "x": unknown parameter of the gpu driver; valid parameters: discovery-script.path, discovery-script.args, discovery-script.timeout, vendor`},
	} {
		_, err := ParseParams("gpu", tc.params)
		require.Error(t, err, tc.params)
		assert.Contains(t, err.Error(), tc.want)
	}
	// All problems at once.
	_, err = ParseParams("gpu", map[string]string{"vendor": "intel", "discovery-script.timeout": "x"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "param.vendor")
	assert.Contains(t, err.Error(), "param.discovery-script.timeout")
}

func TestDiscoverWritesBuiltinScriptAndReturnsIndexes(t *testing.T) {
	dir := t.TempDir()
	r := &fakeRunner{indexes: []string{"2", "5"}}
	d := New(Config{Resource: "gpu", ScriptArgs: "--enable-coordination"}, r)
	d.WorkDir = dir
	infos, err := d.Discover(context.Background(), 2)
	require.NoError(t, err)
	assert.Equal(t, []resources.Info{{"index": "2"}, {"index": "5"}}, infos)

	script := filepath.Join(dir, ".yarn-am", "nvidia-gpu-discovery.sh")
	require.Len(t, r.calls, 1)
	assert.Equal(t, fakeCall{path: script, amount: 2, args: "--enable-coordination", timeout: DefaultTimeout}, r.calls[0])
	st, err := os.Stat(script)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o755), st.Mode().Perm())
	want, common, err := BuiltinScript(VendorNVIDIA)
	require.NoError(t, err)
	got, err := os.ReadFile(script)
	require.NoError(t, err)
	assert.Equal(t, want, got)
	got, err = os.ReadFile(filepath.Join(dir, ".yarn-am", "gpu-discovery-common.sh"))
	require.NoError(t, err)
	assert.Equal(t, common, got)

	assert.Equal(t, map[string]string{"CUDA_VISIBLE_DEVICES": "2,5"}, d.Env(infos))

	// Coordinated: Release runs the release mode of the same script with the same args, once.
	require.NoError(t, d.Release(context.Background()))
	require.NoError(t, d.Release(context.Background()))
	require.Len(t, r.releases, 1)
	assert.Equal(t, fakeCall{path: script, argv: []string{"--enable-coordination"}, timeout: DefaultTimeout}, r.releases[0])
}

func TestDiscoverAMDUsesAMDScriptAndHIP(t *testing.T) {
	dir := t.TempDir()
	r := &fakeRunner{indexes: []string{"1"}}
	d := New(Config{Resource: "gpu", Vendor: VendorAMD}, r)
	d.WorkDir = dir
	infos, err := d.Discover(context.Background(), 1)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, ".yarn-am", "amd-gpu-discovery.sh"), r.calls[0].path)
	assert.Equal(t, map[string]string{"HIP_VISIBLE_DEVICES": "1"}, d.Env(infos))
	// Coordination is the default (the script decides where it applies): release runs the release mode.
	require.NoError(t, d.Release(context.Background()))
	assert.Len(t, r.releases, 1)

	// --no-coordination: nothing to release.
	r = &fakeRunner{indexes: []string{"1"}, uuids: "0xbeef"}
	d = New(Config{Resource: "gpu", Vendor: VendorAMD, ScriptArgs: "--no-coordination"}, r)
	d.WorkDir = dir
	infos, err = d.Discover(context.Background(), 1)
	require.NoError(t, err)
	assert.Equal(t, []resources.Info{{"index": "1", "uuid": "0xbeef"}}, infos)
	require.NoError(t, d.Release(context.Background()))
	assert.Empty(t, r.releases)
}

func TestDiscoverCustomScriptIsRunAsIsAndNotReleased(t *testing.T) {
	r := &fakeRunner{indexes: []string{"0", "1", "2"}}
	d := New(Config{Resource: "gpu", ScriptPath: "/opt/my.sh", ScriptArgs: "--enable-coordination-mode", Timeout: time.Second}, r)
	d.WorkDir = t.TempDir()
	infos, err := d.Discover(context.Background(), 2)
	require.NoError(t, err)
	assert.Equal(t, []resources.Info{{"index": "0"}, {"index": "1"}}, infos)
	assert.Equal(t, "/opt/my.sh", r.calls[0].path)
	_, err = os.Stat(filepath.Join(d.WorkDir, ".yarn-am"))
	assert.True(t, os.IsNotExist(err), "no built-in script written for a custom path")
	require.NoError(t, d.Release(context.Background()))
	assert.Empty(t, r.releases)
}

func TestDiscoverErrors(t *testing.T) {
	boom := errors.New("discovery program x failed: exit status 1; stderr: not enough GPUs")
	d := New(Config{Resource: "gpu"}, &fakeRunner{err: boom})
	d.WorkDir = t.TempDir()
	_, err := d.Discover(context.Background(), 1)
	assert.ErrorIs(t, err, boom)

	d = New(Config{Resource: "gpu", ScriptPath: "/x.sh"}, &fakeRunner{indexes: []string{"0"}})
	_, err = d.Discover(context.Background(), 2)
	assert.EqualError(t, err, "discovery script /x.sh found 1 GPU(s) [0], 2 asked for")

	_, err = d.Discover(context.Background(), 0)
	assert.EqualError(t, err, `gpu resource "gpu": amount 0 is not positive`)
}
