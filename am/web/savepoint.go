package web

import (
	"context"
	"net/http"

	"github.com/yarn-am/yarn-am/contract"
)

// savepoint is POST /api/v1/savepoint (yarn-am savepoint): the framework keeps its work's state (a
// Flink job's savepoint) without stopping it, and the answer is where. It takes the secret over
// HTTPS only, like a stop: the state it writes is the application's (docs/security.md).
func (h *api) savepoint(w http.ResponseWriter, r *http.Request) {
	if !h.needsSecret(w, r) {
		return
	}
	var req contract.SavepointRequest
	if err := decodeBody(w, r, contract.MaxRequestBytes, &req); err != nil {
		writeError(w, bodyErrorCode(err), `the body is not a savepoint ({"dir": "file:///tmp/savepoints", "timeout": "5m"}): `+err.Error())
		return
	}
	timeout, ok := stateRequest(w, req.Timeout, "dir", req.Dir)
	if !ok {
		return
	}
	if h.o.Savepoint == nil {
		writeError(w, http.StatusConflict, "this application's framework keeps no state of its work on demand (a plain job, a training gang, a Flink session cluster): there is nothing to save")
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), timeout)
	defer cancel()
	path, err := h.o.Savepoint(ctx, req.Dir)
	if err != nil {
		writeError(w, http.StatusConflict, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, contract.SavepointResult{Path: path})
}
