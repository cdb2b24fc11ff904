package gpu

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// h200Healthy is an H200's sample line with the health fields of NVIDIAHealthFields: no uncorrected
// error, no remapping pending or failed, page retirement not supported by Hopper (it remaps rows), no
// hardware slowdown.
const h200Healthy = "0, GPU-76fb3111-ba14-edee-31b1-2c3b1c0ce712, 100, 1011, 143771, 690.74, 0, No, No, [N/A], Not Active\n"

// TestParseNVIDIAHealth: each health field read unhealthy makes the reading Sick with that field and
// value (its values still read); N/A and Not Supported are not sick; a lost GPU (a field nvidia-smi
// marks unreadable) is sick beside its Problem; a value a field does not take, or a line of another
// shape, makes the line unreadable (a Problem), not the GPU sick.
func TestParseNVIDIAHealth(t *testing.T) {
	with := func(i int, v string) string {
		f := strings.Split(strings.TrimSuffix(h200Healthy, "\n"), ", ")
		f[6+i] = v
		return strings.Join(f, ", ") + "\n"
	}
	for _, c := range []struct {
		name, out, sick, problem string
	}{
		{name: "healthy", out: h200Healthy},
		{name: "ecc uncorrected", out: with(0, "2"), sick: "ecc.errors.uncorrected.volatile.total=2"},
		{name: "ecc disabled", out: with(0, "[N/A]")},
		{name: "remapping pending", out: with(1, "Yes"), sick: "remapped_rows.pending=Yes"},
		{name: "remapping failed", out: with(2, "Yes"), sick: "remapped_rows.failure=Yes"},
		{name: "remapping not supported", out: with(1, "[Not Supported]")},
		{name: "retired pages pending", out: with(3, "Yes"), sick: "retired_pages.pending=Yes"},
		{name: "hardware slowdown", out: with(4, "Active"), sick: "clocks_event_reasons.hw_slowdown=Active"},
		{name: "health ERR!", out: with(0, "ERR!"), sick: "ecc.errors.uncorrected.volatile.total=ERR!"},
		{name: "two sick, the first named", out: strings.Replace(with(2, "Yes"), ", Not Active", ", Active", 1), sick: "remapped_rows.failure=Yes"},
		{name: "GPU is lost", out: "0, GPU-1" + strings.Repeat(", [GPU is lost]", 9) + "\n", sick: "utilization.gpu=[GPU is lost]", problem: `the tool reports "[GPU is lost]"`},
		{name: "ERR! in power", out: "0, GPU-1, 5, 10, 143771, ERR!, 0, No, No, [N/A], Not Active\n", sick: "power.draw=ERR!", problem: `power.draw: the tool reports "ERR!"`},
		{name: "slowdown unknown word", out: with(4, "Maybe"), problem: `clocks_event_reasons.hw_slowdown: "Maybe": want Active or Not Active`},
		{name: "ecc not a count", out: with(0, "-1"), problem: `want a count of errors`},
		{name: "the sample without health", out: h200Busy, problem: "6 fields on its line, want 11"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ts, err := ParseNVIDIASample([]byte(c.out), NVIDIAHealthFields...)
			if err != nil || len(ts.GPUs) != 1 {
				t.Fatalf("%q: %+v, %v", c.out, ts, err)
			}
			r := ts.GPUs[0]
			if r.Sick != c.sick || !strings.Contains(r.Problem, c.problem) || (c.problem == "") != (r.Problem == "") {
				t.Fatalf("%q: sick %q problem %q, want sick %q problem containing %q", c.out, r.Sick, r.Problem, c.sick, c.problem)
			}
			if c.problem == "" && (r.Util == nil || *r.Util != 100 || r.MemTotalMiB != 143771) {
				t.Fatalf("a readable GPU keeps its values, sick or not: %+v", r)
			}
			if err := r.Check(); err != nil {
				t.Fatal(err)
			}
			if r.Unhealthy() != c.sick {
				t.Fatalf("Unhealthy() = %q", r.Unhealthy())
			}
		})
	}
}

