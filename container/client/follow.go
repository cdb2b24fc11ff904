package client

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/yarnrpc"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// FollowResult is how following an application ended.
type FollowResult struct {
	Report *hadooppb.ApplicationReportProto // the last report (terminal unless Err or interrupted)
	Err    error
	// shown is what the event stream printed (once.go): Outcome leaves it out.
	shown *shownText
}

// Succeeded reports whether the application FINISHED with final status SUCCEEDED.
func (f FollowResult) Succeeded() bool {
	return f.Report.GetYarnApplicationState() == hadooppb.YarnApplicationStateProto_FINISHED &&
		f.Report.GetFinalApplicationStatus() == hadooppb.FinalApplicationStatusProto_APP_SUCCEEDED
}

// Outcome says how the application ended, in one line: "<id> ended FAILED with final status FAILED:
// <diagnostics>", or "<id>: final status SUCCEEDED".
func (f FollowResult) Outcome() string {
	r := f.Report
	id := yarnrpc.FormatApplicationID(r.GetApplicationId())
	if f.Succeeded() {
		return id + ": final status SUCCEEDED"
	}
	d := Diagnostics(r)
	if d == "" {
		d = "(no diagnostics)"
	} else if f.shown.seenReason(d) {
		d = firstLineOf(d) + " (in full above)"
	} else {
		d = f.shown.unseen(d)
		d += logsCommands(id, d)
	}
	return fmt.Sprintf("%s ended %s with final status %s: %s", id, StateName(r.GetYarnApplicationState()), FinalName(r.GetFinalApplicationStatus()), d)
}

// maxLogsCommands bounds the logs commands an outcome names (the diagnostics list each failure).
const maxLogsCommands = 8

// logsCommands names the logs command of each failed container the diagnostics d list ("- <container>
// on ..." lines) and the event stream did not show: an application that ended before its follower
// read a single event (a worker that fails at once) still says where its logs are.
func logsCommands(app, d string) string {
	var b strings.Builder
	seen := map[string]bool{}
	for _, l := range strings.Split(d, "\n") {
		rest, ok := strings.CutPrefix(l, "- ")
		if !ok {
			continue
		}
		c, _, _ := strings.Cut(rest, " ")
		if !strings.HasPrefix(c, "container_") || seen[c] {
			continue
		}
		if len(seen) == maxLogsCommands {
			b.WriteString("\n  (the logs of the other containers: yarn-am logs " + app + ")")
			break
		}
		seen[c] = true
		fmt.Fprintf(&b, "\n  its logs: yarn-am logs %s --container %s", app, c)
	}
	return b.String()
}

// Follow polls the RM (and the AM while it runs) about once a second and prints what changed, and
// the AM's events as they happen, until the application reaches a terminal state or ctx ends. The AM
// is read through reader: with the owner's key the failed workers' stderr tails are shown (amread.go);
// a nil reader reads anonymously.
func Follow(ctx context.Context, rm *yarnrpc.ApplicationClient, appID *hadooppb.ApplicationIdProto, reader *AMReader, w io.Writer) FollowResult {
	id := yarnrpc.FormatApplicationID(appID)
	out := &lockedWriter{w: w}
	events := &eventFollower{out: out, app: id}
	defer events.stop()
	var (
		last      *hadooppb.ApplicationReportProto
		lastState string
		lastDiag  string
		lastURL   string
		lastCount contract.Counts
		seenCount bool
		lastAMSt  contract.AMState
		lastAMDg  string
		lastCt    = map[string]string{}
		failures  int
	)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		callCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
		r, err := rm.GetApplicationReport(callCtx, appID)
		cancel()
		if ctx.Err() != nil {
			return FollowResult{Report: last, Err: ctx.Err()}
		}
		if err != nil {
			failures++
			if failures >= 30 {
				return FollowResult{Report: last, Err: err}
			}
		} else {
			failures = 0
			last = r
			state := StateName(r.GetYarnApplicationState())
			if state != lastState {
				line := fmt.Sprintf("%s %s %s", Stamp(), id, state)
				if state == "ACCEPTED" || state == "SUBMITTED" {
					line += " (waiting for the ApplicationMaster's container)"
				}
				fmt.Fprintln(out, line)
				lastState = state
			}
			if d := Diagnostics(r); d != "" && d != lastDiag && !IsTerminal(r.GetYarnApplicationState()) {
				fmt.Fprintf(out, "%s   RM: %s\n", Stamp(), Sanitize(shorten(firstLineOf(d), 240)))
				lastDiag = d
			}
			if u := r.GetTrackingUrl(); u != "" && u != "N/A" && u != lastURL && r.GetYarnApplicationState() == hadooppb.YarnApplicationStateProto_RUNNING {
				fmt.Fprintf(out, "%s   tracking URL %s\n", Stamp(), Sanitize(u))
				lastURL = u
			}
			if base := AMURL(r); base != "" {
				actx, acancel := context.WithTimeout(ctx, 3*time.Second)
				view, aerr := reader.Status(actx, base)
				acancel()
				events.start(ctx, base, reader) // after the status: it says where the owner's stream is
				if aerr == nil {
					am := view.Status
					if !seenCount || am.Counts != lastCount {
						fmt.Fprintf(out, "%s   containers: %s\n", Stamp(), CountsLine(am.Counts))
						lastCount, seenCount = am.Counts, true
					}
					if am.State != "" && am.State != lastAMSt {
						fmt.Fprintf(out, "%s   AM: %s\n", Stamp(), Sanitize(string(am.State)))
						lastAMSt = am.State
					}
					if am.Diagnostics != "" && am.Diagnostics != lastAMDg {
						fmt.Fprintf(out, "%s   AM: %s\n", Stamp(), Sanitize(firstLineOf(am.Diagnostics)))
						lastAMDg = am.Diagnostics
					}
					for _, ct := range am.Containers {
						if events.streaming() {
							break // the event stream says the same, and more
						}
						line := fmt.Sprintf("%s on %s %s", ct.ID, ct.Node, ct.State)
						if t := InfosText(ct.Infos); t != "" {
							line += " " + t
						}
						if ct.ExitStatus != nil {
							line += fmt.Sprintf(" exit %d", *ct.ExitStatus)
						}
						d := firstLineOf(ct.Diagnostics)
						if ct.StderrTail != "" { // the worker's last line says most (once.go)
							d = lastLineOf(ct.StderrTail)
						}
						failed := ct.ExitStatus != nil && *ct.ExitStatus != 0
						if d != "" && failed {
							line += ": " + d
						}
						if lastCt[ct.ID] != line {
							fmt.Fprintf(out, "%s   container %s\n", Stamp(), Sanitize(line))
							lastCt[ct.ID] = line
							if failed && ct.StderrTail == "" && !view.Owner && workerFailed(ct.ExitClass) {
								events.withheld.say(out, Stamp(), view.Withheld)
							}
						}
					}
				}
			}
			if IsTerminal(r.GetYarnApplicationState()) {
				// The AM emits its finished event after the RM took the final status, so the RM can
				// report the end first: let the stream bring that event (or end) before it is stopped.
				events.drain(finishedGrace)
				events.stop() // every event printed before the outcome
				return FollowResult{Report: r, shown: &events.shown}
			}
		}
		select {
		case <-ctx.Done():
			return FollowResult{Report: last, Err: ctx.Err()}
		case <-tick.C:
		}
	}
}

