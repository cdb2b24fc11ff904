package launcher

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/sirupsen/logrus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/resources"
)

// fakeDriver hands out fixed indexes and records what happened to it.
type fakeDriver struct {
	name     string
	indexes  []string
	err      error
	envVar   string
	events   *[]string
	mu       sync.Mutex
	released int
}

func (f *fakeDriver) Discover(_ context.Context, amount int) ([]resources.Info, error) {
	*f.events = append(*f.events, "discover "+f.name)
	if f.err != nil {
		return nil, f.err
	}
	var out []resources.Info
	for _, i := range f.indexes[:amount] {
		out = append(out, resources.Info{"index": i})
	}
	return out, nil
}

func (f *fakeDriver) Release(context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.released++
	*f.events = append(*f.events, "release "+f.name)
	return nil
}

func (f *fakeDriver) Env(infos []resources.Info) map[string]string {
	if f.envVar == "" {
		return nil
	}
	var idx []string
	for _, in := range infos {
		idx = append(idx, in["index"])
	}
	return map[string]string{f.envVar: strings.Join(idx, ",")}
}

type recordingReporter struct {
	events  *[]string
	reports []Report
	marker  string
	err     error
}

func (r *recordingReporter) Report(_ context.Context, rep Report) error {
	_, err := os.Stat(r.marker)
	*r.events = append(*r.events, "report (worker started: "+boolText(err == nil)+")")
	r.reports = append(r.reports, rep)
	return r.err
}

