package client

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"google.golang.org/protobuf/proto"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// TestFollowPrintsEachDiagnosticOnce: the worker's stderr under its completed event, and neither the
// failure-limit-reached event, the finished event nor the outcome line repeats it.
func TestFollowPrintsEachDiagnosticOnce(t *testing.T) {
	diag := "2 TaskExecutors failed, more than taskexecutor.max-failures = 1 allows (exit code 3 ×2)\n" +
		"- c1 on n1:1 exited with code 3: its stderr ends with:\noops\n" +
		"- c2 on n1:1 exited with code 3: its stderr ends with:\noops"
	var s shownText
	var out bytes.Buffer
	code := int32(3)
	for _, id := range []string{"c1", "c2"} {
		s.printEvent(&out, "t", contract.Event{Type: contract.EventCompleted, Severity: contract.SeverityError, Container: id, ExitStatus: &code,
			ExitClass: contract.ExitFailed, Message: "TaskExecutor " + id + " on n1:1 exited with code 3 (counts as a failure)", StderrTail: "oops"})
	}
	s.printEvent(&out, "t", contract.Event{Type: contract.EventFailureLimitReached, Severity: contract.SeverityError, Reason: diag, Message: "the application fails: " + diag})
	s.printEvent(&out, "t", contract.Event{Type: contract.EventFinished, Severity: contract.SeverityError, Status: contract.Failed, Reason: diag, Message: "application finished: FAILED: " + diag})
	res := FollowResult{Report: &hadooppb.ApplicationReportProto{
		ApplicationId:          &hadooppb.ApplicationIdProto{ClusterTimestamp: proto.Int64(1), Id: proto.Int32(1)},
		YarnApplicationState:   hadooppb.YarnApplicationStateProto_FINISHED.Enum(),
		FinalApplicationStatus: hadooppb.FinalApplicationStatusProto_APP_FAILED.Enum(),
		Diagnostics:            proto.String(diag)}, shown: &s}
	out.WriteString(res.Outcome() + "\n")
	text := out.String()
	assert.Equal(t, 2, strings.Count(text, "oops"), "once per container:\n%s", text)
	assert.Equal(t, 2, strings.Count(text, "2 TaskExecutors failed"), "the reason in full once, its headline in the outcome:\n%s", text)
	assert.Contains(t, text, "(each failure is shown above)")
	assert.Contains(t, text, "application finished: FAILED (the reason is above)")
	assert.Contains(t, text, "final status FAILED: 2 TaskExecutors failed, more than taskexecutor.max-failures = 1 allows (exit code 3 ×2) ... (in full above)")

	// Without the events (no stream), the outcome says it all.
	res.shown = nil
	assert.Equal(t, 2, strings.Count(res.Outcome(), "oops"))
}

func TestLastLineOfIsTheTailsLastLine(t *testing.T) {
	assert.Equal(t, "ValueError: bad input", lastLineOf("Traceback (most recent call last):\n  x\nValueError: bad input\n"))
	assert.Equal(t, "one", lastLineOf("one"))
}

// The finished event of a failed driver carries its stderr lines to the owner's follower (the AM
// serves them to the secret's holders only), which prints them under the event, as text.
func TestFinishedEventPrintsTheDriversStderrTail(t *testing.T) {
	var out strings.Builder
	s := &shownText{}
	s.printEvent(&out, "t", contract.Event{Type: contract.EventFinished, Severity: contract.SeverityError, Status: contract.Failed,
		Reason: "the driver exited with code 3", Message: "application finished: FAILED: the driver exited with code 3",
		StderrTail: "driver-marker: the model path /nope does not exist\n\x1b[2J"})
	assert.Contains(t, out.String(), "the driver's stderr ends with:")
	assert.Contains(t, out.String(), "driver-marker: the model path /nope does not exist")
	assert.NotContains(t, out.String(), "\x1b", "as text")
}

// TestEventLinePrintsTheOwnersDetail: an event's Detail (a JobManager's bound ports), which the AM
// serves to the secret's holders only, follows its message on the owner's terminal; an anonymous
// reader's event has none, and its line is the message alone.
func TestEventLinePrintsTheOwnersDetail(t *testing.T) {
	e := contract.Event{Type: "flink-job", Message: "the JobManager bound its ports", Detail: "RPC 10.0.0.1:41234, REST 10.0.0.1:41235"}
	assert.Equal(t, "flink-job: the JobManager bound its ports: RPC 10.0.0.1:41234, REST 10.0.0.1:41235", EventLine(e))
	e.Detail = ""
	assert.Equal(t, "flink-job: the JobManager bound its ports", EventLine(e))
}
