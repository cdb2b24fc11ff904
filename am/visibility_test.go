package am

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/am/events"
	"github.com/yarn-am/yarn-am/am/web"
	"github.com/yarn-am/yarn-am/contract"
)

// Rank 0's address and port are served only over HTTPS with the secret: anyone on rank 0's node who
// read them anonymously before its framework binds the port could bind it first and receive the other
// ranks' connections. Anonymous reads (the plain port, HTTPS without the secret) keep rank and round;
// the rendezvous event never names the address. The status's node inventory is this application's
// nodes only, unless the reader has the secret (docs/security.md#what-anonymous-readers-see).
func TestAnonymousReadersSeeNoRankZeroAddressNorTheCluster(t *testing.T) {
	m := apiAM(t)
	m.cfg.Spec.Gang = true
	c1 := m.rec.Get("c1")
	c1.Rank = &contract.Rendezvous{Round: 0, Rank: 0, WorldSize: 1, LocalWorldSize: 1, Node: "n1:1", MasterAddr: "n1", MasterPort: 29500}
	m.events.Add(events.Rendezvous(0, 1))
	m.book.Nodes.Listed([]contract.NodeStatus{
		{Node: "n1:1", Capability: contract.Capability{"yarn.io/gpu": 8}},
		{Node: "n9:1", Capability: contract.Capability{"yarn.io/gpu": 8}}, // no container of this application
	}, t0)
	plain := web.Handler(m.Web(), web.Options{Secret: testSecret})
	secure := web.Handler(m.Web(), web.Options{Secret: testSecret, Secure: true})

	rendezvous := func(h http.Handler, auth string) contract.Rendezvous {
		rec := do(h, http.MethodGet, "/api/v1/containers/c1/rendezvous", auth, "")
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		var r contract.Rendezvous
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &r))
		return r
	}
	status := func(h http.Handler, auth string) (contract.Status, string) {
		rec := do(h, http.MethodGet, "/api/v1/status", auth, "")
		require.Equal(t, http.StatusOK, rec.Code)
		var s contract.Status
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &s))
		return s, rec.Body.String()
	}
	for name, c := range map[string]struct {
		h    http.Handler
		auth string
	}{"plain": {plain, ""}, "plain with the secret": {plain, "Bearer " + testSecret}, "https without the secret": {secure, ""},
		"https with a wrong secret": {secure, "Bearer nope"}} {
		r := rendezvous(c.h, c.auth)
		assert.Equal(t, 0, r.Rank, name)
		assert.Equal(t, 1, r.WorldSize, name)
		assert.Empty(t, r.MasterAddr, name)
		assert.Zero(t, r.MasterPort, name)
		s, body := status(c.h, c.auth)
		require.NotNil(t, s.Containers[0].Rank, name)
		assert.Equal(t, 0, s.Containers[0].Rank.Rank, name)
		assert.NotContains(t, body, "29500", "%s: rank 0's port in the status (containers, events)", name)
		require.Len(t, s.Nodes, 1, "%s: only the application's nodes", name)
		assert.Equal(t, "n1:1", s.Nodes[0].Node, name)
		cs := do(c.h, http.MethodGet, "/api/v1/containers", c.auth, "").Body.String()
		assert.NotContains(t, cs, "29500", name)
		evs := do(c.h, http.MethodGet, "/api/v1/events?format=json", c.auth, "").Body.String()
		assert.Contains(t, evs, string(contract.EventRendezvous), name)
		assert.NotContains(t, evs, "29500", name)
	}

	r := rendezvous(secure, "Bearer "+testSecret)
	assert.Equal(t, "n1", r.MasterAddr, "the launchers read it with the secret over HTTPS")
	assert.Equal(t, 29500, r.MasterPort)
	s, _ := status(secure, "Bearer "+testSecret)
	assert.Len(t, s.Nodes, 2, "the whole inventory with the secret over HTTPS")
	assert.Equal(t, 29500, s.Containers[0].Rank.MasterPort)
}