func boolText(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

type launchFixture struct {
	dir      string
	marker   string
	events   []string
	gpu      *fakeDriver
	fpga     *fakeDriver
	reporter *recordingReporter
	stdout   bytes.Buffer
	stderr   bytes.Buffer
	l        *Launcher
}

func newLaunchFixture(t *testing.T) *launchFixture {
	f := &launchFixture{dir: t.TempDir()}
	f.marker = filepath.Join(f.dir, "worker-started")
	f.gpu = &fakeDriver{name: "gpu", indexes: []string{"2", "3", "5"}, envVar: "CUDA_VISIBLE_DEVICES", events: &f.events}
	f.fpga = &fakeDriver{name: "fpga", indexes: []string{"acl0"}, events: &f.events}
	f.reporter = &recordingReporter{events: &f.events, marker: f.marker}
	logger := logrus.New()
	logger.SetOutput(&bytes.Buffer{})
	f.l = &Launcher{
		Resources: []resources.Resource{
			{Name: "gpu", Amount: 2, YarnKey: "yarn.io/gpu", Driver: "gpu"},
			{Name: "fpga", Amount: 1, YarnKey: "yarn.io/fpga", Driver: "exec"},
			{Name: "disk", Amount: 1, YarnKey: "example.com/disk"},
		},
		Drivers:     map[string]resources.Driver{"gpu": f.gpu, "fpga": f.fpga},
		WorkDir:     f.dir,
		Env:         []string{"PATH=" + os.Getenv("PATH"), "MARKER=" + f.marker},
		Reporter:    f.reporter,
		ContainerID: "container_1_0001_01_000002",
		Stdin:       strings.NewReader(""),
		Stdout:      &f.stdout,
		Stderr:      &f.stderr,
		Log:         logger,
	}
	return f
}

const workerScript = `touch "$MARKER"; echo "cuda=$CUDA_VISIBLE_DEVICES gpu=$YARN_AM_RESOURCE_GPU fpga=$YARN_AM_RESOURCE_FPGA disk=$YARN_AM_RESOURCE_DISK"; cat "$YARN_AM_EXTERNAL_RESOURCES_FILE"; exit 7`

func TestLaunchRunsWorkerWithInfos(t *testing.T) {
	f := newLaunchFixture(t)
	code := f.l.Run(context.Background(), []string{"sh", "-c", workerScript})
	assert.Equal(t, 7, code, f.stderr.String())
	// The worker's exit is reported before the claims are released: the AM must not take the GPUs for
	// held once another container of the node can claim them (am/gpucheck.go).
	assert.Equal(t, []string{"discover gpu", "discover fpga", "report (worker started: no)", "report (worker started: yes)", "release fpga", "release gpu"}, f.events)

	infoFile := filepath.Join(f.dir, "external-resources.json")
	out := f.stdout.String()
	assert.True(t, strings.HasPrefix(out, "cuda=2,3 gpu=2,3 fpga=acl0 disk=\n"), out)
	var got map[string][]resources.Info
	require.NoError(t, json.Unmarshal([]byte(strings.SplitN(out, "\n", 2)[1]), &got))
	assert.Equal(t, map[string][]resources.Info{
		"gpu": {{"index": "2"}, {"index": "3"}}, "fpga": {{"index": "acl0"}}, "disk": {},
	}, got)
	require.Len(t, f.reporter.reports, 2)
	assert.Equal(t, Report{ContainerID: "container_1_0001_01_000002", Infos: got, InfoFile: infoFile}, f.reporter.reports[0])
	assert.Equal(t, Report{ContainerID: "container_1_0001_01_000002", Exited: true, ExitCode: 7}, f.reporter.reports[1], "a silent worker's exit: no stderr lines")
}

func TestLaunchKeepsUserVisibilityVariable(t *testing.T) {
	f := newLaunchFixture(t)
	f.l.Env = append(f.l.Env, "CUDA_VISIBLE_DEVICES=7")
	code := f.l.Run(context.Background(), []string{"sh", "-c", workerScript})
	assert.Equal(t, 7, code)
	assert.True(t, strings.HasPrefix(f.stdout.String(), "cuda=7 gpu=2,3 "), f.stdout.String())
}

// TestLaunchDeviceEnvOffLeavesVisibilityUnset: a Flink TaskManager's launcher (YARN_AM_DEVICE_ENV=off)
// discovers and writes the info file as always but sets no CUDA_VISIBLE_DEVICES.
func TestLaunchDeviceEnvOffLeavesVisibilityUnset(t *testing.T) {
	f := newLaunchFixture(t)
	f.l.Env = append(f.l.Env, contract.EnvDeviceEnv+"="+contract.DeviceEnvOff)
	code := f.l.Run(context.Background(), []string{"sh", "-c", workerScript})
	assert.Equal(t, 7, code)
	assert.True(t, strings.HasPrefix(f.stdout.String(), "cuda= gpu=2,3 "), f.stdout.String())
}

func TestLaunchDiscoveryFailureDoesNotStartWorker(t *testing.T) {
	f := newLaunchFixture(t)
	f.fpga.err = errors.New("discovery program fpga.sh 1 failed: exit status 1; stderr: no FPGA")
	code := f.l.Run(context.Background(), []string{"sh", "-c", workerScript})
	assert.Equal(t, contract.LauncherDiscoveryFailed, code)
	assert.NoFileExists(t, f.marker, "the worker must not start without its devices")
	assert.NoFileExists(t, filepath.Join(f.dir, "external-resources.json"))
	assert.Equal(t, `yarn-am launch: discovery failed for resource "fpga": discovery program fpga.sh 1 failed: exit status 1; stderr: no FPGA`+"\n", f.stderr.String())
	// The GPUs already claimed are given back; the AM hears why.
	assert.Equal(t, []string{"discover gpu", "discover fpga", "release fpga", "release gpu", "report (worker started: no)"}, f.events)
	require.Len(t, f.reporter.reports, 1)
	assert.Equal(t, Report{ContainerID: "container_1_0001_01_000002", FailedResource: "fpga", Failure: `discovery failed for resource "fpga": ` + f.fpga.err.Error()}, f.reporter.reports[0])
}

func TestLaunchReportErrorDoesNotStopWorker(t *testing.T) {
	f := newLaunchFixture(t)
	f.reporter.err = errors.New("AM unreachable")
	assert.Equal(t, 7, f.l.Run(context.Background(), []string{"sh", "-c", workerScript}))
	assert.FileExists(t, f.marker)
}

func TestLaunchWorkerNotFound(t *testing.T) {
	f := newLaunchFixture(t)
	code := f.l.Run(context.Background(), []string{"/no/such/worker", "x"})
	assert.Equal(t, contract.LauncherWorkerStartFailed, code)
	assert.Contains(t, f.stderr.String(), `yarn-am launch: cannot start the worker "/no/such/worker": `)
	assert.Equal(t, 1, f.gpu.released)
}

func TestLaunchWorkerKilledBySignal(t *testing.T) {
	f := newLaunchFixture(t)
	assert.Equal(t, 128+9, f.l.Run(context.Background(), []string{"sh", "-c", "kill -9 $$"}))
	assert.Equal(t, 0, f.l.Run(context.Background(), []string{"true"}))
}

func TestLaunchWithoutCommand(t *testing.T) {
	f := newLaunchFixture(t)
	assert.Equal(t, contract.LauncherConfigError, f.l.Run(context.Background(), nil))
	assert.Empty(t, f.events)
}

func TestWorkerEnvMergesTwoGPUResources(t *testing.T) {
	a := &fakeDriver{envVar: "CUDA_VISIBLE_DEVICES"}
	b := &fakeDriver{envVar: "CUDA_VISIBLE_DEVICES"}
	infos := map[string][]resources.Info{"gpu-a": {{"index": "0"}}, "gpu-b": {{"index": "1"}, {"index": "2"}}}
	env := WorkerEnv([]string{"HOME=/h", "CUDA_VISIBLE_DEVICES="}, "/w/external-resources.json", infos,
		map[string]resources.Driver{"gpu-a": a, "gpu-b": b})
	assert.Equal(t, []string{
		"CUDA_VISIBLE_DEVICES=0,1,2", "HOME=/h",
		"YARN_AM_EXTERNAL_RESOURCES_FILE=/w/external-resources.json",
		"YARN_AM_RESOURCE_GPU_A=0", "YARN_AM_RESOURCE_GPU_B=1,2",
	}, env)
}

// topoDriver is a fakeDriver whose discovery read a GPU topology, as gpu.Driver's does for a set of
// more than one GPU.
type topoDriver struct {
	*fakeDriver
	topo *contract.GPUTopology
}

func (d topoDriver) Topology() *contract.GPUTopology { return d.topo }

// The report before the worker starts carries the topology the GPU driver read, by resource: the AM's
// gpu-topology event and GPU map come from it (docs/gpus.md#topology-connected-sets).
func TestLaunchReportsTheGPUTopology(t *testing.T) {
	f := newLaunchFixture(t)
	topo := &contract.GPUTopology{Link: "SYS", Best: "NV12", GPUs: []contract.GPUTopologyRow{
		{Index: "2", NUMA: "0", Links: []string{"X", "SYS"}}, {Index: "3", NUMA: "1", Links: []string{"SYS", "X"}}}}
	f.l.Drivers["gpu"] = topoDriver{fakeDriver: f.gpu, topo: topo}
	code := f.l.Run(context.Background(), []string{"sh", "-c", "exit 0"})
	require.Equal(t, 0, code, f.stderr.String())
	require.Len(t, f.reporter.reports, 2)
	assert.Equal(t, map[string]contract.GPUTopology{"gpu": *topo}, f.reporter.reports[0].Topology)
	assert.Nil(t, f.reporter.reports[1].Topology, "the exit report carries nothing else")

	f = newLaunchFixture(t)
	f.l.Drivers["gpu"] = topoDriver{fakeDriver: f.gpu} // no topology read (one GPU, --topology any)
	require.Equal(t, 0, f.l.Run(context.Background(), []string{"sh", "-c", "exit 0"}))
	assert.Nil(t, f.reporter.reports[0].Topology)
}
