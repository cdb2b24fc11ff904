package resources

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/internal/flinkconf"
)

func write(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	return p
}

func messages(t *testing.T, err error) []string {
	t.Helper()
	var ce *ConfigError
	require.ErrorAs(t, err, &ce)
	return ce.Messages()
}

const flatYAML = `# a Flink configuration has many other keys
jobmanager.rpc.address: localhost
taskmanager.numberOfTaskSlots: 4
external-resources: fpga
external-resource.fpga.amount: 1
external-resource.fpga.yarn.config-key: "yarn.io/fpga"   # quoted
external-resource.fpga.driver-factory.class: exec
external-resource.fpga.param.path: /opt/fpga/list
`

func TestLoadNestedYAML(t *testing.T) {
	dir := t.TempDir()
	p := write(t, dir, "config.yaml", `
jobmanager:
  rpc:
    address: localhost
external-resources: [gpu, fpga]
external-resource:
  gpu:
    amount: 2
    yarn:
      config-key: yarn.io/gpu
    driver-factory:
      class: test-strict
    param:
      level: "3"
  fpga:
    amount: 1
    yarn.config-key: yarn.io/fpga
`)
	cfg, warns, err := Load(Sources{ResourceConf: p})
	require.NoError(t, err)
	require.Len(t, cfg.Resources, 2)
	assert.Equal(t, Resource{Name: "gpu", Amount: 2, YarnKey: "yarn.io/gpu", Driver: "test-strict",
		Params: map[string]string{"level": "3"}}, cfg.Resources[0])
	assert.Equal(t, contract.Capability{"yarn.io/gpu": 2, "yarn.io/fpga": 1}, cfg.YarnResources())
	assert.Len(t, warns, 1) // fpga has no driver
}

func TestLoadDuplicateKeys(t *testing.T) {
	dir := t.TempDir()
	y := write(t, dir, "config.yaml", `external-resources: fpga
external-resource.fpga.amount: 1
external-resource.fpga.yarn.config-key: yarn.io/fpga
external-resource:
  fpga:
    amount: 2
`)
	_, _, err := Load(Sources{ResourceConf: y})
	assert.Equal(t, []string{
		`external-resource.fpga.amount is set twice in ` + y + `: line 2 ("1") and line 6 ("2"); keep one`,
	}, messages(t, err))

}

func TestLoadSourceErrors(t *testing.T) {
	dir := t.TempDir()
	job := &JobKeys{Path: "job.toml", Problems: []Problem{{Key: "job file", Message: "job file job.toml is not valid TOML: line 1: x"}}}
	_, _, err := Load(Sources{
		Job:          job,
		ResourceConf: filepath.Join(dir, "missing.yaml"),
		Overrides:    []string{"external-resource.gpu.amount", "unrelated"},
	})
	msgs := messages(t, err)
	require.Len(t, msgs, 4)
	assert.Equal(t, "job file job.toml is not valid TOML: line 1: x", msgs[0], "the job file's problems come first, as read")
	assert.Equal(t, `flink-conf file "`+filepath.Join(dir, "missing.yaml")+`" does not exist`, msgs[1])
	assert.Equal(t, `-D "external-resource.gpu.amount": not key=value; write -D external-resource.gpu.amount=<value>`, msgs[2])
	assert.Contains(t, msgs[3], `-D unrelated: not an external-resource key`)
}

func TestLoadLegacyNonYAMLFlinkConf(t *testing.T) {
	// Flink's legacy parser takes "key: value" lines that YAML rejects.
	p := write(t, t.TempDir(), "flink-conf.yaml", `env.java.opts: -Dx=y: z
external-resources: fpga
external-resource.fpga.amount: 1   # one per TaskExecutor
external-resource.fpga.yarn.config-key: yarn.io/fpga
  bad: indentation: here
`)
	cfg, _, err := Load(Sources{ResourceConf: p})
	require.NoError(t, err)
	assert.Equal(t, int64(1), cfg.Resources[0].Amount)
}

