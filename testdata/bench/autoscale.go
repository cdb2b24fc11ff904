package main

// The autoscale row (make bench BENCH=autoscale; README.md#the-autoscale-row): the rate-step trace
// that TestFlinkAutoscaleFollowsARateStep recorded on the mini cluster (YARN_AM_AUTOSCALE_TRACE),
// its measured timeline, and the same step replayed through a small model of a DS2 autoscaler under
// two sets of pacing defaults: yarn-am's and those documented for Flink's Kubernetes-operator
// autoscaler. The model is one queue (the source's backlog) in front of one vertex of p subtasks that
// each take the per-subtask rate the trace measured; the demand is the trace's rates.

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// rateTrace is the JSON the rate-step test writes (framework/flink/autoscale_step_integration_test.go).
type rateTrace struct {
	Line           string        `json:"line"`
	Grace          string        `json:"grace"`
	StepAt         float64       `json:"stepAt"`
	DecidedAt      float64       `json:"decidedAt"`
	AppliedAt      float64       `json:"appliedAt"`
	BacklogUnderAt float64       `json:"backlogUnderAt"`
	PeakBacklog    float64       `json:"peakBacklog"`
	DownAt         float64       `json:"downAt"`
	ScaledInAt     float64       `json:"scaledInAt"`
	ReleasedAt     float64       `json:"releasedAt"`
	Rescales       int           `json:"rescales"`
	Decisions      []string      `json:"decisions"`
	BacklogBound   float64       `json:"backlogBound"`
	LowRate        float64       `json:"lowRate"`
	HighRate       float64       `json:"highRate"`
	TaskManagerMax int           `json:"taskManagerMax"`
	Samples        []traceSample `json:"samples"`
}

type traceSample struct {
	At       float64       `json:"at"`
	Rate     float64       `json:"rate"`
	Vertices []traceVertex `json:"vertices"`
}

type traceVertex struct {
	Name        string  `json:"name"`
	Parallelism int     `json:"parallelism"`
	Busy        float64 `json:"busy"`
	In          float64 `json:"in"`
	Pending     float64 `json:"pending"`
}

