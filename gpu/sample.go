package gpu

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/internal/proc"
	"github.com/yarn-am/yarn-am/internal/text"
	"github.com/yarn-am/yarn-am/resources"
)

// This file is the report phase: sampling the utilisation, memory and power of the GPUs a container
// was given (docs/running.md#gpu-utilisation). One vendor-tool call per sample; the parsing is pure and
// table-tested against captured output (sample_test.go).

// NVIDIASampleQuery is the --query-gpu field list of a sample, in the order ParseNVIDIASample reads;
// the health fields the driver knows follow it (NVIDIAHealthFields).
const NVIDIASampleQuery = "index,uuid,utilization.gpu,memory.used,memory.total,power.draw"

// nvidiaSampleFields is how many fields NVIDIASampleQuery names.
const nvidiaSampleFields = 6

// NVIDIAHealthFields are the --query-gpu fields that say whether a GPU is healthy, read in the same
// call as the sample (docs/gpus.md#gpu-health-a-sick-gpu-is-taken-out-of-service): a GPU is sick when
// ecc.errors.uncorrected.volatile.total is above 0, remapped_rows.pending, remapped_rows.failure or
// retired_pages.pending is Yes, or clocks_event_reasons.hw_slowdown is Active. "[N/A]" and
// "[Not Supported]" are not sick. A driver that does not know a field (nvidia-smi then fails the whole
// query, exit 2, `Field "x" is not a valid field to query.`) gets the query without it
// (ToolSampler.Sample); older drivers call the slowdown field clocks_throttle_reasons.hw_slowdown.
var NVIDIAHealthFields = []string{
	"ecc.errors.uncorrected.volatile.total",
	"remapped_rows.pending",
	"remapped_rows.failure",
	"retired_pages.pending",
	"clocks_event_reasons.hw_slowdown",
}

// healthFieldAlias is the older name nvidia-smi knew a health field by (drivers before 535 name the
// clock event reasons "throttle reasons").
var healthFieldAlias = map[string]string{"clocks_event_reasons.hw_slowdown": "clocks_throttle_reasons.hw_slowdown"}

// NVIDIASampleArgs are nvidia-smi's arguments for one sample, with the health fields health.
func NVIDIASampleArgs(health ...string) []string {
	q := NVIDIASampleQuery
	for _, h := range health {
		q += "," + h
	}
	return []string{"--query-gpu=" + q, "--format=csv,noheader,nounits"}
}

