package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sleepers returns the pids of running `sleep <n>` processes for the given n.
func sleepers(ns ...int) []int {
	want := map[string]bool{}
	for _, n := range ns {
		want[fmt.Sprintf("sleep\x00%d\x00", n)] = true
	}
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		var pid int
		if _, err := fmt.Sscan(e.Name(), &pid); err != nil {
			continue
		}
		cmdline, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && want[string(cmdline)] {
			out = append(out, pid)
		}
	}
	return out
}

// TestNoWorkerProcessSurvivesItsContainer runs the launcher as a NodeManager runs a container (in a
// session and process group of its own, with CONTAINER_ID set) around a worker that ignores SIGTERM
// and leaves children behind, and stops it as YARN does. No process of the worker may survive: a
// worker in a process group of its own escaped the NodeManager's group kill, and its children were
// reparented to init while their GPUs went to the next container.
func TestNoWorkerProcessSurvivesItsContainer(t *testing.T) {
	e := buildLaunchEnv(t)
	for _, tc := range []struct {
		name string
		stop func(pgid int)
	}{
		// kill, preemption, the AM stopping a TaskExecutor: the NodeManager sends SIGTERM to the
		// container's group, then SIGKILL after yarn.nodemanager.sleep-delay-before-sigkill.ms.
		{"the NodeManager's TERM then KILL", func(pgid int) {
			_ = syscall.Kill(-pgid, syscall.SIGTERM)
			// Time passing is what is under test, not an order standing in for a signal: the
			// NodeManager's own delay (sleep-delay-before-sigkill.ms, 250 by default) between its
			// TERM and its KILL, within which the launcher must act.
			time.Sleep(250 * time.Millisecond)
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
		}},
		// Only the SIGTERM arrives (the NodeManager went away before its SIGKILL): the launcher kills
		// what is left after the grace period itself.
		{"a TERM with no KILL after it", func(pgid int) {
			_ = syscall.Kill(-pgid, syscall.SIGTERM)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := 9_000_000+rand.IntN(900_000), 9_900_000+rand.IntN(90_000)
			c, _ := e.cmd(t, 0, "launch", "--", "/bin/bash", "-c", fmt.Sprintf(`trap "" TERM; sleep %d & sleep %d & wait`, a, b))
			c.Env = append(c.Env, "CONTAINER_ID=container_1700000000000_0001_01_000002", "YARN_AM_LOG_LEVEL=info")
			c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
			var errOut strings.Builder
			c.Stderr = &errOut
			require.NoError(t, c.Start())
			defer func() {
				for _, p := range sleepers(a, b) {
					_ = syscall.Kill(p, syscall.SIGKILL)
				}
			}()
			require.Eventually(t, func() bool { return len(sleepers(a, b)) == 2 }, 10*time.Second, 20*time.Millisecond, "the worker's children start")
			tc.stop(c.Process.Pid)
			_ = waitTimeout(c, 10*time.Second)
			assert.Eventually(t, func() bool { return len(sleepers(a, b)) == 0 }, 5*time.Second, 50*time.Millisecond,
				"no process of the worker survives its container; launcher stderr:\n%s", errOut.String())
		})
	}
}
