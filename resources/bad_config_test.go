package resources

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/contract"
)

// TestBadConfigurations pins the exact text a user sees for each kind of mistake. Inputs are "key=value"
// lines; line i has origin job.toml:i+1.
func TestBadConfigurations(t *testing.T) {
	cases := []struct {
		name string
		conf []string
		want []string
	}{
		{"invalid name in list", []string{`external-resources=gpu;my gpu`, `external-resource.gpu.amount=1`, `external-resource.gpu.yarn.config-key=yarn.io/gpu`, `external-resource.gpu.driver-factory.class=test-strict`}, []string{
			`external-resources = "gpu;my gpu" (job.toml:1): resource name "my gpu" is not valid: use only letters, digits, '_' and '-'`,
		}},
		{"none combined with names", []string{`external-resources=gpu;none`, `external-resource.gpu.amount=1`, `external-resource.gpu.yarn.config-key=yarn.io/gpu`, `external-resource.gpu.driver-factory.class=test-strict`}, []string{
			`external-resources = "gpu;none" (job.toml:1): "none" is reserved for "no external resources" and cannot be combined with resource names`,
		}},
		{"name listed twice", []string{`external-resources=fpga; fpga`, `external-resource.fpga.amount=1`, `external-resource.fpga.yarn.config-key=yarn.io/fpga`}, []string{
			`external-resources = "fpga; fpga" (job.toml:1): resource "fpga" is listed twice`,
		}},
		{"amount missing", []string{`external-resources=fpga`, `external-resource.fpga.yarn.config-key=yarn.io/fpga`}, []string{
			`external-resource.fpga.amount is not set: resource "fpga" is listed in external-resources but has no amount; set a positive integer per TaskExecutor, e.g. external-resource.fpga.amount: 1`,
		}},
		{"amount not a number", []string{`external-resources=fpga`, `external-resource.fpga.amount=two`, `external-resource.fpga.yarn.config-key=yarn.io/fpga`}, []string{
			`external-resource.fpga.amount = "two" (job.toml:2): not an integer; the amount is a whole number of devices per TaskExecutor, e.g. 1`,
		}},
		{"amount zero", []string{`external-resources=fpga`, `external-resource.fpga.amount=0`, `external-resource.fpga.yarn.config-key=yarn.io/fpga`}, []string{
			`external-resource.fpga.amount = "0" (job.toml:2): must be at least 1 (to use no fpga, remove "fpga" from external-resources)`,
		}},
		{"amount negative", []string{`external-resources=fpga`, `external-resource.fpga.amount=-1`, `external-resource.fpga.yarn.config-key=yarn.io/fpga`}, []string{
			`external-resource.fpga.amount = "-1" (job.toml:2): must be at least 1 (to use no fpga, remove "fpga" from external-resources)`,
		}},
		{"amount absurd", []string{`external-resources=fpga`, `external-resource.fpga.amount=3000000000`, `external-resource.fpga.yarn.config-key=yarn.io/fpga`}, []string{
			`external-resource.fpga.amount = "3000000000" (job.toml:2): too large; at most 2147483647 per TaskExecutor`,
		}},
		{"amount beyond int64", []string{`external-resources=fpga`, `external-resource.fpga.amount=99999999999999999999`, `external-resource.fpga.yarn.config-key=yarn.io/fpga`}, []string{
			`external-resource.fpga.amount = "99999999999999999999" (job.toml:2): too large; at most 2147483647 per TaskExecutor`,
		}},
		{"amount fractional", []string{`external-resources=fpga`, `external-resource.fpga.amount=1.5`, `external-resource.fpga.yarn.config-key=yarn.io/fpga`}, []string{
			`external-resource.fpga.amount = "1.5" (job.toml:2): not an integer; the amount is a whole number of devices per TaskExecutor, e.g. 1`,
		}},
		{"amount empty", []string{`external-resources=fpga`, `external-resource.fpga.amount=`, `external-resource.fpga.yarn.config-key=yarn.io/fpga`}, []string{
			`external-resource.fpga.amount = "" (job.toml:2): not an integer; the amount is a whole number of devices per TaskExecutor, e.g. 1`,
		}},
		{"yarn key missing for a gpu name", []string{`external-resources=gpu`, `external-resource.gpu.amount=2`, `external-resource.gpu.driver-factory.class=test-strict`}, []string{
			`external-resource.gpu.yarn.config-key is not set: without it YARN is never asked for "gpu"; set the YARN resource type, e.g. external-resource.gpu.yarn.config-key: yarn.io/gpu`,
		}},
		{"yarn key missing for another name", []string{`external-resources=fpga`, `external-resource.fpga.amount=1`}, []string{
			`external-resource.fpga.yarn.config-key is not set: without it YARN is never asked for "fpga"; set the YARN resource type, e.g. external-resource.fpga.yarn.config-key: yarn.io/fpga`,
		}},
		{"yarn key missing, gpu driver on another name", []string{`external-resources=accel`, `external-resource.accel.amount=1`, `external-resource.accel.driver-factory.class=org.apache.flink.externalresource.gpu.GPUDriverFactory`}, []string{
			`external-resource.accel.yarn.config-key is not set: without it YARN is never asked for "accel"; set the YARN resource type, e.g. external-resource.accel.yarn.config-key: yarn.io/gpu`,
		}},
		{"yarn key with a space", []string{`external-resources=gpu`, `external-resource.gpu.amount=1`, `external-resource.gpu.yarn.config-key=yarn io/gpu`, `external-resource.gpu.driver-factory.class=test-strict`}, []string{
			`external-resource.gpu.yarn.config-key = "yarn io/gpu" (job.toml:3): not a valid YARN resource type name: use an optional DNS-style prefix and a name that starts with a letter, e.g. yarn.io/gpu`,
		}},
		{"yarn key with a trailing slash", []string{`external-resources=fpga`, `external-resource.fpga.amount=1`, `external-resource.fpga.yarn.config-key=yarn.io/`}, []string{
			`external-resource.fpga.yarn.config-key = "yarn.io/" (job.toml:3): not a valid YARN resource type name: use an optional DNS-style prefix and a name that starts with a letter, e.g. yarn.io/fpga`,
		}},
		{"yarn key memory-mb", []string{`external-resources=mem`, `external-resource.mem.amount=1024`, `external-resource.mem.yarn.config-key=memory-mb`}, []string{
			`external-resource.mem.yarn.config-key = "memory-mb" (job.toml:3): memory-mb is YARN's built-in memory resource, not an external resource; set the TaskExecutor's memory and vcores in the job file instead`,
		}},
		{"yarn key vcores", []string{`external-resources=cpu`, `external-resource.cpu.amount=2`, `external-resource.cpu.yarn.config-key=vcores`}, []string{
			`external-resource.cpu.yarn.config-key = "vcores" (job.toml:3): vcores is YARN's built-in CPU resource, not an external resource; set the TaskExecutor's memory and vcores in the job file instead`,
		}},
		{"two resources on one yarn key", []string{`external-resources=gpu;gpu2`, `external-resource.gpu.amount=1`, `external-resource.gpu.yarn.config-key=yarn.io/fpga`, `external-resource.gpu2.amount=1`, `external-resource.gpu2.yarn.config-key=yarn.io/fpga`}, []string{
			`external-resource.gpu2.yarn.config-key = "yarn.io/fpga" (job.toml:5): resource "gpu" already uses YARN resource type yarn.io/fpga (external-resource.gpu.yarn.config-key = "yarn.io/fpga" (job.toml:3)); two resources cannot share one YARN resource type: make them one resource with the summed amount`,
		}},
		{"unknown driver", []string{`external-resources=fpga`, `external-resource.fpga.amount=1`, `external-resource.fpga.yarn.config-key=yarn.io/fpga`, `external-resource.fpga.driver-factory.class=org.apache.flink.externalresource.fpga.FPGADriverFactory`}, []string{
			`external-resource.fpga.driver-factory.class = "org.apache.flink.externalresource.fpga.FPGADriverFactory" (job.toml:4): unknown driver; registered drivers: exec, gpu, org.apache.flink.externalresource.gpu.GPUDriverFactory, test-strict. For a device without a built-in driver use the exec driver: external-resource.fpga.driver-factory.class: exec and external-resource.fpga.param.path: <your discovery program>`,
		}},
		{"empty driver", []string{`external-resources=fpga`, `external-resource.fpga.amount=1`, `external-resource.fpga.yarn.config-key=yarn.io/fpga`, `external-resource.fpga.driver-factory.class= `}, []string{
			`external-resource.fpga.driver-factory.class = " " (job.toml:4): empty; name a registered driver (exec, gpu, org.apache.flink.externalresource.gpu.GPUDriverFactory, test-strict) or leave the key out`,
		}},
		{"driver rejects its params", []string{`external-resources=fpga`, `external-resource.fpga.amount=1`, `external-resource.fpga.yarn.config-key=yarn.io/fpga`, `external-resource.fpga.driver-factory.class=test-strict`, `external-resource.fpga.param.colour=red`}, []string{
			`external-resource.fpga.driver-factory.class = "test-strict" (job.toml:4): the driver rejected its parameters: unknown parameter "colour" (only "level")`,
		}},
		{"exec driver without path", []string{`external-resources=fpga`, `external-resource.fpga.amount=1`, `external-resource.fpga.yarn.config-key=yarn.io/fpga`, `external-resource.fpga.driver-factory.class=exec`}, []string{
			`external-resource.fpga.driver-factory.class = "exec" (job.toml:4): the driver rejected its parameters: external-resource.fpga.param.path is not set: the exec driver needs the program to run, e.g. external-resource.fpga.param.path = /opt/fpga/bin/list-fpgas`,
		}},
		{"exec driver bad timeout", []string{`external-resources=fpga`, `external-resource.fpga.amount=1`, `external-resource.fpga.yarn.config-key=yarn.io/fpga`, `external-resource.fpga.driver-factory.class=exec`, `external-resource.fpga.param.path=/opt/fpga/list`, `external-resource.fpga.param.timeout=soon`}, []string{
			`external-resource.fpga.driver-factory.class = "exec" (job.toml:4): the driver rejected its parameters: external-resource.fpga.param.timeout = "soon": not a duration: use a Go duration such as 90s or 2m, or a number of seconds`,
		}},
		{"exec driver misspelt param", []string{`external-resources=fpga`, `external-resource.fpga.amount=1`, `external-resource.fpga.yarn.config-key=yarn.io/fpga`, `external-resource.fpga.driver-factory.class=exec`, `external-resource.fpga.param.pth=/opt/fpga/list`}, []string{
			`external-resource.fpga.driver-factory.class = "exec" (job.toml:4): the driver rejected its parameters: external-resource.fpga.param.path is not set: the exec driver needs the program to run, e.g. external-resource.fpga.param.path = /opt/fpga/bin/list-fpgas; external-resource.fpga.param.pth = "/opt/fpga/list": unknown parameter of the exec driver (did you mean "path"?); valid: path, args, timeout`,
		}},
		{"exec driver unbalanced quote", []string{`external-resources=fpga`, `external-resource.fpga.amount=1`, `external-resource.fpga.yarn.config-key=yarn.io/fpga`, `external-resource.fpga.driver-factory.class=exec`, `external-resource.fpga.param.path=/opt/fpga/list`, `external-resource.fpga.param.args=--name 'x`}, []string{
			`external-resource.fpga.driver-factory.class = "exec" (job.toml:4): the driver rejected its parameters: external-resource.fpga.param.args = "--name 'x": arguments "--name 'x": unterminated single quote; quote arguments as in a shell`,
		}},
		{"keys of an unlisted resource", []string{`external-resources=gpu`, `external-resource.gpu.amount=1`, `external-resource.gpu.yarn.config-key=yarn.io/gpu`, `external-resource.gpu.driver-factory.class=test-strict`, `external-resource.fpga.amount=1`, `external-resource.fpga.yarn.config-key=yarn.io/fpga`}, []string{
			`external-resource.fpga.amount, external-resource.fpga.yarn.config-key are set but resource "fpga" is not listed in external-resources = "gpu" (job.toml:1), so it would be ignored; add it: external-resources = "gpu;fpga"`,
		}},
		{"resource keys without external-resources", []string{`external-resource.fpga.amount=1`}, []string{
			`external-resource.fpga.amount is set but external-resources is not set, so resource "fpga" would be ignored; add it: external-resources = "fpga"`,
		}},
		{"misspelt amount", []string{`external-resources=fpga`, `external-resource.fpga.amout=1`, `external-resource.fpga.yarn.config-key=yarn.io/fpga`}, []string{
			`external-resource.fpga.amout = "1" (job.toml:2): unknown key (did you mean "external-resource.fpga.amount"?); the keys of a resource are external-resource.fpga.amount, external-resource.fpga.yarn.config-key, external-resource.fpga.kubernetes.config-key, external-resource.fpga.driver-factory.class, external-resource.fpga.param.<name>`,
			`external-resource.fpga.amount is not set: resource "fpga" is listed in external-resources but has no amount; set a positive integer per TaskExecutor, e.g. external-resource.fpga.amount: 1`,
		}},
		{"misspelt yarn key", []string{`external-resources=fpga`, `external-resource.fpga.amount=1`, `external-resource.fpga.yarn.config-ky=yarn.io/fpga`}, []string{
			`external-resource.fpga.yarn.config-ky = "yarn.io/fpga" (job.toml:3): unknown key (did you mean "external-resource.fpga.yarn.config-key"?); the keys of a resource are external-resource.fpga.amount, external-resource.fpga.yarn.config-key, external-resource.fpga.kubernetes.config-key, external-resource.fpga.driver-factory.class, external-resource.fpga.param.<name>`,
			`external-resource.fpga.yarn.config-key is not set: without it YARN is never asked for "fpga"; set the YARN resource type, e.g. external-resource.fpga.yarn.config-key: yarn.io/fpga`,
		}},
		{"misspelt param prefix", []string{`external-resources=fpga`, `external-resource.fpga.amount=1`, `external-resource.fpga.yarn.config-key=yarn.io/fpga`, `external-resource.fpga.params.path=/x`}, []string{
			`external-resource.fpga.params.path = "/x" (job.toml:4): unknown key (did you mean "external-resource.fpga.param.path"?); the keys of a resource are external-resource.fpga.amount, external-resource.fpga.yarn.config-key, external-resource.fpga.kubernetes.config-key, external-resource.fpga.driver-factory.class, external-resource.fpga.param.<name>`,
		}},
		{"resource key without sub-key", []string{`external-resources=fpga`, `external-resource.fpga.amount=1`, `external-resource.fpga.yarn.config-key=yarn.io/fpga`, `external-resource.fpga=1`}, []string{
			`external-resource.fpga = "1" (job.toml:4): not a key yarn-am knows; per-resource keys are external-resource.<name>.<key> with <key> one of amount, yarn.config-key, kubernetes.config-key, driver-factory.class, param.<name>`,
		}},
		{"misspelt prefix", []string{`external-resources=fpga`, `external-resource.fpga.amount=1`, `external-resource.fpga.yarn.config-key=yarn.io/fpga`, `external-resources.fpga.driver-factory.class=exec`}, []string{
			`external-resources.fpga.driver-factory.class = "exec" (job.toml:4): not a key yarn-am knows (did you mean "external-resource.fpga.driver-factory.class"?)`,
		}},
		{"draft and final yarn key disagree", []string{`external-resources=fpga`, `external-resource.fpga.amount=1`, `external-resource.fpga.yarn.config-key=yarn.io/fpga`, `external-resource.fpga.yarn.key=yarn.io/gpu`}, []string{
			`external-resource.fpga.yarn.key = "yarn.io/gpu" (job.toml:4) and external-resource.fpga.yarn.config-key = "yarn.io/fpga" (job.toml:3) disagree: they are two spellings of one setting; remove the draft spelling external-resource.fpga.yarn.key`,
		}},
		{"draft and final list disagree", []string{`external-resources=fpga`, `external-resource.list=gpu,fpga`, `external-resource.fpga.amount=1`, `external-resource.fpga.yarn.config-key=yarn.io/fpga`}, []string{
			`external-resource.list = "gpu,fpga" (job.toml:2) and external-resources = "fpga" (job.toml:1) disagree: they are two spellings of one setting; remove the draft spelling external-resource.list`,
		}},
		{"invalid name in keys only", []string{`external-resources=fpga`, `external-resource.fpga.amount=1`, `external-resource.fpga.yarn.config-key=yarn.io/fpga`, `external-resource.my fpga.amount=1`}, []string{
			`external-resource.my fpga.amount: resource name "my fpga" is not valid: use only letters, digits, '_' and '-'`,
		}},
		{"everything wrong at once", []string{`external-resources=gpu;fpga;bad!`, `external-resource.gpu.amount=0`, `external-resource.fpga.amount=x`, `external-resource.fpga.driver-factory.class=nope`, `external-resource.tpu.amount=4`}, []string{
			`external-resources = "gpu;fpga;bad!" (job.toml:1): resource name "bad!" is not valid: use only letters, digits, '_' and '-'`,
			`external-resource.tpu.amount is set but resource "tpu" is not listed in external-resources = "gpu;fpga;bad!" (job.toml:1), so it would be ignored; add it: external-resources = "gpu;fpga;tpu"`,
			`external-resource.gpu.amount = "0" (job.toml:2): must be at least 1 (to use no gpu, remove "gpu" from external-resources)`,
			`external-resource.gpu.yarn.config-key is not set: without it YARN is never asked for "gpu"; set the YARN resource type, e.g. external-resource.gpu.yarn.config-key: yarn.io/gpu`,
			`external-resource.fpga.amount = "x" (job.toml:3): not an integer; the amount is a whole number of devices per TaskExecutor, e.g. 1`,
			`external-resource.fpga.yarn.config-key is not set: without it YARN is never asked for "fpga"; set the YARN resource type, e.g. external-resource.fpga.yarn.config-key: yarn.io/fpga`,
			`external-resource.fpga.driver-factory.class = "nope" (job.toml:4): unknown driver; registered drivers: exec, gpu, org.apache.flink.externalresource.gpu.GPUDriverFactory, test-strict. For a device without a built-in driver use the exec driver: external-resource.fpga.driver-factory.class: exec and external-resource.fpga.param.path: <your discovery program>`,
		}},
	}
	require.GreaterOrEqual(t, len(cases), 30)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, _, err := Parse(conf(c.conf...))
			assert.Nil(t, cfg)
			var ce *ConfigError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, c.want, ce.Messages())
		})
	}
}

