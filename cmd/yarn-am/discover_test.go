package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDiscoverCommand(t *testing.T) {
	e := buildLaunchEnv(t)

	t.Run("json is exactly the launcher's external-resources.json", func(t *testing.T) {
		c, wd := e.cmd(t, 4, "discover", append(e.gpuFlags(2), "--json")...)
		out, errOut, code := runLaunchCmd(c)
		require.Equal(t, 0, code, errOut)
		assert.Empty(t, errOut)
		assert.NoDirExists(t, filepath.Join(wd, ".yarn-am"), "discover leaves no scripts behind")
		assert.Empty(t, liveClaims(t, e.coord), "discover releases its claims")

		c, wd = e.cmd(t, 4, "launch", append(e.gpuFlags(2), "--", "true")...)
		_, errOut, code = runLaunchCmd(c)
		require.Equal(t, 0, code, errOut)
		data, err := os.ReadFile(filepath.Join(wd, "external-resources.json"))
		require.NoError(t, err)
		assert.Equal(t, string(data), out)
	})

	t.Run("human-readable", func(t *testing.T) {
		// The fake's default topology: every pair PHB, one NUMA node.
		c, _ := e.cmd(t, 4, "discover", e.gpuFlags(2)...)
		out, errOut, code := runLaunchCmd(c)
		require.Equal(t, 0, code, errOut)
		assert.Equal(t, `gpu: 2 x yarn.io/gpu (driver org.apache.flink.externalresource.gpu.GPUDriverFactory)
  [0] index=0 uuid=GPU-bab99a1b-2c9c-e7b6-0254-850d5c6b8448
  [1] index=1 uuid=GPU-b9b99888-2d9c-e949-0154-837a5d6b85db
  topology (nvidia-smi topo -m): the GPUs above are linked by PHB at worst
          GPU0  GPU1  GPU2  GPU3  NUMA
    GPU0  X     PHB   PHB   PHB   0
    GPU1  PHB   X     PHB   PHB   0
    GPU2  PHB   PHB   X     PHB   0
    GPU3  PHB   PHB   PHB   X     0

A worker started by 'yarn-am launch' in this environment would get:
  CUDA_VISIBLE_DEVICES=0,1
  YARN_AM_EXTERNAL_RESOURCES_FILE=<working directory>/external-resources.json
  YARN_AM_RESOURCE_GPU=0,1
`, out)
	})

	// docs/gpus.md#topology-connected-sets: the set chosen by the topology, and the matrix printed.
	t.Run("prints the topology it read", func(t *testing.T) {
		c, _ := e.cmd(t, 8, "discover", e.gpuFlags(4)...)
		c.Env = append(c.Env, "FAKE_GPU_TOPO=islands-2x4")
		out, errOut, code := runLaunchCmd(c)
		require.Equal(t, 0, code, errOut)
		assert.Empty(t, errOut)
		assert.Contains(t, out, `  [3] index=5 uuid=`)
		assert.Contains(t, out, `  topology (nvidia-smi topo -m): the GPUs above are linked by NV12 at worst
          GPU0  GPU1  GPU2  GPU3  GPU4  GPU5  GPU6  GPU7  NUMA
    GPU0  X     NV12  SYS   SYS   NV12  NV12  SYS   SYS   0
`)
		assert.Contains(t, out, "    GPU7  SYS   SYS   NV12  NV12  SYS   SYS   NV12  X     1\n\n")
		assert.Contains(t, out, "  CUDA_VISIBLE_DEVICES=0,1,4,5\n")
	})

	// A machine whose topology cannot be read prints what discover always printed (and a warning).
	t.Run("without topology the output is unchanged", func(t *testing.T) {
		c, _ := e.cmd(t, 4, "discover", e.gpuFlags(2)...)
		c.Env = append(c.Env, "FAKE_GPU_TOPO=fail")
		out, errOut, code := runLaunchCmd(c)
		require.Equal(t, 0, code, errOut)
		assert.Equal(t, `gpu: 2 x yarn.io/gpu (driver org.apache.flink.externalresource.gpu.GPUDriverFactory)
  [0] index=0 uuid=GPU-bab99a1b-2c9c-e7b6-0254-850d5c6b8448
  [1] index=1 uuid=GPU-b9b99888-2d9c-e949-0154-837a5d6b85db

A worker started by 'yarn-am launch' in this environment would get:
  CUDA_VISIBLE_DEVICES=0,1
  YARN_AM_EXTERNAL_RESOURCES_FILE=<working directory>/external-resources.json
  YARN_AM_RESOURCE_GPU=0,1
`, out)
		assert.Contains(t, errOut, `GPU topology not used: nvidia-smi topo -m failed (exit status 9): \"Failed to get the topology: unknown error (fake)\"; the GPUs are chosen without it`)
	})

	t.Run("discovery failure exits 1 with the reason", func(t *testing.T) {
		c, _ := e.cmd(t, 1, "discover", e.gpuFlags(3)...)
		out, errOut, code := runLaunchCmd(c)
		assert.Equal(t, 1, code)
		assert.Empty(t, out)
		assert.Contains(t, errOut, `yarn-am discover: discovery failed for resource "gpu": `)
		assert.Contains(t, errOut, "not enough GPUs: found 1 NVIDIA GPU(s) [0], asked for 3")
	})

	t.Run("bad configuration exits 2 with every problem", func(t *testing.T) {
		conf, err := filepath.Abs("/work/shared/examples/flink-external-resources.yaml")
		require.NoError(t, err)
		if _, err := os.Stat(conf); err != nil {
			conf = filepath.Join(t.TempDir(), "flink-conf.yaml")
			require.NoError(t, os.WriteFile(conf, []byte("external-resources: gpu;fpga\n"+
				"external-resource.gpu.driver-factory.class: org.apache.flink.externalresource.gpu.GPUDriverFactory\n"+
				"external-resource.gpu.amount: 2\n"+
				"external-resource.gpu.param.discovery-script.args: --enable-coordination\n"+
				"external-resource.fpga.driver-factory.class: org.apache.flink.externalresource.fpga.FPGADriverFactory\n"+
				"external-resource.fpga.amount: 1\n"+
				"external-resource.fpga.yarn.config-key: yarn.io/fpga\n"), 0o644))
		}
		c, _ := e.cmd(t, 4, "discover", "--flink-conf", conf, "-D", "external-resource.gpu.param.vendor=intel")
		out, errOut, code := runLaunchCmd(c)
		assert.Equal(t, 3, code)
		assert.Empty(t, out)
		assert.Contains(t, errOut, "external-resource.gpu.yarn.config-key is not set")
		assert.Contains(t, errOut, `"org.apache.flink.externalresource.fpga.FPGADriverFactory"`)
		assert.Contains(t, errOut, "unknown driver; registered drivers: exec, gpu, org.apache.flink.externalresource.gpu.GPUDriverFactory")
		assert.Contains(t, errOut, `external-resource.gpu.param.vendor = "intel": unknown GPU vendor; valid values: nvidia (the default), amd`)

		c, _ = e.cmd(t, 4, "discover", "--jsn")
		_, errOut, code = runLaunchCmd(c)
		assert.Equal(t, 2, code)
		assert.Contains(t, errOut, "unknown flag --jsn")
	})
}
