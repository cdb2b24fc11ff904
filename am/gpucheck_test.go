package am

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/am/book"
	"github.com/yarn-am/yarn-am/am/decision"
	"github.com/yarn-am/yarn-am/contract"
)

func gpuReport(uuids ...string) string {
	body := `{"infos":{"gpu":[`
	for i, u := range uuids {
		if i > 0 {
			body += ","
		}
		body += `{"index":"0","uuid":"` + u + `"}`
	}
	return body + `]}}`
}

func eventsOfType(m *am, typ contract.EventType) []contract.Event {
	var out []contract.Event
	for _, e := range m.events.Since(0, 0) {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

// Two live containers of one node that report the same GPU UUID share a GPU (under YARN's isolation
// both see it as index 0): the later is stopped with a gpu-shared event naming both and the GPU, not
// counted as a failure; from the third time on one node its end counts (docs/running.md#events).
func TestSharedGPUStopsTheLaterContainer(t *testing.T) {
	m := apiAM(t)
	h := m.Handler(testSecret)
	add := func(id, node string) *book.Container {
		return m.rec.Adopted(id, node, te, nil)
	}
	c3, c4 := add("c3", "n1:1"), add("c4", "n2:1")
	report := func(id, body string) int {
		return post(t, h, "/api/v1/containers/"+id+"/report", "Bearer "+testSecret, body).Code
	}
	require.Equal(t, http.StatusNoContent, report("c1", gpuReport("GPU-aaaa")))
	require.Equal(t, http.StatusNoContent, report("c4", gpuReport("GPU-aaaa")), "another node's GPU with the same UUID is another GPU")
	assert.Empty(t, eventsOfType(m, contract.EventGPUShared))
	assert.Equal(t, contract.Running, c4.Phase)

	require.Equal(t, http.StatusNoContent, report("c3", gpuReport("GPU-bbbb", "GPU-aaaa")))
	evs := eventsOfType(m, contract.EventGPUShared)
	require.Len(t, evs, 1)
	e := evs[0]
	assert.Equal(t, "c3", e.Container, "the later one")
	assert.Equal(t, "c1", e.Other, "the holder")
	assert.Equal(t, "n1:1", e.Node)
	assert.Equal(t, contract.SeverityError, e.Severity)
	assert.Equal(t, []string{"GPU-aaaa"}, contract.UUIDs(e.Infos["gpu"]))
	assert.Contains(t, e.Message, "c1")
	assert.Contains(t, e.Message, "c3")
	assert.Contains(t, e.Message, "GPU-aaaa")
	assert.Contains(t, e.Message, "not counted")
	assert.Equal(t, contract.Stopping, c3.Phase, "the later container is stopped")
	assert.Equal(t, contract.Running, m.rec.Get("c1").Phase, "the holder keeps running")
	m.rec.Completed(c3, decision.Exit{Status: contract.ExitStatusKilledByAppMaster, Class: contract.ExitKilledByAM})
	assert.False(t, c3.Exit.Class.Counts(), "the first stops on a node are not the worker's failure")
	assert.Equal(t, http.StatusConflict, report("c3", gpuReport("GPU-cccc")), "a stopped container reports no more")

	// It keeps happening on n1: the third stop counts.
	var last *book.Container
	for i, id := range []string{"c5", "c6"} {
		last = add(id, "n1:1")
		require.Equal(t, http.StatusNoContent, report(id, gpuReport("GPU-aaaa")), "stop %d", i+2)
	}
	evs = eventsOfType(m, contract.EventGPUShared)
	require.Len(t, evs, 3)
	assert.Contains(t, evs[2].Message, "counts as a failure")
	m.rec.Completed(last, decision.Exit{Status: contract.ExitStatusKilledByAppMaster, Class: contract.ExitKilledByAM})
	assert.True(t, last.Exit.Class.Counts(), "the third stop on one node counts: %+v", last.Exit)
}

// Reports are taken only from launching and running containers: a finished container's reports
// (which a holder of the secret could send without end) are refused with 409 and change nothing.
func TestReportsOnlyForLiveContainers(t *testing.T) {
	m := apiAM(t)
	h := m.Handler(testSecret)
	before := m.events.LastID()
	rec := post(t, h, "/api/v1/containers/c2/report", "Bearer "+testSecret, `{"infos":{"gpu":[{"index":"1"}]}}`)
	assert.Equal(t, http.StatusConflict, rec.Code)
	assert.Contains(t, rec.Body.String(), "COMPLETED")
	assert.Nil(t, m.rec.Get("c2").Infos)
	assert.Equal(t, before, m.events.LastID(), "no event")
	m.rec.Accepted(decision.Allocation{ID: "h1", Node: "n1:1", AskID: 1, Resources: te}, nil, 0, true)
	assert.Equal(t, http.StatusConflict, post(t, h, "/api/v1/containers/h1/report", "Bearer "+testSecret, `{}`).Code)
	assert.Equal(t, http.StatusNoContent, post(t, h, "/api/v1/containers/c1/report", "Bearer "+testSecret, `{}`).Code)
}

// A container whose launcher reported its worker's exit has released its GPUs, though YARN has not
// reported its end yet: a new container of the node that claims one of them is no sharer. Before the
// exit report, workers that end at once (make bench's `true`) had the AM stop their successors.
func TestSharedGPUIgnoresAContainerWhoseWorkerExited(t *testing.T) {
	m := apiAM(t)
	h := m.Handler(testSecret)
	add := func(id string) *book.Container {
		return m.rec.Adopted(id, "n1:1", te, nil)
	}
	add("c7")
	c8 := add("c8")
	report := func(id, body string) int {
		return post(t, h, "/api/v1/containers/"+id+"/report", "Bearer "+testSecret, body).Code
	}
	require.Equal(t, http.StatusNoContent, report("c7", gpuReport("GPU-dddd")))
	require.Equal(t, http.StatusNoContent, report("c7", `{"exited":true,"exitCode":0}`))
	require.Equal(t, http.StatusNoContent, report("c8", gpuReport("GPU-dddd")))
	assert.Empty(t, eventsOfType(m, contract.EventGPUShared))
	assert.Equal(t, contract.Running, c8.Phase, "the successor keeps its GPU")
	assert.Equal(t, contract.Running, m.rec.Get("c7").Phase, "the ended worker's container waits for YARN's report")
}
