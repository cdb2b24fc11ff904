package gpu

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// The lines are nvidia-smi's own (an H200, driver 580), byte for byte.
const (
	h200Idle = "0, GPU-76fb3111-ba14-edee-31b1-2c3b1c0ce712, 0, 0, 143771, 111.43\n"
	h200Busy = "0, GPU-76fb3111-ba14-edee-31b1-2c3b1c0ce712, 100, 1011, 143771, 690.74\n"
)

func TestParseNVIDIASample(t *testing.T) {
	for _, c := range []struct {
		name, out   string
		util, power float64 // -1: nil
		used, total int64
		n           int
		wantErr     string
	}{
		{name: "idle", out: h200Idle, util: 0, used: 0, total: 143771, power: 111.43, n: 1},
		{name: "busy", out: h200Busy, util: 100, used: 1011, total: 143771, power: 690.74, n: 1},
		{name: "crlf", out: strings.ReplaceAll(h200Busy, "\n", "\r\n"), util: 100, used: 1011, total: 143771, power: 690.74, n: 1},
		{name: "power n/a", out: "0, GPU-76fb3111-ba14-edee-31b1-2c3b1c0ce712, 7, 10, 16384, [N/A]\n", util: 7, used: 10, total: 16384, power: -1, n: 1},
		{name: "util n/a (MIG)", out: "0, MIG-1, [N/A], 10, 16384, 50.5\n", util: -1, used: 10, total: 16384, power: 50.5, n: 1},
		{name: "two GPUs", out: h200Idle + strings.Replace(h200Busy, "0, GPU-76", "1, GPU-77", 1), util: 0, used: 0, total: 143771, power: 111.43, n: 2},
		{name: "unknown field", out: "Field \"no.such.field\" is not a valid field to query.\n\n", wantErr: `does not know a sample field: "Field \"no.such.field\" is not a valid field to query."`},
		{name: "with units", out: "0, GPU-76fb3111-ba14-edee-31b1-2c3b1c0ce712, 100 %, 1011 MiB, 143771 MiB, 690.51 W\n", wantErr: "utilization.gpu: \"100 %\": not a number"},
		{name: "discovery's shape", out: "0, GPU-76fb3111-ba14-edee-31b1-2c3b1c0ce712\n", wantErr: "want 6 fields"},
		{name: "no uuid", out: "0, [N/A], 1, 2, 3, 4\n", wantErr: "GPU 0 has no UUID"},
		{name: "util out of range", out: "0, GPU-1, 101, 2, 3, 4\n", wantErr: "util 101: want 0..100"},
		{name: "negative power", out: "0, GPU-1, 1, 2, 3, -4\n", wantErr: "power -4 W"},
		{name: "empty", out: "\n", wantErr: "listed no GPU"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rs, err := ParseNVIDIASample([]byte(c.out))
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(rs) != c.n {
				t.Fatalf("%d readings, want %d: %+v", len(rs), c.n, rs)
			}
			r := rs[0]
			if opt(r.Util) != c.util || opt(r.PowerW) != c.power || r.MemUsedMiB != c.used || r.MemTotalMiB != c.total || r.Index != 0 {
				t.Errorf("reading %+v (util %v, power %v), want util %v used %d total %d power %v", r, opt(r.Util), opt(r.PowerW), c.util, c.used, c.total, c.power)
			}
		})
	}
}

func opt(p *float64) float64 {
	if p == nil {
		return -1
	}
	return *p
}

