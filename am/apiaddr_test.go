package am

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/yarn-am/yarn-am/container/launcher"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/contract/amtls"
	"github.com/yarn-am/yarn-am/contract/amtls/amtlstest"
	"github.com/yarn-am/yarn-am/yarnrpc"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// TestKeptLauncherKeepsItsContainerInTheNextAttempt: a TaskExecutor an earlier attempt started is
// adopted by this one; its launcher still has the earlier attempt's address, finds this attempt
// through the look-up (apiaddr.go) and says it is alive there, so this attempt's liveness check keeps
// it for minutes although its NodeManager does not answer (docs/running.md#liveness).
func TestKeptLauncherKeepsItsContainerInTheNextAttempt(t *testing.T) {
	m, clock, nm, c := livenessAM(t)
	nm.down.Store(true)
	m.started = clock.Now()
	m.mu.Lock()
	cid := &hadooppb.ContainerIdProto{AppId: c.App, AppAttemptId: c.Att, Id: proto.Int64(2)}
	tr := m.rec.Adopted(yarnrpc.FormatContainerID(cid), "node-a:8041", gpuSpec(1, 0).Capability, cid)
	m.mu.Unlock()

	ca, key := amtlstest.Authority(t)
	first := amtlstest.ServerOf(t, http.NotFoundHandler(), ca, key)
	this := amtlstest.ServerOf(t, m.Handler("s3cret"), ca, key)
	first.Close() // the earlier attempt's AM is gone
	client, err := amtls.HTTPClient(ca, 5*time.Second)
	require.NoError(t, err)
	cfg, err := amtls.ClientConfig(ca)
	require.NoError(t, err)
	loc := &launcher.AMLocator{TLS: cfg, Log: logrus.New(), Lookup: func(context.Context) (contract.APIAddress, error) {
		return contract.APIAddress{URL: this.URL + "/", Attempt: "appattempt_1700000000000_0007_000002"}, nil
	}}
	loc.SetHost(strings.TrimPrefix(first.URL, "https://"))
	rep := &launcher.HTTPReporter{BaseURL: first.URL + "/api/v1/containers/", Secret: "s3cret", Client: client, Locator: loc}

	check(m)
	for range 24 { // two minutes of liveness messages every 5 s
		clock.Add(contract.LivenessInterval)
		require.NoError(t, rep.Alive(context.Background(), tr.ID))
		check(m)
	}
	assert.Equal(t, contract.Running, phase(m, tr), "the kept TaskExecutor is not lost")
	assert.Zero(t, nm.probes.Load(), "a kept launcher that speaks to this attempt is never probed")
	assert.Equal(t, 1, loc.Moves())
}

// fakePublisher keeps what publishAPIAddress wrote.
type fakePublisher struct{ data []byte }

func (f *fakePublisher) PublishAPI(_ context.Context, data []byte) error {
	f.data = data
	return nil
}

// TestPublishedAddressIsWhatLaunchersRead: the document the AM writes is the one the launcher's
// look-up accepts, naming this attempt's HTTPS API and nothing secret.
func TestPublishedAddressIsWhatLaunchersRead(t *testing.T) {
	p := &fakePublisher{}
	publishAPIAddress(context.Background(), p, "https://10.0.0.7:41234/", "appattempt_1700000000000_0007_000002", quietLog)
	a, err := launcher.ParseAPIAddress(p.data)
	require.NoError(t, err)
	assert.Equal(t, contract.APIAddress{URL: "https://10.0.0.7:41234/", Attempt: "appattempt_1700000000000_0007_000002"}, a)
	assert.JSONEq(t, `{"url":"https://10.0.0.7:41234/","attempt":"appattempt_1700000000000_0007_000002"}`, string(p.data))

	publishAPIAddress(context.Background(), struct{}{}, "https://10.0.0.7:41234/", "x", quietLog) // no staging directory: nothing to do
}
