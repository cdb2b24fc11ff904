package gpu

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/resources"
)

// Tests of the driver with the real runner (resources.RunDiscovery) and the real built-in scripts
// against the fake nvidia-smi / rocm-smi. This process is the owner of the claims.

func fakeSMIOnPath(t *testing.T, gpus string) {
	t.Helper()
	smi, err := filepath.Abs(fakeSMIDir)
	require.NoError(t, err)
	t.Setenv("PATH", smi+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("FAKE_GPU_COUNT", gpus)
	t.Setenv("CUDA_VISIBLE_DEVICES", "")
	t.Setenv("NVIDIA_VISIBLE_DEVICES", "")
	t.Setenv("HIP_VISIBLE_DEVICES", "")
	t.Setenv("ROCR_VISIBLE_DEVICES", "")
}

// gpuInfos is the infos the driver returns for the fake GPUs with these indexes (as this environment's
// fake nvidia-smi numbers them): index and UUID.
func gpuInfos(t *testing.T, indexes ...string) []resources.Info {
	t.Helper()
	uuids := fakeUUIDs(t, nil)
	var infos []resources.Info
	for _, i := range indexes {
		require.NotEmpty(t, uuids[i], "fake GPU %s", i)
		infos = append(infos, resources.Info{"index": i, "uuid": uuids[i]})
	}
	return infos
}

func newRealDriver(t *testing.T, params map[string]string) *Driver {
	t.Helper()
	d, err := Factory("gpu", params)
	require.NoError(t, err)
	gd := d.(*Driver)
	gd.WorkDir = t.TempDir()
	return gd
}

func TestRealScriptCoordinationAndRelease(t *testing.T) {
	fakeSMIOnPath(t, "4")
	dir := filepath.Join(t.TempDir(), "coord")
	require.NoError(t, os.Mkdir(dir, 0o700))
	params := map[string]string{"discovery-script.args": "--enable-coordination --coordination-dir " + dir}
	ctx := context.Background()

	a := newRealDriver(t, params)
	infos, err := a.Discover(ctx, 3)
	require.NoError(t, err)
	assert.Equal(t, gpuInfos(t, "0", "1", "2"), infos)

	// The same owner asking again gets other GPUs, and a third call finds none left.
	b := newRealDriver(t, params)
	infos, err = b.Discover(ctx, 1)
	require.NoError(t, err)
	assert.Equal(t, gpuInfos(t, "3"), infos)
	_, err = newRealDriver(t, params).Discover(ctx, 1)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not enough GPUs: found 4 NVIDIA GPU(s) [0,1,2,3], asked for 1, 0 free; taken (coordination directory "+dir+"): 0 by pid")

	// Release gives a's three GPUs back (b keeps its one).
	require.NoError(t, a.Release(ctx))
	infos, err = newRealDriver(t, params).Discover(ctx, 3)
	require.NoError(t, err)
	assert.Equal(t, gpuInfos(t, "0", "1", "2"), infos)
}

func TestRealScriptTooFewGPUs(t *testing.T) {
	fakeSMIOnPath(t, "1")
	_, err := newRealDriver(t, nil).Discover(context.Background(), 2)
	var derr *resources.DiscoveryError
	require.ErrorAs(t, err, &derr)
	assert.Equal(t, "nvidia-gpu-discovery.sh: not enough GPUs: found 1 NVIDIA GPU(s) [0], asked for 2", derr.Stderr)
}

func TestRealScriptHonoursVisibleDevices(t *testing.T) {
	fakeSMIOnPath(t, "8")
	want := gpuInfos(t, "6", "2")
	t.Setenv("CUDA_VISIBLE_DEVICES", "6,"+want[1]["uuid"]+",9")
	infos, err := newRealDriver(t, nil).Discover(context.Background(), 2)
	require.NoError(t, err)
	assert.Equal(t, want, infos)

	_, err = newRealDriver(t, nil).Discover(context.Background(), 3)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not enough GPUs: found 2 NVIDIA GPU(s) [6,2] (restricted by CUDA_VISIBLE_DEVICES=6,"+want[1]["uuid"]+",9), asked for 3")
}

// Under YARN's GPU isolation with the nvidia-docker-v2 plugin the container gets NVIDIA_VISIBLE_DEVICES
// set to the host's indexes of its GPUs, while nvidia-smi inside lists only those GPUs, numbered from 0
// (modelled here by a fake nvidia-smi with 2 GPUs). Discovery must report 0..n-1, not fail because 5 and
// 7 are not listed.
func TestRealScriptInsideIsolatedContainer(t *testing.T) {
	fakeSMIOnPath(t, "2")
	t.Setenv("NVIDIA_VISIBLE_DEVICES", "5,7")
	t.Setenv("FAKE_GPU_HOST_INDEXES", "5,7")
	d := newRealDriver(t, nil)
	infos, err := d.Discover(context.Background(), 2)
	require.NoError(t, err)
	assert.Equal(t, gpuInfos(t, "0", "1"), infos)
	host := newCoordEnv(t, 8)
	assert.Equal(t, fakeUUIDs(t, append(host.env, "FAKE_GPU_HOST_INDEXES="))["7"], infos[1]["uuid"], "the UUID is the node's GPU 7's")
	assert.Equal(t, map[string]string{"CUDA_VISIBLE_DEVICES": "0,1"}, d.Env(infos))

	_, err = newRealDriver(t, nil).Discover(context.Background(), 3)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not enough GPUs: found 2 NVIDIA GPU(s) [0,1], asked for 3")
}

func TestRealAMDScript(t *testing.T) {
	fakeSMIOnPath(t, "3")
	d := newRealDriver(t, map[string]string{"vendor": "amd"})
	infos, err := d.Discover(context.Background(), 3)
	require.NoError(t, err)
	require.Len(t, infos, 3)
	for i, in := range infos {
		assert.Equal(t, strconv.Itoa(i), in["index"])
		assert.Regexp(t, `^0x[0-9a-f]{16}$`, in["uuid"], "rocm-smi --showuniqueid's unique id")
	}
	assert.NotEqual(t, infos[0]["uuid"], infos[1]["uuid"])
	assert.Equal(t, map[string]string{"HIP_VISIBLE_DEVICES": "0,1,2"}, d.Env(infos))
	t.Setenv("FAKE_GPU_NO_UUID", "1")
	noID, err := newRealDriver(t, map[string]string{"vendor": "amd"}).Discover(context.Background(), 2)
	require.NoError(t, err)
	assert.Equal(t, []resources.Info{{"index": "0"}, {"index": "1"}}, noID, "unique id N/A: no uuid")
	t.Setenv("FAKE_GPU_NO_UUID", "")

	t.Setenv("HIP_VISIBLE_DEVICES", "2")
	_, err = newRealDriver(t, map[string]string{"vendor": "amd"}).Discover(context.Background(), 2)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not enough GPUs: found 1 AMD GPU(s) [2] (restricted by HIP_VISIBLE_DEVICES=2), asked for 2")
}

func TestRealScriptMissingNvidiaSMI(t *testing.T) {
	// A PATH with what the script needs, but no nvidia-smi.
	bin := t.TempDir()
	for _, tool := range []string{"bash", "basename", "dirname"} {
		p, err := exec.LookPath(tool)
		require.NoError(t, err)
		require.NoError(t, os.Symlink(p, filepath.Join(bin, tool)))
	}
	t.Setenv("PATH", bin)
	_, err := newRealDriver(t, nil).Discover(context.Background(), 1)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "nvidia-smi not found on PATH")
}

