package client

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/yarn-am/yarn-am/am"
	"github.com/yarn-am/yarn-am/am/decision"
	"github.com/yarn-am/yarn-am/am/events"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// A TaskExecutor that failed gets the command that prints its logs under its event; one that
// succeeded, or that YARN took away (preempted), does not.
func TestFollowNamesTheLogsCommandOfAFailedTaskExecutor(t *testing.T) {
	log := events.NewLog(100)
	log.Add(events.Completed("container_1_0007_01_000002", "n1:1", decision.Exit{Status: 3, Class: contract.ExitFailed}))
	log.Add(events.Completed("container_1_0007_01_000003", "n1:1", decision.Exit{Status: 0, Class: contract.ExitSucceeded}))
	log.Add(events.Completed("container_1_0007_01_000004", "n2:1", decision.Exit{Status: -102, Class: contract.ExitPreempted}))
	log.Add(events.Completed("container_1_0007_01_000005", "n2:1", decision.Exit{Status: 90, Class: contract.ExitDiscoveryFailed}))
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v1/events", am.EventsHandler(log, time.Second))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	var b bytes.Buffer
	out := &lockedWriter{w: &b}
	f := &eventFollower{out: out, app: "application_1_0007"}
	f.start(context.Background(), srv.URL+"/", nil)
	require.Eventually(t, func() bool {
		out.mu.Lock()
		defer out.mu.Unlock()
		return strings.Count(b.String(), "completed:") == 4
	}, 5*time.Second, 10*time.Millisecond)
	f.stop()
	text := b.String()
	assert.Contains(t, text, "its logs: yarn-am logs application_1_0007 --container container_1_0007_01_000002\n")
	assert.Contains(t, text, "its logs: yarn-am logs application_1_0007 --container container_1_0007_01_000005\n")
	assert.Equal(t, 2, strings.Count(text, "its logs:"), text)
}

// status shows the log aggregation status the RM reports, and the command for the logs.
func TestStatusShowsLogAggregation(t *testing.T) {
	r := &hadooppb.ApplicationReportProto{ApplicationId: &hadooppb.ApplicationIdProto{ClusterTimestamp: proto.Int64(1), Id: proto.Int32(7)},
		LogAggregationStatus: hadooppb.LogAggregationStatusProto_LOG_TIME_OUT.Enum()}
	var b bytes.Buffer
	PrintReport(&b, ViewReport(r))
	assert.Contains(t, b.String(), "Logs:         log aggregation TIME_OUT; yarn-am logs application_1_0007\n")
	b.Reset()
	r.LogAggregationStatus = nil // an RM that does not report it: no line rather than a wrong DISABLED
	PrintReport(&b, ViewReport(r))
	assert.NotContains(t, b.String(), "Logs:")
}
