package resources

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/contract"
)

// TestLoadYAMLMergeKey: <<: *base is valid for Flink's YAML reader; the mapping's own keys win over
// the merged ones, and an earlier merged mapping over a later one.
func TestLoadYAMLMergeKey(t *testing.T) {
	p := write(t, t.TempDir(), "config.yaml", `
defaults: &base
  amount: 2
  yarn.config-key: yarn.io/gpu
other: &other
  amount: 7
  param:
    level: "3"
external-resources: [gpu, fpga]
external-resource:
  gpu:
    <<: *base
    amount: 1
  fpga:
    <<: [*other, *base]
    yarn.config-key: yarn.io/fpga
`)
	cfg, _, err := Load(Sources{ResourceConf: p})
	require.NoError(t, err)
	assert.Equal(t, contract.Capability{"yarn.io/gpu": 1, "yarn.io/fpga": 7}, cfg.YarnResources())
	assert.Equal(t, map[string]string{"level": "3"}, cfg.Resources[1].Params)
}

// TestYAMLParserTextInOurWords: what the YAML parser says in its own words only is said in ours, and a
// nested list, which Flink's flat lists cannot hold, is refused instead of losing its items.
func TestYAMLParserTextInOurWords(t *testing.T) {
	for _, c := range []struct{ name, yaml, want string }{
		{"tab indentation", "external-resources: gpu\nexternal-resource:\n\tgpu:\n    amount: 2\n",
			"config.yaml:3: the line is indented with a tab; YAML indents with spaces only"},
		{"nested list", "external-resources: [gpu, [fpga]]\n",
			`config.yaml:1: key "external-resources": a list item is itself a list or a mapping; give a flat list of values, e.g. [gpu, fpga]`},
		{"merge of a scalar", "external-resource:\n  gpu:\n    <<: 5\n",
			"config.yaml:3: the merge key << takes a mapping"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := write(t, t.TempDir(), "config.yaml", c.yaml)
			_, _, err := Load(Sources{ResourceConf: p})
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
			assert.NotContains(t, err.Error(), "cannot start any token")
		})
	}
}
