package book

import "time"

// Idle is the memory of taskexecutor.idle-gpu-release (am/idlerelease.go): the container warned for
// its idle GPUs and its deadline, the give-back in flight through a demand-sized job's framework,
// the idle spells already said to be kept, and the GPU time given back. Its verbs are the only
// writers of its fields: Warned and Due (a warning and its release), GivingBack, GiveBackEnded and
// TakeGivingBack (the framework's give-back), Kept and ForgetKept (the spells said), Given, Retake,
// Hours, GivenState and RestoreGiven (the GPU time given back). The AM's mutex guards it (package
// doc).
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