func TestParseROCmSample(t *testing.T) {
	out := `{"card1": {"GPU use (%)": "0", "VRAM Total Memory (B)": "68702699520", "VRAM Total Used Memory (B)": "10960896", "Current Socket Graphics Package Power (W)": "N/A", "Unique ID": "0x2"},
	"card0": {"GPU use (%)": "87", "VRAM Total Memory (B)": "68702699520", "VRAM Total Used Memory (B)": "1073741824", "Average Graphics Package Power (W)": "235.0", "Unique ID": "0x1"}, "system": {"Driver version": "6.1"}}`
	rs, err := ParseROCmSample([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 2 || rs[0].UUID != "0x1" || opt(rs[0].Util) != 87 || rs[0].MemUsedMiB != 1024 || rs[0].MemTotalMiB != 65520 || opt(rs[0].PowerW) != 235 {
		t.Fatalf("card0: %+v", rs)
	}
	if rs[1].Index != 1 || opt(rs[1].PowerW) != -1 || opt(rs[1].Util) != 0 {
		t.Fatalf("card1: %+v", rs[1])
	}
	for _, bad := range []string{`not json`, `{}`, `{"card0": {"GPU use (%)": "x", "Unique ID": "0x1"}}`, `{"card0": {"GPU use (%)": "1"}}`} {
		if _, err := ParseROCmSample([]byte(bad)); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

func TestMineKeepsTheContainersGPUsInOrder(t *testing.T) {
	all, err := ParseNVIDIASample([]byte(h200Idle + strings.Replace(h200Busy, "0, GPU-76", "1, GPU-77", 1)))
	if err != nil {
		t.Fatal(err)
	}
	got, err := Mine(all, []string{"GPU-77FB3111-ba14-edee-31b1-2c3b1c0ce712"})
	if err != nil || len(got) != 1 || got[0].Index != 1 {
		t.Fatalf("Mine = %+v, %v", got, err)
	}
	if _, err := Mine(all, []string{"GPU-gone"}); err == nil || !strings.Contains(err.Error(), "is not in the sample") {
		t.Fatalf("a GPU missing from the sample: err = %v", err)
	}
}

// fakeTool is testdata/fake-nvidia-smi/<name>.
func fakeTool(t *testing.T, name string) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "testdata", "fake-nvidia-smi", name)
}

// The fake nvidia-smi answers a sample in the real format, busy where FAKE_GPU_UTIL says.
func TestToolSamplerAgainstTheFakeNVIDIASMI(t *testing.T) {
	t.Setenv("FAKE_GPU_NODE", "sample-node")
	t.Setenv("FAKE_GPU_UTIL", "1=93")
	t.Setenv("FAKE_GPU_COUNT", "2")
	all, err := (&ToolSampler{Tool: fakeTool(t, "nvidia-smi")}).Sample(context.Background())
	if err != nil || len(all) != 0 {
		t.Fatalf("no UUIDs asked: %+v, %v", all, err)
	}
	out, err := runTool(fakeTool(t, "nvidia-smi"), NVIDIASampleArgs()...)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := ParseNVIDIASample(out)
	if err != nil || len(rs) != 2 {
		t.Fatalf("%q: %+v, %v", out, rs, err)
	}
	start := time.Now()
	got, err := (&ToolSampler{Tool: fakeTool(t, "nvidia-smi"), UUIDs: []string{rs[1].UUID, rs[0].UUID}}).Sample(context.Background())
	t.Logf("one sample with the fake nvidia-smi: %s", time.Since(start))
	if err != nil || len(got) != 2 || opt(got[0].Util) != 93 || opt(got[1].Util) != 0 || got[0].MemTotalMiB != 143771 || got[1].PowerW == nil {
		t.Fatalf("sample = %+v, %v", got, err)
	}
	t.Setenv("FAKE_GPU_POWER", "[N/A]")
	got, err = (&ToolSampler{Tool: fakeTool(t, "nvidia-smi"), UUIDs: []string{rs[0].UUID}}).Sample(context.Background())
	if err != nil || got[0].PowerW != nil {
		t.Fatalf("power [N/A]: %+v, %v", got, err)
	}
	t.Setenv("FAKE_NVIDIA_SMI_FAIL", "driver gone")
	if _, err := (&ToolSampler{Tool: fakeTool(t, "nvidia-smi"), UUIDs: []string{rs[0].UUID}}).Sample(context.Background()); err == nil || !strings.Contains(err.Error(), "driver gone") {
		t.Fatalf("a failing tool: err = %v", err)
	}
}

func TestToolSamplerTimesOut(t *testing.T) {
	dir := t.TempDir()
	tool := filepath.Join(dir, "nvidia-smi")
	if err := os.WriteFile(tool, []byte("#!/bin/sh\nsleep 30 & wait\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err := (&ToolSampler{Tool: tool, Timeout: 200 * time.Millisecond, UUIDs: []string{"GPU-1"}}).Sample(context.Background())
	if err == nil || !strings.Contains(err.Error(), "gave no sample within 200ms") {
		t.Fatalf("err = %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("a hung tool held the sampler %s", d)
	}
}

func TestToolSamplerAgainstTheFakeROCmSMI(t *testing.T) {
	t.Setenv("FAKE_GPU_NODE", "sample-node")
	t.Setenv("FAKE_GPU_UTIL", "0=55")
	out, err := runTool(fakeTool(t, "rocm-smi"), ROCmSampleArgs()...)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := ParseROCmSample(out)
	if err != nil || len(rs) != 4 || opt(rs[0].Util) != 55 || opt(rs[1].Util) != 0 {
		t.Fatalf("%s: %+v, %v", out, rs, err)
	}
	got, err := (&ToolSampler{Vendor: VendorAMD, Tool: fakeTool(t, "rocm-smi"), UUIDs: []string{rs[0].UUID}}).Sample(context.Background())
	if err != nil || len(got) != 1 || opt(got[0].Util) != 55 {
		t.Fatalf("%+v, %v", got, err)
	}
}

func runTool(tool string, args ...string) ([]byte, error) {
	return exec.Command(tool, args...).Output()
}
