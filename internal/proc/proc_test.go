package proc

import (
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestParseStat(t *testing.T) {
	for _, c := range []struct {
		line string
		want Stat
	}{
		{"42 (bash) S 1 42 42 34816 0", Stat{Pid: 42, Comm: "bash", State: "S", PPid: 1, PGrp: 42, Session: 42}},
		{"7 (my worker) R 3 5 6 0 -1", Stat{Pid: 7, Comm: "my worker", State: "R", PPid: 3, PGrp: 5, Session: 6}},
		// A command may name itself anything, parentheses and all: the fields follow the last ')'.
		{"9 (a) S 1 (b)) Z 8 9 10 0", Stat{Pid: 9, Comm: "a) S 1 (b)", State: "Z", PPid: 8, PGrp: 9, Session: 10}},
	} {
		got, err := ParseStat(c.line)
		if err != nil || got != c.want {
			t.Errorf("ParseStat(%q) = %+v, %v; want %+v", c.line, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "42 bash S 1 2 3", "42 (bash) S 1", "x (bash) S 1 2 3", "42 (bash) S one 2 3"} {
		if _, err := ParseStat(bad); err == nil {
			t.Errorf("ParseStat(%q) = nil error", bad)
		}
	}
}

func TestReadStatOfThisProcess(t *testing.T) {
	st, err := ReadStat(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	pgrp := syscall.Getpgrp()
	sid, _ := unix.Getsid(0)
	if st.Pid != os.Getpid() || st.PPid != os.Getppid() || st.PGrp != pgrp || st.Session != sid || st.Comm == "" {
		t.Errorf("ReadStat(self) = %+v; want pid %d, ppid %d, pgrp %d, session %d", st, os.Getpid(), os.Getppid(), pgrp, sid)
	}
	if _, err := ReadStat(-5); err == nil {
		t.Error("ReadStat of no process: nil error")
	}
}

func TestPidsListsThisProcess(t *testing.T) {
	pids, err := Pids()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(pids, os.Getpid()) {
		t.Errorf("Pids() lacks this process %d", os.Getpid())
	}
}

func TestStatusField(t *testing.T) {
	for _, pid := range []int{Self, os.Getpid()} {
		v, ok, err := StatusField(pid, "Pid")
		if err != nil || !ok || v != strconv.Itoa(os.Getpid()) {
			t.Errorf("StatusField(%d, Pid) = %q, %v, %v", pid, v, ok, err)
		}
		if v, ok, err := StatusField(pid, "VmHWM"); err != nil || !ok || !strings.HasSuffix(v, "kB") {
			t.Errorf("StatusField(%d, VmHWM) = %q, %v, %v", pid, v, ok, err)
		}
	}
	if _, ok, err := StatusField(Self, "NoSuchKey"); err != nil || ok {
		t.Errorf("a missing key: ok %v, err %v", ok, err)
	}
}

func TestPipeInodes(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	var st syscall.Stat_t
	if err := syscall.Fstat(int(r.Fd()), &st); err != nil {
		t.Fatal(err)
	}
	if inos := PipeInodes(os.Getpid()); !slices.Contains(inos, st.Ino) {
		t.Errorf("PipeInodes(self) = %v, lacks %d", inos, st.Ino)
	}
}

// A process group is killed whole, and KillGroupExcept spares the processes it is told to keep.
func TestKillGroupExcept(t *testing.T) {
	start := func(pgid int) *exec.Cmd {
		c := exec.Command("sleep", "30")
		c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pgid: pgid}
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		return c
	}
	// A group of two: one to keep, one to kill.
	kept := start(0)
	t.Cleanup(func() { _ = KillGroup(kept.Process.Pid, syscall.SIGKILL) })
	killed := start(kept.Process.Pid)
	KillGroupExcept(kept.Process.Pid, map[int]bool{kept.Process.Pid: true}, syscall.SIGKILL)
	waited := make(chan error, 1)
	go func() { waited <- killed.Wait() }()
	select {
	case <-waited:
	case <-time.After(10 * time.Second):
		t.Fatal("the process not kept is still running")
	}
	if err := kept.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("the kept process is gone: %v", err)
	}
	if err := KillGroup(kept.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = kept.Wait()
}
