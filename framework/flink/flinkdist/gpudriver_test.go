package flinkdist

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A GPU resource that names no driver gets Flink's GPU driver, so its operators see the GPUs; a
// driver the configuration names is kept; a home without the GPU plugin is refused naming the key.
func TestDefaultGPUDriver(t *testing.T) {
	withPlugin := &Home{Dir: "/h", PluginsDir: t.TempDir()}
	require.NoError(t, os.MkdirAll(filepath.Join(withPlugin.PluginsDir, gpuPluginDir), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(withPlugin.PluginsDir, gpuPluginDir, "flink-external-resource-gpu-1.20.5.jar"), nil, 0o644))
	without := &Home{Dir: "/bare", PluginsDir: t.TempDir()}

	conf := func(extra ...string) *Config {
		c := NewConfig()
		c.Set("external-resources", "gpu;fpga")
		c.Set("external-resource.gpu.amount", "1")
		c.Set("external-resource.gpu.yarn.config-key", "yarn.io/gpu")
		c.Set("external-resource.fpga.amount", "1")
		c.Set("external-resource.fpga.yarn.config-key", "yarn.io/fpga")
		for i := 0; i+1 < len(extra); i += 2 {
			c.Set(extra[i], extra[i+1])
		}
		return c
	}

	c := conf()
	set, err := DefaultGPUDriver(c, withPlugin)
	require.NoError(t, err)
	assert.Equal(t, []string{"gpu"}, set)
	v, _ := c.Get("external-resource.gpu.driver-factory.class")
	assert.Equal(t, gpuDriverFactory, v)
	_, fpga := c.Get("external-resource.fpga.driver-factory.class")
	assert.False(t, fpga, "only YARN's GPUs get the GPU driver")

	c = conf("external-resource.gpu.driver-factory.class", "com.example.MyDriver")
	set, err = DefaultGPUDriver(c, without)
	require.NoError(t, err)
	assert.Empty(t, set)
	v, _ = c.Get("external-resource.gpu.driver-factory.class")
	assert.Equal(t, "com.example.MyDriver", v, "a driver of the user's own is kept")

	_, err = DefaultGPUDriver(conf(), without)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "external-resource.gpu.driver-factory.class is not set")
	assert.Contains(t, err.Error(), "plugins/external-resource-gpu/")
}
