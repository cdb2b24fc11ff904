package resources_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/contract"

	_ "github.com/yarn-am/yarn-am/gpu" // registers "gpu" and Flink's GPUDriverFactory alias
	"github.com/yarn-am/yarn-am/resources"
)

// block extracts one block of the shared example file, uncommenting it.
func block(t *testing.T, n string) string {
	t.Helper()
	data, err := os.ReadFile("testdata/flink-external-resources.yaml")
	require.NoError(t, err)
	var out []string
	in := false
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, "# --- block ") {
			in = strings.HasPrefix(l, "# --- block "+n+" ")
			continue
		}
		if in {
			out = append(out, strings.TrimPrefix(l, "# "))
		}
	}
	require.NotEmpty(t, out)
	return strings.Join(out, "\n") + "\n"
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	return p
}

func problems(t *testing.T, err error) []string {
	t.Helper()
	var ce *resources.ConfigError
	require.ErrorAs(t, err, &ce)
	return ce.Messages()
}

func TestExampleBlock1AsGiven(t *testing.T) {
	// The whole file verbatim: block 2 is commented out, so this is block 1.
	_, _, err := resources.Load(resources.Sources{ResourceConf: "testdata/flink-external-resources.yaml"})
	assert.Equal(t, []string{
		`external-resource.gpu.yarn.config-key is not set: without it YARN is never asked for "gpu"; set the YARN resource type, e.g. external-resource.gpu.yarn.config-key: yarn.io/gpu`,
		`external-resource.fpga.driver-factory.class = "org.apache.flink.externalresource.fpga.FPGADriverFactory" (testdata/flink-external-resources.yaml:11): unknown driver; registered drivers: exec, gpu, org.apache.flink.externalresource.gpu.GPUDriverFactory, test-strict. For a device without a built-in driver use the exec driver: external-resource.fpga.driver-factory.class: exec and external-resource.fpga.param.path: <your discovery program>`,
	}, problems(t, err))
}

func TestExampleBlock1Fixed(t *testing.T) {
	for name, overrides := range map[string][]string{
		"fpga driver removed": {"external-resource.gpu.yarn.config-key=yarn.io/gpu", "external-resource.fpga.driver-factory.class="},
		"fpga driver is exec": {"external-resource.gpu.yarn.config-key=yarn.io/gpu", "external-resource.fpga.driver-factory.class=exec",
			"external-resource.fpga.param.path=/opt/fpga/bin/list-fpgas"},
	} {
		t.Run(name, func(t *testing.T) {
			// The fixes are written into the yaml (the user edits their file), not passed as -D.
			y := block(t, "1")
			y = strings.Replace(y, "external-resource.fpga.driver-factory.class: org.apache.flink.externalresource.fpga.FPGADriverFactory\n", "", 1)
			for _, o := range overrides {
				k, v, _ := strings.Cut(o, "=")
				if v != "" {
					y += k + ": " + v + "\n"
				}
			}
			cfg, warns, err := resources.Load(resources.Sources{ResourceConf: writeFile(t, "flink-conf.yaml", y)})
			require.NoError(t, err)
			assert.Equal(t, contract.Capability{"yarn.io/gpu": 2, "yarn.io/fpga": 1}, cfg.YarnResources())
			gpu, ok := cfg.Resource("gpu")
			require.True(t, ok)
			assert.Equal(t, "org.apache.flink.externalresource.gpu.GPUDriverFactory", gpu.Driver)
			assert.Equal(t, map[string]string{"discovery-script.args": "--enable-coordination"}, gpu.Params)
			assert.Equal(t, []string{"gpu", "fpga"}, []string{cfg.Resources[0].Name, cfg.Resources[1].Name})
			drivers, err := cfg.Drivers()
			require.NoError(t, err)
			assert.Contains(t, drivers, "gpu")
			if name == "fpga driver removed" {
				assert.NotContains(t, drivers, "fpga")
				assert.Contains(t, warnText(warns), `external-resource.fpga.driver-factory.class is not set: resource "fpga" is requested from YARN as yarn.io/fpga but the worker gets no device infos; set it to exec (with param.path) to discover them`)
			} else {
				assert.Contains(t, drivers, "fpga")
			}
		})
	}
}

func TestExampleBlock2(t *testing.T) {
	_, warns, err := resources.Load(resources.Sources{ResourceConf: writeFile(t, "flink-conf.yaml", block(t, "2"))})
	msgs := problems(t, err)
	require.Len(t, msgs, 1)
	assert.Contains(t, msgs[0], `external-resource.gpu.param.discovery-script.path = "plugins/external-resource-gpu/nvidia-gpu-discovery.sh"`)
	assert.Contains(t, msgs[0], "does not exist")
	assert.Contains(t, msgs[0], "leave external-resource.gpu.param.discovery-script.path out to use yarn-am's built-in")
	assert.Contains(t, warnText(warns), `external-resource.gpu.kubernetes.config-key = "nvidia.com/gpu"`)
}

func warnText(ws []resources.Warning) string {
	var b strings.Builder
	for _, w := range ws {
		b.WriteString(w.Message + "\n")
	}
	return b.String()
}
