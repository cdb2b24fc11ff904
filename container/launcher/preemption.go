package launcher

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/contract/amtls"
	"github.com/yarn-am/yarn-am/internal/atomicfile"
	"github.com/yarn-am/yarn-am/internal/proc"
)

// Preemption warnings (docs/running.md#preemption): while the worker runs, the launcher long-polls
// the AM for its container's preemption notice (GET <report URL><id>/notices, with the secret over
// the pinned HTTPS client). The AM answers the moment it reads the ResourceManager's warning, so the
// worker learns within one HTTPS round trip of the AM's heartbeat that carried it, instead of at the
// next liveness message (every contract.LivenessInterval). On a notice the launcher writes
// contract.PreemptionFileName into the container's working directory (a temporary file renamed into
// place, mode 0600: a reader never sees half of it) and sends the worker
// taskexecutor.preemption-signal.
//
// Who gets the signal: the worker and its descendants, each only if it catches the signal (a handler
// is installed: the SigCgt mask in /proc/<pid>/status). Not a process group: the worker shares the
// container's process group with this launcher and YARN's launch shell (runWorker), and not a process
// that does not catch it, because SIGUSR1's default action ends a process: the `bash -c` that runs the
// job's command, or torchrun's agent, would die of the warning. So a training script that installs a
// handler gets the signal however it is started (directly, under bash, under torchrun), and a
// process tree in which nothing catches it gets the notice file only (logged).

// Noticer waits for a container's preemption notice. *HTTPReporter is one.
type Noticer interface {
	// WaitNotice waits at most wait for the notice; nil and no error when none came.
	WaitNotice(ctx context.Context, containerID string, wait time.Duration) (*contract.PreemptionNotice, error)
}

// Preemption is what the launcher does with a preemption notice.
type Preemption struct {
	Noticer Noticer
	// Signal is sent to the worker on a notice; 0 sends none (taskexecutor.preemption-signal = none).
	Signal syscall.Signal
	// Wait is one long poll's bound (0: contract.DefaultNoticeWait); Retry the first pause after a
	// failed poll, doubled up to maxNoticeRetry (0: one second).
	Wait, Retry time.Duration
}

// maxNoticeRetry bounds the pause between failed polls: a warning gives the worker seconds, and an AM
// that restarts is back within them.
const maxNoticeRetry = 5 * time.Second

// preemptionSignals maps the valid names of taskexecutor.preemption-signal (contract.PreemptionSignals)
// to their signals.
var preemptionSignals = map[string]syscall.Signal{
	contract.DefaultPreemptionSignal: syscall.SIGUSR1, "SIGUSR2": syscall.SIGUSR2, "SIGHUP": syscall.SIGHUP,
	"SIGINT": syscall.SIGINT, "SIGWINCH": syscall.SIGWINCH, "SIGURG": syscall.SIGURG,
}

// ParsePreemptionSignal reads a value of taskexecutor.preemption-signal (as the AM passes it in
// contract.EnvPreemptionSignal): "" is the default, contract.PreemptionSignalNone is 0.
func ParsePreemptionSignal(s string) (syscall.Signal, error) {
	v := strings.TrimSpace(s)
	switch v {
	case "":
		v = contract.DefaultPreemptionSignal
	case contract.PreemptionSignalNone:
		return 0, nil
	}
	if sig, ok := preemptionSignals[v]; ok {
		return sig, nil
	}
	shown := s
	if len(shown) > 40 {
		shown = shown[:40] + "..."
	}
	valid := slices.Sorted(func(yield func(string) bool) {
		for k := range preemptionSignals {
			if !yield(k) {
				return
			}
		}
	})
	return 0, fmt.Errorf("taskexecutor.preemption-signal (%s) = %q: use one of %s, or %q", contract.EnvPreemptionSignal, shown,
		strings.Join(valid, ", "), contract.PreemptionSignalNone)
}

// preemptionFile is the notice file's absolute path in dir.
func preemptionFile(dir string) string {
	p, err := filepath.Abs(filepath.Join(dir, contract.PreemptionFileName))
	if err != nil {
		return filepath.Join(dir, contract.PreemptionFileName)
	}
	return p
}

// start watches for the notice in the background; the returned function stops the watch and waits
// for it.
func (p *Preemption) start(ctx context.Context, containerID, dir string, pid int, log logrus.FieldLogger) func() {
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); p.watch(wctx, containerID, dir, pid, log) }()
	return func() { cancel(); <-done }
}

// watch long-polls for the container's notice until ctx ends; on one it writes the notice
// file into dir and signals pid, once.
func (p *Preemption) watch(ctx context.Context, containerID, dir string, pid int, log logrus.FieldLogger) {
	wait, pause := p.Wait, p.Retry
	if wait <= 0 {
		wait = contract.DefaultNoticeWait
	}
	if pause <= 0 {
		pause = time.Second
	}
	retry, failing := pause, false
	for ctx.Err() == nil {
		n, err := p.Noticer.WaitNotice(ctx, containerID, wait)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			if !failing {
				log.WithError(err).Warn("yarn-am launch: waiting for preemption notices from the AM failed; retrying")
				failing = true
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(retry):
			}
			retry = min(2*retry, maxNoticeRetry)
			continue
		}
		retry, failing = pause, false
		if n != nil {
			p.deliver(n, dir, pid, log)
			return
		}
	}
}

