//go:build integration

package e2e

import (
	"os"
	"strconv"
	"strings"
)

// ProcsOfContainer returns the pids whose environment has CONTAINER_ID=cid and whose command line starts with
// argv0 (and then arg, if given).
func ProcsOfContainer(cid, argv0, arg string) []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil || !strings.Contains("\x00"+string(env), "\x00CONTAINER_ID="+cid+"\x00") {
			continue
		}
		cmd, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		args := strings.Split(string(cmd), "\x00")
		if len(args) > 0 && strings.HasSuffix(args[0], argv0) && (arg == "" || len(args) > 1 && args[1] == arg) {
			out = append(out, pid)
		}
	}
	return out
}
