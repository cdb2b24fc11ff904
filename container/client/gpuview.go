package client

import (
	"fmt"
	"strings"

	"github.com/yarn-am/yarn-am/contract"
)

// GPUUsageLine is the status' "GPU time:" line (docs/running.md#gpu-utilisation): the job's GPU-hours
// reserved, the mean utilisation and the share of sampled GPU time that was idle.
func GPUUsageLine(u contract.GPUUsage) string {
	return strings.TrimPrefix(u.String(), "GPU time: ")
}

// anyGPUs says whether a container of st has GPU samples (the table then has a GPU UTIL column).
func anyGPUs(st *contract.Status) bool {
	for _, c := range st.Containers {
		if len(c.GPUs) > 0 {
			return true
		}
	}
	return false
}

// GPUText is a container's GPU UTIL cell: the mean utilisation of each GPU over its life, e.g.
// "93%" or "93%,0%"; "-" when nothing was sampled.
func GPUText(gpus []contract.GPUStatus) string {
	if len(gpus) == 0 {
		return "-"
	}
	parts := make([]string, len(gpus))
	for i, g := range gpus {
		parts[i] = fmt.Sprintf("%.0f%%", g.MeanUtil)
	}
	return strings.Join(parts, ",")
}
