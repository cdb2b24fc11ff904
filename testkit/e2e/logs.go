//go:build integration

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ContainerLogs returns the stdout and stderr of the application's containers, for a failure message.
func ContainerLogs(id string) string {
	var b strings.Builder
	for _, d := range strings.Split(os.Getenv("YARN_AM_NM_LOG_DIRS"), ",") {
		files, _ := filepath.Glob(filepath.Join(d, id, "*", "std*"))
		for _, f := range files {
			data, _ := os.ReadFile(f)
			if len(data) > 4000 {
				data = data[len(data)-4000:]
			}
			fmt.Fprintf(&b, "--- %s\n%s\n", f, data)
		}
	}
	return b.String()
}
