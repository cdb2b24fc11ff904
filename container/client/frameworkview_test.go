package client

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/yarn-am/yarn-am/contract"
)

// TestStatusPrintsTheFrameworkDetails: yarn-am status shows what the job's framework says of its work
// under its title (a Flink job's id, state and parallelism), as text: a control sequence in a value
// is not passed to the terminal.
func TestStatusPrintsTheFrameworkDetails(t *testing.T) {
	var b bytes.Buffer
	PrintAMStatus(&b, &contract.Status{State: contract.StateRunning, Framework: &contract.FrameworkStatus{
		Title: "Flink job", At: time.Now(),
		Details: []contract.Detail{{Name: "Job", Value: "stream (0123456789abcdef0123456789abcdef)"}, {Name: "State", Value: "RUNNING"},
			{Name: "Parallelism", Value: "2"}, {Name: "Last checkpoint", Value: "#3 \x1b[31mred"}},
	}})
	out := b.String()
	for _, want := range []string{"Flink job: (as of ", "  Job:             stream (0123456789abcdef0123456789abcdef)\n", "  State:           RUNNING\n", "  Parallelism:     2\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("status does not show %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\x1b") {
		t.Errorf("a control sequence reached the terminal:\n%q", out)
	}
	b.Reset()
	PrintAMStatus(&b, &contract.Status{State: contract.StateRunning})
	if strings.Contains(b.String(), "Flink") || strings.Contains(b.String(), "Framework") {
		t.Errorf("a job without framework details shows a block:\n%s", b.String())
	}
}
