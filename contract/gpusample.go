package contract

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// GPU utilisation samples (docs/running.md#gpu-utilisation): the launcher samples its own container's
// GPUs every taskexecutor.gpu-sample-interval and sends what it took since its last liveness message
// in that message's body (AliveReport); the AM keeps a bounded series per container.

// EnvGPUSampleInterval is taskexecutor.gpu-sample-interval, set by the AM in every TaskExecutor's
// environment: a Go duration, or GPUSampleOff. Unset: DefaultGPUSampleInterval.
const EnvGPUSampleInterval = "YARN_AM_GPU_SAMPLE_INTERVAL"

// Defaults and bounds of GPU sampling.
const (
	// GPUSampleOff disables sampling (taskexecutor.gpu-sample-interval) or the idle warning
	// (taskexecutor.idle-gpu-warning).
	GPUSampleOff = "off"
	// DefaultGPUSampleInterval: one vendor-tool call every 10 s costs about 30 ms of a CPU.
	DefaultGPUSampleInterval = 10 * time.Second
	// MinGPUSampleInterval is the shortest interval a job may ask for.
	MinGPUSampleInterval = time.Second
	// DefaultIdleGPUWarning is taskexecutor.idle-gpu-warning's default.
	DefaultIdleGPUWarning = 10 * time.Minute
	// IdleGPUPercent: a GPU under this utilisation is idle (the idle-gpu event, the idle share).
	IdleGPUPercent = 5.0
	// MaxAliveSamples is how many samples one liveness message carries at most: the launcher keeps no
	// more between two messages (the oldest go first), the AM refuses more.
	MaxAliveSamples = 32
	// MaxSampleGPUs bounds the readings of one sample (the AM also refuses GPUs the container's
	// launcher did not report).
	MaxSampleGPUs = 64
	// MaxAliveBytes is the largest liveness body the AM reads.
	MaxAliveBytes = 64 << 10
	// MaxGPUMemoryMiB and MaxGPUPowerW bound a reading's values (1 PiB, 100 kW): anything above is
	// not a GPU.
	MaxGPUMemoryMiB = 1 << 30
	MaxGPUPowerW    = 100000
	// DefaultSickGPUsPerNode is taskexecutor.sick-gpus-per-node's default: after this many of a
	// node's GPUs turned unhealthy under the job's containers, the node is excluded
	// (docs/gpus.md#gpu-health-a-sick-gpu-is-taken-out-of-service).
	DefaultSickGPUsPerNode = 2
)

// Events of GPU sampling (docs/running.md#events).
const (
	// EventIdleGPU: a running container's GPU stayed under IdleGPUPercent for
	// taskexecutor.idle-gpu-warning (once per idle spell; Reason holds the GPU's UUID).
	EventIdleGPU EventType = "idle-gpu"
	// EventGPUSamplingFailed: a launcher cannot sample its GPUs (once per container).
	EventGPUSamplingFailed EventType = "gpu-sampling-failed"
	// Idle GPUs given back (taskexecutor.idle-gpu-release; docs/gpus.md#idle-gpus-given-back):
	// EventIdleGPURelease: every GPU of a running container stayed idle for the key's duration; its
	// worker (a gang's whole round) is warned as of a preemption, and the container is released by
	// Deadline. EventIdleGPUReleased: it was released and the declared count went down by one, not
	// replaced. EventIdleGPUKept: the job cannot give a container back (a fixed count, an elastic gang
	// at its minimum); said once per idle spell, and the GPUs stay reserved.
	EventIdleGPURelease  EventType = "idle-gpu-release"
	EventIdleGPUReleased EventType = "idle-gpu-released"
	EventIdleGPUKept     EventType = "idle-gpu-kept"
	// EventGPUUnhealthy: a running container's GPU read unhealthy (GPUReading.Unhealthy): the
	// container is ended and replaced (once per container; Reason holds the GPU's UUID).
	EventGPUUnhealthy EventType = "gpu-unhealthy"
)

// AliveReport is the body of POST <EnvReportURL><CONTAINER_ID>/alive: empty (a launcher that does not
// sample) or this document.
type AliveReport struct {
	// GPUSamples are the samples taken since the last message that reached the AM, oldest first.
	GPUSamples []GPUSample `json:"gpuSamples,omitempty"`
	// GPUSampleError is set once, when sampling failed (the launcher keeps trying quietly).
	GPUSampleError string `json:"gpuSampleError,omitempty"`
}

// GPUSample is one sampling of a container's GPUs.
type GPUSample struct {
	// AgoMs is how long before the message the sample was taken, in milliseconds: the AM dates it by
	// its own clock, so a node's clock skew does not move it.
	AgoMs int64        `json:"agoMs"`
	GPUs  []GPUReading `json:"gpus"`
}

