package proc

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// root is where /proc is mounted.
const root = "/proc"

// Self names the calling process in StatusField (/proc/self).
const Self = 0

func dir(pid int) string {
	if pid == Self {
		return root + "/self"
	}
	return root + "/" + strconv.Itoa(pid)
}

// Pids lists the processes in /proc (the entries whose names are numbers).
func Pids() ([]int, error) {
	ents, err := os.ReadDir(root)
	if err != nil {
		return nil, err
	}
	pids := make([]int, 0, len(ents))
	for _, e := range ents {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

// Stat is what yarn-am reads of /proc/<pid>/stat.
type Stat struct {
	Pid     int
	Comm    string // the command name, without its parentheses
	State   string // R, S, D, Z, ...
	PPid    int    // the parent
	PGrp    int    // the process group
	Session int
}

// ReadStat reads and parses /proc/<pid>/stat.
func ReadStat(pid int) (Stat, error) {
	data, err := os.ReadFile(dir(pid) + "/stat")
	if err != nil {
		return Stat{}, err
	}
	st, err := ParseStat(string(data))
	if err != nil {
		return Stat{}, fmt.Errorf("%s/stat: %w", dir(pid), err)
	}
	return st, nil
}

// ParseStat parses a stat line: "pid (comm) state ppid pgrp session ...". The command name may hold
// spaces and parentheses, so the fields after it are those after the last ')' (TestParseStat).
func ParseStat(s string) (Stat, error) {
	open := strings.IndexByte(s, '(')
	end := strings.LastIndexByte(s, ')')
	if open < 0 || end < open {
		return Stat{}, fmt.Errorf("no command field")
	}
	pid, err := strconv.Atoi(strings.TrimSpace(s[:open]))
	if err != nil {
		return Stat{}, fmt.Errorf("pid %q: %w", strings.TrimSpace(s[:open]), err)
	}
	f := strings.Fields(s[end+1:])
	if len(f) < 4 {
		return Stat{}, fmt.Errorf("too short")
	}
	st := Stat{Pid: pid, Comm: s[open+1 : end], State: f[0]}
	for i, p := range []*int{&st.PPid, &st.PGrp, &st.Session} {
		if *p, err = strconv.Atoi(f[i+1]); err != nil {
			return Stat{}, fmt.Errorf("field %d: %w", i+4, err)
		}
	}
	return st, nil
}

// StatusField returns the value of one "Key:\tvalue" line of /proc/<pid>/status (pid Self for this
// process), trimmed; ok is false when the file has no such line.
func StatusField(pid int, key string) (value string, ok bool, err error) {
	data, err := os.ReadFile(dir(pid) + "/status")
	if err != nil {
		return "", false, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, found := strings.CutPrefix(line, key+":"); found {
			return strings.TrimSpace(v), true, nil
		}
	}
	return "", false, nil
}

// PipeInodes lists the inodes of the pipes process pid has open (its /proc/<pid>/fd links
// "pipe:[inode]"); nil when its descriptors cannot be read.
func PipeInodes(pid int) []uint64 {
	fds, err := os.ReadDir(dir(pid) + "/fd")
	if err != nil {
		return nil
	}
	var inos []uint64
	for _, fd := range fds {
		link, err := os.Readlink(dir(pid) + "/fd/" + fd.Name())
		if err != nil {
			continue
		}
		var ino uint64
		if _, err := fmt.Sscanf(link, "pipe:[%d]", &ino); err == nil {
			inos = append(inos, ino)
		}
	}
	return inos
}

// KillGroup sends sig to every process of process group pgid.
func KillGroup(pgid int, sig syscall.Signal) error {
	return syscall.Kill(-pgid, sig)
}

// KillGroupExcept sends sig, one by one, to every process of group pgid but those in keep: a process
// that must outlive its own group (the launcher, whose launch shell waits for it) cannot use KillGroup.
func KillGroupExcept(pgid int, keep map[int]bool, sig syscall.Signal) {
	pids, err := Pids()
	if err != nil {
		return
	}
	for _, pid := range pids {
		if keep[pid] {
			continue
		}
		if g, err := syscall.Getpgid(pid); err == nil && g == pgid {
			_ = syscall.Kill(pid, sig)
		}
	}
}

// KillSession sends sig to every process of session sid that this user may signal: a child that left
// its parent's group with setsid is found only so.
func KillSession(sid int, sig syscall.Signal) {
	pids, err := Pids()
	if err != nil {
		return
	}
	for _, pid := range pids {
		if st, err := ReadStat(pid); err == nil && st.Session == sid {
			_ = syscall.Kill(pid, sig)
		}
	}
}
