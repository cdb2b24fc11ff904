package launcher

import (
	"context"
	"encoding/json"
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

// The AM serves rank 0's address only with the secret over HTTPS (docs/security.md#what-anonymous-readers-see),
// so the launcher asks for its rendezvous with the secret, through the client pinned to the
// application's authority, and never over plain HTTP; an answer without the address is an error,
// not a worker started with an empty MASTER_ADDR.
func TestRendezvousSendsTheSecretOverHTTPSOnly(t *testing.T) {
	var withSecret atomic.Int32
	full := true
	am, ca := amtlstest.Server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		require.Equal(t, "/api/v1/containers/c1"+contract.RendezvousPath, r.URL.Path)
		rv := contract.Rendezvous{Rank: 1, WorldSize: 2, Node: "n2:1"}
		if r.Header.Get("Authorization") == "Bearer abc123" {
			withSecret.Add(1)
			if full {
				rv.MasterAddr, rv.MasterPort = "n1", 29500
			}
		}
		_ = json.NewEncoder(w).Encode(rv)
	}))
	rep := pinnedReporter(t, am.URL+"/api/v1/containers/", ca)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := rep.Rendezvous(ctx, "c1")
	require.NoError(t, err)
	assert.Equal(t, "n1", r.MasterAddr)
	assert.Equal(t, 29500, r.MasterPort)
	assert.Equal(t, int32(1), withSecret.Load(), "the launcher sent the secret")

	full = false
	_, err = rep.Rendezvous(ctx, "c1")
	assert.ErrorContains(t, err, "no rank 0 address")

	var sawAuth atomic.Int32
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			sawAuth.Add(1)
		}
	}))
	defer plain.Close()
	_, err = (&HTTPReporter{BaseURL: plain.URL + "/", Secret: "abc123", Client: http.DefaultClient}).Rendezvous(ctx, "c1")
	assert.ErrorContains(t, err, "https://")
	_, err = (&HTTPReporter{BaseURL: am.URL + "/", Secret: "abc123"}).Rendezvous(ctx, "c1")
	assert.ErrorContains(t, err, "no HTTPS client")
	assert.Zero(t, sawAuth.Load(), "no plain server saw the secret")
}
