package jobfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func placementJob(t *testing.T, table string, defines ...string) (*Job, error) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "job.toml")
	require.NoError(t, os.WriteFile(p, []byte("[taskexecutor]\ncommand = \"./w\"\ninstances = 2\n"+table), 0o644))
	f, err := Read(p)
	require.NoError(t, err)
	if _, err := f.ApplyDefines(defines); err != nil {
		return nil, err
	}
	return f.Job()
}

func TestPlacementReadsMaxPerNodeAndNodeAttributes(t *testing.T) {
	j, err := placementJob(t, "[taskexecutor.placement]\nmax-per-node = 1\nnode-attributes = [\"gpu_model=H200\", \"rm.yarn.io/os!=windows\"]\n")
	require.NoError(t, err)
	assert.Equal(t, Placement{MaxPerNode: 1, NodeAttributes: []NodeAttribute{{Name: "gpu_model", Value: "H200"}, {Name: "rm.yarn.io/os", Value: "windows", Not: true}}}, j.TaskExecutor.Placement)
	assert.Equal(t, "rm.yarn.io/os!=windows", j.TaskExecutor.Placement.NodeAttributes[1].String())

	j, err = placementJob(t, "")
	require.NoError(t, err)
	assert.False(t, j.TaskExecutor.Placement.Set(), "no table: placed freely")
}

func TestPlacementDefinesSetItsKeys(t *testing.T) {
	j, err := placementJob(t, "", "taskexecutor.placement.max-per-node=2", "taskexecutor.placement.node-attributes=[\"arch=x86_64\"]")
	require.NoError(t, err)
	assert.Equal(t, 2, j.TaskExecutor.Placement.MaxPerNode)
	assert.Equal(t, []NodeAttribute{{Name: "arch", Value: "x86_64"}}, j.TaskExecutor.Placement.NodeAttributes)
}

func TestPlacementRefusesBadValuesNamingTheKey(t *testing.T) {
	for _, c := range []struct{ table, want string }{
		{"[taskexecutor.placement]\nmax-per-node = 0\n", "taskexecutor.placement.max-per-node = 0: want an integer from 1 to 100000"},
		{"[taskexecutor.placement]\nmax-per-node = \"1\"\n", `taskexecutor.placement.max-per-node = "1": want an integer from 1 to 100000, not a string`},
		{"[taskexecutor.placement]\nmax-per-nod = 1\n", `unknown key "taskexecutor.placement.max-per-nod" (did you mean "taskexecutor.placement.max-per-node"?)`},
		{"[taskexecutor.placement]\n", "taskexecutor.placement is empty: set max-per-node"},
		{"placement = 1\n", "taskexecutor.placement = 1: want a table"},
		{"[taskexecutor.placement]\nnode-attributes = [\"gpu_model\"]\n", `taskexecutor.placement.node-attributes: "gpu_model": no = or !=; write name=value or name!=value`},
		{"[taskexecutor.placement]\nnode-attributes = [\"=H200\"]\n", `"=H200": no attribute name before the operator`},
		{"[taskexecutor.placement]\nnode-attributes = [\"a=\"]\n", `"a=": no value after the operator`},
		{"[taskexecutor.placement]\nnode-attributes = [\"a=b,c\"]\n", `"a=b,c": the value is letters, digits`},
		{"[taskexecutor.placement]\nnode-attributes = [\"a b=c\"]\n", `"a b=c": the attribute name is letters`},
		{"[taskexecutor.placement]\nnode-attributes = [\"rm.yarn.io/gpu.model=H200\"]\n", `"rm.yarn.io/gpu.model=H200": the attribute name is letters, digits, '_' and '-' (no '.': YARN refuses one in a name)`},
		{"[taskexecutor.placement]\nnode-attributes = [\"a=b\", \"a!=c\"]\n", `"a!=c": a second condition on node attribute a`},
		{"[taskexecutor.placement]\nnode-attributes = [\"a=" + strings.Repeat("v", 300) + "\"]\n", "longer than YARN takes"},
		{"locality = \"spread\"\n[taskexecutor.placement]\nmax-per-node = 1\n", `taskexecutor.locality = "spread" with taskexecutor.placement`},
	} {
		_, err := placementJob(t, c.table)
		require.Error(t, err, c.table)
		assert.Contains(t, err.Error(), c.want, c.table)
	}
	many := "[taskexecutor.placement]\nnode-attributes = [" + strings.Repeat(`"a=b",`, 17) + "]\n"
	_, err := placementJob(t, many)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "17 conditions; at most 16")
}
