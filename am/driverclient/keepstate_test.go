package driverclient

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/contract/amtls/amtlstest"
)

// TestSavepointAsksTheAM: KeepState posts the directory and the AM's bound with the secret to POST
// /api/v1/savepoint and returns what the AM answers, the state's place and name; the AM's refusal is
// an *APIError with its reason.
func TestSavepointAsksTheAM(t *testing.T) {
	var got contract.KeepStateRequest
	var auth string
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/v1/savepoint", func(w http.ResponseWriter, r *http.Request) {
		auth = r.Header.Get("Authorization")
		_ = json.NewDecoder(r.Body).Decode(&got)
		if got.Dir == "file:///refused" {
			w.WriteHeader(http.StatusConflict)
			_, _ = w.Write([]byte(`{"error":"this application's framework keeps no state of its work on demand"}`))
			return
		}
		_ = json.NewEncoder(w).Encode(contract.KeepStateResult{Path: got.Dir + "/savepoint-1", What: "Snapshot"})
	})
	srv, ca := amtlstest.Server(t, mux)
	c, err := New(srv.URL+"/api/v1/", "s3cret")
	require.NoError(t, err)
	require.NoError(t, c.Trust(ca))

	p, err := c.KeepState(context.Background(), "file:///sp", 90*time.Second)
	require.NoError(t, err)
	assert.Equal(t, contract.KeepStateResult{Path: "file:///sp/savepoint-1", What: "Snapshot"}, p)
	assert.Equal(t, contract.KeepStateRequest{Dir: "file:///sp", Timeout: "1m30s"}, got)
	assert.Equal(t, "Bearer s3cret", auth)

	_, err = c.KeepState(context.Background(), "", 0)
	require.NoError(t, err)
	assert.Equal(t, contract.DefaultStopTimeout.String(), got.Timeout)

	_, err = c.KeepState(context.Background(), "file:///refused", time.Minute)
	var ae *APIError
	require.True(t, errors.As(err, &ae), "%v", err)
	assert.Equal(t, http.StatusConflict, ae.StatusCode)
	assert.Contains(t, err.Error(), "keeps no state of its work on demand")
}
