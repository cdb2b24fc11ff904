package flinkdist

import (
	"fmt"
	"path/filepath"
	"strings"
)

// yarnGPUKey is the YARN resource type of GPUs (Hadoop's ResourceInformation.GPU_URI).
const yarnGPUKey = "yarn.io/gpu"

// gpuPluginDir is the plugins/ folder of Flink's GPU driver in a Flink home.
const gpuPluginDir = "external-resource-gpu"

// DefaultGPUDriver makes sure an operator sees the GPUs its TaskManager's container holds
// (docs/flink.md#gpus): every external resource whose YARN resource type is yarn.io/gpu and that
// names no driver (external-resource.<name>.driver-factory.class) gets Flink's GPU driver, which
// yarn-am then points at the indexes it assigned (configure). Without a driver Flink would run the
// TaskManager with the GPUs and hand its operators none, without a word. When the home has no GPU
// plugin to load that driver from, the job is refused naming the key and where the plugin goes. It
// returns the resources it configured. A driver the configuration names is left alone.
func DefaultGPUDriver(c *Config, h *Home) ([]string, error) {
	var set []string
	for _, name := range externalResources(c) {
		yk, _ := c.Get("external-resource." + name + ".yarn.config-key")
		if strings.TrimSpace(yk) != yarnGPUKey {
			continue
		}
		key := "external-resource." + name + ".driver-factory.class"
		if v, _ := c.Get(key); strings.TrimSpace(v) != "" {
			continue
		}
		if h != nil && !hasGPUPlugin(h) {
			return set, fmt.Errorf("%s is not set and the Flink home %s has no plugins/%s/: Flink would give the TaskManagers' operators none of the GPUs their containers hold; put Flink's GPU plugin (opt/flink-external-resource-gpu-*.jar of the distribution; make flink-dist does) in plugins/%s/, or set %s to a driver of your own",
				key, shown(h.Dir), gpuPluginDir, gpuPluginDir, key)
		}
		c.Set(key, gpuDriverFactory)
		set = append(set, name)
	}
	return set, nil
}

// hasGPUPlugin reports whether the home's plugins/ holds Flink's GPU driver.
func hasGPUPlugin(h *Home) bool {
	jars, _ := filepath.Glob(filepath.Join(h.PluginsDir, "*", "flink-external-resource-gpu*.jar"))
	return len(jars) > 0
}
