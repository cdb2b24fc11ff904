package gpu

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/resources"
)

const validFlagsWant = "valid flags of the built-in discovery script: --enable-coordination-mode (or --enable-coordination; coordination is on by default in YARN containers), --no-coordination, --coordination-dir DIR (absolute; default /var/lib/yarn-am/gpu when it exists, else a private directory of the user), --coordination-file FILE (absolute; Flink's), --lock-timeout SECONDS (1-9999; default 30), --topology connected|prefer|wait|any (default prefer)"

func TestCheckBuiltinScriptArgsRejects(t *testing.T) {
	for _, tc := range []struct{ args, why string }{
		{"--enable-cordination", `unknown flag "--enable-cordination" (did you mean "--enable-coordination"?)`},
		{"--enable-coordination-mod", `unknown flag "--enable-coordination-mod" (did you mean "--enable-coordination-mode"?)`},
		{"--enable-coordination --coordination-dri /x", `unknown flag "--coordination-dri" (did you mean "--coordination-dir"?)`},
		{"--verbose", `unknown flag "--verbose"`},
		{"-c", `unknown flag "-c"`},
		{"2", `unexpected argument "2": yarn-am passes the amount itself; the built-in script takes only flags`},
		{"--release", "--release is the driver's: it runs the script's release mode itself once the worker is gone"},
		{"--mark-sick GPU-1", "--mark-sick is the driver's: the launcher runs it when one of its GPUs reads unhealthy (docs/gpus.md#gpu-health-a-sick-gpu-is-taken-out-of-service)"},
		{"--enable-coordination --coordination-dir", "--coordination-dir needs a value"},
		{"--enable-coordination --coordination-dir --lock-timeout 5", "--coordination-dir needs a value"},
		{"--enable-coordination --coordination-dir gpu-claims", `--coordination-dir "gpu-claims" is not an absolute path (the workers of a node must name the same place)`},
		{"--enable-coordination --coordination-dir=", `--coordination-dir "" is not an absolute path (the workers of a node must name the same place)`},
		{"--coordination-file flink-gpu", `--coordination-file "flink-gpu" is not an absolute path (the workers of a node must name the same place)`},
		{"--coordination-file", "--coordination-file needs a value"},
		{"--coordination-dir /a --coordination-file /b", "--coordination-dir and --coordination-file both name where the claims are kept; give one"},
		{"--no-coordination --enable-coordination", "--no-coordination contradicts --enable-coordination"},
		{"--enable-coordination-mode --no-coordination", "--no-coordination contradicts --enable-coordination-mode"},
		{"--no-coordination --coordination-dir /srv/gpu", "--coordination-dir has no effect with --no-coordination"},
		{"--no-coordination --coordination-file /var/tmp/flink-gpu-coordination", "--coordination-file has no effect with --no-coordination"},
		{"--no-coordination --lock-timeout 5", "--lock-timeout has no effect with --no-coordination"},
		{"--no-coordination=1", "--no-coordination takes no value"},
		{"--enable-coordination --lock-timeout 0", `--lock-timeout "0" is not a whole number of seconds between 1 and 9999`},
		{"--enable-coordination --lock-timeout=10s", `--lock-timeout "10s" is not a whole number of seconds between 1 and 9999`},
		{"--enable-coordination --lock-timeout 05", `--lock-timeout "05" is not a whole number of seconds between 1 and 9999`},
		{"--enable-coordination --lock-timeout 10000", `--lock-timeout "10000" is not a whole number of seconds between 1 and 9999`},
		{"--enable-coordination=yes", "--enable-coordination takes no value"},
		{"--enable-coordination --lock-timeout 60", "--lock-timeout 60 is not shorter than external-resource.gpu.param.discovery-script.timeout (1m0s): the script would be killed before it can say who holds the lock"},
		{"--topology nvlink", `--topology "nvlink" is not one of connected (fail when no NVLink-connected set is free), prefer (the default: take the best set free), wait (wait for a connected set, up to --lock-timeout), any (read no topology)`},
		{"--topology=Connected", `--topology "Connected" is not one of connected (fail when no NVLink-connected set is free), prefer (the default: take the best set free), wait (wait for a connected set, up to --lock-timeout), any (read no topology)`},
		{"--topology=", `--topology "" is not one of connected (fail when no NVLink-connected set is free), prefer (the default: take the best set free), wait (wait for a connected set, up to --lock-timeout), any (read no topology)`},
		{"--topology", "--topology needs a value"},
		{"--topology --no-coordination", "--topology needs a value"},
		{"--topology connected --topology any", "--topology connected and --topology any contradict each other; give one"},
		{"--topolgy connected", `unknown flag "--topolgy" (did you mean "--topology"?)`},
		{"--topology wait --lock-timeout 58", "--topology wait waits up to --lock-timeout 58 s, which with its last look (3s) is not shorter than external-resource.gpu.param.discovery-script.timeout (1m0s): the script would be killed while it waits; give a --lock-timeout at least 3s shorter"},
	} {
		_, err := CheckBuiltinScriptArgs("gpu", tc.args, time.Minute)
		require.Error(t, err, tc.args)
		assert.Equal(t, fmt.Sprintf("external-resource.gpu.param.discovery-script.args = %q: %s; %s", tc.args, tc.why, validFlagsWant), err.Error())
	}
	_, err := CheckBuiltinScriptArgs("gpu", `--enable-coordination "`, time.Minute)
	assert.EqualError(t, err, `external-resource.gpu.param.discovery-script.args = "--enable-coordination \"": arguments "--enable-coordination \"": unterminated double quote; quote arguments as in a shell`)
}

