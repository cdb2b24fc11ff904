package flink

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strings"
	"syscall"

	"github.com/yarn-am/yarn-am/framework/flink/flinkdist"
	"github.com/yarn-am/yarn-am/internal/stderrtail"
)

// superviseTaskManager runs the TaskManager's JVM as this process's child, its stdout and stderr
// copied into out and errOut (the rolling taskmanager.out and .err, docs/flink.md#logs-that-roll),
// and returns its exit code as the launcher would read it (128+n for a signal n).
//
// The JVM was exec'd in place before its output had to be bounded; as a child it keeps what that
// gave: it is in the launcher's process group (the NodeManager's SIGTERM of the container reaches
// it), it dies with this process (parent-death signal), and the signals this process gets are
// passed on (SIGTERM, SIGINT, SIGHUP; a second SIGTERM to a JVM already stopping is harmless). A JVM
// that fails leaves the last lines of its stderr on this process's stderr, which the launcher keeps
// for the failure's diagnostics (docs/running.md#the-workers-own-error).
func superviseTaskManager(java string, p *flinkdist.Process, out, errOut io.Writer, stderr io.Writer) int {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	defer signal.Stop(sigs)
	tail := &stderrtail.Tail{}
	cmd := exec.Command(java, p.Argv[1:]...)
	cmd.Args[0] = p.Argv[0]
	cmd.Env = append(os.Environ(), p.Env...)
	cmd.Stdout = out
	cmd.Stderr = io.MultiWriter(errOut, tail)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	// The parent-death signal fires when the thread that started the child ends: keep this one.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(stderr, "yarn-am flink-taskmanager: starting the TaskManager's JVM %s: %v\n", java, err)
		return 1
	}
	done := make(chan struct{})
	go func() {
		for {
			select {
			case s := <-sigs:
				_ = cmd.Process.Signal(s)
			case <-done:
				return
			}
		}
	}()
	err := cmd.Wait()
	close(done)
	code := 0
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code = 128 + int(ws.Signal())
		}
	default:
		fmt.Fprintf(stderr, "yarn-am flink-taskmanager: waiting for the TaskManager's JVM: %v\n", err)
		return 1
	}
	if code != 0 {
		// Its last lines as the JVM wrote them, its own notices too (JAVA_TOOL_OPTIONS): the owner's
		// status shows the container's stderr tail, and a killed JVM's last words are there.
		if lines := rawLines(tail); lines != "" {
			fmt.Fprintf(stderr, "yarn-am flink-taskmanager: the TaskManager's JVM exited with code %d; its stderr (taskmanager.err) ends: %s\n", code, lines)
		} else {
			fmt.Fprintf(stderr, "yarn-am flink-taskmanager: the TaskManager's JVM exited with code %d (its log: taskmanager.log)\n", code)
		}
	}
	return code
}

// rawLines are the tail's non-empty lines joined by " | ".
func rawLines(t *stderrtail.Tail) string {
	var keep []string
	for _, l := range strings.Split(t.Lines(), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, " | ")
}
