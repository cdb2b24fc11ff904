package launcher

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/gpu"
	"github.com/yarn-am/yarn-am/resources"
)

// This file samples the container's own GPUs while the worker runs (docs/running.md#gpu-utilisation):
// only the GPUs discovery gave it, by UUID, every taskexecutor.gpu-sample-interval, in a goroutine of
// its own with a timeout per call, so a slow or broken vendor tool never delays the worker. The
// samples wait in a SampleQueue until the next liveness message carries them (liveness.go).

// SampleQueue holds the samples taken since the last liveness message that reached the AM, at most
// contract.MaxAliveSamples (the oldest go first), and the sampler's error until one message carried
// it. Safe for concurrent use: the sampler adds, the heartbeat takes.
type SampleQueue struct {
	mu      sync.Mutex
	samples []queuedSample
	seq     uint64 // of the last sample added
	err     string
	errSent bool
}

type queuedSample struct {
	seq  uint64
	at   time.Time
	gpus []contract.GPUReading
}

// Add queues one sample taken at at.
func (q *SampleQueue) Add(at time.Time, gpus []contract.GPUReading) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.seq++
	q.samples = append(q.samples, queuedSample{seq: q.seq, at: at, gpus: gpus})
	if over := len(q.samples) - contract.MaxAliveSamples; over > 0 {
		q.samples = append(q.samples[:0], q.samples[over:]...)
	}
}

// Fail records the sampler's error; only the first is ever sent.
func (q *SampleQueue) Fail(msg string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.err == "" {
		q.err = msg
	}
}