func TestCheckBuiltinScriptArgsAccepts(t *testing.T) {
	for args, want := range map[string]ScriptArgs{
		"":                           {},
		"--enable-coordination-mode": {Coordinate: true},
		"--enable-coordination":      {Coordinate: true},
		"--enable-coordination --coordination-dir /srv/gpu --lock-timeout 10":    {Coordinate: true, Dir: "/srv/gpu", LockTimeout: 10 * time.Second},
		"--coordination-dir=/srv/a --enable-coordination-mode --lock-timeout=59": {Coordinate: true, Dir: "/srv/a", LockTimeout: 59 * time.Second},
		"--enable-coordination --coordination-dir '/srv/with space'":             {Coordinate: true, Dir: "/srv/with space"},
		"--no-coordination":                                   {NoCoordinate: true},
		"--coordination-dir /srv/gpu":                         {Coordinate: true, Dir: "/srv/gpu"},
		"--lock-timeout 5":                                    {LockTimeout: 5 * time.Second},
		"--coordination-file /var/tmp/flink-gpu-coordination": {Coordinate: true, File: "/var/tmp/flink-gpu-coordination"},
		"--enable-coordination --coordination-file=/var/tmp/flink-gpu-coordination": {Coordinate: true, File: "/var/tmp/flink-gpu-coordination"},
		"--topology connected":                                  {Topology: TopologyConnected},
		"--topology wait --lock-timeout 20":                     {Topology: TopologyWait, LockTimeout: 20 * time.Second},
		"--topology=prefer --topology prefer":                   {Topology: TopologyPrefer},
		"--no-coordination --topology any":                      {NoCoordinate: true, Topology: TopologyAny},
		"--enable-coordination --topology=any --lock-timeout 5": {Coordinate: true, Topology: TopologyAny, LockTimeout: 5 * time.Second},
	} {
		got, err := CheckBuiltinScriptArgs("gpu", args, time.Minute)
		require.NoError(t, err, args)
		assert.Equal(t, want, got, args)
	}
}

