package launcher

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/contract/amtls/amtlstest"
)

// TestHeartbeatSaysAliveWithTheSecretOverThePinnedChannel: the launcher's liveness messages go to
// <report URL><container>/alive with the secret, one per interval, and go on after the AM refused one.
func TestHeartbeatSaysAliveWithTheSecretOverThePinnedChannel(t *testing.T) {
	var mu sync.Mutex
	var paths, auths []string
	srv, ca := amtlstest.Server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		paths, auths = append(paths, r.Method+" "+r.URL.Path), append(auths, r.Header.Get("Authorization"))
		if len(paths) == 1 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	var rep Reporter = pinnedReporter(t, srv.URL+"/api/v1/containers", ca)
	h, ok := rep.(Heartbeater)
	require.True(t, ok, "the HTTP reporter says the launcher is alive")

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	log := logrus.New()
	go func() { defer close(done); Heartbeat(ctx, h, "container_1_0001_01_000002", 10*time.Millisecond, log) }()
	require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(paths) >= 3 }, 10*time.Second, 5*time.Millisecond)
	cancel()
	<-done
	mu.Lock()
	defer mu.Unlock()
	for i := range paths {
		assert.Equal(t, "POST /api/v1/containers/container_1_0001_01_000002"+contract.AlivePath, paths[i])
		assert.Equal(t, "Bearer abc123", auths[i])
	}
}
