package book

// SickGPUs are the GPUs of each node that read unhealthy under the job's containers. Its verb: Sick.
// The AM's mutex guards it (package doc).
type SickGPUs map[string]map[string]bool

// Sick books uuid of node as sick and says how many sick GPUs the node has now.
func (s SickGPUs) Sick(node, uuid string) int {
	if s[node] == nil {
		s[node] = map[string]bool{}
	}
	s[node][uuid] = true
	return len(s[node])
}