// yarn-am check validates the external-resource configuration with resources.Parse, which builds each
// driver: a misspelled flag of the built-in script is reported there, before anything is staged, and a
// custom script's flags are left alone.
func TestMisspelledScriptFlagFailsConfigValidation(t *testing.T) {
	conf := func(kv ...string) map[string]resources.Value {
		m := map[string]resources.Value{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = resources.Value{V: kv[i+1], Origin: "job.toml"}
		}
		return m
	}
	_, _, err := resources.Parse(conf(
		"external-resource.list", "gpu",
		"external-resource.gpu.amount", "1",
		"external-resource.gpu.yarn.config-key", "yarn.io/gpu",
		"external-resource.gpu.driver-factory.class", "org.apache.flink.externalresource.gpu.GPUDriverFactory",
		"external-resource.gpu.param.discovery-script.args", "--enable-cordination",
	))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `external-resource.gpu.param.discovery-script.args = "--enable-cordination": unknown flag "--enable-cordination" (did you mean "--enable-coordination"?); `+validFlagsWant)

	script := filepath.Join(t.TempDir(), "mine.sh")
	require.NoError(t, os.WriteFile(script, []byte("#!/bin/sh\necho 0\n"), 0o755))
	_, _, err = resources.Parse(conf(
		"external-resource.list", "gpu",
		"external-resource.gpu.amount", "1",
		"external-resource.gpu.yarn.config-key", "yarn.io/gpu",
		"external-resource.gpu.driver-factory.class", "gpu",
		"external-resource.gpu.param.discovery-script.path", script,
		"external-resource.gpu.param.discovery-script.args", "--enable-cordination",
	))
	assert.NoError(t, err)

	// The AMD script reads no topology: --topology connected could never be kept there.
	_, _, err = resources.Parse(conf(
		"external-resource.list", "gpu",
		"external-resource.gpu.amount", "2",
		"external-resource.gpu.yarn.config-key", "amd.com/gpu",
		"external-resource.gpu.driver-factory.class", "gpu",
		"external-resource.gpu.param.vendor", "amd",
		"external-resource.gpu.param.discovery-script.args", "--topology connected",
	))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `external-resource.gpu.param.discovery-script.args = "--topology connected": --topology connected needs the GPU topology, which only the NVIDIA script reads (nvidia-smi topo -m); with external-resource.gpu.param.vendor = amd use --topology prefer or any`)
	_, _, err = resources.Parse(conf(
		"external-resource.list", "gpu",
		"external-resource.gpu.amount", "2",
		"external-resource.gpu.yarn.config-key", "amd.com/gpu",
		"external-resource.gpu.driver-factory.class", "gpu",
		"external-resource.gpu.param.vendor", "amd",
		"external-resource.gpu.param.discovery-script.args", "--topology wait",
	))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `--topology wait needs the GPU topology, which only the NVIDIA script reads`)
	_, _, err = resources.Parse(conf(
		"external-resource.list", "gpu",
		"external-resource.gpu.amount", "2",
		"external-resource.gpu.yarn.config-key", "yarn.io/gpu",
		"external-resource.gpu.driver-factory.class", "gpu",
		"external-resource.gpu.param.discovery-script.args", "--topology connected",
	))
	assert.NoError(t, err)
}

// Whatever a discovery script prints becomes CUDA_VISIBLE_DEVICES: it must be distinct non-negative
// integers, and anything else fails discovery with the output quoted (bounded, control characters
// removed), the script named and what is valid said.
func TestDiscoveryOutputIsChecked(t *testing.T) {
	long := strings.Repeat("7,", 300)
	for _, tc := range []struct{ out, why string }{
		{`0,0`, `"0" appears twice`},
		{`0,1,2,1`, `"1" appears twice`},
		{` 3 , 3 `, `"3" appears twice`},
		{`00,0`, `"00" and "0" are the same id`}, // became CUDA_VISIBLE_DEVICES=00,0: GPU 0 twice
		{`1,01`, `"1" and "01" are the same id`},
		{`hello world`, `"hello world" is not a valid id`},
		{`-1,abc;def`, `"-1" is not a valid id`},
		{`0,abc;def`, `"abc;def" is not a valid id`},
		{`1.5`, `"1.5" is not a valid id`},
		{`0x1`, `"0x1" is not a valid id`},
		{`+1`, `"+1" is not a valid id`},
		{`1e3`, `"1e3" is not a valid id`},
		{`0 1`, `"0 1" is not a valid id`},
		{`GPU-4b2c`, `"GPU-4b2c" is not a valid id`},
		{`١`, `"١" is not a valid id`}, // an Arabic-Indic digit one
		{`12345678901`, `"12345678901" is not a valid id`},
		{`0,$(reboot)`, `"$(reboot)" is not a valid id`},
		{`\033[31m0\033[0m`, `"[31m0[0m" is not a valid id`},
		{long, `"7" appears twice`},
	} {
		dir := t.TempDir()
		script := filepath.Join(dir, "my-gpus.sh")
		require.NoError(t, os.WriteFile(script, []byte("#!/bin/bash\nprintf '%b\\n' '"+strings.ReplaceAll(tc.out, "'", `'\''`)+"'\n"), 0o755))
		d := newRealDriver(t, map[string]string{"discovery-script.path": script})
		_, err := d.Discover(context.Background(), 1)
		require.Error(t, err, tc.out)
		msg := err.Error()
		assert.Contains(t, msg, "discovery program "+script+" 1 printed ")
		assert.Contains(t, msg, ": "+tc.why+"; valid output: distinct GPU indexes (non-negative integers), comma-separated on the first line, e.g. 0,1; stderr was empty")
		assert.NotContains(t, msg, "\033", "control characters are removed")
		assert.True(t, strings.HasPrefix(msg[strings.Index(msg, " printed ")+len(" printed "):], `"`), "the output is quoted: %s", msg)
		assert.Less(t, len(msg), 700, "the quoted output is bounded: %s", msg)
	}
	// The quoted output of the long line says how long it was.
	dir := t.TempDir()
	script := filepath.Join(dir, "long.sh")
	require.NoError(t, os.WriteFile(script, []byte("#!/bin/bash\necho '"+long+"'\n"), 0o755))
	_, err := newRealDriver(t, map[string]string{"discovery-script.path": script}).Discover(context.Background(), 1)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `,"... (600 bytes): "7" appears twice`)
}

