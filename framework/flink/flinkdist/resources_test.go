package flinkdist

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A 1024 MiB TaskManager with Flink's defaults: the flags and properties Flink 1.20.5's
// BashJavaUtils printed for it (TestComputedResourceParamsEqualBashJavaUtils runs it).
func TestComputeResourceParamsTaskManager(t *testing.T) {
	p, err := computeResourceParams(memConf(keyTMProcessSize, "1024m"), RoleTaskManager)
	require.NoError(t, err)
	assert.Equal(t, []string{"-Xmx161061270", "-Xms161061270", "-XX:MaxDirectMemorySize=201326592", "-XX:MaxMetaspaceSize=268435456"}, p.JVM)
	assert.Equal(t, []string{
		"external-resources=none",
		"taskmanager.cpu.cores=1.0",
		"taskmanager.memory.framework.heap.size=134217728b",
		"taskmanager.memory.framework.off-heap.size=134217728b",
		"taskmanager.memory.jvm-metaspace.size=268435456b",
		"taskmanager.memory.jvm-overhead.max=201326592b",
		"taskmanager.memory.jvm-overhead.min=201326592b",
		"taskmanager.memory.managed.size=241591914b",
		"taskmanager.memory.network.max=67108864b",
		"taskmanager.memory.network.min=67108864b",
		"taskmanager.memory.task.heap.size=26843542b",
		"taskmanager.memory.task.off-heap.size=0b",
		"taskmanager.numberOfTaskSlots=1",
	}, p.Dynamic)

	// Two slots are two CPU cores unless cpu.cores says otherwise; one GPU is passed on quoted.
	p, err = computeResourceParams(memConf(keyTMProcessSize, "1024m", "taskmanager.numberOfTaskSlots", "2",
		keyExternalRes, "gpu", "external-resource.gpu.amount", "2"), RoleTaskManager)
	require.NoError(t, err)
	assert.Subset(t, p.Dynamic, []string{"taskmanager.cpu.cores=2.0", "taskmanager.numberOfTaskSlots=2",
		`external-resources="gpu"`, "external-resource.gpu.amount=2"})
	p, err = computeResourceParams(memConf(keyTMProcessSize, "1024m", "taskmanager.cpu.cores", "0.5"), RoleTaskManager)
	require.NoError(t, err)
	assert.Contains(t, p.Dynamic, "taskmanager.cpu.cores=0.5")
}

// A 768 MiB JobManager: no direct-memory limit unless enabled.
func TestComputeResourceParamsJobManager(t *testing.T) {
	p, err := computeResourceParams(memConf(keyJMProcessSize, "768m"), RoleApplication)
	require.NoError(t, err)
	assert.Equal(t, []string{"-Xmx201326592", "-Xms201326592", "-XX:MaxMetaspaceSize=268435456"}, p.JVM)
	assert.Equal(t, []string{
		"jobmanager.memory.heap.size=201326592b",
		"jobmanager.memory.jvm-metaspace.size=268435456b",
		"jobmanager.memory.jvm-overhead.max=201326592b",
		"jobmanager.memory.jvm-overhead.min=201326592b",
		"jobmanager.memory.off-heap.size=134217728b",
	}, p.Dynamic)
	p, err = computeResourceParams(memConf(keyJMProcessSize, "768m", keyJMDirectMemoryLimit, "true"), RoleSession)
	require.NoError(t, err)
	assert.Equal(t, []string{"-Xmx201326592", "-Xms201326592", "-XX:MaxDirectMemorySize=134217728", "-XX:MaxMetaspaceSize=268435456"}, p.JVM)
}

// What the computation does not cover is left to BashJavaUtils, with the reason.
func TestComputeResourceParamsLeavesToBashJavaUtils(t *testing.T) {
	for _, tc := range []struct {
		role Role
		conf []string
		why  string
	}{
		{RoleTaskManager, []string{"taskmanager.memory.jvm-overhead.fraction", "0.2"}, "taskmanager.memory.jvm-overhead.fraction is not computed"},
		{RoleTaskManager, []string{"taskmanager.heap.size", "1g"}, "legacy key taskmanager.heap.size"},
		{RoleApplication, []string{"jobmanager.heap.size", "1g"}, "legacy key jobmanager.heap.size"},
		{RoleTaskManager, []string{keyExternalRes, "gpu;fpga", "external-resource.gpu.amount", "1", "external-resource.fpga.amount", "1"}, "names 2 resources"},
		{RoleTaskManager, []string{"taskmanager.cpu.cores", "1e2"}, "not a plain positive decimal"},
		{RoleTaskManager, []string{keyTMTaskHeap, "2g"}, "exceed the total Flink memory"},
		{RoleApplication, []string{keyJMDirectMemoryLimit, "yes"}, "is not true or false"},
	} {
		c := memConf(tc.conf...)
		c.Set(keyTMProcessSize, "1024m")
		c.Set(keyJMProcessSize, "1024m")
		_, err := computeResourceParams(c, tc.role)
		assert.ErrorContains(t, err, tc.why, "%v", tc.conf)
	}
	_, err := computeResourceParams(NewConfig(), RoleTaskManager)
	assert.ErrorContains(t, err, "taskmanager.memory.process.size is not set")
	t.Setenv("FLINK_TM_HEAP", "1g")
	_, err = computeResourceParams(memConf(keyTMProcessSize, "1024m"), RoleTaskManager)
	assert.ErrorContains(t, err, "$FLINK_TM_HEAP")
}
