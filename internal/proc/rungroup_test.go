package proc

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A program that exits 0 leaving a child in its group and one in a session of its own, both holding
// its output: RunGroup returns its output, kills both, and names the one outside the group.
func TestRunGroupKillsAHolderOutsideTheGroup(t *testing.T) {
	dir := t.TempDir()
	ready := filepath.Join(dir, "ready")
	script := `mkfifo "` + ready + `" || exit 9
sleep 300 &
echo $! >"` + dir + `/group"
setsid sh -c 'echo $$ >"` + dir + `/session"; echo up >"` + ready + `"; exec sleep 300' &
read -r _ <"` + ready + `"
echo printed
echo complained >&2
`
	var stdout, stderr bytes.Buffer
	run, err := RunGroup(context.Background(), exec.Command("sh", "-c", script), &stdout, &stderr, nil)
	if err != nil {
		t.Fatal(err)
	}
	pids := map[string]int{}
	for _, name := range []string{"group", "session"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		pids[name], _ = strconv.Atoi(strings.TrimSpace(string(b)))
	}
	t.Cleanup(func() {
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	if run.Err != nil || run.Stopped != "" || run.Cancelled || run.Held || stdout.String() != "printed\n" || stderr.String() != "complained\n" {
		t.Fatalf("run %+v, stdout %q, stderr %q", run, stdout.String(), stderr.String())
	}
	if len(run.Holders) != 1 || run.Holders[0].Pid != pids["session"] || run.Holders[0].Killed != "session" {
		t.Fatalf("holders %+v, want the session child %d killed with its session", run.Holders, pids["session"])
	}
	want := "process " + strconv.Itoa(pids["session"]) + " (session " + strconv.Itoa(pids["session"]) + ", killed with all of it)"
	if got := run.Holders[0].String(); got != want {
		t.Errorf("holder %q, want %q", got, want)
	}
	for name, pid := range pids {
		waitDead(t, name, pid)
	}
}

// stop and ctx end a program that does not end by itself, with its group.
func TestRunGroupStops(t *testing.T) {
	stop := make(chan string, 1)
	stop <- "too much output"
	run, err := RunGroup(context.Background(), exec.Command("sleep", "300"), nil, nil, stop)
	if err != nil || run.Stopped != "too much output" || run.Cancelled || run.Err == nil {
		t.Fatalf("stopped: %+v, %v", run, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	run, err = RunGroup(ctx, exec.Command("sleep", "300"), nil, nil, nil)
	if err != nil || !run.Cancelled || run.Err == nil {
		t.Fatalf("cancelled: %+v, %v", run, err)
	}
	if _, err := RunGroup(context.Background(), exec.Command(filepath.Join(t.TempDir(), "missing")), nil, nil, nil); err == nil {
		t.Fatal("a missing program started")
	}
}

// waitDead waits (10 s at most: SIGKILL is delivered asynchronously) until pid is gone or a zombie.
func waitDead(t *testing.T, name string, pid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, err := ReadStat(pid)
		if err != nil || st.State == "Z" || st.State == "X" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the %s child %d is still running (%s)", name, pid, st.State)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