// The optional "uuids=" line of a custom script becomes the infos' "uuid": one distinct UUID or nothing
// per index; anything else fails discovery naming the line.
func TestDiscoveryUUIDLine(t *testing.T) {
	run := func(out string, amount int) ([]resources.Info, error) {
		script := filepath.Join(t.TempDir(), "my-gpus.sh")
		require.NoError(t, os.WriteFile(script, []byte("#!/bin/bash\nprintf '%s\\n' "+out+"\n"), 0o755))
		return newRealDriver(t, map[string]string{"discovery-script.path": script}).Discover(context.Background(), amount)
	}
	infos, err := run(`007,3 'uuids=GPU-a,0xbeef'`, 2)
	require.NoError(t, err)
	assert.Equal(t, []resources.Info{{"index": "7", "uuid": "GPU-a"}, {"index": "3", "uuid": "0xbeef"}}, infos)
	infos, err = run(`2,3,4 'uuids=,GPU-b,GPU-c'`, 2)
	require.NoError(t, err)
	assert.Equal(t, []resources.Info{{"index": "2"}, {"index": "3", "uuid": "GPU-b"}}, infos)
	infos, err = run(`2 'something else' 'uuids=GPU-z'`, 1)
	require.NoError(t, err)
	assert.Equal(t, []resources.Info{{"index": "2", "uuid": "GPU-z"}}, infos)
	for _, bad := range []string{`0,1 uuids=GPU-a`, `0,1 uuids=GPU-a,GPU-a`, `0 'uuids=GPU a'`, `0 'uuids=$(id)'`} {
		_, err := run(bad, 1)
		require.Error(t, err, bad)
		assert.Contains(t, err.Error(), "want one distinct UUID (letters, digits, _ . : -, at most 96) or nothing per index", bad)
	}
}

// A runner other than the real one (a fake here) is checked by the driver too.
func TestDiscoverChecksAnyRunnersIndexes(t *testing.T) {
	for _, bad := range [][]string{{"0", "0"}, {"a"}, {"-1"}, {"0", "1;2"}} {
		d := New(Config{Resource: "gpu", ScriptPath: "/opt/x.sh"}, &fakeRunner{indexes: bad})
		_, err := d.Discover(context.Background(), 1)
		require.Error(t, err, bad)
		assert.Contains(t, err.Error(), `gpu resource "gpu": discovery script /opt/x.sh printed "`+strings.Join(bad, ",")+`": `)
		assert.Contains(t, err.Error(), "; valid output: distinct GPU indexes (non-negative integers), comma-separated on the first line, e.g. 0,1")
	}
}

// --topology wait with the default lock timeout (30 s) needs a script timeout of at least 33 s.
func TestTopologyWaitNeedsTheScriptTimeout(t *testing.T) {
	_, err := CheckBuiltinScriptArgs("gpu", "--topology wait", 30*time.Second)
	assert.ErrorContains(t, err, "--topology wait waits up to --lock-timeout 30 s, which with its last look (3s) is not shorter than external-resource.gpu.param.discovery-script.timeout (30s)")
	_, err = CheckBuiltinScriptArgs("gpu", "--topology wait", 33*time.Second)
	assert.NoError(t, err)
	_, err = CheckBuiltinScriptArgs("gpu", "--topology prefer", 30*time.Second)
	assert.NoError(t, err, "only wait waits")
}
