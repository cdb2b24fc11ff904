package web

import "net/http"

// published serves GET /api/v1/framework/published (contract.FrameworkPublishedPath): what the job's
// framework published for its TaskExecutors (a Flink JobManager's RPC address), with the secret over
// HTTPS only. It names ports its processes bound, which whoever reads them could target, so the
// anonymous reader gets nothing, as with a gang's rank 0 address (visibility.go).
func (h *api) published(w http.ResponseWriter, r *http.Request) {
	if !h.needsSecret(w, r) {
		return
	}
	values := map[string]string{}
	if h.o.Published != nil {
		for k, v := range h.o.Published() {
			values[k] = v
		}
	}
	writeJSON(w, http.StatusOK, values)
}
