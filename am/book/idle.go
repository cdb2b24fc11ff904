package book

import (
	"fmt"
	"time"

	"github.com/yarn-am/yarn-am/am/events"
	"github.com/yarn-am/yarn-am/contract"
)

// Idle is the memory of taskexecutor.idle-gpu-release (am/idlerelease.go): the container warned for
// its idle GPUs and its deadline, the give-back in flight through a demand-sized job's framework,
// the idle spells already said to be kept, and the GPU time given back. Its verbs are the only
// writers of its fields: Judge (a container's idle spell: kept, or warned of its release), Warned
// and Due (a warning and its release), GivingBack, GiveBackEnded, GiveBackRefused, TakeGivingBack
// and ScaledDown (the framework's give-back and its release), Kept and ForgetKept (the spells said),
// Given, Retake, Hours, GivenState and RestoreGiven (the GPU time given back). Judge, GiveBackRefused
// and ScaledDown also write the idle release's notices of the containers (Container.Notice). The
// AM's mutex guards it (package doc).
type Idle struct {
	// pending: the container warned for its idle GPUs ("" when none), released at deadline.
	pending  string
	deadline time.Time
	// givingBack: the container whose GPUs a demand-sized job's framework is giving back (its
	// GiveBack's Release called; "" when none): the framework's next Scale down that names a
	// container is that release.
	givingBack string
	// kept: container → the idle spell (its start) its idle-gpu-kept event was said for.
	kept  map[string]time.Time
	given givenBack
}

// IdleJob is what the job allows when a container's GPUs stayed idle (Idle.Judge's input).
type IdleJob struct {
	// Release is taskexecutor.idle-gpu-release; Wait the notices' grace before the release (the AM's
	// preemption wait).
	Release, Wait time.Duration
	// Gang: the job is a gang; Round is its round now, Formed whether that round formed (only its
	// members are released).
	Gang   bool
	Round  int
	Formed bool
	// Releasable says whether the job can give a container back now, and why not (asked only of a
	// container idle for Release).
	Releasable func() (ok bool, why string)
	// Want is the declared count of TaskExecutors now.
	Want int
}

// IdleWarning is the warning of an idle container's release (Idle.Judge): the containers noticed
// (the idle one first, then in a gang the round's other members, their notices set), the deadline
// of the release and its idle-gpu-release event.
type IdleWarning struct {
	Warned   []*Container
	Deadline time.Time
	Event    contract.Event
}

// Judge acts on container t's idle spell (since..last, every GPU idle: gpuuse.Book.IdleSpell) after
// its samples were booked at now: nothing before job.Release, for a container that does not run or
// was already warned, while a release is warned of or in flight, or for a container held beside a
// gang's round; then, where the job cannot shrink, one idle-gpu-kept event per spell (kept); else the
// warning of its release (warned): t and, in a gang, the round's other live members get notices with
// the deadline now + job.Wait, at which Due returns t.
func (i *Idle) Judge(r *Records, t *Container, since, last, now time.Time, job IdleJob) (kept *contract.Event, warned *IdleWarning) {
	d := job.Release
	if d <= 0 || t.Phase != contract.Running || since.IsZero() || last.Sub(since) < d || t.Notice != nil || i.Busy() {
		return nil, nil
	}
	if job.Gang && (t.Round != job.Round || !job.Formed) {
		return nil, nil // held beside the round, or a round on its way out: not a member to release
	}
	if ok, why := job.Releasable(); !ok {
		if i.Kept(t.ID, since) {
			ev := events.IdleGPUKept(t.ID, t.Node, t.GPUs(), last.Sub(since), d, why)
			return &ev, nil
		}
		return nil, nil
	}
	warn := []*Container{t}
	var round *int
	if job.Gang {
		round = &job.Round
		for _, o := range r.seq {
			if o != t && o.Round == job.Round && Warnable(o) {
				warn = append(warn, o)
			}
		}
	}
	deadline := now.Add(job.Wait)
	for _, w := range warn {
		w.Notice = &contract.PreemptionNotice{Container: w.ID, Containers: []string{t.ID}, WarnedAt: now, Deadline: deadline, Round: round,
			Reason: contract.NoticeIdleGPURelease}
	}
	i.Warned(t.ID, deadline)
	return nil, &IdleWarning{Warned: warn, Deadline: deadline,
		Event: events.IdleGPURelease(t.ID, t.Node, t.GPUs(), last.Sub(since), d, deadline, job.Wait, job.Want, job.Want-1, len(warn))}
}

// GiveBackRefused: the framework's give-back of container id ended without a release (it refused):
// its notice is withdrawn, and its next idle spell judges it again.
func (i *Idle) GiveBackRefused(r *Records, id string) {
	i.GiveBackEnded(id)
	withdrawIdleNotice(r, id)
}

