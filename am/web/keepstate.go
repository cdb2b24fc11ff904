package web

import (
	"context"
	"net/http"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/framework"
)

// keepState is POST /api/v1/savepoint (yarn-am savepoint): the framework keeps its work's state
// without stopping it (framework.AM.OnKeepState), and the answer is where. The path is named after
// the one framework that answers it today (a Flink job's savepoint). It takes the secret over HTTPS
// only, like a stop: the state it writes is the application's (docs/security.md).
func (h *api) keepState(w http.ResponseWriter, r *http.Request) {
	if !h.needsSecret(w, r) {
		return
	}
	var req contract.KeepStateRequest
	if err := decodeBody(w, r, contract.MaxRequestBytes, &req); err != nil {
		writeError(w, bodyErrorCode(err), `the body is not a request to keep the state ({"dir": "file:///tmp/state", "timeout": "5m"}): `+err.Error())
		return
	}
	timeout, ok := stateRequest(w, req.Timeout, "dir", req.Dir)
	if !ok {
		return
	}
	if h.o.KeepState == nil {
		writeError(w, http.StatusConflict, "this application's framework keeps no state of its work on demand: there is nothing to save")
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), timeout)
	defer cancel()
	dl, _ := ctx.Deadline()
	kept, err := h.o.KeepState(ctx, framework.StateRequest{Dir: req.Dir, Deadline: dl})
	if err != nil {
		writeError(w, http.StatusConflict, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, contract.KeepStateResult{Path: kept.Where, What: kept.What})
}