// GPUReading is one GPU's state in a sample.
type GPUReading struct {
	UUID  string `json:"uuid"`
	Index int    `json:"index"`
	// Util is the share of the last sample period a kernel ran, in percent (nvidia-smi's
	// utilization.gpu, rocm-smi's GPU use); nil where the tool reports none (a MIG instance).
	Util        *float64 `json:"util,omitempty"`
	MemUsedMiB  int64    `json:"memUsedMiB"`
	MemTotalMiB int64    `json:"memTotalMiB"`
	// PowerW is the board's power draw; nil where the tool reports none ("[N/A]").
	PowerW *float64 `json:"powerW,omitempty"`
	// Problem is set when the tool listed the GPU but its values could not be read ("[GPU is lost]",
	// "ERR!"): they are all unknown in this reading, and Problem says why (at most MaxGPUProblem
	// bytes, one line; docs/running.md#gpu-utilisation).
	Problem string `json:"problem,omitempty"`
	// Sick is set when the GPU is unhealthy: "<field>=<value>" of the first field that says so, a
	// health field (e.g. "ecc.errors.uncorrected.volatile.total=2", its other values read) or a field
	// the tool marks unreadable ("utilization.gpu=[GPU is lost]", beside Problem)
	// (docs/gpus.md#gpu-health-a-sick-gpu-is-taken-out-of-service; at most MaxGPUProblem bytes).
	Sick string `json:"sick,omitempty"`
}

// Unhealthy says why the GPU is out of service ("" when it is healthy): its Sick field. A Problem
// alone (a line of an unexpected shape) says the reading could not be made, not that the GPU is sick.
func (r GPUReading) Unhealthy() string { return r.Sick }

// MaxGPUProblem bounds GPUReading.Problem: every sample of a sick GPU carries it, and a liveness
// message of MaxAliveSamples samples stays within MaxAliveBytes.
const MaxGPUProblem = 96

// Check says what is wrong with r (nil when nothing): the AM refuses a message with a reading out of
// range rather than keep a series a chart cannot draw.
func (r GPUReading) Check() error {
	bad := func(v float64, lo, hi float64) bool { return math.IsNaN(v) || v < lo || v > hi }
	switch {
	case r.UUID == "" || len(r.UUID) > 128:
		return fmt.Errorf("uuid %.40q: want the GPU's UUID (1 to 128 bytes)", r.UUID)
	case r.Index < 0 || r.Index > 4096:
		return fmt.Errorf("gpu %s: index %d: want 0..4096", r.UUID, r.Index)
	case r.Util != nil && bad(*r.Util, 0, 100):
		return fmt.Errorf("gpu %s: util %v: want 0..100 (percent)", r.UUID, *r.Util)
	case r.MemUsedMiB < 0 || r.MemUsedMiB > MaxGPUMemoryMiB || r.MemTotalMiB < 0 || r.MemTotalMiB > MaxGPUMemoryMiB:
		return fmt.Errorf("gpu %s: memory %d of %d MiB: want 0..%d", r.UUID, r.MemUsedMiB, r.MemTotalMiB, MaxGPUMemoryMiB)
	case r.PowerW != nil && bad(*r.PowerW, 0, MaxGPUPowerW):
		return fmt.Errorf("gpu %s: power %v W: want 0..%d", r.UUID, *r.PowerW, MaxGPUPowerW)
	case len(r.Problem) > MaxGPUProblem || strings.ContainsFunc(r.Problem, func(c rune) bool { return c < ' ' || c == 0x7f }):
		return fmt.Errorf("gpu %s: problem %.40q: want one line of at most %d bytes", r.UUID, r.Problem, MaxGPUProblem)
	case len(r.Sick) > MaxGPUProblem || strings.ContainsFunc(r.Sick, func(c rune) bool { return c < ' ' || c == 0x7f }):
		return fmt.Errorf("gpu %s: sick %.40q: want one line of at most %d bytes", r.UUID, r.Sick, MaxGPUProblem)
	case r.Problem != "" && (r.Util != nil || r.PowerW != nil || r.MemUsedMiB != 0 || r.MemTotalMiB != 0):
		return fmt.Errorf("gpu %s: values beside a problem: a sick GPU's values are unknown", r.UUID)
	}
	return nil
}

