package am

import (
	"crypto/subtle"
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/sirupsen/logrus"

	"github.com/yarn-am/yarn-am/resources"
)

// This file is the AM's HTTP API (DESIGN §8). Reads are open; writes need the application's secret as
// "Authorization: Bearer <secret>". Seams for what comes next: events (SSE), PUT requirements, the
// HTML page and /metrics register on the same mux in Handler.

// SecretAlias is the secret key, in the AM's credentials, of the application secret that writes to
// the API must present as "Authorization: Bearer <secret>" (the client creates it: 64 hex characters).
const SecretAlias = "yarn-am.secret"

// Status is the body of GET /api/v1/status.
type Status struct {
	App         string            `json:"app"`
	State       string            `json:"state"` // STARTING, RUNNING, FINISHING, SUCCEEDED, FAILED, KILLED
	Requirement Requirement       `json:"requirement"`
	Counts      Counts            `json:"counts"`
	Containers  []ContainerStatus `json:"containers"`
	Diagnostics string            `json:"diagnostics"`
}

// Requirement is the declared TaskExecutor requirement.
type Requirement struct {
	Instances   int        `json:"instances"`
	Resources   Capability `json:"resources"`
	MaxFailures int        `json:"maxFailures"`
	Mode        string     `json:"mode"` // batch, service, driver
}

// Counts summarises the containers. Requested: asked for and not yet allocated. Allocated: accepted and
// being launched. Running: started on their NM. Completed: ended, whatever the exit. Failed: the
// completed ones that count against taskexecutor.max-failures.
type Counts struct {
	Requested int `json:"requested"`
	Allocated int `json:"allocated"`
	Running   int `json:"running"`
	Completed int `json:"completed"`
	Failed    int `json:"failed"`
}

// ContainerStatus is one TaskExecutor container.
type ContainerStatus struct {
	ID          string                      `json:"id"`
	Node        string                      `json:"node"`
	State       Phase                       `json:"state"`
	Resources   Capability                  `json:"resources"`
	Infos       map[string][]resources.Info `json:"infos,omitempty"`
	ExitStatus  *int32                      `json:"exitStatus,omitempty"`
	ExitClass   ExitClass                   `json:"exitClass,omitempty"`
	Diagnostics string                      `json:"diagnostics,omitempty"`
}

// ContainerReport is the body of POST /api/v1/containers/<id>/report (the launcher's report).
type ContainerReport struct {
	Infos          map[string][]resources.Info `json:"infos"`
	FailedResource string                      `json:"failedResource,omitempty"`
	Failure        string                      `json:"failure,omitempty"`
}

// Status returns a snapshot of the AM's state.
func (a *AM) Status() Status {
	a.mu.Lock()
	defer a.mu.Unlock()
	mode := map[Mode]string{Batch: "batch", Service: "service", Driver: "driver"}[a.cfg.Spec.Mode]
	s := Status{App: a.cfg.App, State: a.state, Diagnostics: a.diagnostics,
		Requirement: Requirement{Instances: a.cfg.Spec.Instances, Resources: a.cfg.Spec.Capability, MaxFailures: a.cfg.Spec.MaxFailures, Mode: mode},
		Containers:  []ContainerStatus{}}
	for _, k := range a.asks {
		s.Counts.Requested += k.Want
	}
	for _, id := range a.order {
		t := a.containers[id]
		cs := ContainerStatus{ID: t.ID, Node: t.Node, State: t.Phase, Resources: t.Resources, Infos: t.infos}
		switch t.Phase {
		case Launching:
			s.Counts.Allocated++
		case Running:
			s.Counts.Running++
		case Completed:
			s.Counts.Completed++
			if t.Exit.Class.Counts() {
				s.Counts.Failed++
			}
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
func (a *AM) Report(id string, r ContainerReport) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	t := a.containers[id]
	if t == nil {
		return false
	}
	log := a.log.WithFields(logrus.Fields{"container": id, "node": t.Node})
	if r.Failure != "" {
		t.reportFailure = "discovery failed for resource " + r.FailedResource + ": " + r.Failure
		log.WithField("resource", r.FailedResource).Warn("am: launcher reports " + t.reportFailure)
		return true
	}
	t.infos = r.Infos
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
		var rep ContainerReport
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
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		s := a.Status()
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, "yarn-am ApplicationMaster of "+s.App+": "+s.State+"\nJSON: /api/v1/status\n")
	})
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
