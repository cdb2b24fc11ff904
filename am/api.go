package am

import (
	"crypto/subtle"
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/sirupsen/logrus"

	"github.com/yarn-am/yarn-am/am/contract"
)

// This file is the AM's HTTP API (docs/running.md#http-api). Reads are open (also through the RM's web proxy);
// writes need the application's secret as "Authorization: Bearer <secret>". The event stream is in
// sse.go, the status page in ui.go, /metrics in metrics.go; Handler puts them on one mux.

// Status returns a snapshot of the AM's state.
func (a *AM) Status() contract.Status {
	evs := a.events.Latest(contract.StatusEvents)
	a.mu.Lock()
	defer a.mu.Unlock()
	s := contract.Status{App: a.cfg.App, State: a.state, Diagnostics: a.diagnostics, Requirement: a.requirementLocked(),
		Containers: []contract.ContainerStatus{}, ExcludedNodes: a.policy.Excluded(), Events: evs}
	if s.Diagnostics == "" && a.policyOut != nil {
		s.Diagnostics = a.policyOut.Diagnostics
	}
	for _, k := range a.asks {
		s.Counts.Requested += k.Want
	}
	a.rec.compact()
	s.Counts.Completed, s.Counts.Failed = a.rec.completedN, a.rec.failedN
	s.FinishedNotListed = a.rec.completedN - len(a.rec.finished)
	for _, t := range a.rec.seq {
		cs := contract.ContainerStatus{ID: t.ID, Node: t.Node, State: t.Phase, Resources: t.Resources, Infos: t.infos, Rank: t.rank}
		switch t.Phase {
		case contract.Launching:
			s.Counts.Allocated++
		case contract.Running:
			s.Counts.Running++
		case contract.Stopping:
			s.Counts.Stopping++
		case contract.Completed:
			st := t.Exit.Status
			cs.ExitStatus, cs.ExitClass, cs.Diagnostics = &st, t.Exit.Class, t.Exit.Diagnostics
		}
		if cs.Diagnostics == "" && t.reportFailure != "" {
			cs.Diagnostics = t.reportFailure
		}
		s.Containers = append(s.Containers, cs)
	}
	return s
}

// Report records a launcher's report; false if the container is not one of this AM's.
func (a *AM) Report(id string, r contract.ContainerReport) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	t := a.rec.get(id)
	if t == nil {
		return false
	}
	a.emitAll(a.rec.reported(t, r))
	a.assignRanksLocked()
	log := a.log.WithFields(logrus.Fields{"container": id, "node": t.Node})
	if r.Failure != "" {
		log.WithField("resource", r.FailedResource).Warn("am: launcher reports " + t.reportFailure)
	}
	for name, infos := range r.Infos {
		log.WithFields(logrus.Fields{"resource": name, "infos": infos}).Info("am: resource infos reported")
	}
	return true
}

// Handler returns the HTTP API. secret authorises writes.
func (a *AM) Handler(secret string) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v1/status", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, a.Status())
	})
	mux.HandleFunc("POST /api/v1/containers/{id}/report", func(w http.ResponseWriter, r *http.Request) {
		if !authorized(r, secret) {
			writeError(w, http.StatusUnauthorized, "writes need the header 'Authorization: Bearer <application secret>'")
			return
		}
		var rep contract.ContainerReport
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&rep); err != nil {
			writeError(w, http.StatusBadRequest, "the body is not a report ({\"infos\": {\"gpu\": [{\"index\": \"0\"}]}}): "+err.Error())
			return
		}
		id := r.PathValue("id")
		if !a.Report(id, rep) {
			writeError(w, http.StatusNotFound, "container "+id+" is not a TaskExecutor of this application")
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET /api/v1/containers/{id}/rendezvous", func(w http.ResponseWriter, r *http.Request) {
		code, body := a.RendezvousOf(r.PathValue("id"))
		writeJSON(w, code, body)
	})
	mux.HandleFunc("GET /api/v1/containers", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, a.Status().Containers)
	})
	mux.HandleFunc("GET /api/v1/requirements", func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		req := a.requirementLocked()
		a.mu.Unlock()
		writeJSON(w, http.StatusOK, req)
	})
	mux.HandleFunc("PUT /api/v1/requirements", func(w http.ResponseWriter, r *http.Request) {
		if !authorized(r, secret) {
			writeError(w, http.StatusUnauthorized, "writes need the header 'Authorization: Bearer <application secret>'")
			return
		}
		var u contract.RequirementsUpdate
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&u); err != nil {
			writeError(w, http.StatusBadRequest, `the body is not a requirement ({"instances": 2}): `+err.Error())
			return
		}
		if err := u.Validate(); err != nil {
			writeError(w, http.StatusBadRequest, err.Error())
			return
		}
		req, err := a.SetRequirements(*u.Instances, "PUT /api/v1/requirements from "+r.RemoteAddr)
		if err != nil {
			writeError(w, http.StatusConflict, err.Error())
			return
		}
		writeJSON(w, http.StatusOK, req)
	})
	mux.HandleFunc("GET /api/v1/events", EventsHandler(a.events, 0))
	mux.Handle("GET /metrics", a.metrics.Handler())
	ui := UIHandler()
	mux.Handle("GET /{$}", ui)
	mux.Handle("GET /ui/", ui)
	return mux
}

// authorized checks the bearer secret in constant time.
func authorized(r *http.Request, secret string) bool {
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || secret == "" {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(got), []byte(secret)) == 1
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, map[string]string{"error": msg})
}
