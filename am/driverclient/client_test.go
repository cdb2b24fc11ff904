package driverclient

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/am"
	"github.com/yarn-am/yarn-am/am/decision"
	"github.com/yarn-am/yarn-am/am/events"
	"github.com/yarn-am/yarn-am/am/web"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/contract/amtls/amtlstest"
)

// fakeAM serves the driver API from an event log and a requirement, like the AM.
type fakeAM struct {
	mu        sync.Mutex
	instances int
	log       *events.Log
	auths     []string
}

func (f *fakeAM) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v1/status", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		_ = json.NewEncoder(w).Encode(contract.Status{App: "application_1_0001", State: "RUNNING", Requirement: contract.Requirement{Instances: f.instances}})
	})
	mux.HandleFunc("GET /api/v1/containers", func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode([]contract.ContainerStatus{{ID: "c1", Node: "n1", State: contract.Running}})
	})
	mux.HandleFunc("PUT /api/v1/requirements", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.auths = append(f.auths, r.Header.Get("Authorization"))
		if r.Header.Get("Authorization") != "Bearer s3cret" {
			w.WriteHeader(401)
			fmt.Fprint(w, `{"error":"writes need the header 'Authorization: Bearer <application secret>'"}`)
			return
		}
		var u contract.RequirementsUpdate
		_ = json.NewDecoder(r.Body).Decode(&u)
		f.instances = *u.Instances
		_ = json.NewEncoder(w).Encode(contract.Requirement{Instances: f.instances})
	})
	mux.HandleFunc("GET /api/v1/events", am.EventsHandler(f.log, 50*time.Millisecond))
	return mux
}

func TestClientStatusContainersRequirements(t *testing.T) {
	f := &fakeAM{instances: 3, log: events.NewLog(10)}
	srv, ca := amtlstest.Server(t, f.handler())
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	require.NoError(t, os.WriteFile(caFile, ca, 0o644))
	t.Setenv(contract.EnvAPI, srv.URL+"/api/v1/")
	t.Setenv(contract.EnvSecret, "s3cret")
	t.Setenv(contract.EnvCACert, caFile)
	c, err := FromEnv()
	require.NoError(t, err)
	ctx := context.Background()

	s, err := c.Status(ctx)
	require.NoError(t, err)
	assert.Equal(t, contract.StateRunning, s.State)
	assert.Equal(t, 3, s.Requirement.Instances)
	cs, err := c.Containers(ctx)
	require.NoError(t, err)
	assert.Equal(t, "c1", cs[0].ID)

	r, err := c.SetRequirements(ctx, 2)
	require.NoError(t, err)
	assert.Equal(t, 2, r.Instances)
	assert.Equal(t, []string{"Bearer s3cret"}, f.auths, "writes carry the secret")

	noSecret, err := New(srv.URL, "")
	require.NoError(t, err)
	require.NoError(t, noSecret.Trust(ca))
	_, err = noSecret.SetRequirements(ctx, 1)
	var apiErr *APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, 401, apiErr.StatusCode)
	assert.Contains(t, apiErr.Message, "Authorization: Bearer")

	f.log.Add(events.Requested(1, nil))
	f.log.Add(events.Launched("c1", "n1"))
	evs, err := c.RecentEvents(ctx, 1)
	require.NoError(t, err)
	require.Len(t, evs, 1)
	assert.Equal(t, contract.EventLaunched, evs[0].Type)
	evs, err = c.EventsSince(ctx, 0, 0)
	require.NoError(t, err)
	assert.Len(t, evs, 2)

	_, err = New("host:1234", "")
	assert.ErrorContains(t, err, "YARN_AM_API")
	t.Setenv(contract.EnvAPI, "")
	_, err = FromEnv()
	assert.ErrorContains(t, err, "YARN_AM_API is not set")
}

// A stream whose connection drops resumes after the last event it returned: nothing lost, nothing twice.
func TestStreamResumesAfterDroppedConnection(t *testing.T) {
	log := events.NewLog(100)
	for i := 1; i <= 3; i++ {
		log.Add(events.Requested(i, nil))
	}
	var mu sync.Mutex
	var resumedFrom []string
	serveEvents := am.EventsHandler(log, time.Second)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		resumedFrom = append(resumedFrom, r.Header.Get("Last-Event-ID"))
		first := len(resumedFrom) == 1
		mu.Unlock()
		if first { // send two events, then drop the connection
			w.Header().Set("Content-Type", "text/event-stream")
			for _, e := range log.Since(0, 2) {
				require.NoError(t, web.WriteSSE(w, e))
			}
			w.(http.Flusher).Flush()
			hj, _, _ := w.(http.Hijacker).Hijack()
			hj.Close()
			return
		}
		serveEvents(w, r)
	}))
	defer srv.Close()
	c, err := New(srv.URL+"/api/v1", "")
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s := c.Events(ctx, 0)
	defer s.Close()
	var got []uint64
	for len(got) < 4 {
		if len(got) == 3 {
			log.Add(events.Launched("c1", "n1"))
		}
		e, err := s.Next()
		require.NoError(t, err)
		got = append(got, e.ID)
	}
	assert.Equal(t, []uint64{1, 2, 3, 4}, got)
	mu.Lock()
	assert.Equal(t, []string{"0", "2"}, resumedFrom)
	mu.Unlock()

	log.Add(events.Launched("c2", "n1"))
	log.Add(events.Finished(decision.Outcome{Status: contract.Succeeded, Diagnostics: "done"}))
	e, err := s.Until(func(e contract.Event) bool { return e.Type == contract.EventFinished })
	require.NoError(t, err)
	assert.Equal(t, uint64(6), e.ID)
	assert.Equal(t, uint64(6), s.LastID())
}

