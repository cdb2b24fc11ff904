package launcher

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/contract/amtls/amtlstest"
)

// The launcher reads what the framework published (a Flink JobManager's RPC address) as it reads a
// rendezvous: with the secret, through the client pinned to the application's authority, never over
// plain HTTP; an AM that refuses is an error naming the answer.
func TestPublishedSendsTheSecretOverHTTPSOnly(t *testing.T) {
	var withSecret atomic.Int32
	am, ca := amtlstest.Server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		require.Equal(t, contract.FrameworkPublishedPath, r.URL.Path)
		if r.Header.Get("Authorization") != "Bearer abc123" {
			http.Error(w, `{"error":"needs the secret"}`, http.StatusUnauthorized)
			return
		}
		withSecret.Add(1)
		w.Write([]byte(`{"flink.jobmanager.rpc":"nm1:41234"}`))
	}))
	rep := pinnedReporter(t, am.URL+"/api/v1/containers/", ca)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got, err := rep.Published(ctx)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"flink.jobmanager.rpc": "nm1:41234"}, got)
	assert.EqualValues(t, 1, withSecret.Load())

	rep.Secret = "wrong"
	_, err = rep.Published(ctx)
	assert.ErrorContains(t, err, "401 Unauthorized")

	var sawAuth atomic.Int32
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			sawAuth.Add(1)
		}
	}))
	defer plain.Close()
	_, err = (&HTTPReporter{BaseURL: plain.URL + "/api/v1/containers/", Secret: "abc123", Client: http.DefaultClient}).Published(ctx)
	assert.ErrorContains(t, err, "https://")
	assert.Zero(t, sawAuth.Load(), "no secret over plain HTTP")
	_, err = (&HTTPReporter{BaseURL: am.URL + "/api/v1/containers/", Secret: "abc123"}).Published(ctx)
	assert.ErrorContains(t, err, "no HTTPS client")
}