// deliver writes the notice file and signals the worker.
func (p *Preemption) deliver(n *contract.PreemptionNotice, dir string, pid int, log logrus.FieldLogger) {
	f := logrus.Fields{"deadline": n.Deadline.Format(time.RFC3339Nano), "left": time.Until(n.Deadline).Round(time.Millisecond).String(), "named": n.Containers}
	path, err := WritePreemptionFile(dir, n)
	if err != nil {
		log.WithError(err).Error("yarn-am launch: cannot write the preemption notice file; the worker gets the signal only")
	} else {
		f["file"] = path
	}
	if p.Signal != 0 {
		f["signal"] = unixName(p.Signal)
		var sent []int
		for _, q := range catchers(pid, p.Signal) {
			if err := syscall.Kill(q, p.Signal); err == nil {
				sent = append(sent, q)
			} else if !errors.Is(err, syscall.ESRCH) {
				log.WithError(err).WithField("pid", q).Warn("yarn-am launch: cannot signal a worker process of its preemption")
			}
		}
		f["signalled_pids"] = sent
		if len(sent) == 0 {
			log.WithField("signal", unixName(p.Signal)).Warn("yarn-am launch: no process of the worker catches the preemption signal; it gets the notice file only")
		}
	}
	log.WithFields(f).Warn("yarn-am launch: the ResourceManager will preempt this container; the worker was told")
}

// catchers lists root and its descendants that catch sig (root first), from /proc.
func catchers(root int, sig syscall.Signal) []int {
	children := map[int][]int{}
	pids, _ := proc.Pids()
	for _, pid := range pids {
		if st, err := proc.ReadStat(pid); err == nil {
			children[st.PPid] = append(children[st.PPid], pid)
		}
	}
	var out []int
	seen := map[int]bool{}
	for queue := []int{root}; len(queue) > 0; queue = queue[1:] {
		p := queue[0]
		if seen[p] {
			continue
		}
		seen[p] = true
		if catches(p, sig) {
			out = append(out, p)
		}
		queue = append(queue, children[p]...)
	}
	return out
}

// catches reads whether process pid has a handler for sig (the SigCgt mask of /proc/<pid>/status).
func catches(pid int, sig syscall.Signal) bool {
	v, ok, err := proc.StatusField(pid, "SigCgt")
	if err != nil || !ok {
		return false
	}
	mask, err := strconv.ParseUint(v, 16, 64)
	return err == nil && mask&(1<<(uint(sig)-1)) != 0
}

// unixName is a signal's name as taskexecutor.preemption-signal spells it.
func unixName(s syscall.Signal) string {
	for k, v := range preemptionSignals {
		if v == s {
			return k
		}
	}
	return s.String()
}

// WritePreemptionFile writes n as JSON to contract.PreemptionFileName in dir: a temporary file in
// the same directory, mode 0600, synced, renamed into place (atomicfile). It returns the file's
// absolute path.
func WritePreemptionFile(dir string, n *contract.PreemptionNotice) (string, error) {
	data, err := json.MarshalIndent(n, "", "  ")
	if err != nil {
		return "", err
	}
	path := preemptionFile(dir)
	return path, atomicfile.Write(path, append(data, '\n'), 0o600, atomicfile.Sync())
}

// WaitNotice is one long poll of GET <BaseURL><id>/notices: the notice (200), nil (204: the wait
// ended), or an error.
func (h *HTTPReporter) WaitNotice(ctx context.Context, containerID string, wait time.Duration) (*contract.PreemptionNotice, error) {
	if containerID == "" {
		return nil, errors.New("notices: no container id (CONTAINER_ID is unset)")
	}
	// Through the locator, like every other request of the launcher: after an AM restart the poll
	// follows the new attempt (docs/running.md#kept-taskexecutors-find-the-new-attempt).
	u := h.Locator.URL(h.BaseURL + containerID + contract.NoticesPath + "?" + contract.NoticeWaitParam + "=" + url.QueryEscape(wait.String()))
	if err := amtls.RequireHTTPS(u, contract.EnvReportURL); err != nil {
		return nil, err
	}
	if h.Client == nil {
		return nil, errors.New("notices: no HTTP client pinned to the AM's TLS authority; refusing to send the application secret")
	}
	// The reporter's client gives up after a few seconds; the long poll needs its wait and a margin.
	client := *h.Client
	client.Timeout = wait + 15*time.Second
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("notices: %q is not a valid URL (%s): %w", u, contract.EnvReportURL, err)
	}
	resp, body, _, err := h.Locator.Send(&client, req, h.Secret, 64<<10)
	if resp == nil {
		return nil, err
	}
	switch resp.StatusCode {
	case http.StatusOK:
		var n contract.PreemptionNotice
		if err := json.Unmarshal(body, &n); err != nil {
			return nil, fmt.Errorf("notices at %s: not a preemption notice: %w", u, err)
		}
		return &n, nil
	case http.StatusNoContent:
		return nil, nil
	}
	return nil, fmt.Errorf("notices at %s: the AM answered %s: %s", u, resp.Status, strings.TrimSpace(string(body)))
}

// PreemptionFromEnv is the launcher's preemption handling in a container: notices from n, the signal
// of contract.EnvPreemptionSignal (set by the AM from the job). A value the launcher does not know
// is logged with the valid ones and the default signal is sent instead (the job file was checked at
// submit; this is a launcher older than the AM).
func PreemptionFromEnv(n Noticer, log logrus.FieldLogger) *Preemption {
	sig, err := ParsePreemptionSignal(os.Getenv(contract.EnvPreemptionSignal))
	if err != nil {
		log.WithError(err).Error("yarn-am launch: sending " + contract.DefaultPreemptionSignal + " on a preemption notice instead")
		sig = preemptionSignals[contract.DefaultPreemptionSignal]
	}
	return &Preemption{Noticer: n, Signal: sig}
}
