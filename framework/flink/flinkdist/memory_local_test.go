//go:build flink

package flinkdist

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// memoryBoundaryCases are configurations and, per configuration, process sizes (MiB) at the edges
// of what Flink's calculator accepts.
type memoryCase struct {
	role  Role
	conf  []string
	sizes []int64
}

var memoryBoundaryCases = []memoryCase{
	{RoleTaskManager, nil, []int64{512, 981, 982, 4096}},
	{RoleTaskManager, []string{keyTMTaskHeap, "25m"}, []int64{1023, 1024}},
	{RoleTaskManager, []string{keyTMTaskHeap, "26m"}, []int64{1024, 1025}},
	{RoleTaskManager, []string{keyTMFlinkSize, "1g"}, []int64{1471, 1472, 2304, 2305}},
	{RoleTaskManager, []string{keyTMTaskHeap, "100m", keyTMManaged, "100m"}, []int64{700, 900, 1500}},
	{RoleApplication, nil, []int64{576, 577, 768}},
	{RoleApplication, []string{keyJMHeap, "192m"}, []int64{767, 768, 1600, 1601}},
}

// deprecatedMemoryCases set memory sizes by the deprecated names Flink 1.20 and 2.x still read
// (memoryDeprecatedKeys), alone and beside the key that wins over them. computeResourceParams leaves
// them to BashJavaUtils; CheckMemory must size them as Flink does.
var deprecatedMemoryCases = []memoryCase{
	{RoleTaskManager, []string{"taskmanager.network.memory.min", "200m"}, []int64{1300, 1400, 1500}},
	{RoleTaskManager, []string{"taskmanager.network.memory.max", "32m"}, []int64{1024, 4096}},
	{RoleTaskManager, []string{"taskmanager.network.memory.fraction", "0.5", keyTMManagedFraction, "0.45"}, []int64{2048, 4096}},
	{RoleTaskManager, []string{"taskmanager.memory.size", "600m"}, []int64{1300, 1400, 1500}},
	{RoleTaskManager, []string{"taskmanager.memory.size", "2g", keyTMManaged, "100m"}, []int64{1024}},
}

// CheckMemory agrees with Flink's own calculator (BashJavaUtils) on which process sizes fit, at the
// boundaries of each configuration (docs/flink.md#the-memory-check), with Flink 1.20's and 2.x's
// calculators alike (make test-flink-memory runs it on both homes).
func TestCheckMemoryAgreesWithBashJavaUtils(t *testing.T) {
	home := needFlinkHome(t)
	flink := startBashJavaUtilsLoop(t, home)
	for _, tc := range append(append([]memoryCase{}, memoryBoundaryCases...), deprecatedMemoryCases...) {
		for _, size := range tc.sizes {
			name, c, _, flinkErr := bashJavaUtilsAt(t, flink.run, tc, size)
			ours := CheckMemory(c, tc.role, size)
			assert.Equal(t, flinkErr == nil, ours == nil, "%s: Flink says %v, CheckMemory says %v", name, flinkErr, ours)
		}
	}
}