// lockedWriter serialises the lines of the status poller and the event stream.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// eventFollower prints the AM's events from its Server-Sent Events stream while the application
// runs. Until the first event arrives (or if the AM has no stream), Follow prints container lines
// from polling the status instead.
type eventFollower struct {
	out      io.Writer
	app      string
	base     string
	cancel   context.CancelFunc
	done     chan struct{}
	finished chan struct{} // closed when the stream brought the finished event
	mu       sync.Mutex
	got      bool
	shown    shownText
	// withheld says once why a failed worker's stderr tail is missing (amread.go); why is the reason
	// for the stream that runs, nil for the owner's.
	withheld withheldOnce
	why      error
}

func (f *eventFollower) streaming() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.got
}

// plainStreamHTTP reads anonymous event streams: no proxy (the AM is on the cluster's network), no
// overall timeout (a stream lasts).
var plainStreamHTTP = &http.Client{Transport: &http.Transport{Proxy: nil}}

// start connects to the AM at base (once per AM address; a new attempt's AM gets a new stream),
// through r's client: the owner's over HTTPS with the key, else the plain tracking URL (nil r:
// anonymously).
func (f *eventFollower) start(ctx context.Context, base string, r *AMReader) {
	if base == f.base {
		return
	}
	c, why, _, ok := r.eventsClient(base)
	if !ok {
		return // the owner's reader has not found the HTTPS API yet: try again at the next poll
	}
	f.stop()
	f.base, f.why = base, why
	sctx, cancel := context.WithCancel(ctx)
	f.cancel, f.done, f.finished = cancel, make(chan struct{}), make(chan struct{})
	finished := f.finished
	go func() {
		defer close(f.done)
		s := c.Events(sctx, 0)
		s.GiveUpAfter = 10 * time.Second
		defer s.Close()
		for {
			e, err := s.Next()
			if err != nil {
				return
			}
			f.mu.Lock()
			f.got = true
			f.mu.Unlock()
			f.shown.printEvent(f.out, e.Time.Local().Format("15:04:05"), e)
			if e.Type == contract.EventFinished {
				select {
				case <-finished:
				default:
					close(finished)
				}
			}
			if e.Type == contract.EventCompleted && e.Container != "" && workerFailed(e.ExitClass) {
				fmt.Fprintf(f.out, "%s     its logs: yarn-am logs %s --container %s\n", e.Time.Local().Format("15:04:05"), f.app, e.Container)
				if e.StderrTail == "" {
					f.withheld.say(f.out, e.Time.Local().Format("15:04:05"), f.why)
				}
			}
		}
	}()
}

// finishedGrace bounds how long Follow waits, once the RM reports the end, for the AM's finished
// event on a stream that is still open.
const finishedGrace = 5 * time.Second

// drain waits until the stream printed the AM's finished event or ended, at most grace; no wait
// without a stream that delivered anything (an AM that never served one has no event to bring).
func (f *eventFollower) drain(grace time.Duration) {
	if f.cancel == nil || !f.streaming() {
		return
	}
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-f.finished:
	case <-f.done:
	case <-t.C:
	}
}

// stop ends the stream and waits for its printer.
func (f *eventFollower) stop() {
	if f.cancel != nil {
		f.cancel()
		<-f.done
		f.cancel = nil
	}
}

// workerFailed: exits whose reason is in the container's own logs (not preemption, loss or kills).
func workerFailed(c contract.ExitClass) bool {
	switch c {
	case contract.ExitFailed, contract.ExitDiscoveryFailed, contract.ExitConfigError, contract.ExitStartFailed,
		contract.ExitMemoryExceeded, contract.ExitExcessLogs:
		return true
	}
	return false
}
