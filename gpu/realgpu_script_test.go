package gpu

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The real-GPU script (docs/gpus.md#proven-on-a-real-gpu) is run by hand where a GPU is lent; these
// tests keep it working on machines without one: the whole script against the fake nvidia-smi
// (DEGRADED=1), and its health read against a tool answering the real formats.

// yarnAMBinary is $YARN_AM_BIN when set, else a yarn-am built for the test with make build's compile
// flags (CGO_ENABLED=0, -trimpath), so that after make build only the link is new.
func yarnAMBinary(t *testing.T) string {
	t.Helper()
	if b := os.Getenv("YARN_AM_BIN"); b != "" {
		return b
	}
	bin := filepath.Join(t.TempDir(), "yarn-am")
	cmd := exec.Command("go", "build", "-trimpath", "-o", bin, "./cmd/yarn-am")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	cmd.Dir = ".."
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	return bin
}

// DEGRADED=1: every check of the script passes against the fake nvidia-smi, the topology check on the
// fixture of two NVLink islands, and the record for docs/gpus.md carries the matrix, discover's set and
// a line per health field.
func TestRealGPUScriptDegraded(t *testing.T) {
	bin := yarnAMBinary(t)
	cmd := exec.Command("bash", "../testdata/gpu/real-gpu.sh")
	cmd.Dir = t.TempDir()
	abs, err := filepath.Abs("../testdata/gpu/real-gpu.sh")
	require.NoError(t, err)
	cmd.Args[1] = abs
	cmd.Env = append(os.Environ(), "DEGRADED=1", "REAL_GPU_GO_TEST=0", "YARN_AM_BIN="+bin, "CUDA_VISIBLE_DEVICES=", "NM_HOST=")
	out, err := cmd.CombinedOutput()
	s := string(out)
	require.NoError(t, err, s)
	assert.NotContains(t, s, "FAIL")
	for _, want := range []string{
		"PASS discover names GPU GPU-",
		"PASS discover weighs the topology: topology (nvidia-smi topo -m): the GPUs above are linked by NV12 at worst",
		"PASS launch: the worker sees exactly its GPU",
		"PASS second launch refused while the first holds the GPU (exit 90",
		"PASS sampler fields",
		"=== to record in docs/gpus.md#proven-on-a-real-gpu",
		"--- nvidia-smi topo -m\n\t\x1b[4mGPU0\tGPU1",
		"  [1] index=1 uuid=GPU-",
		"\n0 check(s) failed\n",
	} {
		assert.Contains(t, s, want)
	}
	// Whether the fake answers the health fields or not (it may learn them), each gets its line.
	assert.Regexp(t, `PASS (health fields read one by one|health read plumbing \(the fake nvidia-smi answers no health field\))`, s)
	assert.Equal(t, 5, strings.Count(s, "\nhealth "), "a line per health field: %s", s)
	entries, err := os.ReadDir(cmd.Dir)
	require.NoError(t, err)
	assert.Empty(t, entries, "the script leaves nothing where it ran")
}

// healthTool is an nvidia-smi that answers the health fields in the formats of the real tool: GPU 1
// has 3 uncorrectable errors and a hardware slowdown, row remapping is [N/A], retired_pages.pending is
// a field this driver does not know (exit 2, as the real tool on an unknown field), and the slowdown
// reasons have their pre-535 name only. sick=false makes every answer healthy.
func healthTool(t *testing.T, sick bool) string {
	t.Helper()
	ecc, slow := "0, 0\n1, 3\n", "0, Not Active\n1, Active\n"
	if !sick {
		ecc, slow = "0, 0\n1, 0\n", "0, Not Active\n1, Not Active\n"
	}
	dir := t.TempDir()
	script := "#!/usr/bin/env bash\n" +
		"[[ $# -eq 2 && $2 == --format=csv,noheader ]] || { echo unexpected: \"$*\" >&2; exit 9; }\n" +
		"case $1 in\n" +
		"--query-gpu=index,ecc.errors.uncorrected.volatile.total) printf '" + ecc + "' ;;\n" +
		"--query-gpu=index,remapped_rows.pending) printf '0, No\\n1, No\\n' ;;\n" +
		"--query-gpu=index,remapped_rows.failure) printf '0, [N/A]\\n1, [N/A]\\n' ;;\n" +
		"--query-gpu=index,clocks_throttle_reasons.hw_slowdown) printf '" + slow + "' ;;\n" +
		"*) printf 'Field \"%s\" is not a valid field to query.\\n\\n' \"${1#--query-gpu=index,}\"; exit 2 ;;\n" +
		"esac\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "nvidia-smi"), []byte(script), 0o755))
	return dir
}

func runHealthRead(t *testing.T, toolDir string) (string, int) {
	t.Helper()
	cmd := exec.Command("bash", "../testdata/gpu/health-read.sh")
	cmd.Env = append(os.Environ(), "PATH="+toolDir+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := cmd.Output()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return string(out), code
}

// Each field is read in its own call: one the driver does not know is said as such and the others are
// still read; a sick answer fails the read (exit 1) and names the GPU, the field and the value.
func TestHealthReadScriptFieldByField(t *testing.T) {
	out, code := runHealthRead(t, healthTool(t, true))
	assert.Equal(t, 1, code, out)
	for _, want := range []string{
		"health GPU0 ecc.errors.uncorrected.volatile.total: 0 (healthy)\n",
		"health GPU1 ecc.errors.uncorrected.volatile.total: 3 (SICK)\n",
		"health GPU1 remapped_rows.pending: No (healthy)\n",
		"health GPU0 remapped_rows.failure: [N/A] (not supported on this GPU)\n",
		"health retired_pages.pending: unsupported by this driver (Field \"retired_pages.pending\" is not a valid field to query.)\n",
		"health GPU0 clocks_throttle_reasons.hw_slowdown: Not Active (healthy)\n",
		"health GPU1 clocks_throttle_reasons.hw_slowdown: Active (SICK)\n",
		"health: 5 fields, 4 read, 1 not read; 2 sick answer(s), 0 not understood\n",
	} {
		assert.Contains(t, out, want)
	}

	out, code = runHealthRead(t, healthTool(t, false))
	assert.Equal(t, 0, code, out)
	assert.Contains(t, out, "health: 5 fields, 4 read, 1 not read; 0 sick answer(s), 0 not understood\n")

	// A tool that answers no health field at all: exit 2, each field said.
	broken := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(broken, "nvidia-smi"), []byte("#!/bin/sh\necho 'NVIDIA-SMI has failed' >&2\nexit 9\n"), 0o755))
	out, code = runHealthRead(t, broken)
	assert.Equal(t, 2, code, out)
	assert.Contains(t, out, "health ecc.errors.uncorrected.volatile.total: not read (exit status 9: NVIDIA-SMI has failed)\n")
	assert.Contains(t, out, "health: 5 fields, 0 read, 5 not read")
}
