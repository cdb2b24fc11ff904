package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/contract"
)

// These tests build the yarn-am binary and the example worker and run them as a container would, with
// the fake nvidia-smi on PATH.

type launchEnv struct {
	bin, worker, smi, coord string
}

func buildLaunchEnv(t *testing.T) *launchEnv {
	t.Helper()
	dir := t.TempDir()
	e := &launchEnv{bin: filepath.Join(dir, "yarn-am"), worker: filepath.Join(dir, "worker"), coord: filepath.Join(dir, "coordination")}
	for out, pkg := range map[string]string{e.bin: ".", e.worker: "../../testdata/worker"} {
		b, err := exec.Command("go", "build", "-o", out, pkg).CombinedOutput()
		require.NoError(t, err, string(b))
	}
	smi, err := filepath.Abs("../../testdata/fake-nvidia-smi")
	require.NoError(t, err)
	e.smi = smi
	return e
}

// cmd runs `yarn-am sub args...` in a fresh working directory with gpus fake GPUs.
func (e *launchEnv) cmd(t *testing.T, gpus int, sub string, args ...string) (*exec.Cmd, string) {
	wd := t.TempDir()
	c := exec.Command(e.bin, append([]string{sub}, args...)...)
	c.Dir = wd
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "PATH", "CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "FAKE_GPU_COUNT", "FAKE_GPU_TOPO", "YARN_AM_LOG_LEVEL":
		default:
			c.Env = append(c.Env, kv)
		}
	}
	c.Env = append(c.Env, "PATH="+e.smi+string(os.PathListSeparator)+os.Getenv("PATH"), fmt.Sprintf("FAKE_GPU_COUNT=%d", gpus), "YARN_AM_LOG_LEVEL=warn")
	return c, wd
}

func (e *launchEnv) gpuFlags(amount int, extra ...string) []string {
	return append([]string{
		"-D", "external-resources=gpu",
		"-D", fmt.Sprintf("external-resource.gpu.amount=%d", amount),
		"-D", "external-resource.gpu.yarn.config-key=yarn.io/gpu",
		"-Dexternal-resource.gpu.driver-factory.class=org.apache.flink.externalresource.gpu.GPUDriverFactory",
		"-D", "external-resource.gpu.param.discovery-script.args=--enable-coordination --coordination-dir " + e.coord,
	}, extra...)
}

func runLaunchCmd(c *exec.Cmd) (stdout, stderr string, code int) {
	var o, er strings.Builder
	c.Stdout, c.Stderr = &o, &er
	_ = c.Run()
	return o.String(), er.String(), c.ProcessState.ExitCode()
}

// liveClaims lists the claim lines of every user's claim file in the coordination directory dir.
func liveClaims(t *testing.T, dir string) []string {
	files, err := filepath.Glob(filepath.Join(dir, "claims.*"))
	require.NoError(t, err)
	var out []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, l := range strings.Split(string(data), "\n") {
			if l != "" && !strings.HasPrefix(l, "#") {
				out = append(out, l)
			}
		}
	}
	return out
}