// Pending is the body of the next liveness message at now (nil: nothing to say) and the mark to give
// Sent once the AM took it.
func (q *SampleQueue) Pending(now time.Time) (*contract.AliveReport, SentMark) {
	if q == nil {
		return nil, SentMark{}
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	var r contract.AliveReport
	if q.err != "" && !q.errSent {
		r.GPUSampleError = q.err
	}
	for _, s := range q.samples {
		r.GPUSamples = append(r.GPUSamples, contract.GPUSample{AgoMs: max(now.Sub(s.at).Milliseconds(), 0), GPUs: s.gpus})
	}
	mark := SentMark{seq: q.seq, err: r.GPUSampleError != ""}
	if len(r.GPUSamples) == 0 && !mark.err {
		return nil, mark
	}
	return &r, mark
}

// SentMark is what a message carried: the samples up to seq, and the error if err.
type SentMark struct {
	seq uint64
	err bool
}

// Sent drops the samples up to mark and the error: a message carried them.
func (q *SampleQueue) Sent(mark SentMark) {
	if q == nil {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	i := 0
	for i < len(q.samples) && q.samples[i].seq <= mark.seq {
		i++
	}
	q.samples = append(q.samples[:0], q.samples[i:]...)
	if mark.err {
		q.errSent = true
	}
}

// SampleGPUs calls s every interval until ctx ends, queueing each sample. The first error is logged
// and queued (the AM turns it into a gpu-sampling-failed event); later ones are not, and sampling goes
// on in case the tool recovers. A sample in which one of the container's GPUs could not be read (its
// reading's Problem) is queued as it is, and the first such problem is reported as an error is. The
// first sample is taken at once. A GPU that reads unhealthy (contract.GPUReading.Unhealthy) is logged
// and given to sick (nil: none) once, before the sample that says it is queued: the AM ends the
// container when that sample reaches it, and sick (the GPU driver's MarkSick) must have kept the GPU
// out of the node's claims by then (docs/gpus.md#gpu-health-a-sick-gpu-is-taken-out-of-service).
func SampleGPUs(ctx context.Context, s gpu.Sampler, interval time.Duration, q *SampleQueue, log logrus.FieldLogger, sick func(contract.GPUReading)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	failed := false
	told := map[string]bool{}
	for {
		got, err := s.Sample(ctx)
		for _, g := range got {
			if why := g.Unhealthy(); why != "" && !told[g.UUID] && ctx.Err() == nil {
				told[g.UUID] = true
				log.WithFields(logrus.Fields{"gpu": g.UUID, "gpu_index": g.Index, "health": why}).
					Warn("yarn-am launch: a GPU of this container is unhealthy; it is kept out of the node's GPU claims, and the AM replaces this container")
				if sick != nil {
					sick(g)
				}
			}
		}
		if err == nil && !failed {
			err = sickGPU(got)
		}
		switch {
		case ctx.Err() != nil:
			return
		case err != nil && !failed:
			failed = true
			log.WithError(err).Warn("yarn-am launch: sampling the container's GPUs failed; the worker goes on, and sampling is retried every " + interval.String() + " without further messages")
			q.Fail(err.Error())
		}
		if err == nil || got != nil {
			q.Add(time.Now(), got)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// sickGPU is the first problem of gpus (a GPU the tool listed but whose values it could not give), nil
// when none has one.
func sickGPU(gpus []contract.GPUReading) error {
	for _, g := range gpus {
		if g.Problem != "" {
			return fmt.Errorf("GPU %s (index %d): %s; its values are unknown in the samples until it can be read again", g.UUID, g.Index, g.Problem)
		}
	}
	return nil
}

// GPUSamplerFor is the sampler of the GPUs the infos name: those of every GPU-driver resource that
// carry a UUID (the vendor tool lists a GPU by UUID whatever the container calls it). nil and the
// reason when there is nothing to sample.
func GPUSamplerFor(res []resources.Resource, drivers map[string]resources.Driver, infos map[string][]resources.Info) (gpu.Sampler, string) {
	var uuids []string
	vendor := gpu.Vendor("")
	for _, r := range res {
		d, ok := drivers[r.Name].(*gpu.Driver)
		if !ok {
			continue
		}
		v := d.Config().Vendor
		if vendor != "" && v != vendor {
			return nil, "the container has GPUs of two vendors"
		}
		vendor = v
		for _, in := range infos[r.Name] {
			u := in[contract.InfoUUID]
			if u == "" {
				return nil, fmt.Sprintf("GPU %s of resource %q has no UUID", in[contract.InfoIndex], r.Name)
			}
			uuids = append(uuids, u)
		}
	}
	if len(uuids) == 0 {
		return nil, "the container has no GPU"
	}
	return &gpu.ToolSampler{Vendor: vendor, UUIDs: uuids}, ""
}

// GPUSampleIntervalFromEnv reads contract.EnvGPUSampleInterval (the job's
// taskexecutor.gpu-sample-interval): 0 when "off"; the default when unset or not a duration the job
// file would have allowed (logged).
func GPUSampleIntervalFromEnv(log logrus.FieldLogger) time.Duration {
	v := strings.TrimSpace(os.Getenv(contract.EnvGPUSampleInterval))
	if v == "" {
		return contract.DefaultGPUSampleInterval
	}
	if strings.EqualFold(v, contract.GPUSampleOff) {
		return 0
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < contract.MinGPUSampleInterval {
		log.WithField("value", fmt.Sprintf("%.40q", v)).Warn("yarn-am launch: " + contract.EnvGPUSampleInterval + " is not a duration of at least " + contract.MinGPUSampleInterval.String() + "; sampling every " + contract.DefaultGPUSampleInterval.String())
		return contract.DefaultGPUSampleInterval
	}
	return d
}

// startGPUSampling starts sampling the container's GPUs (GPUSampling) once discovery is done; the
// returned stop ends it and waits for its goroutine.
func (l *Launcher) startGPUSampling(ctx context.Context, infos map[string][]resources.Info, log logrus.FieldLogger) (stop func()) {
	g := l.GPUSampling
	if g == nil || g.Interval <= 0 || g.Queue == nil {
		return func() {}
	}
	s := g.Sampler
	if s == nil {
		var why string
		if s, why = GPUSamplerFor(l.Resources, l.Drivers, infos); s == nil {
			log.Debug("yarn-am launch: no GPU sampling: " + why)
			return func() {}
		}
	}
	if ts, ok := s.(*gpu.ToolSampler); ok {
		ts.Note = func(n string) { log.Warn("yarn-am launch: " + n) }
	}
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); SampleGPUs(sctx, s, g.Interval, g.Queue, log, l.markSick(sctx, log)) }()
	return func() { cancel(); <-done }
}

// markSick is SampleGPUs' sick: every GPU driver of the container records the GPU as sick in its
// coordination directory (gpu.Driver.MarkSick); a failure is logged (the AM still replaces the
// container, but the node's next discovery may hand the GPU out again).
func (l *Launcher) markSick(ctx context.Context, log logrus.FieldLogger) func(contract.GPUReading) {
	var drivers []*gpu.Driver
	for _, r := range l.Resources {
		if d, ok := l.Drivers[r.Name].(*gpu.Driver); ok {
			drivers = append(drivers, d)
		}
	}
	return func(g contract.GPUReading) {
		for _, d := range drivers {
			if err := d.MarkSick(ctx, g.UUID); err != nil {
				log.WithError(err).WithField("gpu", g.UUID).Warn("yarn-am launch: could not keep the unhealthy GPU out of the node's claims")
			}
		}
	}
}

// GPUSampling configures the launcher's GPU sampler.
type GPUSampling struct {
	Interval time.Duration // 0: no sampling
	// Sampler: nil = a gpu.ToolSampler of the container's GPUs (GPUSamplerFor).
	Sampler gpu.Sampler
	// Queue is where the samples wait for the liveness message (the HTTPReporter's).
	Queue *SampleQueue
}