// sickValue says whether value of health field is unhealthy; an error when it is no value the field
// takes.
func sickValue(field, value string) (bool, error) {
	if value == "" || notAvailable(value) {
		return false, nil
	}
	if sickMarker(value) {
		return true, nil // the GPU answers "[GPU is lost]" or "ERR!" for its health: not healthy
	}
	switch {
	case strings.HasPrefix(field, "ecc."):
		n, err := strconv.ParseUint(value, 10, 64)
		if err != nil {
			return false, fmt.Errorf("%s: %s: want a count of errors", field, clip(value))
		}
		return n > 0, nil
	case strings.HasSuffix(field, ".hw_slowdown"):
		switch value {
		case "Active":
			return true, nil
		case "Not Active":
			return false, nil
		}
		return false, fmt.Errorf("%s: %s: want Active or Not Active", field, clip(value))
	default: // remapped_rows.*, retired_pages.pending
		switch strings.ToLower(value) {
		case "yes", "1":
			return true, nil
		case "no", "0":
			return false, nil
		}
		return false, fmt.Errorf("%s: %s: want Yes or No", field, clip(value))
	}
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

// notAvailable is how nvidia-smi (and rocm-smi, without the brackets) says a field has no value: the
// GPU has none to give (a MIG instance's utilisation, a board without a power sensor), which is no
// problem. A value it could not read is a sickMarker.
func notAvailable(s string) bool {
	switch s {
	case "[N/A]", "N/A", "[Not Supported]":
		return true
	}
	return false
}

// ToolSample is what one call of a vendor tool said: a reading per GPU it listed, a sick GPU's with
// its values unknown and Problem saying why, and why the lines that named no GPU could not be read.
type ToolSample struct {
	GPUs []contract.GPUReading
	// Unread says why lines that named no GPU were left out (the first maxUnread of them).
	Unread []string
}

// maxUnread bounds ToolSample.Unread.
const maxUnread = 4

func (s *ToolSample) unread(err error) {
	if len(s.Unread) < maxUnread {
		s.Unread = append(s.Unread, err.Error())
	}
}

// ParseNVIDIASample reads the output of `nvidia-smi` with NVIDIASampleArgs: one line per GPU,
// "index, uuid, util, mem used, mem total, power" (power "[N/A]" where the board reports none). Each
// GPU's line is read on its own: a line whose values cannot be read (a GPU nvidia-smi reports as
// "[GPU is lost]", "ERR!", "[Unknown Error]", or any value out of its range) but whose index and UUID
// can is that GPU's reading with every value unknown and Problem saying why, so one sick GPU never
// costs the others their sample (TestOneSickGPUKeepsTheOthersSample). A line that names no GPU is
// left out (Unread; Mine says it when a container's GPU is missing). Output without any GPU line, or
// a field the tool does not know, fails the whole sample. health are the health fields the query named
// after NVIDIASampleQuery (NVIDIASampleArgs): the first that reads unhealthy is the reading's Sick.
func ParseNVIDIASample(out []byte, health ...string) (ToolSample, error) {
	var ts ToolSample
	for n, raw := range strings.Split(string(out), "\n") {
		line := strings.TrimRight(raw, "\r")
		if strings.TrimSpace(line) == "" {
			continue
		}
		if strings.Contains(line, "is not a valid field to query") {
			return ToolSample{}, fmt.Errorf("nvidia-smi does not know a sample field: %s", clip(line))
		}
		r, err := parseNVIDIALine(n, line, health)
		if err != nil {
			// A carriage return is invisible in a terminal and quoted as \r: say it in words
			// (TestParseNVIDIASampleSaysCarriageReturn).
			err = fmt.Errorf("%w%s", err, resources.CRNote(raw))
			var ok bool
			if r, ok = sickNVIDIALine(raw, err, health); !ok {
				ts.unread(err)
				continue
			}
		}
		ts.GPUs = append(ts.GPUs, r)
	}
	if len(ts.GPUs) == 0 {
		if len(ts.Unread) > 0 {
			return ToolSample{}, errors.New(ts.Unread[0])
		}
		return ToolSample{}, errors.New("nvidia-smi listed no GPU")
	}
	return ts, nil
}

// sickNVIDIALine is the reading of a GPU whose line names it (index and UUID) but whose values could
// not be read (err, of raw, the line as printed, of a query with the health fields health): every
// value unknown, Problem the reason in short, and Sick the first field that holds how nvidia-smi marks
// a GPU it cannot read ("[GPU is lost]", "ERR!"): such a GPU is unhealthy, a line of another shape is
// only unread. ok is false when the line names no GPU.
func sickNVIDIALine(raw string, err error, health []string) (contract.GPUReading, bool) {
	want := nvidiaSampleFields + len(health)
	f := strings.Split(strings.TrimRight(raw, "\r"), ",")
	if len(f) < 2 {
		return contract.GPUReading{}, false
	}
	index, ierr := strconv.Atoi(strings.TrimSpace(f[0]))
	uuid := strings.TrimSpace(f[1])
	// The short reason: the line's number and quoted text are the full error's (the launcher's log
	// and event name the GPU already); a reading carries at most contract.MaxGPUProblem bytes of it.
	why := err.Error()
	switch {
	case strings.Contains(raw, "\r"):
		why = `a carriage return (\r) in its line: nvidia-smi's lines end in \n alone`
	case len(f) != want:
		why = fmt.Sprintf("%d fields on its line, want %d", len(f), want)
	default:
		if _, rest, ok := strings.Cut(why, ": "); ok && strings.HasPrefix(why, "nvidia-smi line ") {
			why = rest
		}
	}
	r := contract.GPUReading{Index: index, UUID: uuid, Problem: problemText(why)}
	if len(f) == want {
		names := append(strings.Split(NVIDIASampleQuery, ","), health...)
		for i := 2; i < want; i++ {
			if v := strings.TrimSpace(f[i]); sickMarker(v) && !notAvailable(v) {
				r.Sick = problemText(names[i] + "=" + v)
				break
			}
		}
	}
	if ierr != nil || !plausibleUUID(uuid) || r.Check() != nil {
		return contract.GPUReading{}, false
	}
	return r, true
}

// plausibleUUID says whether s can be a GPU's UUID as a vendor tool prints it: no marker ("[N/A]",
// "ERR!"), no space or control character.
func plausibleUUID(s string) bool {
	return s != "" && !notAvailable(s) && !sickMarker(s) && len(s) <= 128 &&
		strings.IndexFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f }) < 0
}