func TestLoadLegacyFlinkConfRejectsWhatFlinkWouldSkip(t *testing.T) {
	// Flink skips these lines with a log warning; the user would lose the setting without noticing.
	p := write(t, t.TempDir(), "flink-conf.yaml", "external-resources:gpu\nexternal-resource.gpu.amount: 2\nexternal-resource.gpu.yarn.config-key:\njust words\n")
	_, _, err := Load(Sources{ResourceConf: p})
	msgs := messages(t, err)
	require.Len(t, msgs, 4) // and the amount without external-resources
	assert.Contains(t, msgs[0], p+`:1: "external-resources:gpu" is not a key: value line (no space after ':'?)`)
	assert.Contains(t, msgs[1], p+`:3: "external-resource.gpu.yarn.config-key:" has no value`)
	assert.Contains(t, msgs[2], p+`:4: "just words" is not a key: value line`)
}

func TestLoadConfigYAMLWithTwoDocuments(t *testing.T) {
	p := write(t, t.TempDir(), "config.yaml", "external-resources: gpu\n---\nexternal-resource:\n  gpu:\n    amount: 2\n")
	_, _, err := Load(Sources{ResourceConf: p})
	require.Error(t, err)
	assert.Contains(t, err.Error(), p+":3: a second YAML document")
}

func TestOverrideOutsideThePrefixIsAnError(t *testing.T) {
	_, _, err := Load(Sources{Overrides: []string{"extrenal-resource.gpu.amount=4", "taskmanager.numberOfTaskSlots=2"}})
	msgs := messages(t, err)
	require.Len(t, msgs, 2)
	assert.Contains(t, msgs[0], `-D extrenal-resource.gpu.amount: not an external-resource key (did you mean "external-resource.gpu.amount"?)`)
	assert.Contains(t, msgs[1], `-D taskmanager.numberOfTaskSlots: not an external-resource key; -D sets only`)
}

func TestDraftSpellings(t *testing.T) {
	cfg, warns, err := Parse(conf(
		"external-resource.list=gpu, fpga",
		"external-resource.gpu.amount=1",
		"external-resource.gpu.yarn.key=yarn.io/gpu",
		"external-resource.gpu.driver.class=test-strict",
		"external-resource.gpu.kubernetes.key=nvidia.com/gpu",
		"external-resource.fpga.amount=1",
		"external-resource.fpga.yarn.config-key=yarn.io/fpga",
		"external-resource.fpga.yarn.key=yarn.io/fpga", // same value twice: fine
	))
	require.NoError(t, err)
	assert.Equal(t, []Resource{
		{Name: "gpu", Amount: 1, YarnKey: "yarn.io/gpu", KubernetesKey: "nvidia.com/gpu", Driver: "test-strict", Params: map[string]string{}},
		{Name: "fpga", Amount: 1, YarnKey: "yarn.io/fpga", Params: map[string]string{}},
	}, cfg.Resources)
	var texts []string
	for _, w := range warns {
		texts = append(texts, w.Message)
	}
	assert.Equal(t, []string{
		`external-resource.fpga.yarn.key = "yarn.io/fpga" (job.toml:8): external-resource.fpga.yarn.key is a draft spelling; use external-resource.fpga.yarn.config-key instead`,
		`external-resource.gpu.driver.class = "test-strict" (job.toml:4): external-resource.gpu.driver.class is a draft spelling; use external-resource.gpu.driver-factory.class instead`,
		`external-resource.gpu.kubernetes.key = "nvidia.com/gpu" (job.toml:5): external-resource.gpu.kubernetes.key is a draft spelling; use external-resource.gpu.kubernetes.config-key instead`,
		`external-resource.gpu.yarn.key = "yarn.io/gpu" (job.toml:3): external-resource.gpu.yarn.key is a draft spelling; use external-resource.gpu.yarn.config-key instead`,
		`external-resource.list = "gpu, fpga" (job.toml:1): external-resource.list is a draft spelling; use external-resources instead`,
		`external-resource.gpu.kubernetes.key = "nvidia.com/gpu" (job.toml:5): accepted for compatibility with Flink, unused on YARN`,
		`external-resource.fpga.driver-factory.class is not set: resource "fpga" is requested from YARN as yarn.io/fpga but the worker gets no device infos; set it to exec (with param.path) to discover them`,
	}, texts)
}

