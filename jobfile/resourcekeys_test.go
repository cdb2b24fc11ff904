package jobfile

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/resources"
)

// These tests read a job file's external-resource keys (ResourceKeys) through resources.Load, as the
// client, the AM and the launcher do.

func write(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	return p
}

func messages(t *testing.T, err error) []string {
	t.Helper()
	var ce *resources.ConfigError
	require.ErrorAs(t, err, &ce)
	return ce.Messages()
}

const flatYAML = `external-resources: fpga
external-resource.fpga.amount: 1
external-resource.fpga.yarn.config-key: "yarn.io/fpga"   # quoted
external-resource.fpga.driver-factory.class: exec
external-resource.fpga.param.path: /opt/fpga/list
`

type (
	Sources = resources.Sources
	Value   = resources.Value
)

// test-strict: a test-only driver (as in resources' tests) that takes only the parameter "level".
func init() {
	_ = resources.RegisterDriver("test-strict", func(_ string, params map[string]string) (resources.Driver, error) {
		for k := range params {
			if k != "level" {
				return nil, fmt.Errorf("unknown parameter %q (only \"level\")", k)
			}
		}
		return nil, nil
	})
}

func load(src Sources) (*resources.Config, []resources.Warning, error) { return resources.Load(src) }

func TestLoadPrecedenceYamlTomlFlags(t *testing.T) {
	dir := t.TempDir()
	yamlPath := write(t, dir, "flink-conf.yaml", flatYAML)
	// A TOML key after a table header belongs to that table, so resource keys come first.
	job := write(t, dir, "job.toml", `"external-resource.fpga.amount" = 2
external-resource.fpga.param.args = "--from-toml"
name = "train"

[taskexecutor]
memory = "4g"
`)

	cfg, _, err := load(Sources{ResourceConf: yamlPath})
	require.NoError(t, err)
	assert.Equal(t, int64(1), cfg.Resources[0].Amount)

	cfg, _, err = load(Sources{ResourceConf: yamlPath, Job: ReadResourceKeys(job)})
	require.NoError(t, err)
	assert.Equal(t, int64(2), cfg.Resources[0].Amount, "toml wins over yaml")
	assert.Equal(t, map[string]string{"path": "/opt/fpga/list", "args": "--from-toml"}, cfg.Resources[0].Params)

	cfg, _, err = load(Sources{ResourceConf: yamlPath, Job: ReadResourceKeys(job), Overrides: []string{
		"external-resource.fpga.amount=3", "external-resource.fpga.amount=4"}})
	require.NoError(t, err)
	assert.Equal(t, int64(4), cfg.Resources[0].Amount, "-D wins over toml, the last -D wins")
	assert.Equal(t, contract.Capability{"yarn.io/fpga": 4}, cfg.YarnResources())
}

func TestLoadFlinkConfNamedByJobFile(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(dir, "conf"), 0o755))
	write(t, filepath.Join(dir, "conf"), "flink-conf.yaml", flatYAML)
	job := write(t, dir, "job.toml", "flink-conf = \"conf/flink-conf.yaml\"\n")
	cfg, _, err := load(Sources{Job: ReadResourceKeys(job)})
	require.NoError(t, err)
	assert.Equal(t, "yarn.io/fpga", cfg.Resources[0].YarnKey)
}

func TestLoadTOMLStyles(t *testing.T) {
	want := contract.Capability{"yarn.io/gpu": 2, "yarn.io/fpga": 1}
	for name, doc := range map[string]string{
		"quoted flat keys": `
"external-resources" = "gpu;fpga"
"external-resource.gpu.amount" = 2
"external-resource.gpu.yarn.config-key" = "yarn.io/gpu"
"external-resource.gpu.driver-factory.class" = "test-strict"
"external-resource.gpu.param.level" = "1"
"external-resource.fpga.amount" = "1"
"external-resource.fpga.yarn.config-key" = "yarn.io/fpga"
`,
		"dotted keys": `
external-resources = ["gpu", "fpga"]
external-resource.gpu.amount = 2
external-resource.gpu.yarn.config-key = "yarn.io/gpu"
external-resource.gpu.driver-factory.class = "test-strict"
external-resource.gpu.param.level = "1"
external-resource.fpga = { amount = 1, yarn.config-key = "yarn.io/fpga" }
`,
		"tables": `
external-resources = "gpu;fpga"
name = "ignored"

[external-resource.gpu]
amount = 2
"yarn.config-key" = "yarn.io/gpu"
driver-factory.class = "test-strict"

[external-resource.gpu.param]
"level" = "1"

[external-resource.fpga]
amount = 1
yarn.config-key = "yarn.io/fpga"

[taskexecutor]
memory = "4g"
`,
	} {
		t.Run(name, func(t *testing.T) {
			cfg, _, err := load(Sources{Job: ReadResourceKeys(write(t, t.TempDir(), "job.toml", doc))})
			require.NoError(t, err)
			assert.Equal(t, want, cfg.YarnResources())
			assert.Equal(t, "gpu", cfg.Resources[0].Name)
			assert.Equal(t, map[string]string{"level": "1"}, cfg.Resources[0].Params)
		})
	}
}

func TestLoadDuplicateKeysOfTheJobFile(t *testing.T) {
	j := write(t, t.TempDir(), "job.toml", `external-resources = "fpga"
"external-resource.fpga.amount" = 1
external-resource.fpga.yarn.config-key = "yarn.io/fpga"
[external-resource.fpga]
amount = 2
`)
	_, _, err := load(Sources{Job: ReadResourceKeys(j)})
	assert.Equal(t, []string{
		`external-resource.fpga.amount is set twice in ` + j + `: line 2 ("1") and line 5 ("2"); keep one`,
	}, messages(t, err))
}

func TestReadResourceKeysReportsAnUnreadableJobFile(t *testing.T) {
	dir := t.TempDir()
	bad := write(t, dir, "bad.toml", "external-resources = \n")
	_, _, err := load(Sources{Job: ReadResourceKeys(bad)})
	msgs := messages(t, err)
	require.Len(t, msgs, 1)
	assert.Contains(t, msgs[0], "job file "+bad+" is not valid TOML: line 1: ")
	_, _, err = load(Sources{Job: ReadResourceKeys(filepath.Join(dir, "nope.toml"))})
	assert.Equal(t, []string{"job file " + filepath.Join(dir, "nope.toml") + " does not exist"}, messages(t, err))
}

func TestTOMLKeyLines(t *testing.T) {
	lines := tomlKeyLines([]byte(`a = """
multi = 1
"""
b = [
  1,
  2,
]
"x.y" = 1
x.'z' = 2
[t."q.r"]
k = 'v' # comment
`))
	assert.Equal(t, map[string]int{"a": 1, "b": 4, "x.y": 8, "x\x00z": 9, "t\x00q.r": 10, "t\x00q.r\x00k": 11}, lines)
}
