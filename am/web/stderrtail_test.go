package web

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/internal/stderrtail"
)

// tailState is fakeState whose completed container c2 failed with a stderr tail, as does the driver,
// and which keeps the reports it is given.
type tailState struct {
	fakeState
	mu      sync.Mutex
	reports []contract.ContainerReport
}

const workerTail = "Traceback:\nValueError: bad row 17"

func (*tailState) Status() contract.Status {
	st := int32(3)
	return contract.Status{App: "application_1_0001", State: "RUNNING", Diagnostics: "the driver exited with code 1",
		Events: []contract.Event{{ID: 1, Type: contract.EventCompleted, Container: "c2", StderrTail: workerTail, Message: "TaskExecutor c2 exited with code 3"},
			{ID: 2, Type: "flink-job", Message: "the JobManager bound its ports", Detail: "RPC 10.9.8.7:46123, REST 10.9.8.7:46124"}},
		DriverStderrTail: "driver: no such table", Containers: []contract.ContainerStatus{
			{ID: "c1", Node: "n1:1", State: contract.Running},
			{ID: "c2", Node: "n2:1", State: contract.Completed, ExitStatus: &st, ExitClass: contract.ExitFailed,
				Diagnostics: "its stderr tail is shown to the application's owner", StderrTail: workerTail}}}
}

func (s *tailState) Report(id string, r contract.ContainerReport) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reports = append(s.reports, r)
	return nil
}

// Anonymous readers (the plain port, HTTPS without the secret) get a failed worker's and the
// driver's exit but not their stderr tails, in the status (its events included), the containers and
// the events (JSON and stream); with the secret over HTTPS they get them
// (docs/security.md#what-anonymous-readers-see). Before, every tail was served in clear on the
// tracking port, and then still in the status's latest events. Likewise an event's Detail (a
// JobManager's bound ports): the owner's, not the page's readers'.
func TestAnonymousReadersGetNoStderrTail(t *testing.T) {
	events := newFakeEvents()
	events.Add(contract.Event{Type: contract.EventCompleted, Container: "c2", Node: "n2:1", StderrTail: workerTail,
		Message: "TaskExecutor c2 on n2:1 exited with code 3"})
	events.Add(contract.Event{Type: "flink-job", Message: "the JobManager bound its ports", Detail: "RPC 10.9.8.7:46123, REST 10.9.8.7:46124"})
	b := Backend{State: &tailState{}, Events: events, Metrics: http.NotFoundHandler()}
	plain := Handler(b, Options{Secret: testSecret})
	secure := Handler(b, Options{Secret: testSecret, Secure: true})
	get := func(h http.Handler, path, auth string) string {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		req.Header.Set("Accept", "application/json")
		if auth != "" {
			req.Header.Set("Authorization", "Bearer "+auth)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		require.Equal(t, http.StatusOK, w.Code, path)
		return w.Body.String()
	}
	for _, path := range []string{"/api/v1/status", "/api/v1/containers", "/api/v1/events?format=json"} {
		for _, anon := range []struct {
			name string
			h    http.Handler
			auth string
		}{{"plain", plain, ""}, {"plain with the secret", plain, testSecret}, {"https without the secret", secure, ""}, {"https with another secret", secure, "nope"}} {
			body := get(anon.h, path, anon.auth)
			assert.NotContains(t, body, "bad row 17", "%s %s", anon.name, path)
			assert.NotContains(t, body, "no such table", "%s %s", anon.name, path)
			assert.NotContains(t, body, "10.9.8.7:4612", "%s %s: a bound port", anon.name, path)
		}
		assert.Contains(t, get(secure, path, testSecret), "bad row 17", "with the secret over HTTPS: %s", path)
		if path != "/api/v1/containers" {
			assert.Contains(t, get(secure, path, testSecret), "REST 10.9.8.7:46124", "with the secret over HTTPS: %s", path)
		}
	}
	var st contract.Status
	require.NoError(t, json.Unmarshal([]byte(get(plain, "/api/v1/status", "")), &st))
	assert.Equal(t, contract.ExitFailed, st.Containers[1].ExitClass, "anonymous readers keep the exit")
	require.NoError(t, json.Unmarshal([]byte(get(secure, "/api/v1/status", testSecret)), &st))
	assert.Equal(t, "driver: no such table", st.DriverStderrTail)

	srv := httptest.NewServer(plain)
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/api/v1/events?since=0") // a stream; its first event is the completion
	require.NoError(t, err)
	defer resp.Body.Close()
	buf := make([]byte, 4096)
	n, _ := resp.Body.Read(buf)
	for !strings.Contains(string(buf[:n]), "exited with code 3") {
		m, err := resp.Body.Read(buf[n:])
		require.NoError(t, err)
		n += m
	}
	for !strings.Contains(string(buf[:n]), "bound its ports") {
		m, err := resp.Body.Read(buf[n:])
		require.NoError(t, err)
		n += m
	}
	assert.NotContains(t, string(buf[:n]), "bad row 17", "the stream")
	assert.NotContains(t, string(buf[:n]), "10.9.8.7:4612", "the stream")
}

// A worker's stderr tail (and a failure message) quoting the application secret or a delegation
// token's password is redacted before the AM stores it: the report the AM books holds neither
// (docs/security.md#the-ams-https-api).
func TestWorkerStderrIsRedactedBeforeItIsStored(t *testing.T) {
	state := &tailState{}
	password := []byte("hdfs-token-password-bytes")
	red := &stderrtail.Redactor{}
	red.Add("delegation token password", password)
	h := Handler(Backend{State: state, Events: newFakeEvents(), Metrics: http.NotFoundHandler()},
		Options{Secret: testSecret, Secure: true, Redact: red})
	body, err := json.Marshal(contract.ContainerReport{Exited: true, ExitCode: 1,
		WorkerStderr: "env: YARN_AM_SECRET=" + testSecret + "\ntoken " + string(password)})
	require.NoError(t, err)
	req := httptest.NewRequest(http.MethodPost, "/api/v1/containers/c1/report", strings.NewReader(string(body)))
	req.Header.Set("Authorization", "Bearer "+testSecret)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	require.Equal(t, http.StatusNoContent, w.Code, w.Body.String())
	require.Len(t, state.reports, 1)
	got := state.reports[0].WorkerStderr
	assert.NotContains(t, got, testSecret)
	assert.NotContains(t, got, string(password))
	assert.Equal(t, "env: YARN_AM_SECRET=[application secret]\ntoken [delegation token password]", got)
}