// GPUStatus is one GPU of a container in the status document: its latest reading and its mean
// utilisation over the container's life.
type GPUStatus struct {
	UUID        string   `json:"uuid"`
	Index       int      `json:"index"`
	Util        *float64 `json:"util,omitempty"` // latest
	MemUsedMiB  int64    `json:"memUsedMiB"`
	MemTotalMiB int64    `json:"memTotalMiB"`
	PowerW      *float64 `json:"powerW,omitempty"`
	// Problem is the latest reading's (GPUReading.Problem): the GPU was listed but its values could not
	// be read, so the latest ones are unknown.
	Problem string `json:"problem,omitempty"`
	// Sick is the latest reading's (GPUReading.Sick): a health field that says the GPU is unhealthy.
	Sick string `json:"sick,omitempty"`
	// MeanUtil is the mean of every utilisation sample (not only the kept series); IdleShare the share
	// of them under IdleGPUPercent; Samples how many there were.
	MeanUtil  float64   `json:"meanUtil"`
	IdleShare float64   `json:"idleShare"`
	Samples   int       `json:"samples"`
	At        time.Time `json:"at"` // when the latest sample was taken (the AM's clock)
	// History is the kept series' utilisation, coarsened for the web UI's chart: only for the newest
	// containers' GPUs, MaxHistoryGPUs in all, and absent when no sample had a utilisation; GET
	// /api/v1/containers/<id>/gpus serves every point of any container.
	History *GPUHistory `json:"history,omitempty"`
}

// MaxHistoryPoints bounds GPUHistory.Util and MaxHistoryGPUs how many GPUs have one in a status
// document: the web UI polls the status every 2 s and draws these rows (am/web/ui/app.js maxGPURows).
const (
	MaxHistoryPoints = 60
	MaxHistoryGPUs   = 64
)

// GPUHistory is one GPU's utilisation over time in steps of StepMs from From (Unix milliseconds,
// the AM's clock, as Status.Now): Util[i] is the mean of the samples taken in
// [From+i*StepMs, From+(i+1)*StepMs), rounded, or -1 where none was taken (or none had a utilisation).
type GPUHistory struct {
	From   int64 `json:"from"`
	StepMs int64 `json:"stepMs"`
	Util   []int `json:"util"`
}

// GPUUsage is the job's GPU time (Status.GPUUsage, the finished event): what its containers
// reserved, and what the samples say of it.
type GPUUsage struct {
	// ReservedGPUHours: every TaskExecutor's GPUs (its yarn.io/gpu) times how long it ran.
	ReservedGPUHours float64 `json:"reservedGPUHours"`
	// UsedShare is the mean utilisation of every GPU sample, 0..1; IdleShare the share of samples
	// under IdleGPUPercent; Samples how many there were (0: nothing sampled, the shares say nothing).
	UsedShare float64 `json:"usedShare"`
	IdleShare float64 `json:"idleShare"`
	Samples   int     `json:"samples"`
	// GivenBackGPUHours: the GPUs of the containers the AM released for being idle
	// (taskexecutor.idle-gpu-release) times how long since each release, to the end of the job (or
	// until the declared count went back up); absent when none was released.
	GivenBackGPUHours float64 `json:"givenBackGPUHours,omitempty"`
}

// String is the sentence of the finished event and the final diagnostics.
func (u GPUUsage) String() string {
	s := fmt.Sprintf("GPU time: %.3f GPU-hours reserved, not sampled", u.ReservedGPUHours)
	if u.Samples > 0 {
		s = fmt.Sprintf("GPU time: %.3f GPU-hours reserved, %.0f%% used (mean utilisation of %d samples), %.0f%% idle", u.ReservedGPUHours, 100*u.UsedShare, u.Samples, 100*u.IdleShare)
	}
	if u.GivenBackGPUHours > 0 {
		s += fmt.Sprintf(", %.3f GPU-hours given back (taskexecutor.idle-gpu-release)", u.GivenBackGPUHours)
	}
	return s
}

// GPUSeries is the body of GET /api/v1/containers/<id>/gpus: the kept samples of one container.
type GPUSeries struct {
	Container string `json:"container"`
	// Interval is taskexecutor.gpu-sample-interval ("off" when the job does not sample).
	Interval string `json:"interval"`
	// GPUs are the container's GPUs, each with its points, oldest first.
	GPUs []GPUPoints `json:"gpus"`
}

// GPUPoints is one GPU's kept samples: Times (the AM's clock, Unix milliseconds) and the values at
// each; Util is -1 where the tool reported none, PowerW -1 where none.
type GPUPoints struct {
	UUID        string    `json:"uuid"`
	Index       int       `json:"index"`
	MemTotalMiB int64     `json:"memTotalMiB"`
	Times       []int64   `json:"times"`
	Util        []float64 `json:"util"`
	MemUsedMiB  []int64   `json:"memUsedMiB"`
	PowerW      []float64 `json:"powerW"`
}
