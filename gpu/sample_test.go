package gpu

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
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
		problem     string // the first reading's Problem contains it; its values are unknown
		wantErr     string // the whole sample fails
	}{
		{name: "idle", out: h200Idle, util: 0, used: 0, total: 143771, power: 111.43, n: 1},
		{name: "busy", out: h200Busy, util: 100, used: 1011, total: 143771, power: 690.74, n: 1},
		{name: "crlf", out: strings.ReplaceAll(h200Busy, "\n", "\r\n"), util: 100, used: 1011, total: 143771, power: 690.74, n: 1},
		{name: "power n/a", out: "0, GPU-76fb3111-ba14-edee-31b1-2c3b1c0ce712, 7, 10, 16384, [N/A]\n", util: 7, used: 10, total: 16384, power: -1, n: 1},
		{name: "power not supported", out: "0, GPU-76fb3111-ba14-edee-31b1-2c3b1c0ce712, 7, 10, 16384, [Not Supported]\n", util: 7, used: 10, total: 16384, power: -1, n: 1},
		{name: "util n/a (MIG)", out: "0, MIG-1, [N/A], 10, 16384, 50.5\n", util: -1, used: 10, total: 16384, power: 50.5, n: 1},
		{name: "two GPUs", out: h200Idle + strings.Replace(h200Busy, "0, GPU-76", "1, GPU-77", 1), util: 0, used: 0, total: 143771, power: 111.43, n: 2},
		{name: "unknown field", out: "Field \"no.such.field\" is not a valid field to query.\n\n", wantErr: `does not know a sample field: "Field \"no.such.field\" is not a valid field to query."`},
		// A line that names its GPU but whose values cannot be read: that GPU's reading, values unknown.
		{name: "GPU is lost", out: "0, GPU-1, [GPU is lost], [GPU is lost], [GPU is lost], [GPU is lost]\n", util: -1, power: -1, n: 1, problem: `utilization.gpu: the tool reports "[GPU is lost]"`},
		{name: "ERR!", out: "0, GPU-1, ERR!, 0, 143771, ERR!\n", util: -1, power: -1, n: 1, problem: `utilization.gpu: the tool reports "ERR!"`},
		{name: "unknown error in memory", out: "0, GPU-1, 5, [Unknown Error], 143771, 50\n", util: -1, power: -1, n: 1, problem: `memory.used: the tool reports "[Unknown Error]"`},
		{name: "with units", out: "0, GPU-76fb3111-ba14-edee-31b1-2c3b1c0ce712, 100 %, 1011 MiB, 143771 MiB, 690.51 W\n", util: -1, power: -1, n: 1, problem: "utilization.gpu: \"100 %\": not a number"},
		{name: "discovery's shape", out: "0, GPU-76fb3111-ba14-edee-31b1-2c3b1c0ce712\n", util: -1, power: -1, n: 1, problem: "2 fields on its line, want 6"},
		{name: "util out of range", out: "0, GPU-1, 101, 2, 3, 4\n", util: -1, power: -1, n: 1, problem: "util 101: want 0..100"},
		{name: "negative power", out: "0, GPU-1, 1, 2, 3, -4\n", util: -1, power: -1, n: 1, problem: "power -4 W"},
		// A line that names no GPU: the sample fails when no other line names one.
		{name: "no uuid", out: "0, [N/A], 1, 2, 3, 4\n", wantErr: "GPU 0 has no UUID"},
		{name: "uuid a marker", out: "0, [Unknown Error], 1, 2, 3, 4\n", wantErr: "GPU 0 has no UUID"},
		{name: "a lost GPU without its index", out: "Unable to determine the device handle for GPU0000:3B:00.0: GPU is lost\n", wantErr: "want 6 fields"},
		{name: "empty", out: "\n", wantErr: "listed no GPU"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ts, err := ParseNVIDIASample([]byte(c.out))
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			rs := ts.GPUs
			if len(rs) != c.n {
				t.Fatalf("%d readings, want %d: %+v", len(rs), c.n, rs)
			}
			r := rs[0]
			if opt(r.Util) != c.util || opt(r.PowerW) != c.power || r.MemUsedMiB != c.used || r.MemTotalMiB != c.total || r.Index != 0 {
				t.Errorf("reading %+v (util %v, power %v), want util %v used %d total %d power %v", r, opt(r.Util), opt(r.PowerW), c.util, c.used, c.total, c.power)
			}
			if c.problem == "" && r.Problem != "" || !strings.Contains(r.Problem, c.problem) {
				t.Errorf("problem %q, want one containing %q", r.Problem, c.problem)
			}
			if err := r.Check(); err != nil {
				t.Errorf("the reading would be refused by the AM: %v", err)
			}
		})
	}
}

