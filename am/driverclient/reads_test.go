package driverclient

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/am/events"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/contract/amtls/amtlstest"
)

// TestReadsCarryTheSecretOnlyToThePinnedAM: the status and the event stream carry the secret to the
// AM the application's authority certified, so its owner's CLI sees the failed workers' stderr tails
// (docs/security.md#what-anonymous-readers-see); the same reads over http:// or to a server the
// client was not pinned to go without it.
func TestReadsCarryTheSecretOnlyToThePinnedAM(t *testing.T) {
	var mu sync.Mutex
	var seen []string // "path Authorization" per request
	f := &fakeAM{instances: 1, log: events.NewLog(10)}
	f.log.Add(events.Requested(1, contract.Capability{"yarn.io/gpu": 1}))
	inner := f.handler()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.URL.Path+" "+r.Header.Get("Authorization"))
		mu.Unlock()
		inner.ServeHTTP(w, r)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	read := func(c *Client) []string {
		mu.Lock()
		seen = nil
		mu.Unlock()
		_, err := c.Status(ctx)
		require.NoError(t, err)
		s := c.Events(ctx, 0)
		s.GiveUpAfter = time.Second
		_, err = s.Next()
		require.NoError(t, err)
		require.NoError(t, s.Close())
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), seen...)
	}

	srv, ca := amtlstest.Server(t, h)
	c, err := New(srv.URL, "s3cret")
	require.NoError(t, err)
	require.NoError(t, c.Trust(ca))
	assert.Equal(t, []string{"/api/v1/status Bearer s3cret", "/api/v1/events Bearer s3cret"}, read(c), "the pinned AM gets the secret")

	c, err = New(srv.URL, "s3cret")
	require.NoError(t, err)
	c.HTTP = srv.Client() // trusts the server as a system trust store would, but not pinned
	assert.Equal(t, []string{"/api/v1/status ", "/api/v1/events "}, read(c), "an unpinned client reads anonymously")

	plain := httptest.NewServer(h)
	defer plain.Close()
	c, err = New(plain.URL, "s3cret")
	require.NoError(t, err)
	require.NoError(t, c.Trust(ca)) // pinned, but http:// carries nothing secret
	assert.Equal(t, []string{"/api/v1/status ", "/api/v1/events "}, read(c), "http:// reads go without the secret")
}
