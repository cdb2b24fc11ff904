//go:build integration

package e2e

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/am/driverclient"
	"github.com/yarn-am/yarn-am/contract"
)

// Driver returns a driver-API client for a once it has registered: on the AM's HTTPS API (named in
// the status on its tracking URL), trusting the authority the test submitted with.
func (c *Cluster) Driver(t *testing.T, a *App) *driverclient.Client {
	t.Helper()
	base := c.PlainBase(t, a)
	plain, err := driverclient.New(base+"api/v1/", "")
	require.NoError(t, err)
	s, err := plain.Status(Context(t, 30*time.Second))
	require.NoError(t, err)
	require.Regexp(t, `^https://`, s.SecureAPI, "the status names the HTTPS API")
	dc, err := driverclient.New(s.SecureAPI, a.Secret)
	require.NoError(t, err)
	require.NoError(t, dc.Trust(a.CACert))
	return dc
}

// Recorder collects a stream's events in the background.
type Recorder struct {
	mu  sync.Mutex
	evs []contract.Event
}

// Record reads dc's event stream in the background until the test ends (then logging every event
// when the test failed).
func (c *Cluster) Record(t *testing.T, dc *driverclient.Client) *Recorder {
	ctx, cancel := context.WithCancel(context.Background())
	r := &Recorder{}
	s := dc.Events(ctx, 0)
	s.GiveUpAfter = 5 * time.Second
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			e, err := s.Next()
			if err != nil {
				return
			}
			r.mu.Lock()
			r.evs = append(r.evs, e)
			r.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		if t.Failed() {
			for _, e := range r.All() {
				t.Logf("event %d %s: %s", e.ID, e.Type, e.Message)
			}
		}
	})
	return r
}

// All is every event recorded so far, in order.
func (r *Recorder) All() []contract.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]contract.Event(nil), r.evs...)
}

// Wait returns the first event matching f, failing after d.
func (r *Recorder) Wait(t *testing.T, d time.Duration, what string, f func(contract.Event) bool) contract.Event {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		for _, e := range r.All() {
			if f(e) {
				return e
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no %s event within %v", what, d)
	return contract.Event{}
}
