package gang

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/framework"
	"github.com/yarn-am/yarn-am/jobfile"
)

// A rank's worker gets its place in the gang in the layout torchrun and JAX read, and the same as a
// file; a gang that restarted before the rank started, or no AM to ask, starts no worker.
func TestPrepareWorkerGivesTheRanksLayout(t *testing.T) {
	fw, err := framework.Lookup(Name)
	require.NoError(t, err)
	assert.True(t, fw.Selects(&jobfile.Job{TaskExecutor: jobfile.TaskExecutorSpec{Gang: true}}))
	assert.False(t, fw.Selects(&jobfile.Job{}))

	dir := t.TempDir()
	r := &contract.Rendezvous{Round: 2, Rank: 1, WorldSize: 3, LocalRank: 0, LocalWorldSize: 1, MasterAddr: "10.0.0.7", MasterPort: 29500}
	env, err := fw.PrepareWorker(context.Background(), framework.Worker{ContainerID: "c1", Dir: dir,
		Rendezvous: func(context.Context) (*contract.Rendezvous, error) { return r, nil }})
	require.NoError(t, err)
	file := filepath.Join(dir, contract.RendezvousFileName)
	for _, want := range []string{"RANK=1", "WORLD_SIZE=3", "LOCAL_RANK=0", "LOCAL_WORLD_SIZE=1", "MASTER_ADDR=10.0.0.7",
		"MASTER_PORT=29500", contract.EnvRound + "=2", contract.EnvRendezvousFile + "=" + file} {
		assert.Contains(t, env, want)
	}
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	var got contract.Rendezvous
	require.NoError(t, json.Unmarshal(data, &got))
	assert.Equal(t, *r, got)

	_, err = fw.PrepareWorker(context.Background(), framework.Worker{Dir: dir,
		Rendezvous: func(context.Context) (*contract.Rendezvous, error) { return nil, framework.ErrRestarted }})
	assert.True(t, errors.Is(err, framework.ErrRestarted))
	_, err = fw.PrepareWorker(context.Background(), framework.Worker{Dir: dir})
	assert.ErrorContains(t, err, contract.EnvReportURL)
}
