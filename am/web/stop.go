package web

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/framework"
)

// stop is POST /api/v1/stop (yarn-am stop): the application stops through its framework, which
// keeps its work's state (framework.AM.OnStop) and ends its driver with success; the answer is what
// the framework kept. It takes the secret over HTTPS only, like every write: a stop ends the
// application as a kill does (docs/security.md).
func (h *api) stop(w http.ResponseWriter, r *http.Request) {
	if !h.needsSecret(w, r) {
		return
	}
	var req contract.StopRequest
	if err := decodeBody(w, r, contract.MaxRequestBytes, &req); err != nil {
		writeError(w, bodyErrorCode(err), `the body is not a stop ({"savepoint": "file:///tmp/savepoints", "timeout": "5m"}): `+err.Error())
		return
	}
	timeout, ok := stateRequest(w, req.Timeout, "savepoint", req.StateDir)
	if !ok {
		return
	}
	if h.o.Stop == nil {
		writeError(w, http.StatusConflict, "this application's framework cannot stop it gracefully (it keeps no state to resume from): use yarn-am kill")
		return
	}
	// The request's context ends when the client gives up; the timeout bounds the rest.
	ctx, cancel := context.WithTimeout(r.Context(), timeout)
	defer cancel()
	dl, _ := ctx.Deadline()
	kept, err := h.o.Stop(ctx, framework.StateRequest{Dir: req.StateDir, Deadline: dl})
	if err != nil {
		writeError(w, http.StatusConflict, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, contract.StopResult{Result: kept.Where, What: kept.What})
}

// stateRequest checks what a stop and a request to keep the state (keepstate.go) both carry: the request's timeout
// (default contract.DefaultStopTimeout, at most contract.MaxStopTimeout) and the directory under
// key, at most 4096 bytes. ok false: the answer is written.
func stateRequest(w http.ResponseWriter, rawTimeout, key, dir string) (time.Duration, bool) {
	timeout := contract.DefaultStopTimeout
	if rawTimeout != "" {
		d, err := time.ParseDuration(rawTimeout)
		if err != nil || d <= 0 || d > contract.MaxStopTimeout {
			writeError(w, http.StatusBadRequest, fmt.Sprintf(`"timeout": %q: want a duration from 1s to %s, e.g. "5m"`, cut(rawTimeout), contract.MaxStopTimeout))
			return 0, false
		}
		timeout = d
	}
	if len(dir) > 4096 {
		writeError(w, http.StatusBadRequest, fmt.Sprintf(`%q: %q...: longer than 4096 bytes`, key, cut(dir)))
		return 0, false
	}
	return timeout, true
}

// cut bounds a client's value quoted in an error.
func cut(s string) string {
	if len(s) > 80 {
		return s[:80]
	}
	return s
}
