package web

import (
	"encoding/base64"
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

// gpuBookState books the liveness messages' GPU samples as they reach it.
type gpuBookState struct {
	tailState
	mu    sync.Mutex
	alive []contract.AliveReport
}

func (s *gpuBookState) GPUSamples(id string, r contract.AliveReport) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.alive = append(s.alive, r)
	return nil
}

func (s *gpuBookState) GPUSeries(string) (contract.GPUSeries, bool) {
	return contract.GPUSeries{}, false
}

// What a launcher reports (a stderr tail, a failure, a GPU sampling error and a GPU's problem) keeps
// neither the application secret nor a token's password inside a longer encoding: an HTTP Basic
// header's base64 of "user:secret", a password's URL-safe base64 among other bytes (issue 40 §6).
func TestReportsAreRedactedInsideLongerEncodings(t *testing.T) {
	state := &gpuBookState{}
	password := []byte("hdfs-token-password-bytes")
	red := &stderrtail.Redactor{}
	red.Add("delegation token password", password)
	h := Handler(Backend{State: state, Events: newFakeEvents(), Metrics: http.NotFoundHandler()},
		Options{Secret: testSecret, Secure: true, Redact: red})
	basic := "Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte("alice:"+testSecret))
	token := "t=" + base64.RawURLEncoding.EncodeToString(append([]byte("id\x00"), password...))
	post := func(path string, v any) {
		body, err := json.Marshal(v)
		require.NoError(t, err)
		req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(string(body)))
		req.Header.Set("Authorization", "Bearer "+testSecret)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		require.Equal(t, http.StatusNoContent, w.Code, w.Body.String())
	}
	post("/api/v1/containers/c1/report", contract.ContainerReport{Exited: true, ExitCode: 1, Failure: basic, WorkerStderr: basic + "\n" + token})
	post("/api/v1/containers/c1"+contract.AlivePath, contract.AliveReport{GPUSampleError: basic,
		GPUSamples: []contract.GPUSample{{GPUs: []contract.GPUReading{{UUID: "GPU-1", Problem: "tool said " + token}}}}})

	require.Len(t, state.reports, 1)
	require.Len(t, state.alive, 1)
	for name, got := range map[string]string{"failure": state.reports[0].Failure, "stderr": state.reports[0].WorkerStderr,
		"sampling error": state.alive[0].GPUSampleError, "GPU problem": state.alive[0].GPUSamples[0].GPUs[0].Problem} {
		assert.NotContains(t, got, base64.StdEncoding.EncodeToString([]byte("alice:" + testSecret))[8:40], name)
		assert.NotContains(t, got, base64.RawURLEncoding.EncodeToString(password)[4:30], name)
	}
	assert.Equal(t, "Authorization: Basic YWxpY2U6[application secret]", state.reports[0].Failure)
	assert.Equal(t, "Authorization: Basic YWxpY2U6[application secret]", state.alive[0].GPUSampleError)
	assert.Contains(t, state.reports[0].WorkerStderr, "t=aWQA[delegation token password]")
	assert.Contains(t, state.alive[0].GPUSamples[0].GPUs[0].Problem, "[delegation token password]")
}
