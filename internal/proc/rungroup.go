package proc

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// OutputGrace is how long RunGroup waits, once the program has exited and its process group is
// killed, for its output pipes to close before it looks for other holders
// (TestRunGroupKillsAHolderOutsideTheGroup).
const OutputGrace = 300 * time.Millisecond

// holderGrace is how long RunGroup waits for the pipes to close once it killed their holders, before
// it closes its own ends.
const holderGrace = 2 * time.Second

// Holder is a process outside a RunGroup program's group that still held the program's output after
// the group was killed (a child that called setsid); RunGroup killed it, and with it its process group
// (Killed "group") or its session (Killed "session") where that is not this process's own.
type Holder struct {
	Pid, PGrp, Session int
	Killed             string // "session", "group" or "" (the process alone)
}

// String says what was killed: "process 12 (session 12, killed with all of it)".
func (h Holder) String() string {
	switch h.Killed {
	case "session":
		return fmt.Sprintf("process %d (session %d, killed with all of it)", h.Pid, h.Session)
	case "group":
		return fmt.Sprintf("process %d (process group %d, killed with all of it)", h.Pid, h.PGrp)
	}
	return fmt.Sprintf("process %d", h.Pid)
}

// GroupRun is how a RunGroup program ended.
type GroupRun struct {
	// Err is cmd.Wait's error: nil for exit 0, an *exec.ExitError otherwise.
	Err error
	// Stopped is the reason stop gave when it killed the group before the program ended.
	Stopped string
	// Cancelled: ctx ended before the program did, and the group was killed.
	Cancelled bool
	// Holders are the processes outside the group that held the output and were killed.
	Holders []Holder
	// Held: the output was still open after that (a holder this user may not signal); RunGroup closed
	// its own ends, and what was read until then is all there is.
	Held bool
}

// RunGroup runs cmd (not started; RunGroup sets its Stdout, Stderr and SysProcAttr) in a process group
// of its own, copying its stdout and stderr into the writers (nil: discarded) through pipes of this
// process, not exec's copying goroutines, so that it knows when the program itself ended. The group is
// killed (SIGKILL) when ctx ends or stop yields a reason (a writer's bound reached) — and always once
// the program has exited, so a tool that leaves a child behind never leaves it running. Whoever still
// holds the output OutputGrace after that (a child that left the group with setsid) is found through
// /proc, killed with its group or session, and listed; if the output is still open after that, RunGroup
// closes its own ends. It returns when the output has been read to its end. The error is the start's
// (the program missing, a pipe that could not be made); how the program ended is in GroupRun.
func RunGroup(ctx context.Context, cmd *exec.Cmd, stdout, stderr io.Writer, stop <-chan string) (GroupRun, error) {
	out, err := startPipe(stdout)
	if err != nil {
		return GroupRun{}, err
	}
	defer out.r.Close()
	errp, err := startPipe(stderr)
	if err != nil {
		out.w.Close()
		<-out.done
		return GroupRun{}, err
	}
	defer errp.r.Close()
	cmd.Stdout, cmd.Stderr = out.w, errp.w
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = cmd.Start()
	out.w.Close()
	errp.w.Close()
	if err != nil {
		<-out.done
		<-errp.done
		return GroupRun{}, err
	}
	pgid := cmd.Process.Pid
	done := make(chan struct{})
	var run GroupRun
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		select {
		case <-ctx.Done():
			run.Cancelled = true
		case run.Stopped = <-stop:
		case <-done:
			return
		}
		_ = KillGroup(pgid, syscall.SIGKILL)
	}()
	run.Err = cmd.Wait()
	close(done)
	<-stopped
	// Whatever the program left running in its group (a background child holding its output) is not
	// part of the run: end it. The group id cannot have been reused: the kernel keeps a pid in use while
	// a group of that id has members, and a group without members receives nothing.
	_ = KillGroup(pgid, syscall.SIGKILL)
	run.Holders, run.Held = finishPipes([]*pipe{out, errp})
	return run, nil
}

// pipe copies one output pipe of a RunGroup program into its writer.
type pipe struct {
	r, w *os.File
	ino  uint64
	done chan struct{}
}

func startPipe(dst io.Writer) (*pipe, error) {
	if dst == nil {
		dst = io.Discard
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(int(r.Fd()), &st); err != nil {
		r.Close()
		w.Close()
		return nil, err
	}
	p := &pipe{r: r, w: w, ino: st.Ino, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		_, _ = io.Copy(dst, r)
	}()
	return p, nil
}

// finishPipes waits until the pipes have been read to their end. Pipes still open OutputGrace after
// the program's group was killed are held by processes outside the group: each is killed with its
// session or group, where that is not this process's own. If they are still open after that (a
// holder this user may not signal), they are closed on this side (held true).
func finishPipes(pipes []*pipe) (killed []Holder, held bool) {
	allDone := func(d time.Duration) bool {
		t := time.NewTimer(d)
		defer t.Stop()
		for _, p := range pipes {
			select {
			case <-p.done:
			case <-t.C:
				return false
			}
		}
		return true
	}
	if allDone(OutputGrace) {
		return nil, false
	}
	inos := map[uint64]bool{}
	for _, p := range pipes {
		inos[p.ino] = true
	}
	self, _ := ReadStat(os.Getpid())
	for _, h := range pipeHolders(inos) {
		_ = syscall.Kill(h.Pid, syscall.SIGKILL)
		switch {
		case h.Session > 0 && h.Session != self.Session:
			KillSession(h.Session, syscall.SIGKILL)
			h.Killed = "session"
		case h.PGrp > 0 && h.PGrp != self.PGrp:
			_ = KillGroup(h.PGrp, syscall.SIGKILL)
			h.Killed = "group"
		}
		killed = append(killed, h)
	}
	if !allDone(holderGrace) {
		for _, p := range pipes {
			p.r.Close()
			<-p.done
		}
		held = true
	}
	return killed, held
}

// pipeHolders lists the processes (other than this one) that have a descriptor open on one of the
// pipes with the given inodes (only processes this user may inspect are seen).
func pipeHolders(inos map[uint64]bool) []Holder {
	pids, err := Pids()
	if err != nil {
		return nil
	}
	self := os.Getpid()
	var hs []Holder
	for _, pid := range pids {
		if pid == self {
			continue
		}
		for _, ino := range PipeInodes(pid) {
			if inos[ino] {
				h := Holder{Pid: pid}
				if st, err := ReadStat(pid); err == nil {
					h.PGrp, h.Session = st.PGrp, st.Session
				}
				hs = append(hs, h)
				break
			}
		}
	}
	return hs
}
