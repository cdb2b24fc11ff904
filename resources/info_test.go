package resources

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/yarn-am/yarn-am/contract"
)

func TestInfoFileRoundTrip(t *testing.T) {
	dir := t.TempDir()
	infos := map[string][]Info{
		"gpu":     {{"index": "0"}, {"index": "3", "uuid": "GPU-1"}},
		"my-fpga": {{"index": "a"}},
		"none":    nil,
	}
	path, err := WriteInfoFile(dir, infos)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, contract.InfoFileName), path)
	st, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), st.Mode().Perm())
	data, _ := os.ReadFile(path)
	assert.JSONEq(t, `{"gpu":[{"index":"0"},{"index":"3","uuid":"GPU-1"}],"my-fpga":[{"index":"a"}],"none":[]}`, string(data))
	entries, _ := os.ReadDir(dir)
	assert.Len(t, entries, 1, "no temporary file left behind")

	env := InfoEnv(path, infos)
	assert.Equal(t, map[string]string{
		contract.EnvInfoFile:       path,
		"YARN_AM_RESOURCE_GPU":     "0,3",
		"YARN_AM_RESOURCE_MY_FPGA": "a",
		"YARN_AM_RESOURCE_NONE":    "",
	}, env)

	t.Setenv(contract.EnvInfoFile, path)
	got, err := ReadInfos()
	require.NoError(t, err)
	assert.Equal(t, map[string][]Info{"gpu": infos["gpu"], "my-fpga": infos["my-fpga"], "none": {}}, got)

	gpus, err := ExternalResourceInfos("gpu")
	require.NoError(t, err)
	require.Len(t, gpus, 2)
	assert.Equal(t, []string{"index", "uuid"}, gpus[1].Keys())
	v, ok := gpus[1].Property("uuid")
	assert.True(t, ok)
	assert.Equal(t, "GPU-1", v)
	_, ok = gpus[0].Property("uuid")
	assert.False(t, ok)

	_, err = ExternalResourceInfos("tpu")
	assert.EqualError(t, err, `resources: no external resource "tpu" in this container; configured: gpu, my-fpga, none`)
}

func TestReadInfosOutsideLauncher(t *testing.T) {
	t.Setenv(contract.EnvInfoFile, "")
	t.Chdir(t.TempDir())
	_, err := ReadInfos()
	assert.ErrorIs(t, err, ErrNoInfoFile)

	require.NoError(t, os.WriteFile(contract.InfoFileName, []byte(`{"gpu":[{"index":"1"}]}`), 0o644))
	got, err := ReadInfos()
	require.NoError(t, err)
	assert.Equal(t, map[string][]Info{"gpu": {{"index": "1"}}}, got)

	require.NoError(t, os.WriteFile(contract.InfoFileName, []byte(`["gpu"]`), 0o644))
	_, err = ReadInfos()
	assert.ErrorContains(t, err, "is not a valid external-resource info file")
}

func TestEnvResourceVar(t *testing.T) {
	assert.Equal(t, "YARN_AM_RESOURCE_GPU", EnvResourceVar("gpu"))
	assert.Equal(t, "YARN_AM_RESOURCE_MY_FPGA_2", EnvResourceVar("my-fpga_2"))
}
