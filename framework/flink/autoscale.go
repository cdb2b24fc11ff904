package flink

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/yarn-am/yarn-am/jobfile"
)

// The autoscaler's keys (docs/flink.md#autoscaling): [flink] autoscale turns it on, to recommend or
// to act, and the keys below bound and pace what it decides. Its defaults aim at a rescale within
// two minutes of a step in the sources' rate, where the autoscaler of Flink's Kubernetes operator
// waits a 15-minute metrics window and a 5-minute stabilisation.

// The [flink] keys of the autoscaler.
const (
	keyAutoscale            = "autoscale"
	keyAutoscaleUtilisation = "autoscale-utilisation"
	keyAutoscaleBand        = "autoscale-band"
	keyAutoscaleMin         = "autoscale-min-parallelism"
	keyAutoscaleMax         = "autoscale-max-parallelism"
	keyAutoscaleWindow      = "autoscale-window"
	keyAutoscaleStabilise   = "autoscale-stabilisation"
	keyAutoscaleGrace       = "autoscale-scale-down-grace"
	keyAutoscaleMaxStep     = "autoscale-max-step"
	keyAutoscaleCatchUp     = "autoscale-catch-up"
)

// The values of [flink] autoscale.
const (
	autoscaleOff       = "off"       // no autoscaler (the default)
	autoscaleRecommend = "recommend" // decisions are events and status lines; nothing changes
	autoscaleOn        = "on"        // decisions set the job's parallelism bounds
)

// autoscaleValues are the valid values of [flink] autoscale, the default first.
var autoscaleValues = []string{autoscaleOff, autoscaleRecommend, autoscaleOn}

// The autoscaler's defaults and limits.
const (
	defaultAutoscaleUtilisation = 0.7
	defaultAutoscaleBand        = 0.2
	defaultAutoscaleWindow      = time.Minute
	defaultAutoscaleStabilise   = 30 * time.Second
	defaultAutoscaleGrace       = 5 * time.Minute
	defaultAutoscaleMaxStep     = 4.0
	defaultAutoscaleCatchUp     = 2 * time.Minute
	// minAutoscaleWindow: the JobManager's metrics are a few seconds old (metrics.fetcher.update-interval,
	// 10 s by default); a shorter window would decide on one fetch.
	minAutoscaleWindow = 10 * time.Second
	// maxAutoscaleParallelism is Flink's largest max parallelism (2^15).
	maxAutoscaleParallelism = 1 << 15
	// maxAutoscaleDuration bounds the pacing keys: a day is no longer pacing.
	maxAutoscaleDuration = 24 * time.Hour
)

// readAutoscale reads the autoscaler's keys into f.Autoscale, each checked with the valid values.
func readAutoscale(t *jobfile.Table, f *flinkSpec) {
	a := autoscaleSpec{Mode: autoscaleOff, Utilisation: defaultAutoscaleUtilisation, Band: defaultAutoscaleBand, Min: 1,
		Window: defaultAutoscaleWindow, Stabilise: defaultAutoscaleStabilise, Grace: defaultAutoscaleGrace,
		CatchUp: defaultAutoscaleCatchUp, MaxStep: defaultAutoscaleMaxStep}
	if v, set := t.String(keyAutoscale); set {
		if !slices.Contains(autoscaleValues, v) {
			t.Problem("flink.%s = %q: want %q (the default), %q (decisions shown as events and in status, nothing changed) or %q (decisions applied to the job's parallelism)",
				keyAutoscale, bounded(v), autoscaleOff, autoscaleRecommend, autoscaleOn)
		} else {
			a.Mode = v
		}
	}
	number := func(key string) (float64, bool) {
		raw, set := t.Value(key)
		if !set {
			return 0, false
		}
		switch v := raw.(type) {
		case int64:
			return float64(v), true
		case float64:
			return v, true
		}
		t.Problem("flink.%s = %s: want a number, not %s", key, jobfile.Show(raw), jobfile.TypeName(raw))
		return 0, false
	}
	fraction := func(key string, lo, hi float64, into *float64) {
		v, set := number(key)
		if !set {
			return
		}
		if !(v > lo && v <= hi) {
			t.Problem("flink.%s = %v: want a fraction above %v and at most %v", key, v, lo, hi)
			return
		}
		*into = v
	}
	fraction(keyAutoscaleUtilisation, 0, 1, &a.Utilisation)
	fraction(keyAutoscaleBand, 0, 1, &a.Band)
	if v, set := number(keyAutoscaleMaxStep); set {
		if !(v >= 1 && v <= 100) {
			t.Problem("flink.%s = %v: want a factor from 1 to 100 (the most one decision multiplies or divides a vertex's parallelism by; 1 holds every vertex where it is)", keyAutoscaleMaxStep, v)
		} else {
			a.MaxStep = v
		}
	}
	if v, set := t.Int(keyAutoscaleMin, 1, maxAutoscaleParallelism, "the fewest subtasks the autoscaler gives a vertex"); set {
		a.Min = int(v)
	}
	if v, set := t.Int(keyAutoscaleMax, 0, maxAutoscaleParallelism, "the most subtasks the autoscaler gives a vertex; 0: the vertex's max parallelism and the slots the queue holds"); set {
		a.Max = int(v)
	}
	if a.Max > 0 && a.Min > a.Max {
		t.Problem("flink.%s = %d is above flink.%s = %d: give a min no higher than the max", keyAutoscaleMin, a.Min, keyAutoscaleMax, a.Max)
	}
	duration := func(key string, least time.Duration, into *time.Duration) {
		v, set := t.String(key)
		if !set {
			return
		}
		d, err := time.ParseDuration(strings.TrimSpace(v))
		if err != nil || d < least || d > maxAutoscaleDuration {
			t.Problem("flink.%s = %q: want a Go duration from %s to %s, e.g. %q", key, bounded(v), least, maxAutoscaleDuration, into.String())
			return
		}
		*into = d
	}
	duration(keyAutoscaleWindow, minAutoscaleWindow, &a.Window)
	duration(keyAutoscaleStabilise, 0, &a.Stabilise)
	duration(keyAutoscaleGrace, 0, &a.Grace)
	duration(keyAutoscaleCatchUp, time.Second, &a.CatchUp)
	if a.Mode == autoscaleOn && f.Jar == "" {
		t.Problem("flink.%s = %q: a session cluster (no flink.jar) runs jobs the AM does not own; autoscale an application (add jar), or use %q", keyAutoscale, autoscaleOn, autoscaleRecommend)
	}
	f.Autoscale = a
}

// checkAutoscale is the pre-flight of autoscale = "on": the job's parallelism is set through the
// adaptive scheduler's resource requirements, and the TaskManagers follow through the demand
// (docs/flink.md#autoscaling).
func checkAutoscale(f *flinkSpec, adaptive bool) error {
	if f.Autoscale.Mode != autoscaleOn {
		return nil
	}
	var missing []string
	if f.TaskManagersMode != taskManagersDemand {
		missing = append(missing, fmt.Sprintf("flink.taskmanagers = %q (the TaskManagers follow the parallelism it sets)", taskManagersDemand))
	}
	if !adaptive {
		missing = append(missing, `"jobmanager.scheduler" = "adaptive" in [flink.config] (it sets the parallelism through the adaptive scheduler's resource requirements)`)
	}
	if len(missing) == 0 {
		return nil
	}
	return fmt.Errorf("flink.%s = %q needs %s; or use %q, which only shows its decisions", keyAutoscale, autoscaleOn, strings.Join(missing, " and "), autoscaleRecommend)
}
