package gpu

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/internal/text"
	"github.com/yarn-am/yarn-am/resources"
)

// This file is the report phase: sampling the utilisation, memory and power of the GPUs a container
// was given (docs/running.md#gpu-utilisation). One vendor-tool call per sample; the parsing is pure and
// table-tested against captured output (sample_test.go).

// NVIDIASampleQuery is the --query-gpu field list of a sample, in the order ParseNVIDIASample reads.
const NVIDIASampleQuery = "index,uuid,utilization.gpu,memory.used,memory.total,power.draw"

// NVIDIASampleArgs are nvidia-smi's arguments for one sample.
func NVIDIASampleArgs() []string {
	return []string{"--query-gpu=" + NVIDIASampleQuery, "--format=csv,noheader,nounits"}
}

// ROCmSampleArgs are rocm-smi's arguments for one sample: use %, VRAM used and total in bytes, power,
// and the unique id, as JSON keyed by card.
func ROCmSampleArgs() []string {
	return []string{"--showuse", "--showmeminfo", "vram", "--showpower", "--showuniqueid", "--json"}
}

// SampleTimeout bounds one vendor-tool call: a hung driver never holds the sampler longer.
const SampleTimeout = 5 * time.Second

// maxSampleOutput bounds what a tool may print for one sample.
const maxSampleOutput = 256 << 10

// notAvailable is how nvidia-smi (and rocm-smi, without the brackets) says a field has no value.
func notAvailable(s string) bool {
	switch s {
	case "[N/A]", "N/A", "[Not Supported]", "[Unknown Error]":
		return true
	}
	return false
}

// ParseNVIDIASample reads the output of `nvidia-smi` with NVIDIASampleArgs: one line per GPU,
// "index, uuid, util, mem used, mem total, power" (power "[N/A]" where the board reports none).
func ParseNVIDIASample(out []byte) ([]contract.GPUReading, error) {
	var rs []contract.GPUReading
	for n, raw := range strings.Split(string(out), "\n") {
		line := strings.TrimRight(raw, "\r")
		if strings.TrimSpace(line) == "" {
			continue
		}
		r, err := parseNVIDIALine(n, line)
		if err != nil {
			// A carriage return is invisible in a terminal and quoted as \r: say it in words
			// (TestParseNVIDIASampleSaysCarriageReturn).
			return nil, fmt.Errorf("%w%s", err, resources.CRNote(raw))
		}
		rs = append(rs, r)
	}
	if len(rs) == 0 {
		return nil, errors.New("nvidia-smi listed no GPU")
	}
	return rs, nil
}

// parseNVIDIALine reads line n (from 0) of ParseNVIDIASample's output.
func parseNVIDIALine(n int, line string) (contract.GPUReading, error) {
	var none contract.GPUReading
	if strings.Contains(line, "is not a valid field to query") {
		return none, fmt.Errorf("nvidia-smi does not know a sample field: %s", clip(line))
	}
	f := strings.Split(line, ",")
	if len(f) != 6 {
		return none, fmt.Errorf("nvidia-smi line %d: %s: want 6 fields (%s)", n+1, clip(line), NVIDIASampleQuery)
	}
	for i := range f {
		f[i] = strings.TrimSpace(f[i])
	}
	r := contract.GPUReading{UUID: f[1]}
	var err error
	if r.Index, err = strconv.Atoi(f[0]); err != nil || r.Index < 0 {
		return none, fmt.Errorf("nvidia-smi line %d: index %s: want a non-negative integer", n+1, clip(f[0]))
	}
	if notAvailable(r.UUID) || r.UUID == "" {
		return none, fmt.Errorf("nvidia-smi line %d: GPU %d has no UUID (%s)", n+1, r.Index, clip(f[1]))
	}
	if r.Util, err = optNumber(f[2]); err != nil {
		return none, fmt.Errorf("nvidia-smi line %d: utilization.gpu: %w", n+1, err)
	}
	if r.MemUsedMiB, err = mib(f[3]); err != nil {
		return none, fmt.Errorf("nvidia-smi line %d: memory.used: %w", n+1, err)
	}
	if r.MemTotalMiB, err = mib(f[4]); err != nil {
		return none, fmt.Errorf("nvidia-smi line %d: memory.total: %w", n+1, err)
	}
	if r.PowerW, err = optNumber(f[5]); err != nil {
		return none, fmt.Errorf("nvidia-smi line %d: power.draw: %w", n+1, err)
	}
	if err := r.Check(); err != nil {
		return none, fmt.Errorf("nvidia-smi line %d: %w", n+1, err)
	}
	return r, nil
}