// sickMarker says whether a field is how nvidia-smi marks a value it could not read: a bracketed
// text such as "[GPU is lost]" or "[Unknown Error]", or "ERR!".
func sickMarker(s string) bool {
	return s == "ERR!" || strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]")
}

// problemText is why as a reading's Problem: one line, at most contract.MaxGPUProblem bytes.
func problemText(why string) string {
	return text.Cut(text.Sanitize(why), contract.MaxGPUProblem)
}

// parseNVIDIALine reads line n (from 0) of ParseNVIDIASample's output, whose query named health
// after NVIDIASampleQuery.
func parseNVIDIALine(n int, line string, health []string) (contract.GPUReading, error) {
	var none contract.GPUReading
	f := strings.Split(line, ",")
	if want := nvidiaSampleFields + len(health); len(f) != want {
		q := strings.Join(append([]string{NVIDIASampleQuery}, health...), ",")
		return none, fmt.Errorf("nvidia-smi line %d: %s: want %d fields (%s)", n+1, clip(line), want, q)
	}
	for i := range f {
		f[i] = strings.TrimSpace(f[i])
	}
	r := contract.GPUReading{UUID: f[1]}
	var err error
	if r.Index, err = strconv.Atoi(f[0]); err != nil || r.Index < 0 {
		return none, fmt.Errorf("nvidia-smi line %d: index %s: want a non-negative integer", n+1, clip(f[0]))
	}
	if !plausibleUUID(r.UUID) {
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
	for i, h := range health {
		v := f[nvidiaSampleFields+i]
		sick, err := sickValue(h, v)
		if err != nil {
			return none, fmt.Errorf("nvidia-smi line %d: %w", n+1, err)
		}
		if sick && r.Sick == "" {
			r.Sick = text.Cut(text.Sanitize(h+"="+v), contract.MaxGPUProblem)
		}
	}
	if err := r.Check(); err != nil {
		return none, fmt.Errorf("nvidia-smi line %d: %w", n+1, err)
	}
	return r, nil
}

// ParseROCmSample reads the JSON of `rocm-smi` with ROCmSampleArgs: {"card0": {"GPU use (%)": "12",
// "VRAM Total Memory (B)": "...", "VRAM Total Used Memory (B)": "...", "... Package Power (W)": "35.0",
// "Unique ID": "0x..."}, ...}. The power key differs between releases (Average ... / Current Socket
// ...), so any "... Power (W)" key is taken. Each card is read on its own, as ParseNVIDIASample reads
// each line: a card with a unique id whose values cannot be read is its reading with every value
// unknown and Problem saying why.
func ParseROCmSample(out []byte) (ToolSample, error) {
	var doc map[string]map[string]any
	if err := json.Unmarshal(bytes.TrimSpace(out), &doc); err != nil {
		return ToolSample{}, fmt.Errorf("rocm-smi --json: %s: %v", clip(string(out)), err)
	}
	cards := make([]string, 0, len(doc))
	for k := range doc {
		if strings.HasPrefix(k, "card") {
			cards = append(cards, k)
		}
	}
	sort.Slice(cards, func(i, j int) bool { return cardIndex(cards[i]) < cardIndex(cards[j]) })
	var ts ToolSample
	for _, c := range cards {
		str := func(k string) string { s, _ := doc[c][k].(string); return strings.TrimSpace(s) }
		r, err := parseROCmCard(c, doc[c], str)
		if err != nil {
			sick := contract.GPUReading{Index: cardIndex(c), UUID: str("Unique ID"), Problem: problemText(strings.TrimPrefix(err.Error(), "rocm-smi: "))}
			if !plausibleUUID(sick.UUID) || sick.Check() != nil {
				ts.unread(err)
				continue
			}
			r = sick
		}
		ts.GPUs = append(ts.GPUs, r)
	}
	if len(ts.GPUs) == 0 {
		if len(ts.Unread) > 0 {
			return ToolSample{}, errors.New(ts.Unread[0])
		}
		return ToolSample{}, fmt.Errorf("rocm-smi listed no card: %s", clip(string(out)))
	}
	return ts, nil
}

// parseROCmCard reads card c's fields (str: one field, trimmed).
func parseROCmCard(c string, fields map[string]any, str func(string) string) (contract.GPUReading, error) {
	var none contract.GPUReading
	r := contract.GPUReading{Index: cardIndex(c), UUID: str("Unique ID")}
	if r.Index < 0 {
		return none, fmt.Errorf("rocm-smi: %s: not a card name", clip(c))
	}
	if !plausibleUUID(r.UUID) {
		return none, fmt.Errorf("rocm-smi: %s has no unique id (%s)", clip(c), clip(r.UUID))
	}
	var err error
	if r.Util, err = optNumber(str("GPU use (%)")); err != nil {
		return none, fmt.Errorf("rocm-smi: %s: GPU use (%%): %w", c, err)
	}
	used, err1 := optNumber(str("VRAM Total Used Memory (B)"))
	total, err2 := optNumber(str("VRAM Total Memory (B)"))
	if err := errors.Join(err1, err2); err != nil {
		return none, fmt.Errorf("rocm-smi: %s: VRAM: %w", c, err)
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
				return none, fmt.Errorf("rocm-smi: %s: %s: %w", c, k, err)
			}
			break
		}
	}
	if err := r.Check(); err != nil {
		return none, fmt.Errorf("rocm-smi: %s: %w", c, err)
	}
	return r, nil
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
	if sickMarker(s) {
		return nil, fmt.Errorf("the tool reports %s", clip(s))
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
	if sickMarker(s) {
		return 0, fmt.Errorf("the tool reports %s", clip(s))
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
// the readings of UUIDs only: the GPUs the container was given, whatever else the node has. nvidia-smi
// also reads the GPUs' health in the same call (NVIDIAHealthFields): the fields the driver does not
// know are dropped at the first sample, once, and Note says so. One goroutine samples at a time.
type ToolSampler struct {
	Vendor  Vendor
	UUIDs   []string      // the container's GPUs (their infos' InfoUUID)
	Timeout time.Duration // per call; 0 = SampleTimeout
	// Tool overrides the tool's path ("" = the vendor's from PATH).
	Tool string
	// Note is told, once per field, that the driver does not know a health field (nil: not told).
	Note func(string)

	health      []string // the health fields the driver knows (nvidia-smi)
	healthKnown bool     // health was set (at the first sample)
}

// unknownFieldRE is how nvidia-smi refuses a query field it does not know (exit 2), as quoted in
// run's error (its quotes escaped).
var unknownFieldRE = regexp.MustCompile(`Field \\?"([A-Za-z0-9_.]{1,80})\\?" is not a valid field to query`)

// Sample implements Sampler. The tool runs in a process group of its own, killed once the tool has
// exited or when it outlives Timeout; a process it started outside that group (setsid) that still
// holds its output is killed too (internal/proc.RunGroup).
func (s *ToolSampler) Sample(ctx context.Context) ([]contract.GPUReading, error) {
	if s.Vendor == VendorAMD {
		out, err := s.run(ctx, "rocm-smi", ROCmSampleArgs())
		if err != nil {
			return nil, err
		}
		ts, err := ParseROCmSample(out)
		if err != nil {
			return nil, err
		}
		return Mine(ts, s.UUIDs)
	}
	if !s.healthKnown {
		s.health, s.healthKnown = append([]string(nil), NVIDIAHealthFields...), true
	}
	// A driver that lacks a health field fails the whole query: the field goes (or is asked by its
	// older name) and the sample is taken again, so utilisation is never lost to health
	// (TestToolSamplerDropsHealthFieldsTheDriverLacks). At most one try per field.
	for tries := 0; ; tries++ {
		out, err := s.run(ctx, "nvidia-smi", NVIDIASampleArgs(s.health...))
		if err != nil {
			m := unknownFieldRE.FindStringSubmatch(err.Error())
			if m == nil || tries > 2*len(NVIDIAHealthFields) || !s.dropHealth(m[1]) {
				return nil, err
			}
			continue
		}
		ts, err := ParseNVIDIASample(out, s.health...)
		if err != nil {
			return nil, err
		}
		return Mine(ts, s.UUIDs)
	}
}

// dropHealth removes health field f the driver does not know, or asks it by its older name; false
// when f is none of the health fields asked.
func (s *ToolSampler) dropHealth(f string) bool {
	i := slices.Index(s.health, f)
	if i < 0 {
		return false
	}
	if old, ok := healthFieldAlias[f]; ok {
		s.health[i] = old
		return true
	}
	s.health = slices.Delete(s.health, i, i+1)
	if s.Note != nil {
		s.Note(fmt.Sprintf("nvidia-smi does not know the health field %s; the GPUs' health is read without it (docs/gpus.md#gpu-health-a-sick-gpu-is-taken-out-of-service)", f))
	}
	return true
}

// run calls tool with args within the timeout; its stdout, or an error with what it said.
func (s *ToolSampler) run(ctx context.Context, tool string, args []string) ([]byte, error) {
	if s.Tool != "" {
		tool = s.Tool
	}
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = SampleTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var stdout, stderr bytes.Buffer
	// The tool runs in a process group of its own, killed after every call (and on timeout): a child it
	// leaves holding its output would otherwise outlive the sample, one per sample
	// (TestToolSamplerLeavesNoProcessBehind).
	run, err := proc.RunGroup(ctx, exec.Command(tool, args...),
		&limitWriter{w: &stdout, n: maxSampleOutput}, &limitWriter{w: &stderr, n: 4096}, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", tool, err)
	}
	if run.Cancelled && ctx.Err() == context.DeadlineExceeded {
		return nil, fmt.Errorf("%s gave no sample within %s", tool, timeout)
	}
	if run.Err != nil {
		msg := strings.TrimSpace(stderr.String() + " " + stdout.String())
		return nil, fmt.Errorf("%s %s: %w: %s", tool, strings.Join(args, " "), run.Err, clip(msg))
	}
	return stdout.Bytes(), nil
}

// Mine keeps the readings of uuids, in their order (a sick GPU's too, with its Problem); a GPU of
// uuids the tool did not list is an error (the container's GPU is gone, or the tool sees another set),
// which says why the lines that named no GPU could not be read.
func Mine(ts ToolSample, uuids []string) ([]contract.GPUReading, error) {
	by := make(map[string]contract.GPUReading, len(ts.GPUs))
	for _, r := range ts.GPUs {
		by[strings.ToLower(r.UUID)] = r
	}
	out := make([]contract.GPUReading, 0, len(uuids))
	for _, u := range uuids {
		r, ok := by[strings.ToLower(u)]
		if !ok {
			why := ""
			if len(ts.Unread) > 0 {
				why = fmt.Sprintf("; of its lines that named no GPU: %s", strings.Join(ts.Unread, "; "))
			}
			return nil, fmt.Errorf("the GPU %s this container was given is not in the sample (the tool lists %d GPUs%s)", clip(u), len(ts.GPUs), why)
		}
		out = append(out, r)
	}
	return out, nil
}
