package logs

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/yarnrpc"
)

// TestFilterCheckRefusesWhatCanMatchNothing: --container of another application, --am with a
// container that is not the AM's, a negative --tail and a --file that is a path are refused in the
// words of the flags, before the cluster is asked.
func TestFilterCheckRefusesWhatCanMatchNothing(t *testing.T) {
	const id = "application_1700000000000_0001"
	app, err := yarnrpc.ParseApplicationID(id)
	require.NoError(t, err)
	for _, ok := range []Filter{{}, {Container: "container_1700000000000_0001_01_000002"}, {Container: "container_1700000000000_0001_02_000001", AM: true}, {File: "stdout", Tail: 5}} {
		assert.NoError(t, ok.Check(app, id), "%+v", ok)
	}
	for _, c := range []struct {
		f    Filter
		want string
	}{
		{Filter{Container: "container_x"}, "--container container_x:"},
		{Filter{Container: "container_1700000000000_0002_01_000002"}, "belongs to application_1700000000000_0002, not to " + id},
		{Filter{Container: "container_1700000000000_0001_01_000002", AM: true}, "that container is not the ApplicationMaster's"},
		{Filter{Tail: -1}, "--tail -1: want a number of lines >= 1 (or 0 for all)"},
		{Filter{File: "../stdout"}, `--file "../stdout": want a log file name`},
		{Filter{File: ".."}, `--file "..": want a log file name`},
	} {
		err := c.f.Check(app, id)
		require.Error(t, err, "%+v", c.f)
		assert.Contains(t, err.Error(), c.want)
	}
}

// TestExitCodeIsTheOneTable: logs' outcomes map to docs/running.md#exit-codes.
func TestExitCodeIsTheOneTable(t *testing.T) {
	var notes strings.Builder
	live := context.Background()
	gone, cancel := context.WithCancel(live)
	cancel()
	assert.Equal(t, contract.ExitOK, ExitCode(live, &notes, "app", nil))
	assert.Equal(t, contract.ExitInterrupted, ExitCode(gone, &notes, "app", errors.New("stopped")))
	assert.Equal(t, contract.ExitAppFailed, ExitCode(live, &notes, "app", &NotAvailableError{Msg: "aggregation is off"}))
	assert.Equal(t, contract.ExitRejected, ExitCode(live, &notes, "application_1_0001", fmt.Errorf("x: %w", yarnrpc.ErrApplicationNotFound)))
	assert.Equal(t, contract.ExitUnreachable, ExitCode(live, &notes, "app", fmt.Errorf("x: %w", context.DeadlineExceeded)))
	assert.Contains(t, notes.String(), "yarn-am logs: the ResourceManager does not know application_1_0001")
	assert.Contains(t, notes.String(), "yarn-am logs: aggregation is off")
}