// computeResourceParams prints what BashJavaUtils prints: the same JVM flags, byte for byte, and the
// same dynamic properties, for every size of the boundary matrix Flink accepts and for explicit
// sizes, slots, CPU cores, a GPU and the JobManager's direct-memory limit (docs/flink.md#memory).
func TestComputedResourceParamsEqualBashJavaUtils(t *testing.T) {
	home := needFlinkHome(t)
	flink := startBashJavaUtilsLoop(t, home)
	cases := append([]memoryCase{}, memoryBoundaryCases...)
	cases = append(cases, []memoryCase{
		{RoleTaskManager, []string{"taskmanager.numberOfTaskSlots", "2"}, []int64{1024, 16384}},
		{RoleTaskManager, []string{"taskmanager.cpu.cores", "1.5", keyExternalRes, "gpu", "external-resource.gpu.amount", "2",
			"external-resource.gpu.driver-factory.class", gpuDriverFactory}, []int64{2048}},
		{RoleTaskManager, []string{keyExternalRes, "gpu;fpga", "external-resource.gpu.amount", "1", "external-resource.fpga.amount", "0"}, []int64{2048}},
		{RoleTaskManager, []string{keyTMFrameworkHeap, "64m", keyTMFrameworkOffHeap, "96m", keyTMTaskOffHeap, "32m",
			keyTMManagedFraction, "0.25", keyTMNetworkFraction, "0.15", keyTMNetworkMax, "300m",
			"taskmanager.memory.jvm-metaspace.size", "128m", "taskmanager.memory.jvm-overhead.min", "100m",
			"taskmanager.memory.jvm-overhead.max", "300m"}, []int64{1000, 3333, 8192}},
		{RoleTaskManager, []string{keyTMTaskHeap, "300m", keyTMManaged, "200m", keyTMNetworkMin, "10m"}, []int64{1200}},
		{RoleTaskManager, []string{keyTMFlinkSize, "1500m", keyTMTaskHeap, "400m"}, []int64{2000}},
		{RoleApplication, []string{keyJMDirectMemoryLimit, "true"}, []int64{768, 4096}},
		{RoleApplication, []string{keyJMFlinkSize, "1g", keyJMOffHeap, "200m"}, []int64{1500}},
		{RoleApplication, []string{keyJMHeap, "500m", keyJMFlinkSize, "700m", "jobmanager.memory.jvm-metaspace.size", "100m",
			keyJMDirectMemoryLimit, "true"}, []int64{1000}},
		{RoleSession, []string{"jobmanager.memory.jvm-overhead.min", "64m", "jobmanager.memory.jvm-overhead.max", "2g"}, []int64{600, 30000}},
	}...)
	compared := 0
	for _, tc := range cases {
		for _, size := range tc.sizes {
			name, c, flinks, flinkErr := bashJavaUtilsAt(t, flink.run, tc, size)
			ours, err := computeResourceParams(c, tc.role)
			if flinkErr != nil {
				assert.Error(t, err, "%s: Flink refuses it (%v)", name, flinkErr)
				continue
			}
			if !assert.NoError(t, err, name) {
				continue
			}
			compared++
			assert.Equal(t, strings.Join(flinks.JVM, " "), strings.Join(ours.JVM, " "), "%s: the JVM flags", name)
			assert.Equal(t, propMap(t, flinks.Dynamic), propMap(t, ours.Dynamic), "%s: the dynamic properties", name)
		}
	}
	assert.Equal(t, 25, compared, "sizes Flink accepts, compared (the others are refused by both)")
}

func propMap(t *testing.T, kvs []string) map[string]string {
	m := map[string]string{}
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		require.True(t, ok, kv)
		_, dup := m[k]
		require.False(t, dup, "%s twice", k)
		m[k] = v
	}
	return m
}

// bashJavaUtilsAt is tc's configuration with its role's process size set to size, and what Flink's
// own calculator (BashJavaUtils, asked by ask on it written to a conf directory) makes of it.
func bashJavaUtilsAt(t *testing.T, ask askFlink, tc memoryCase, size int64) (string, *Config, ResourceParams, error) {
	t.Helper()
	name := fmt.Sprintf("%s %v %dm", tc.role, tc.conf, size)
	c := memConf(tc.conf...)
	key := keyTMProcessSize
	if tc.role != RoleTaskManager {
		key = keyJMProcessSize
	}
	c.Set(key, fmt.Sprintf("%dm", size))
	dir := filepath.Join(t.TempDir(), "conf")
	require.NoError(t, c.WriteConfDir(dir))
	flinks, err := ask(t, dir, tc.role)
	return name, c, flinks, err
}

// askFlink is BashJavaUtils' answer for the configuration in confDir: runBashJavaUtils (a JVM each,
// as yarn-am asks it) or a bashJavaUtilsLoop's run.
type askFlink func(t *testing.T, confDir string, role Role) (ResourceParams, error)

// bashJavaUtilsLoop is one JVM of testdata/BashJavaUtilsLoop.java on a Flink home: BashJavaUtils' own
// main asked once per configuration, where a JVM each cost about a second (70 per test per home);
// TestBashJavaUtilsLoopAnswersAsItsOwnJVM holds it to runBashJavaUtils' answers.
type bashJavaUtilsLoop struct {
	stdin io.Writer
	out   *bufio.Scanner
}