func TestNoneAndEmpty(t *testing.T) {
	cfg, warns, err := Parse(conf("external-resources= none ", "external-resource.gpu.amount=2"))
	require.NoError(t, err)
	assert.Empty(t, cfg.Resources)
	require.Len(t, warns, 1)
	assert.Equal(t, `external-resource.gpu.amount is ignored: external-resources = " none " (job.toml:1) disables external resources`, warns[0].Message)

	cfg, warns, err = Parse(map[string]Value{"jobmanager.memory": {V: "1g"}})
	require.NoError(t, err)
	assert.Empty(t, cfg.Resources)
	assert.Empty(t, warns)

	cfg, _, err = Parse(conf("external-resources= ;fpga;; ", "external-resource.fpga.amount=1", "external-resource.fpga.yarn.config-key=yarn.io/fpga"))
	require.NoError(t, err)
	assert.Len(t, cfg.Resources, 1)
}

func TestGPUDriverIsTheDefaultForYarnGPU(t *testing.T) {
	cfg, warns, err := Parse(conf("external-resources=gpu", "external-resource.gpu.amount=1", "external-resource.gpu.yarn.config-key=yarn.io/gpu"))
	require.NoError(t, err)
	assert.Equal(t, "gpu", cfg.Resources[0].Driver)
	require.Len(t, warns, 1)
	assert.Equal(t, LevelInfo, warns[0].Level)
	assert.Equal(t, `external-resource.gpu.driver-factory.class is not set: resource "gpu" is yarn.io/gpu, so the built-in GPU driver ("gpu") discovers its devices`, warns[0].Message)
}

// A YAML alias may point back to the mapping that contains it, or aliases may repeat each other
// until the flattened document is exponentially large: both are refused with a problem naming the
// file, quickly, instead of recursing until the memory runs out.
func TestLoadYAMLAliasCycleAndBomb(t *testing.T) {
	dir := t.TempDir()
	// Aliases exist in YAML only: a config.yaml is read as YAML (a flink-conf.yaml line by line).
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "cycle"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "bomb"), 0o755))
	cycle := write(t, filepath.Join(dir, "cycle"), "config.yaml", "external-resources: gpu\nexternal-resource: &r\n  gpu:\n    amount: 1\n    again: *r\n")
	var bomb strings.Builder
	bomb.WriteString("l0: &l0 {k0: 1, k1: 1, k2: 1, k3: 1, k4: 1, k5: 1, k6: 1, k7: 1, k8: 1, k9: 1}\n")
	for i := 1; i <= 8; i++ {
		fmt.Fprintf(&bomb, "l%d: &l%d {", i, i)
		for j := 0; j < 10; j++ {
			fmt.Fprintf(&bomb, "a%d: *l%d, ", j, i-1)
		}
		bomb.WriteString("z: 0}\n")
	}
	bombPath := write(t, filepath.Join(dir, "bomb"), "config.yaml", bomb.String())

	for _, tc := range []struct{ path, want string }{
		{cycle, "is an alias of a mapping that contains it"},
		{bombPath, "more than 50 aliases of mappings or lists"}, // Flink's own bound (internal/flinkconf)
	} {
		start := time.Now()
		_, _, err := Load(Sources{ResourceConf: tc.path})
		msgs := messages(t, err)
		require.Len(t, msgs, 1)
		assert.Contains(t, msgs[0], tc.path)
		assert.Contains(t, msgs[0], tc.want)
		assert.Less(t, time.Since(start), time.Second, "gives up within 1 s")
	}
	assert.Equal(t, int64(flinkconf.MaxBytes), int64(MaxFlinkConfBytes), "the documented limit is the reader's")
}

// NearResourceKey answers for a user's 1 MiB key by its length, not by a 1 MiB x 18 edit table (which
// made each huge -D key of TestMessagesAreBounded cost seconds under -race); near misses keep their
// nearest spelling, the first on a tie.
func TestNearResourceKeyOfAHugeKeyIsCheap(t *testing.T) {
	huge := strings.Repeat("9", 1<<20) + ".x"
	if allocs := testing.AllocsPerRun(3, func() { _, _ = NearResourceKey(huge) }); allocs != 0 {
		t.Errorf("%.0f allocations for a key out of reach by its length", allocs)
	}
	for key, want := range map[string]string{
		"extrenal-resource.gpu.amount": "external-resource.gpu.amount",
		"External-Resourcs":            "external-resources",
		"externl-resource":             "external-resource",
	} {
		if got, near := NearResourceKey(key); !near || got != want {
			t.Errorf("NearResourceKey(%q) = %q, %v; want %q", key, got, near, want)
		}
	}
	if _, near := NearResourceKey("xternl-resurce"); near {
		t.Error("three edits away is not a near miss")
	}
}
