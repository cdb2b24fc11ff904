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

// TestSavepointAsksTheAM: Savepoint posts the directory and the AM's bound with the secret and
// returns the path the AM answers; the AM's refusal is an *APIError with its reason.
func TestSavepointAsksTheAM(t *testing.T) {
	var got contract.SavepointRequest
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
		_ = json.NewEncoder(w).Encode(contract.SavepointResult{Path: got.Dir + "/savepoint-1"})
	})
	srv, ca := amtlstest.Server(t, mux)
	c, err := New(srv.URL+"/api/v1/", "s3cret")
	require.NoError(t, err)
	require.NoError(t, c.Trust(ca))

	p, err := c.Savepoint(context.Background(), "file:///sp", 90*time.Second)
	require.NoError(t, err)
	assert.Equal(t, "file:///sp/savepoint-1", p)
	assert.Equal(t, contract.SavepointRequest{Dir: "file:///sp", Timeout: "1m30s"}, got)
	assert.Equal(t, "Bearer s3cret", auth)

	_, err = c.Savepoint(context.Background(), "", 0)
	require.NoError(t, err)
	assert.Equal(t, contract.DefaultStopTimeout.String(), got.Timeout)

	_, err = c.Savepoint(context.Background(), "file:///refused", time.Minute)
	var ae *APIError
	require.True(t, errors.As(err, &ae), "%v", err)
	assert.Equal(t, http.StatusConflict, ae.StatusCode)
	assert.Contains(t, err.Error(), "keeps no state of its work on demand")
}