// One GPU's line that cannot be read (nvidia-smi's "[GPU is lost]", "ERR!", or a line that names no
// GPU) costs only that GPU its values: a container whose own GPU is fine keeps its sample, one whose
// GPU is the sick one gets its reading with the values unknown and the problem, and a container whose
// GPU is on no line hears why (issue 40 §7).
func TestOneSickGPUKeepsTheOthersSample(t *testing.T) {
	lost := "1, GPU-77fb3111-ba14-edee-31b1-2c3b1c0ce712, [GPU is lost], [GPU is lost], [GPU is lost], [GPU is lost]\n"
	handle := "Unable to determine the device handle for GPU0000:3B:00.0: GPU is lost\n"
	ts, err := ParseNVIDIASample([]byte(h200Busy + lost + handle))
	if err != nil {
		t.Fatal(err)
	}
	fine, err := Mine(ts, []string{"GPU-76fb3111-ba14-edee-31b1-2c3b1c0ce712"})
	if err != nil || len(fine) != 1 || opt(fine[0].Util) != 100 || fine[0].MemUsedMiB != 1011 || fine[0].Problem != "" {
		t.Fatalf("the healthy GPU's container: %+v, %v", fine, err)
	}
	sick, err := Mine(ts, []string{"GPU-77fb3111-ba14-edee-31b1-2c3b1c0ce712"})
	if err != nil || len(sick) != 1 || sick[0].Index != 1 || sick[0].Util != nil || sick[0].PowerW != nil ||
		sick[0].Problem != `utilization.gpu: the tool reports "[GPU is lost]"` {
		t.Fatalf("the lost GPU's container: %+v, %v", sick, err)
	}
	_, err = Mine(ts, []string{"GPU-78fb3111-ba14-edee-31b1-2c3b1c0ce712"})
	if err == nil || !strings.Contains(err.Error(), "is not in the sample (the tool lists 2 GPUs; of its lines that named no GPU: nvidia-smi line 3:") ||
		!strings.Contains(err.Error(), "device handle") {
		t.Fatalf("a GPU on no line: err = %v", err)
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
	ts, err := ParseROCmSample([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	rs := ts.GPUs
	if len(rs) != 2 || rs[0].UUID != "0x1" || opt(rs[0].Util) != 87 || rs[0].MemUsedMiB != 1024 || rs[0].MemTotalMiB != 65520 || opt(rs[0].PowerW) != 235 {
		t.Fatalf("card0: %+v", rs)
	}
	if rs[1].Index != 1 || opt(rs[1].PowerW) != -1 || opt(rs[1].Util) != 0 {
		t.Fatalf("card1: %+v", rs[1])
	}
	for _, bad := range []string{`not json`, `{}`, `{"card0": {"GPU use (%)": "1"}}`} {
		if _, err := ParseROCmSample([]byte(bad)); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
	// A card whose values cannot be read is its reading with the values unknown; the other is kept.
	ts, err = ParseROCmSample([]byte(`{"card0": {"GPU use (%)": "x", "Unique ID": "0x1"}, "card1": {"GPU use (%)": "3", "Unique ID": "0x2"}}`))
	if err != nil || len(ts.GPUs) != 2 || ts.GPUs[0].Util != nil || !strings.Contains(ts.GPUs[0].Problem, `card0: GPU use (%): "x": not a number`) ||
		opt(ts.GPUs[1].Util) != 3 || ts.GPUs[1].Problem != "" {
		t.Fatalf("a sick card: %+v, %v", ts, err)
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
	ts, err := ParseNVIDIASample(out)
	rs := ts.GPUs
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
	ts, err := ParseROCmSample(out)
	rs := ts.GPUs
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

// A vendor tool that leaves a child holding its output (in its own process group, or in a session of
// its own) costs no process: every sample succeeds and no child the tool started outlives it
// (issue 40 §7: the sampler used to leak one process per sample and fail the sample).
func TestToolSamplerLeavesNoProcessBehind(t *testing.T) {
	for name, spawn := range map[string]string{"child in the group": "sleep 300 &", "child in its own session": "setsid sleep 300 &"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			pids := filepath.Join(dir, "pids")
			tool := filepath.Join(dir, "nvidia-smi")
			script := "#!/bin/sh\n" + spawn + "\necho $! >>" + pids + "\necho '0, GPU-1, 42, 10, 100, 50.5, 0, No, No, [N/A], Not Active'\n"
			if err := os.WriteFile(tool, []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
			const samples = 5
			for i := range samples {
				got, err := (&ToolSampler{Tool: tool, UUIDs: []string{"GPU-1"}}).Sample(context.Background())
				if err != nil || len(got) != 1 || opt(got[0].Util) != 42 {
					t.Errorf("sample %d: %+v, %v", i, got, err)
				}
			}
			data, err := os.ReadFile(pids)
			if err != nil {
				t.Fatal(err)
			}
			started := strings.Fields(string(data))
			t.Cleanup(func() { // a failed run leaves nothing behind either
				for _, pid := range running(started) {
					if n, err := strconv.Atoi(pid); err == nil {
						_ = syscall.Kill(n, syscall.SIGKILL)
					}
				}
			})
			if len(started) != samples {
				t.Fatalf("the tool started %d children, want %d", len(started), samples)
			}
			// SIGKILL is delivered asynchronously: wait (10 s at most) for each child's state to leave
			// "running", then count those still running.
			deadline := time.Now().Add(10 * time.Second)
			for len(running(started)) > 0 && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			if left := running(started); len(left) > 0 {
				t.Fatalf("%d of the %d children the tool left are still running 10 s after the samples: %v", len(left), samples, left)
			}
		})
	}
}

// running is those of pids that are still running: neither gone nor a zombie (killed, not yet reaped
// by whatever adopted it).
func running(pids []string) []string {
	var left []string
	for _, pid := range pids {
		stat, err := os.ReadFile("/proc/" + pid + "/stat")
		if err != nil {
			continue
		}
		s := string(stat)
		if f := strings.Fields(s[strings.LastIndex(s, ")")+1:]); len(f) > 0 && f[0] != "Z" && f[0] != "X" {
			left = append(left, pid)
		}
	}
	return left
}