func startBashJavaUtilsLoop(t *testing.T, home *Home) *bashJavaUtilsLoop {
	t.Helper()
	java, err := exec.LookPath("java")
	require.NoError(t, err)
	cmd := exec.Command(java, "-cp", home.BashJavaUtils+string(os.PathListSeparator)+home.DistJar, "testdata/BashJavaUtilsLoop.java")
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = stdin.Close() // the loop ends at the end of its stdin
		if err := cmd.Wait(); err != nil {
			t.Errorf("BashJavaUtilsLoop: %v; stderr: %s", err, stderr.String())
		}
	})
	out := bufio.NewScanner(stdout)
	out.Buffer(nil, 1<<20)
	return &bashJavaUtilsLoop{stdin: stdin, out: out}
}

// run is runBashJavaUtils' answer from the loop: the same output parsed by parseResourceParams, or an
// error where BashJavaUtils threw (its JVM would have exited non-zero).
func (l *bashJavaUtilsLoop) run(t *testing.T, confDir string, role Role) (ResourceParams, error) {
	t.Helper()
	cmdName := "GET_TM_RESOURCE_PARAMS"
	if role != RoleTaskManager {
		cmdName = "GET_JM_RESOURCE_PARAMS"
	}
	require.NotContains(t, confDir, "\n")
	_, err := fmt.Fprintf(l.stdin, "%s\t%s\n", cmdName, confDir)
	require.NoError(t, err)
	var out bytes.Buffer
	for l.out.Scan() {
		if result, ok := strings.CutPrefix(l.out.Text(), "YARNAM-LOOP-END "); ok {
			if msg, failed := strings.CutPrefix(result, "error "); failed {
				return ResourceParams{}, fmt.Errorf("BashJavaUtils %s on %s: %s; its output: %s", cmdName, confDir, msg, out.String())
			}
			return parseResourceParams(out.Bytes(), role)
		}
		out.WriteString(l.out.Text() + "\n")
	}
	t.Fatalf("BashJavaUtilsLoop ended without an answer for %s (%v); its output: %s", confDir, l.out.Err(), out.String())
	return ResourceParams{}, nil
}

// runOwnJVM is runBashJavaUtils as yarn-am runs it: a JVM of its own.
func runOwnJVM(java string, home *Home) askFlink {
	return func(t *testing.T, confDir string, role Role) (ResourceParams, error) {
		return runBashJavaUtils(context.Background(), java, home, confDir, role)
	}
}

// The loop answers what BashJavaUtils' own JVM answers (runBashJavaUtils, as yarn-am runs it), for an
// accepted and a refused size of each role and for a deprecated name, each asked after the loop has
// answered the others: nothing a configuration leaves in the JVM changes the next answer. Four JVMs of
// their own, against the 140 per home the memory tests would start.
func TestBashJavaUtilsLoopAnswersAsItsOwnJVM(t *testing.T) {
	home := needFlinkHome(t)
	java, err := exec.LookPath("java")
	require.NoError(t, err)
	loop := startBashJavaUtilsLoop(t, home)
	cases := []memoryCase{
		{RoleTaskManager, []string{keyTMTaskHeap, "100m", keyTMManaged, "100m"}, []int64{700}},
		{RoleTaskManager, nil, []int64{981}},
		{RoleApplication, []string{keyJMHeap, "192m"}, []int64{767, 768}},
		{RoleTaskManager, []string{"taskmanager.memory.size", "600m"}, []int64{1500}},
	}
	for _, tc := range cases { // the loop answers each once before the comparison
		for _, size := range tc.sizes {
			bashJavaUtilsAt(t, loop.run, tc, size)
		}
	}
	refused := 0
	for _, tc := range cases[1:] {
		for _, size := range tc.sizes {
			name, _, own, ownErr := bashJavaUtilsAt(t, runOwnJVM(java, home), tc, size)
			_, _, looped, loopErr := bashJavaUtilsAt(t, loop.run, tc, size)
			if ownErr != nil {
				refused++
				assert.Error(t, loopErr, "%s: its own JVM refuses it (%v), the loop accepts it", name, ownErr)
				continue
			}
			if assert.NoError(t, loopErr, "%s: its own JVM accepts it", name) {
				assert.Equal(t, own, looped, name)
			}
		}
	}
	assert.Equal(t, 2, refused, "a TaskManager of 981m and a JobManager of 767m are refused")
}
