package am

import (
	"context"
	"sync"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/yarn-am/yarn-am/am/events"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/internal/text"
)

// frameworkWatch asks the job's framework what it says of its own work (framework.AM.Details: a
// Flink job's id, state, parallelism, last checkpoint) every interval from one goroutine of its own,
// outside am.mu, and keeps the last answer, cut to the contract's bounds, for the status document
// (contract.Status.Framework). Its mutex is a leaf: nothing is called while it is held.
type frameworkWatch struct {
	title    string
	details  func(ctx context.Context) ([]contract.Detail, error)
	series   func() []contract.FrameworkSeries // framework.AM.Series (nil: none)
	interval time.Duration
	now      func() time.Time
	log      logrus.FieldLogger

	mu   sync.Mutex
	last *contract.FrameworkStatus // nil until the first answer
}

// newFrameworkWatch returns nil for a framework that says nothing.
func newFrameworkWatch(title string, details func(context.Context) ([]contract.Detail, error), log logrus.FieldLogger) *frameworkWatch {
	if details == nil {
		return nil
	}
	return &frameworkWatch{title: title, details: details, interval: contract.FrameworkDetailsInterval, now: time.Now, log: log}
}

// run asks every interval until ctx ends.
func (w *frameworkWatch) run(ctx context.Context) {
	t := time.NewTicker(w.interval)
	defer t.Stop()
	failed := false
	for {
		err := w.poll(ctx)
		if err != nil && !failed && ctx.Err() == nil { // once per run of failures: the JobManager may still be starting
			w.log.WithError(err).Info("yarn-am am: the framework's details are not readable (yet)")
		}
		failed = err != nil
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// poll asks once, within the interval, and keeps the answer; a failure keeps the last details and
// says why beside them.
func (w *frameworkWatch) poll(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, max(w.interval, time.Second))
	defer cancel()
	d, err := w.details(ctx)
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		if w.last == nil {
			w.last = &contract.FrameworkStatus{Title: w.title}
		}
		w.last.Error = text.Cut(err.Error(), contract.MaxDetailBytes)
		return err
	}
	w.last = &contract.FrameworkStatus{Title: w.title, Details: boundDetails(d), At: w.now().UTC()}
	if w.series != nil {
		w.last.Series = boundSeries(w.series())
	}
	return nil
}

// boundSeries cuts a framework's series to contract.MaxSeries, each to its newest
// contract.MaxSeriesPoints, names and notes to a detail's bounds, into slices of its own (the
// status' copies share them: nothing changes them after).
func boundSeries(ss []contract.FrameworkSeries) []contract.FrameworkSeries {
	if len(ss) > contract.MaxSeries {
		ss = ss[:contract.MaxSeries]
	}
	out := make([]contract.FrameworkSeries, len(ss))
	for i, s := range ss {
		pts := s.Points
		if len(pts) > contract.MaxSeriesPoints {
			pts = pts[len(pts)-contract.MaxSeriesPoints:]
		}
		out[i] = contract.FrameworkSeries{Name: text.Cut(s.Name, contract.MaxDetailBytes), Points: make([]contract.SeriesPoint, len(pts))}
		for j, p := range pts {
			out[i].Points[j] = contract.SeriesPoint{At: p.At.UTC(), Value: p.Value, Note: text.Cut(p.Note, contract.MaxDetailNameBytes)}
		}
	}
	return out
}

// status is a copy of the last answer (nil before the first, or for a nil watch).
func (w *frameworkWatch) status() *contract.FrameworkStatus {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.last == nil {
		return nil
	}
	c := *w.last
	c.Details = append([]contract.Detail(nil), w.last.Details...)
	c.Series = append([]contract.FrameworkSeries(nil), w.last.Series...)
	return &c
}

// boundDetails cuts a framework's details to contract.MaxDetails, each name and value to their
// bounds: they are served to every reader of the status and drawn by the page.
func boundDetails(d []contract.Detail) []contract.Detail {
	if len(d) > contract.MaxDetails {
		d = d[:contract.MaxDetails]
	}
	out := make([]contract.Detail, len(d))
	for i, x := range d {
		out[i] = contract.Detail{Name: text.Cut(x.Name, contract.MaxDetailNameBytes), Value: text.Cut(x.Value, contract.MaxDetailBytes)}
	}
	return out
}

// frameworkEmitter is framework.AMStart.Emit: a framework's event goes to the AM's log as it is,
// info when it names no severity, its message cut to the bound of a detail's tenfold. Until release
// is called (config.ReleaseEvents: the first registration restored the previous attempt's events)
// the events are held, at most maxHeldEvents, stamped with the time they were emitted: a later
// attempt's framework speaks at its start (the checkpoint it restores), and its words belong after
// the history the attempt restores, not before it, where the status's latest events would not show
// them.
func frameworkEmitter(log *events.Log) (emit func(contract.Event), release func()) {
	var mu sync.Mutex
	var held []contract.Event
	open := false
	emit = func(e contract.Event) {
		if e.Severity == "" {
			e.Severity = contract.SeverityInfo
		}
		e.ID, e.Time = 0, time.Now().UTC()
		e.Message = text.Cut(e.Message, 10*contract.MaxDetailBytes)
		mu.Lock()
		defer mu.Unlock()
		if !open {
			if len(held) < maxHeldEvents {
				held = append(held, e)
			}
			return
		}
		log.Add(e)
	}
	release = func() {
		mu.Lock()
		defer mu.Unlock()
		for _, e := range held {
			log.Add(e)
		}
		held, open = nil, true
	}
	return emit, release
}

// maxHeldEvents bounds what a framework says before the AM registered.
const maxHeldEvents = 100