// ScaledDown books the framework's Scale from → to naming stopFirst as the release of the give-back
// in flight, if one is: the first container named is released for idleness (the idle one, or the one
// the framework's work left instead) and its GPUs count as given back at now. ok false: no give-back
// was in flight, or the Scale releases none; else released is the idle-gpu-released event and idle
// the container whose GPUs stayed idle.
func (i *Idle) ScaledDown(r *Records, from, to int, stopFirst []string, now time.Time) (released contract.Event, idle string, ok bool) {
	if to >= from || len(stopFirst) == 0 {
		return contract.Event{}, "", false
	}
	idle = i.TakeGivingBack()
	if idle == "" {
		return contract.Event{}, "", false
	}
	withdrawIdleNotice(r, idle)
	t := r.Get(stopFirst[0])
	if t == nil {
		return contract.Event{}, "", false
	}
	n := t.GPUs()
	i.Given(n, now)
	ev := events.IdleGPUReleased(t.ID, t.Node, n, from, to)
	if t.ID != idle {
		// The framework's work left another TaskExecutor than the idle one (Flink chose which slots
		// its rescale keeps): that one's GPUs are the ones no longer used.
		ev.Message += fmt.Sprintf("; the job's rescale left it rather than %s, whose GPUs stayed idle and which runs the job's work now", idle)
	}
	return ev, idle, true
}

// withdrawIdleNotice drops container id's idle-release notice once its give-back ended without
// stopping it (refused, or another TaskExecutor released): it is judged again by its next idle spell.
func withdrawIdleNotice(r *Records, id string) {
	if t := r.Get(id); t != nil && t.Notice != nil && t.Notice.Reason == contract.NoticeIdleGPURelease {
		t.Notice = nil
	}
}

// Busy: a release is warned of or a give-back is in flight (one at a time).
func (i *Idle) Busy() bool { return i.pending != "" || i.givingBack != "" }

// Warned books container id warned for its idle GPUs, to be released at deadline.
func (i *Idle) Warned(id string, deadline time.Time) { i.pending, i.deadline = id, deadline }

// Due returns the warned container once its deadline passed at now, and forgets the warning.
func (i *Idle) Due(now time.Time) (id string, ok bool) {
	if i.pending == "" || now.Before(i.deadline) {
		return "", false
	}
	id, i.pending = i.pending, ""
	return id, true
}

// GivingBack books the framework's give-back of container id in flight.
func (i *Idle) GivingBack(id string) { i.givingBack = id }

// GiveBackEnded: the give-back of container id ended without a release (the framework refused).
func (i *Idle) GiveBackEnded(id string) {
	if i.givingBack == id {
		i.givingBack = ""
	}
}

// TakeGivingBack returns the container whose give-back is in flight ("" when none) and forgets it:
// the framework's Scale is its release.
func (i *Idle) TakeGivingBack() string {
	id := i.givingBack
	i.givingBack = ""
	return id
}

// Kept books that container id's idle spell that began at since was said to be kept; it says
// whether that is news (false: it was said for that spell already).
func (i *Idle) Kept(id string, since time.Time) bool {
	if i.kept[id].Equal(since) {
		return false
	}
	if i.kept == nil {
		i.kept = map[string]time.Time{}
	}
	i.kept[id] = since
	return true
}

// ForgetKept forgets the spells said of containers that no longer run (running says which do).
func (i *Idle) ForgetKept(running func(id string) bool) {
	for id := range i.kept {
		if !running(id) {
			delete(i.kept, id)
		}
	}
}

// Given books n GPUs (one container) given back at now.
func (i *Idle) Given(n int64, now time.Time) { i.given.add(n, now) }

// Retake books k containers declared again at now (the requirement went up): their GPUs are no
// longer given back from then on.
func (i *Idle) Retake(k int, now time.Time) { i.given.retake(k, now) }

// Hours is the GPU-hours given back up to now.
func (i *Idle) Hours(now time.Time) float64 { return i.given.hours(now) }

// GivenState is the GPU time given back as the durable state keeps it, settled at now (nil: none).
func (i *Idle) GivenState(now time.Time) *GivenBack {
	g := i.given
	if g.containers == 0 && g.seconds == 0 {
		return nil
	}
	g.settle(now)
	return &GivenBack{Containers: g.containers, GPUs: g.gpus, Seconds: g.seconds, At: g.at}
}

// RestoreGiven takes the GPU time an earlier attempt gave back.
func (i *Idle) RestoreGiven(g GivenBack) {
	i.given = givenBack{containers: g.Containers, gpus: g.GPUs, seconds: g.Seconds, at: g.At}
}

// givenBack counts the GPU time given back: gpus released and not declared again since, and the
// GPU-seconds they were given back for up to at.
type givenBack struct {
	containers int
	gpus       int64
	seconds    float64
	at         time.Time
}

func (g *givenBack) add(n int64, now time.Time) {
	g.settle(now)
	g.containers++
	g.gpus += n
}

func (g *givenBack) retake(k int, now time.Time) {
	if g.containers == 0 || k <= 0 {
		return
	}
	g.settle(now)
	k = min(k, g.containers)
	g.gpus -= g.gpus * int64(k) / int64(g.containers)
	g.containers -= k
}

func (g *givenBack) settle(now time.Time) {
	if d := now.Sub(g.at); g.gpus > 0 && d > 0 {
		g.seconds += float64(g.gpus) * d.Seconds()
	}
	g.at = now
}

func (g *givenBack) hours(now time.Time) float64 {
	s := g.seconds
	if d := now.Sub(g.at); g.gpus > 0 && d > 0 {
		s += float64(g.gpus) * d.Seconds()
	}
	return s / 3600
}