// UnmarshalJSON reads NaN as the test writes it: json.Marshal refuses NaN, so the test writes null.
func (v *traceVertex) UnmarshalJSON(b []byte) error {
	var raw struct {
		Name        string   `json:"name"`
		Parallelism int      `json:"parallelism"`
		Busy        *float64 `json:"busy"`
		In          *float64 `json:"in"`
		Pending     *float64 `json:"pending"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	f := func(p *float64) float64 {
		if p == nil {
			return math.NaN()
		}
		return *p
	}
	*v = traceVertex{Name: raw.Name, Parallelism: raw.Parallelism, Busy: f(raw.Busy), In: f(raw.In), Pending: f(raw.Pending)}
	return nil
}

// pacing is one autoscaler's defaults, as the model uses them.
type pacing struct {
	Name          string
	Window        time.Duration // the metrics window a decision averages, full after each rescale
	Stabilisation time.Duration // after a rescale, before the window starts
	// ScaleDown: yarn-am applies a lower parallelism once it has been wanted this long
	// (autoscale-scale-down-grace); the operator allows none this long after a scale-up
	// (job.autoscaler.scale-up.grace-period).
	ScaleDown      time.Duration
	DownAfterUp    bool // ScaleDown is the operator's kind
	Utilisation    float64
	Band           float64
	CatchUp        time.Duration
	MaxStep        float64 // at most this many times up or down (0: no bound)
	MaxDownFactor  float64 // at most this fraction fewer subtasks in one scale-down (0: no bound)
	DecisionPeriod time.Duration
}

// yarnAMDefaults are docs/flink.md's defaults of the autoscale-* keys.
var yarnAMDefaults = pacing{Name: "yarn-am defaults", Window: time.Minute, Stabilisation: 30 * time.Second, ScaleDown: 5 * time.Minute,
	Utilisation: 0.7, Band: 0.2, CatchUp: 2 * time.Minute, MaxStep: 4, DecisionPeriod: 5 * time.Second}

// operatorDefaults are the documented defaults of the Flink Kubernetes operator's autoscaler
// (job.autoscaler.*): metrics.window 15 min, stabilization.interval 5 min, scale-up.grace-period
// 1 h, target.utilization 0.7, target.utilization.boundary 0.3, catch-up.duration 30 min,
// scale-down.max-factor 0.6. Its decisions are taken at the same 5 s here (which only flatters it).
var operatorDefaults = pacing{Name: "Flink operator defaults", Window: 15 * time.Minute, Stabilisation: 5 * time.Minute, ScaleDown: time.Hour,
	DownAfterUp: true, Utilisation: 0.7, Band: 0.3, CatchUp: 30 * time.Minute, MaxDownFactor: 0.6, DecisionPeriod: 5 * time.Second}

// stepModel is what the replay takes from the trace.
type stepModel struct {
	Low, High   float64       // records a second before and after the step
	Step, Down  time.Duration // when the rate went up and back down, from the start of the replay
	PerSubtask  float64       // records a second one subtask takes (the trace's true rate)
	Slots       int
	Bound       float64       // the backlog's bound
	RescaleTime time.Duration // from a decision to the job running at it (the trace's)
	Horizon     time.Duration
}

// stepResult is one row of the table, times from the step (Down: from the rate going down); -1:
// never within the horizon.
type stepResult struct {
	Name                  string
	ToRescale, ToUnder    time.Duration
	Peak                  float64
	Rescales              int
	ToScaleIn             time.Duration
	FinalParallelism, Max int
}

// replay runs the model at 1 s steps. Before the step the job has run at Low long enough for both
// windows to be full (the step starts at Step, with its history at Low).
func replay(m stepModel, pc pacing) stepResult {
	res := stepResult{Name: pc.Name, ToRescale: -1, ToUnder: -1, ToScaleIn: -1}
	const dt = time.Second
	type obs struct{ busy, in, src, backlog float64 }
	p, maxP := 1, 1
	backlog := 0.0
	var hist []obs
	windowFrom := -pc.Window - time.Hour // full before the step
	var pendingTo int
	var pendingAt time.Duration = -1
	var lowerSince time.Duration = -1
	var lastUp time.Duration = -24 * time.Hour
	exceeded := false
	for now := time.Duration(0); now < m.Horizon; now += dt {
		if pendingAt >= 0 && now >= pendingAt {
			if pendingTo > p {
				lastUp = now
				if res.ToRescale < 0 && now >= m.Step {
					res.ToRescale = now - m.Step
				}
			} else if pendingTo < p && now >= m.Down && res.ToScaleIn < 0 {
				res.ToScaleIn = now - m.Down
			}
			p, pendingAt = pendingTo, -1
			maxP = max(maxP, p)
			res.Rescales++
			windowFrom = now + pc.Stabilisation
			hist = nil
		}
		rate := m.Low
		if now >= m.Step && now < m.Down {
			rate = m.High
		}
		capacity := float64(p) * m.PerSubtask
		took := math.Min(capacity, rate+backlog)
		backlog += rate - took
		if now >= m.Step && now < m.Down {
			res.Peak = math.Max(res.Peak, backlog)
			if backlog > m.Bound {
				exceeded = true
			} else if exceeded && res.ToUnder < 0 && p > 1 {
				res.ToUnder = now - m.Step
			}
		}
		if now >= windowFrom {
			hist = append(hist, obs{busy: took / capacity, in: took, src: took, backlog: backlog})
			if n := int(pc.Window / dt); len(hist) > n {
				hist = hist[len(hist)-n:]
			}
		}
		if pendingAt >= 0 || now < windowFrom+pc.Window || now%pc.DecisionPeriod != 0 {
			continue
		}
		var a obs
		for _, o := range hist {
			a.busy += o.busy / float64(len(hist))
			a.in += o.in / float64(len(hist))
			a.src += o.src / float64(len(hist))
		}
		if a.busy <= 0.01 || a.in <= 0 {
			continue
		}
		trueRate := a.in / float64(p) / a.busy
		// Both autoscalers count what arrives: the source's read rate plus its backlog's growth
		// over the window (the operator's lag growth rate, yarn-am's PendingGrowth).
		arrives := a.src
		if len(hist) > 1 {
			arrives = math.Max(arrives+(hist[len(hist)-1].backlog-hist[0].backlog)/(float64(len(hist)-1)*dt.Seconds()), 0)
		}
		target := arrives + backlog/pc.CatchUp.Seconds()
		projected := target / (trueRate * float64(p))
		want := p
		if projected < pc.Utilisation-pc.Band || projected > pc.Utilisation+pc.Band {
			want = int(math.Ceil(target / (trueRate * pc.Utilisation)))
		}
		if pc.MaxStep > 0 {
			want = min(want, int(float64(p)*pc.MaxStep))
			want = max(want, int(math.Ceil(float64(p)/pc.MaxStep)))
		}
		if pc.MaxDownFactor > 0 && want < p {
			want = max(want, int(math.Ceil(float64(p)*(1-pc.MaxDownFactor))))
		}
		want = max(1, min(want, m.Slots))
		if want < p {
			switch {
			case pc.DownAfterUp:
				if now-lastUp < pc.ScaleDown {
					want = p
				}
			default:
				if lowerSince < 0 {
					lowerSince = now
				}
				if now-lowerSince < pc.ScaleDown {
					want = p
				}
			}
		} else {
			lowerSince = -1
		}
		if want != p {
			pendingTo, pendingAt = want, now+m.RescaleTime
			lowerSince = -1
		}
	}
	res.FinalParallelism, res.Max = p, maxP
	return res
}

// modelOf takes the model's inputs from a trace: the rates and the times of the step, the Cost
// vertex's true rate per subtask (the median over the samples where it was over 30 % busy), the
// time from the first decision to the job running at it, the slots.
func modelOf(tr rateTrace) (stepModel, error) {
	var rates []float64
	for _, s := range tr.Samples {
		for _, v := range s.Vertices {
			if strings.HasPrefix(v.Name, "Cost") && v.Busy > 300 && v.In > 0 && v.Parallelism > 0 {
				rates = append(rates, v.In/float64(v.Parallelism)/(v.Busy/1000))
			}
		}
	}
	if len(rates) == 0 || tr.StepAt <= 0 || tr.DownAt <= tr.StepAt || tr.AppliedAt < tr.DecidedAt {
		return stepModel{}, fmt.Errorf("the trace of %s has no busy Cost samples or no step (step %v, down %v)", tr.Line, tr.StepAt, tr.DownAt)
	}
	sort.Float64s(rates)
	sec := func(f float64) time.Duration { return time.Duration(f * float64(time.Second)) }
	// The replay starts an hour before the step, at Low: both autoscalers' windows full.
	lead := time.Hour
	return stepModel{Low: tr.LowRate, High: tr.HighRate, Step: lead, Down: lead + sec(tr.DownAt-tr.StepAt),
		PerSubtask: rates[len(rates)/2], Slots: max(1, tr.TaskManagerMax), Bound: tr.BacklogBound,
		RescaleTime: sec(tr.AppliedAt - tr.DecidedAt), Horizon: lead + sec(tr.DownAt-tr.StepAt) + 2*time.Hour}, nil
}

// autoscaleRow reads the trace at path and writes autoscale.md into out: the measured timeline, then
// the replay under both sets of defaults.
func autoscaleRow(path, out string, w io.Writer) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var tr rateTrace
	if err := json.Unmarshal(b, &tr); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	m, err := modelOf(tr)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	d := func(t time.Duration) string {
		if t < 0 {
			return "never (2 h)"
		}
		return fmt.Sprintf("%.0f s", t.Seconds())
	}
	s := func(f float64) string {
		if f <= 0 {
			return "never"
		}
		return fmt.Sprintf("%.0f s", f)
	}
	var t strings.Builder
	fmt.Fprintf(&t, "Rate step on Flink %s, scale-down grace %s: %.0f → %.0f → %.0f records/s, Cost map %.0f records/s a subtask, %d slots, backlog bound %.0f records, rescale %s after its decision.\n\n",
		tr.Line, tr.Grace, m.Low, m.High, m.Low, m.PerSubtask, m.Slots, m.Bound, m.RescaleTime)
	fmt.Fprintf(&t, "| | step → rescale applied | step → backlog under bound | peak backlog | rescales, up and down | rate down → scaled in |\n|---|---|---|---|---|---|\n")
	fmt.Fprintf(&t, "| measured (yarn-am, mini cluster) | %s (decided %s) | %s | %.0f | %d | %s |\n", s(tr.AppliedAt-tr.StepAt), s(tr.DecidedAt-tr.StepAt),
		s(tr.BacklogUnderAt-tr.StepAt), tr.PeakBacklog, tr.Rescales, s(tr.ScaledInAt-tr.DownAt))
	for _, pc := range []pacing{yarnAMDefaults, operatorDefaults} {
		// The step's columns with the rate left high for the whole horizon (not cut short where
		// yarn-am's run took it down); the scale-in's with the rate down when the trace's went.
		up := m
		up.Down = m.Horizon
		r := replay(up, pc)
		// The rate goes down when the trace's did, or once this autoscaler's backlog is back under
		// its bound if that is later: a scale-in of a scale-out that happened.
		down := m
		if r.ToUnder > 0 && m.Step+r.ToUnder > m.Down {
			down.Down = m.Step + r.ToUnder
			down.Horizon = down.Down + 2*time.Hour
		}
		in := replay(down, pc)
		fmt.Fprintf(&t, "| replay, %s | %s | %s | %.0f | %d | %s |\n", r.Name, d(r.ToRescale), d(r.ToUnder), r.Peak, in.Rescales, d(in.ToScaleIn))
	}
	fmt.Fprintf(&t, "\nReplay: the rate high from the step on for the first four columns; for the last, back down %s after the step as in the trace, or once the backlog is under its bound if that is later; times from the step and from the rate going down.\n",
		(m.Down - m.Step).Round(time.Second))
	fmt.Fprint(w, t.String())
	return os.WriteFile(filepath.Join(out, "autoscale.md"), []byte(t.String()), 0o644)
}