// Release runs a script too: a hanging one is killed with its process group at the timeout, and what
// it prints on stderr is bounded.
func TestExecRunnerReleaseIsBounded(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child")
	hang := filepath.Join(dir, "hang.sh")
	require.NoError(t, os.WriteFile(hang, []byte("#!/bin/bash\nsleep 300 & echo $! >"+pidFile+"\nwait\n"), 0o755))
	start := time.Now()
	err := ExecRunner{}.Release(context.Background(), hang, nil, 300*time.Millisecond)
	assert.Less(t, time.Since(start), 10*time.Second, "gives up within 10 seconds")
	assert.EqualError(t, err, "release "+hang+": no answer within 300ms")
	data, rerr := os.ReadFile(pidFile)
	require.NoError(t, rerr)
	pid := strings.TrimSpace(string(data))
	assert.Eventually(t, func() bool {
		stat, err := os.ReadFile("/proc/" + pid + "/stat")
		if err != nil {
			return true
		}
		s := string(stat)
		f := strings.Fields(s[strings.LastIndex(s, ")")+1:])
		return len(f) > 0 && (f[0] == "Z" || f[0] == "X")
	}, 10*time.Second, 20*time.Millisecond, "the script's child %s outlived the timeout", pid)

	loud := filepath.Join(dir, "loud.sh")
	require.NoError(t, os.WriteFile(loud, []byte("#!/bin/bash\nhead -c 10000000 /dev/zero | tr '\\0' x >&2\nexit 1\n"), 0o755))
	err = ExecRunner{}.Release(context.Background(), loud, nil, 10*time.Second)
	require.Error(t, err)
	assert.Less(t, len(err.Error()), resources.MaxDiscoveryOutput+500)
}

// The driver's MarkSick (the launcher calls it when its sampler reads a GPU unhealthy) runs the real
// script's mark-sick mode in the directory of its coordinated discovery: after it, and after the
// driver released its claims, the node's next discovery skips the GPU while it reads unhealthy
// (docs/gpus.md#gpu-health-a-sick-gpu-is-taken-out-of-service).
func TestRealScriptMarkSick(t *testing.T) {
	fakeSMIOnPath(t, "2")
	health := t.TempDir()
	t.Setenv("FAKE_GPU_HEALTH_DIR", health)
	dir := filepath.Join(t.TempDir(), "coord")
	require.NoError(t, os.Mkdir(dir, 0o700))
	params := map[string]string{"discovery-script.args": "--enable-coordination --coordination-dir " + dir}
	ctx := context.Background()
	a := newRealDriver(t, params)
	infos, err := a.Discover(ctx, 1)
	require.NoError(t, err)
	sick := infos[0]["uuid"]
	require.NoError(t, os.WriteFile(filepath.Join(health, sick), []byte("remapped_rows.failure=Yes\n"), 0o644))
	require.NoError(t, a.MarkSick(ctx, sick))
	require.NoError(t, a.Release(ctx))
	infos, err = newRealDriver(t, params).Discover(ctx, 1)
	require.NoError(t, err)
	assert.NotEqual(t, sick, infos[0]["uuid"], "the sick GPU is skipped")
	require.NoError(t, newRealDriver(t, nil).MarkSick(ctx, sick), "no coordinated discovery: nothing to mark")
}