// TestToolSamplerDropsHealthFieldsTheDriverLacks: a driver that knows no hw_slowdown under its new name
// is asked by the old one; one that lacks a health field altogether is asked without it, said once
// (Note), and the sample (utilisation and the other health fields) is never lost.
func TestToolSamplerDropsHealthFieldsTheDriverLacks(t *testing.T) {
	t.Setenv("FAKE_GPU_NODE", "sample-node")
	t.Setenv("FAKE_GPU_COUNT", "2")
	t.Setenv("FAKE_GPU_UTIL", "0=93")
	out, err := runTool(fakeTool(t, "nvidia-smi"), "--query-gpu=index,uuid", "--format=csv,noheader")
	if err != nil {
		t.Fatal(err)
	}
	uuid := strings.TrimSpace(strings.SplitN(strings.Split(string(out), "\n")[0], ",", 2)[1])
	health := t.TempDir()
	t.Setenv("FAKE_GPU_HEALTH_DIR", health)

	t.Setenv("FAKE_GPU_DRIVER_LACKS", "clocks_event_reasons.hw_slowdown,retired_pages.pending")
	var notes []string
	s := &ToolSampler{Tool: fakeTool(t, "nvidia-smi"), UUIDs: []string{uuid}, Note: func(n string) { notes = append(notes, n) }}
	for range 3 {
		got, err := s.Sample(context.Background())
		if err != nil || len(got) != 1 || opt(got[0].Util) != 93 || got[0].Sick != "" {
			t.Fatalf("sample = %+v, %v", got, err)
		}
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "does not know the health field retired_pages.pending") {
		t.Fatalf("notes = %q, want one on retired_pages.pending", notes)
	}
	if strings.Join(s.health, ",") != "ecc.errors.uncorrected.volatile.total,remapped_rows.pending,remapped_rows.failure,clocks_throttle_reasons.hw_slowdown" {
		t.Fatalf("health fields asked: %v", s.health)
	}
	// The old name reads the slowdown; the GPU turns sick while sampled.
	if err := os.WriteFile(filepath.Join(health, uuid), []byte("clocks_throttle_reasons.hw_slowdown=Active\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := s.Sample(context.Background())
	if err != nil || len(got) != 1 || got[0].Sick != "clocks_throttle_reasons.hw_slowdown=Active" || opt(got[0].Util) != 93 {
		t.Fatalf("sick sample = %+v, %v", got, err)
	}
	// A driver that knows none of the health fields still samples.
	t.Setenv("FAKE_GPU_DRIVER_LACKS", strings.Join(append(NVIDIAHealthFields, "clocks_throttle_reasons.hw_slowdown"), ","))
	s = &ToolSampler{Tool: fakeTool(t, "nvidia-smi"), UUIDs: []string{uuid}}
	got, err = s.Sample(context.Background())
	if err != nil || len(got) != 1 || opt(got[0].Util) != 93 || len(s.health) != 0 {
		t.Fatalf("without health: %+v, %v (asked %v)", got, err, s.health)
	}
	// A field outside the health fields that the tool refuses still fails the sample.
	t.Setenv("FAKE_GPU_DRIVER_LACKS", "power.draw")
	if _, err := (&ToolSampler{Tool: fakeTool(t, "nvidia-smi"), UUIDs: []string{uuid}}).Sample(context.Background()); err == nil || !strings.Contains(err.Error(), `Field \"power.draw\" is not a valid field`) {
		t.Fatalf("err = %v", err)
	}
}

// TestToolSamplerReadsASickGPUFromTheFake: the fake's health files make a GPU sick field by field, or
// lost, while the other GPU reads healthy.
func TestToolSamplerReadsASickGPUFromTheFake(t *testing.T) {
	t.Setenv("FAKE_GPU_NODE", "sample-node")
	t.Setenv("FAKE_GPU_COUNT", "2")
	health := t.TempDir()
	t.Setenv("FAKE_GPU_HEALTH_DIR", health)
	out, err := runTool(fakeTool(t, "nvidia-smi"), NVIDIASampleArgs(NVIDIAHealthFields...)...)
	if err != nil {
		t.Fatal(err)
	}
	ts, err := ParseNVIDIASample(out, NVIDIAHealthFields...)
	if err != nil || len(ts.GPUs) != 2 || ts.GPUs[0].Unhealthy() != "" || ts.GPUs[1].Unhealthy() != "" {
		t.Fatalf("%s: %+v, %v", out, ts, err)
	}
	uuids := []string{ts.GPUs[0].UUID, ts.GPUs[1].UUID}
	for content, want := range map[string]string{
		"ecc.errors.uncorrected.volatile.total=3\n": "ecc.errors.uncorrected.volatile.total=3",
		"remapped_rows.failure=Yes\n":               "remapped_rows.failure=Yes",
		"*=[GPU is lost]\n":                         "utilization.gpu=[GPU is lost]",
	} {
		if err := os.WriteFile(filepath.Join(health, uuids[1]), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := (&ToolSampler{Tool: fakeTool(t, "nvidia-smi"), UUIDs: uuids}).Sample(context.Background())
		if err != nil || len(got) != 2 || got[0].Unhealthy() != "" || !strings.Contains(got[1].Unhealthy(), want) {
			t.Fatalf("%q: %+v, %v", content, got, err)
		}
	}
}