func TestLaunchCommand(t *testing.T) {
	e := buildLaunchEnv(t)

	t.Run("worker sees its GPUs in the file, the resource variable and CUDA_VISIBLE_DEVICES", func(t *testing.T) {
		c, wd := e.cmd(t, 4, "launch", append(e.gpuFlags(2), "--", e.worker, "--exit", "3")...)
		out, errOut, code := runLaunchCmd(c)
		assert.Equal(t, 3, code, errOut)
		assert.Equal(t, "worker: gpu indexes from file=0,1 env=0,1 CUDA_VISIBLE_DEVICES=0,1\n", out)
		data, err := os.ReadFile(filepath.Join(wd, "external-resources.json"))
		require.NoError(t, err)
		assert.JSONEq(t, `{"gpu": [{"index": "0", "uuid": "GPU-bab99a1b-2c9c-e7b6-0254-850d5c6b8448"}, {"index": "1", "uuid": "GPU-b9b99888-2d9c-e949-0154-837a5d6b85db"}]}`, string(data), "the fake nvidia-smi's UUIDs")
		st, err := os.Stat(filepath.Join(wd, ".yarn-am", "nvidia-gpu-discovery.sh"))
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o755), st.Mode().Perm())
		assert.Empty(t, liveClaims(t, e.coord), "claims released when the worker exited")
	})

	t.Run("too few GPUs: the worker never starts", func(t *testing.T) {
		marker := filepath.Join(t.TempDir(), "started")
		c, wd := e.cmd(t, 1, "launch", append(e.gpuFlags(2), "--", e.worker, "--marker", marker)...)
		out, errOut, code := runLaunchCmd(c)
		assert.Equal(t, contract.LauncherDiscoveryFailed, code)
		assert.Equal(t, 90, code)
		assert.Empty(t, out)
		assert.NoFileExists(t, marker)
		assert.NoFileExists(t, filepath.Join(wd, "external-resources.json"))
		assert.True(t, strings.HasPrefix(errOut, `yarn-am launch: discovery failed for resource "gpu": discovery program `), errOut)
		assert.Contains(t, errOut, "nvidia-gpu-discovery.sh: not enough GPUs: found 1 NVIDIA GPU(s) [0], asked for 2, 1 free; taken (coordination directory "+e.coord+"): none")
	})

	t.Run("invalid configuration: exit 91, worker not started", func(t *testing.T) {
		marker := filepath.Join(t.TempDir(), "started")
		c, _ := e.cmd(t, 4, "launch", "-D", "external-resources=gpu", "-D", "external-resource.gpu.amount=0", "--", e.worker, "--marker", marker)
		_, errOut, code := runLaunchCmd(c)
		assert.Equal(t, contract.LauncherConfigError, code)
		assert.Contains(t, errOut, "yarn-am launch: invalid external-resource configuration")
		assert.Contains(t, errOut, "external-resource.gpu.amount")
		assert.NoFileExists(t, marker)

		c, _ = e.cmd(t, 4, "launch", e.gpuFlags(1)...)
		_, errOut, code = runLaunchCmd(c)
		assert.Equal(t, contract.LauncherConfigError, code)
		assert.Contains(t, errOut, "yarn-am launch: no worker command")
	})

	t.Run("worker that cannot start: exit 92, claims released", func(t *testing.T) {
		c, _ := e.cmd(t, 4, "launch", append(e.gpuFlags(4), "--", "/no/such/worker")...)
		_, errOut, code := runLaunchCmd(c)
		assert.Equal(t, contract.LauncherWorkerStartFailed, code)
		assert.Contains(t, errOut, `yarn-am launch: cannot start the worker "/no/such/worker"`)
		assert.Empty(t, liveClaims(t, e.coord))
	})

	t.Run("SIGTERM during discovery: the worker never starts", func(t *testing.T) {
		dir := t.TempDir()
		script := filepath.Join(dir, "slow-discovery.sh")
		started := filepath.Join(dir, "discovery-started")
		require.NoError(t, os.WriteFile(script, []byte("#!/bin/sh\ntouch "+started+"\nsleep 30\necho 0\n"), 0o755))
		marker := filepath.Join(dir, "worker-started")
		c, _ := e.cmd(t, 4, "launch", "-D", "external-resources=gpu", "-D", "external-resource.gpu.amount=1",
			"-D", "external-resource.gpu.yarn.config-key=yarn.io/gpu", "-D", "external-resource.gpu.driver-factory.class=gpu",
			"-D", "external-resource.gpu.param.discovery-script.path="+script, "--", e.worker, "--marker", marker)
		var errOut strings.Builder
		c.Stderr = &errOut
		require.NoError(t, c.Start())
		require.Eventually(t, func() bool { _, err := os.Stat(started); return err == nil }, 10*time.Second, 10*time.Millisecond)
		require.NoError(t, c.Process.Signal(syscall.SIGTERM))
		err := waitTimeout(c, 10*time.Second)
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee, errOut.String())
		assert.Equal(t, 128+15, ee.ExitCode())
		assert.Contains(t, errOut.String(), "yarn-am launch: received terminated before the worker started; not starting it")
		assert.NoFileExists(t, marker)
	})

	t.Run("co-located launchers never share a GPU; SIGTERM is forwarded", func(t *testing.T) {
		type running struct {
			c    *exec.Cmd
			line string
		}
		start := func() running {
			c, _ := e.cmd(t, 4, "launch", append(e.gpuFlags(2), "--", e.worker, "--sleep", "60s")...)
			stdout, err := c.StdoutPipe()
			require.NoError(t, err)
			require.NoError(t, c.Start())
			line, err := bufio.NewReader(stdout).ReadString('\n')
			require.NoError(t, err)
			return running{c: c, line: line}
		}
		a, b := start(), start()
		defer func() { _ = a.c.Process.Kill(); _ = b.c.Process.Kill() }()
		lines := []string{a.line, b.line}
		assert.ElementsMatch(t, []string{
			"worker: gpu indexes from file=0,1 env=0,1 CUDA_VISIBLE_DEVICES=0,1\n",
			"worker: gpu indexes from file=2,3 env=2,3 CUDA_VISIBLE_DEVICES=2,3\n",
		}, lines)
		claims := liveClaims(t, e.coord)
		assert.Len(t, claims, 4)
		assert.Contains(t, strings.Join(claims, "\n"), fmt.Sprintf(" %d ", a.c.Process.Pid), "the launcher owns the claims")

		// A third one finds nothing free.
		c, _ := e.cmd(t, 4, "launch", append(e.gpuFlags(1), "--", e.worker)...)
		_, errOut, code := runLaunchCmd(c)
		assert.Equal(t, contract.LauncherDiscoveryFailed, code)
		assert.Contains(t, errOut, "asked for 1, 0 free; taken (coordination directory "+e.coord+"): 0 by pid ")

		// SIGTERM to the launcher reaches the worker, which exits 143; so does the launcher, and the
		// GPUs are free again.
		require.NoError(t, a.c.Process.Signal(syscall.SIGTERM))
		err := waitTimeout(a.c, 20*time.Second)
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee)
		assert.Equal(t, 128+15, ee.ExitCode())
		assert.Len(t, liveClaims(t, e.coord), 2)
		require.NoError(t, b.c.Process.Signal(syscall.SIGINT))
		err = waitTimeout(b.c, 20*time.Second)
		require.ErrorAs(t, err, &ee)
		assert.Equal(t, 128+2, ee.ExitCode())
		assert.Empty(t, liveClaims(t, e.coord))
	})
}

func waitTimeout(c *exec.Cmd, d time.Duration) error {
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		_ = c.Process.Kill()
		return fmt.Errorf("no exit within %s", d)
	}
}