// ParseROCmSample reads the JSON of `rocm-smi` with ROCmSampleArgs: {"card0": {"GPU use (%)": "12",
// "VRAM Total Memory (B)": "...", "VRAM Total Used Memory (B)": "...", "... Package Power (W)": "35.0",
// "Unique ID": "0x..."}, ...}. The power key differs between releases (Average ... / Current Socket
// ...), so any "... Power (W)" key is taken.
func ParseROCmSample(out []byte) ([]contract.GPUReading, error) {
	var doc map[string]map[string]any
	if err := json.Unmarshal(bytes.TrimSpace(out), &doc); err != nil {
		return nil, fmt.Errorf("rocm-smi --json: %s: %v", clip(string(out)), err)
	}
	cards := make([]string, 0, len(doc))
	for k := range doc {
		if strings.HasPrefix(k, "card") {
			cards = append(cards, k)
		}
	}
	sort.Slice(cards, func(i, j int) bool { return cardIndex(cards[i]) < cardIndex(cards[j]) })
	var rs []contract.GPUReading
	for _, c := range cards {
		fields := doc[c]
		str := func(k string) string { s, _ := fields[k].(string); return strings.TrimSpace(s) }
		r := contract.GPUReading{Index: cardIndex(c), UUID: str("Unique ID")}
		if r.Index < 0 {
			return nil, fmt.Errorf("rocm-smi: %s: not a card name", clip(c))
		}
		if r.UUID == "" || notAvailable(r.UUID) {
			return nil, fmt.Errorf("rocm-smi: %s has no unique id", c)
		}
		var err error
		if r.Util, err = optNumber(str("GPU use (%)")); err != nil {
			return nil, fmt.Errorf("rocm-smi: %s: GPU use (%%): %w", c, err)
		}
		used, err1 := optNumber(str("VRAM Total Used Memory (B)"))
		total, err2 := optNumber(str("VRAM Total Memory (B)"))
		if err := errors.Join(err1, err2); err != nil {
			return nil, fmt.Errorf("rocm-smi: %s: VRAM: %w", c, err)
		}
		if used != nil {
			r.MemUsedMiB = int64(*used) >> 20
		}
		if total != nil {
			r.MemTotalMiB = int64(*total) >> 20
		}
		for k := range fields {
			if strings.HasSuffix(k, "Power (W)") {
				if r.PowerW, err = optNumber(str(k)); err != nil {
					return nil, fmt.Errorf("rocm-smi: %s: %s: %w", c, k, err)
				}
				break
			}
		}
		if err := r.Check(); err != nil {
			return nil, fmt.Errorf("rocm-smi: %s: %w", c, err)
		}
		rs = append(rs, r)
	}
	if len(rs) == 0 {
		return nil, fmt.Errorf("rocm-smi listed no card: %s", clip(string(out)))
	}
	return rs, nil
}

func cardIndex(name string) int {
	n, err := strconv.Atoi(strings.TrimPrefix(name, "card"))
	if err != nil || !strings.HasPrefix(name, "card") {
		return -1
	}
	return n
}

// optNumber is a number, or nil for a value the tool marks not available.
func optNumber(s string) (*float64, error) {
	if s == "" || notAvailable(s) {
		return nil, nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return nil, fmt.Errorf("%s: not a number", clip(s))
	}
	return &v, nil
}

// mib is a whole number of MiB; 0 when not available.
func mib(s string) (int64, error) {
	if notAvailable(s) {
		return 0, nil
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: not a whole number of MiB", clip(s))
	}
	return v, nil
}

func clip(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 120 {
		return strconv.Quote(text.Cut(s, 120)) + "..."
	}
	return strconv.Quote(s)
}

// Sampler samples the GPUs of one container. *ToolSampler is one; tests use a fake.
type Sampler interface {
	Sample(ctx context.Context) ([]contract.GPUReading, error)
}

// ToolSampler runs the vendor's tool (nvidia-smi or rocm-smi from PATH) once per sample and keeps
// the readings of UUIDs only: the GPUs the container was given, whatever else the node has.
type ToolSampler struct {
	Vendor  Vendor
	UUIDs   []string      // the container's GPUs (their infos' InfoUUID)
	Timeout time.Duration // per call; 0 = SampleTimeout
	// Tool overrides the tool's path ("" = the vendor's from PATH).
	Tool string
}

// Sample implements Sampler. The tool's own process group is killed when it outlives Timeout.
func (s *ToolSampler) Sample(ctx context.Context) ([]contract.GPUReading, error) {
	tool, args, parse := "nvidia-smi", NVIDIASampleArgs(), ParseNVIDIASample
	if s.Vendor == VendorAMD {
		tool, args, parse = "rocm-smi", ROCmSampleArgs(), ParseROCmSample
	}
	if s.Tool != "" {
		tool = s.Tool
	}
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = SampleTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, tool, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &limitWriter{w: &stdout, n: maxSampleOutput}
	cmd.Stderr = &limitWriter{w: &stderr, n: 4096}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	if ctx.Err() == context.DeadlineExceeded {
		return nil, fmt.Errorf("%s gave no sample within %s", tool, timeout)
	}
	if err != nil {
		msg := strings.TrimSpace(stderr.String() + " " + stdout.String())
		return nil, fmt.Errorf("%s %s: %w: %s", tool, strings.Join(args, " "), err, clip(msg))
	}
	all, err := parse(stdout.Bytes())
	if err != nil {
		return nil, err
	}
	return Mine(all, s.UUIDs)
}

// Mine keeps the readings of uuids, in their order; a GPU of uuids the tool did not list is an error
// (the container's GPU is gone, or the tool sees another set).
func Mine(all []contract.GPUReading, uuids []string) ([]contract.GPUReading, error) {
	by := make(map[string]contract.GPUReading, len(all))
	for _, r := range all {
		by[strings.ToLower(r.UUID)] = r
	}
	out := make([]contract.GPUReading, 0, len(uuids))
	for _, u := range uuids {
		r, ok := by[strings.ToLower(u)]
		if !ok {
			return nil, fmt.Errorf("the GPU %s this container was given is not in the sample (the tool lists %d GPUs)", clip(u), len(all))
		}
		out = append(out, r)
	}
	return out, nil
}