func TestStreamEndsWithContextAndGivesUp(t *testing.T) {
	log := events.NewLog(10)
	srv := httptest.NewServer(am.EventsHandler(log, 20*time.Millisecond))
	c, err := New(srv.URL, "")
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err = c.Events(ctx, 0).Next()
	assert.ErrorIs(t, err, context.DeadlineExceeded, "heartbeats alone never return an event")

	srv.Close()
	s := c.Events(context.Background(), 0)
	s.GiveUpAfter = 300 * time.Millisecond
	start := time.Now()
	_, err = s.Next()
	assert.ErrorContains(t, err, "the event stream is gone")
	assert.Less(t, time.Since(start), 5*time.Second)
}

// TestStreamRefusesAnOversizedEvent: an event larger than MaxEventBytes (here a valid 4 MiB JSON
// event) is not read into memory whole and not returned; the stream gives up with the reason.
func TestStreamRefusesAnOversizedEvent(t *testing.T) {
	huge := `{"id":1,"type":"x","message":"` + strings.Repeat("x", 4<<20) + `"}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "data: "+huge+"\n\n")
	}))
	defer srv.Close()
	c, err := New(srv.URL, "")
	require.NoError(t, err)
	s := c.Events(context.Background(), 0)
	s.GiveUpAfter = 200 * time.Millisecond
	e, err := s.Next()
	require.Error(t, err, "an oversized event was returned: %d bytes of message", len(e.Message))
	assert.ErrorIs(t, err, errEventTooLarge)
}

// The driver client sends the secret only over HTTPS to the AM whose certificate the application's
// authority issued: not over http://, not to an impostor presenting another self-signed certificate.
func TestClientSendsTheSecretOnlyToThePinnedAM(t *testing.T) {
	f := &fakeAM{instances: 3, log: events.NewLog(10)}
	_, appCA := amtlstest.Server(t, f.handler())
	impostor, _ := amtlstest.Server(t, f.handler())
	plain := httptest.NewServer(f.handler())
	defer plain.Close()
	ctx := context.Background()

	c, err := New(impostor.URL, "s3cret")
	require.NoError(t, err)
	require.NoError(t, c.Trust(appCA))
	_, err = c.SetRequirements(ctx, 1)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "certificate")

	// A client that trusts the impostor the way a system trust store would, but was never pinned.
	c, err = New(impostor.URL, "s3cret")
	require.NoError(t, err)
	c.HTTP = impostor.Client()
	_, err = c.SetRequirements(ctx, 1)
	require.ErrorIs(t, err, ErrNotPinned)

	c, err = New(plain.URL, "s3cret")
	require.NoError(t, err)
	_, err = c.SetRequirements(ctx, 1)
	assert.ErrorContains(t, err, "not https://")
	s, err := c.Status(ctx)
	require.NoError(t, err, "reads work over the plain tracking URL")
	assert.Equal(t, 3, s.Requirement.Instances)

	f.mu.Lock()
	defer f.mu.Unlock()
	assert.Empty(t, f.auths, "no server saw the Authorization header")

	require.Error(t, c.Trust([]byte("not pem")))
}

// TestStatusDocumentKeepsWhatTheAMSent: yarn-am status --json prints the AM's document as sent,
// fields this client does not know included; an error answer without a body names its reason phrase.
func TestStatusDocumentKeepsWhatTheAMSent(t *testing.T) {
	fail := false
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if fail {
			w.WriteHeader(http.StatusTeapot)
			return
		}
		_, _ = io.WriteString(w, `{"app":"application_1_0001","state":"RUNNING","later":{"x":1}}`)
	}))
	defer srv.Close()
	c, err := New(srv.URL+"/", "")
	require.NoError(t, err)
	st, raw, err := c.StatusDocument(context.Background())
	require.NoError(t, err)
	assert.Equal(t, "application_1_0001", st.App)
	assert.JSONEq(t, `{"app":"application_1_0001","state":"RUNNING","later":{"x":1}}`, string(raw))

	fail = true
	_, _, err = c.StatusDocument(context.Background())
	var ae *APIError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, http.StatusTeapot, ae.StatusCode)
	assert.Contains(t, err.Error(), "I'm a teapot")
}
