package web

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/yarn-am/yarn-am/contract"
)

// This file holds the endpoints the TaskExecutors' launchers call, each over HTTPS with the secret
// but the rendezvous (which anonymous readers get without rank 0's address, visibility.go): the
// report of what discovery found or how the worker ended, the liveness message, the long poll for a
// preemption notice, the gang's rendezvous and the refreshed delegation tokens. The AM books each
// through State; the answers and status codes are here.

// TokensPath is the path of the TaskExecutors' tokens (contract.EnvTokensURL points there).
const TokensPath = "/api/v1/tokens"

func (h *api) launcherRoutes(mux *http.ServeMux) {
	mux.HandleFunc("POST /api/v1/containers/{id}"+contract.ReportPath, h.report)
	mux.HandleFunc("POST /api/v1/containers/{id}"+contract.AlivePath, h.alive)
	mux.HandleFunc("GET /api/v1/containers/{id}"+contract.NoticesPath, h.notices)
	mux.HandleFunc("GET /api/v1/containers/{id}/rendezvous", h.rendezvous)
	mux.HandleFunc("GET /api/v1/containers/{id}/gpus", h.gpus) // gpus.go
	mux.HandleFunc(TokensPath, h.tokens)
}

// report serves POST /api/v1/containers/{id}/report: 204 when the AM booked it, 404 for a container
// that is not one of its own, 409 for one that is not launching or running, 429 past
// contract.MaxReportsPerContainer.
func (h *api) report(w http.ResponseWriter, r *http.Request) {
	if !h.needsSecret(w, r) {
		return
	}
	id := r.PathValue("id")
	if !h.reports.take(id) {
		writeError(w, http.StatusTooManyRequests, fmt.Sprintf("container %s has sent its %d reports; the AM takes no more from it", id, contract.MaxReportsPerContainer))
		return
	}
	var rep contract.ContainerReport
	if err := decodeBody(w, r, contract.MaxReportBytes, &rep); err != nil {
		writeError(w, bodyErrorCode(err), "the body is not a report ({\"infos\": {\"gpu\": [{\"index\": \"0\"}]}}): "+err.Error())
		return
	}
	if err := h.b.State.Report(id, redactReport(rep, h.o.Secret, h.o.Redact)); err != nil {
		code := http.StatusNotFound
		if errors.Is(err, ErrNotRunning) {
			code = http.StatusConflict
		}
		writeError(w, code, "container "+id+": "+err.Error()+"; the AM takes reports only from its launching and running TaskExecutors")
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// alive serves POST /api/v1/containers/{id}/alive, the launcher's liveness message
// (docs/running.md#liveness). Its body, when any, carries GPU samples (gpus.go); the message counts
// as alive whatever the body says.
func (h *api) alive(w http.ResponseWriter, r *http.Request) {
	if !h.needsSecret(w, r) {
		return
	}
	id := r.PathValue("id")
	if !h.b.State.Alive(id) {
		writeError(w, http.StatusNotFound, fmt.Sprintf("container %.200s is not one of this application's TaskExecutors", id))
		return
	}
	if !h.gpuSamples(w, r, id) {
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// notices serves GET /api/v1/containers/{id}/notices, the launcher's long poll
// (contract.NoticesPath; docs/running.md#preemption): 200 and the notice as soon as the container is
// warned, 204 when the wait ends first. The wait is bounded (contract.MaxNoticeWait) and ends with
// the request.
func (h *api) notices(w http.ResponseWriter, r *http.Request) {
	if !h.needsSecret(w, r) {
		return
	}
	wait := contract.MaxNoticeWait
	if s := r.URL.Query().Get(contract.NoticeWaitParam); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d < 0 {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("%s = %.40q: want a Go duration from 0s to %s, e.g. 30s", contract.NoticeWaitParam, s, contract.MaxNoticeWait))
			return
		}
		wait = min(d, contract.MaxNoticeWait)
	}
	id := r.PathValue("id")
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		n, changed, ok := h.b.State.Notice(id)
		switch {
		case !ok:
			writeError(w, http.StatusNotFound, fmt.Sprintf("container %.200s is not one of this application's TaskExecutors", id))
			return
		case n != nil:
			writeJSON(w, http.StatusOK, n)
			return
		}
		select {
		case <-changed:
		case <-timer.C:
			w.WriteHeader(http.StatusNoContent)
			return
		case <-r.Context().Done():
			return
		}
	}
}

// rendezvous serves GET /api/v1/containers/{id}/rendezvous: 200 and the container's rendezvous
// (with rank 0's address and port only when the reader sent the secret over HTTPS, visibility.go),
// 202 while ranks are missing, 410 when the container is not part of the current round, 404 when it
// is not a TaskExecutor of this application, 409 when the application does not run a gang.
func (h *api) rendezvous(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	g := h.b.State.Rendezvous(id)
	switch {
	case !g.Gang:
		writeError(w, http.StatusConflict, "this application is not a gang (taskexecutor.gang = false)")
	case !g.Member:
		writeError(w, http.StatusNotFound, "container "+id+" is not a TaskExecutor of this application")
	case !g.Current:
		writeError(w, http.StatusGone, fmt.Sprintf("container %s is not part of the current gang round %d (the gang restarted)", id, g.Round))
	case g.Rank == nil:
		writeJSON(w, http.StatusAccepted, map[string]string{"waiting": fmt.Sprintf("%d of %d ranks of round %d reported", g.Reported, g.Size, g.Round)})
	case !h.full(r):
		writeJSON(w, http.StatusOK, anonymousRank(g.Rank))
	default:
		writeJSON(w, http.StatusOK, g.Rank)
	}
}

// tokens serves GET /api/v1/tokens on the HTTPS listener: the TaskExecutors' current credentials
// (HDTS) to callers that presented the application secret. The answer is never logged.
func (h *api) tokens(w http.ResponseWriter, r *http.Request) {
	if !h.needsSecret(w, r) {
		return
	}
	if h.o.Tokens == nil {
		writeError(w, http.StatusNotFound, "this AM does not refresh delegation tokens (it was given no keytab)")
		return
	}
	if r.Method != http.MethodGet {
		writeError(w, http.StatusMethodNotAllowed, "GET only")
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = bytes.NewReader(h.o.Tokens.LaunchTokens()).WriteTo(w)
}