// TestLoadRefusesHostileFlinkConfs: a Flink configuration that is not a regular file is refused
// without reading it (a named pipe would block, /dev/zero never ends), one over MaxFlinkConfBytes is
// refused, and each error names the file and the limit (docs/running.md#limits-on-input-files). A
// UTF-8 byte order mark is skipped, as Flink skips it: the first key is read, not lost.
func TestLoadRefusesHostileFlinkConfs(t *testing.T) {
	dir := t.TempDir()
	pipe := filepath.Join(dir, "pipe", "flink-conf.yaml")
	require.NoError(t, os.MkdirAll(filepath.Dir(pipe), 0o755))
	require.NoError(t, syscall.Mkfifo(pipe, 0o644))
	const ok = "external-resources: fpga\nexternal-resource.fpga.amount: 1\nexternal-resource.fpga.yarn.config-key: yarn.io/fpga\n"
	big := write(t, dir, "flink-conf.yaml", "# "+strings.Repeat("x", MaxFlinkConfBytes)+"\n"+ok)
	exact := write(t, t.TempDir(), "flink-conf.yaml", ok+"# "+strings.Repeat("x", MaxFlinkConfBytes-len(ok)-3)+"\n")
	bomLegacy := write(t, t.TempDir(), "flink-conf.yaml", "\uFEFF"+ok)
	bomYAML := write(t, t.TempDir(), "config.yaml", "\uFEFF"+ok)
	for _, c := range []struct {
		name, path string
		want       string // the one message; "" = loads, with the fpga of ok
	}{
		{"a named pipe", pipe, "flink-conf file " + pipe + " is a named pipe, not a regular file; give the path of a flink-conf.yaml or config.yaml"},
		{"/dev/zero", "/dev/zero", "flink-conf file /dev/zero is a device, not a regular file; give the path of a flink-conf.yaml or config.yaml"},
		{"a directory", dir, "flink-conf file " + dir + " is a directory; give the path of a flink-conf.yaml or config.yaml"},
		{"over 1 MiB", big, "flink-conf file " + big + " is larger than 1 MiB, the most yarn-am reads of it (docs/running.md#limits-on-input-files); a real one is far smaller: check that this is the file you meant"},
		{"exactly 1 MiB", exact, ""},
		{"a byte order mark, read line by line", bomLegacy, ""},
		{"a byte order mark, read as YAML", bomYAML, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, _, err := Load(Sources{ResourceConf: c.path})
			if c.want == "" {
				require.NoError(t, err)
				assert.Equal(t, contract.Capability{"yarn.io/fpga": 1}, cfg.YarnResources(), "the first key is read")
				return
			}
			assert.Equal(t, []string{c.want}, messages(t, err))
		})
	}
}
