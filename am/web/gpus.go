package web

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/internal/stderrtail"
	"github.com/yarn-am/yarn-am/internal/text"
)

// This file serves GPU utilisation (docs/running.md#gpu-utilisation): the samples a liveness message
// carries, and GET /api/v1/containers/{id}/gpus, the kept series, which anyone who may read the
// containers may read (utilisation is not secret; visibility.go hides nothing of it).

// GPUSampleBook is what a State that keeps GPU samples adds (the AM does: am/gpuusage.go); without
// it the bodies are ignored and the series endpoint answers 404.
type GPUSampleBook interface {
	// GPUSamples books the samples of container id's liveness message; an error refuses them.
	GPUSamples(id string, r contract.AliveReport) error
	// GPUSeries is container id's kept samples; false when it is not one of the AM's.
	GPUSeries(id string) (contract.GPUSeries, bool)
}

// gpuSamples books the samples in a liveness message's body, if any; false when it answered (400 for a
// body that is not an AliveReport or that the AM refuses, 413 past contract.MaxAliveBytes).
func (h *api) gpuSamples(w http.ResponseWriter, r *http.Request, id string) bool {
	if r.ContentLength == 0 {
		return true
	}
	var rep contract.AliveReport
	if err := decodeBody(w, r, contract.MaxAliveBytes, &rep); err != nil {
		if errors.Is(err, io.EOF) {
			return true // an empty body of unknown length
		}
		writeError(w, bodyErrorCode(err), "the liveness message's body is not GPU samples ({\"gpuSamples\": [...]}): "+err.Error())
		return false
	}
	book, ok := h.b.State.(GPUSampleBook)
	if !ok || (len(rep.GPUSamples) == 0 && rep.GPUSampleError == "") {
		return true
	}
	rep.GPUSampleError = redactSecret(rep.GPUSampleError, h.o.Secret, h.o.Redact)
	for i := range rep.GPUSamples {
		for j, g := range rep.GPUSamples[i].GPUs {
			if g.Problem != "" { // the vendor tool's words, shown to the status' readers
				rep.GPUSamples[i].GPUs[j].Problem = text.Cut(redactSecret(g.Problem, h.o.Secret, h.o.Redact), contract.MaxGPUProblem)
			}
		}
	}
	if err := book.GPUSamples(id, rep); err != nil {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("container %.200s: the GPU samples were refused (the liveness message counts): %v", id, err))
		return false
	}
	return true
}

// gpus serves GET /api/v1/containers/{id}/gpus: 200 and the container's series (empty when nothing
// was sampled), 404 for a container that is not the AM's.
func (h *api) gpus(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	book, ok := h.b.State.(GPUSampleBook)
	var s contract.GPUSeries
	if ok {
		s, ok = book.GPUSeries(id)
	}
	if !ok {
		writeError(w, http.StatusNotFound, fmt.Sprintf("container %.200s is not one of this application's TaskExecutors", id))
		return
	}
	writeJSON(w, http.StatusOK, s)
}

// redactSecret replaces the application secret in s, and what more redacts (an error message is
// public once it is an event).
func redactSecret(s, secret string, more *stderrtail.Redactor) string {
	if secret != "" {
		s = strings.ReplaceAll(s, secret, "[application secret]")
	}
	return more.Redact(s)
}
