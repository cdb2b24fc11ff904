package flinkdist

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func memConf(kv ...string) *Config {
	c := NewConfig()
	for i := 0; i+1 < len(kv); i += 2 {
		c.Set(kv[i], kv[i+1])
	}
	return c
}

// The derived sizes for a process size alone, as Flink's calculator printed them for 982m (the
// smallest TaskManager its defaults allow; docs/flink.md#the-memory-check).
func TestDeriveTaskManagerFromProcessSize(t *testing.T) {
	p, err := readMemParams(NewConfig(), RoleTaskManager)
	require.NoError(t, err)
	s, err := p.derive(982 * mib)
	require.NoError(t, err)
	assert.Equal(t, int64(223975836), s.Managed, "0.4 is a Java float")
	assert.Equal(t, int64(419428), s.TaskHeap)
	assert.Equal(t, 64*mib, s.Network)
	assert.Equal(t, 192*mib, s.Overhead)
	_, err = p.derive(981 * mib)
	assert.ErrorContains(t, err, "leaving no task heap")

	// 16 GiB: the network memory is 10 % of the total Flink memory, not capped (no default maximum).
	s, err = p.derive(16 << 30)
	require.NoError(t, err)
	assert.Equal(t, int64(1583769214), s.Network)
	assert.Equal(t, 1024*mib, s.Overhead)
}

func TestCheckMemoryTaskManager(t *testing.T) {
	require.NoError(t, CheckMemory(NewConfig(), RoleTaskManager, 1024))
	require.NoError(t, CheckMemory(NewConfig(), RoleTaskManager, 982))

	err := CheckMemory(NewConfig(), RoleTaskManager, 512)
	var me *MemoryError
	require.ErrorAs(t, err, &me)
	assert.Equal(t, int64(982), me.FitFromMiB, "the smallest TaskManager with Flink's defaults")
	assert.Contains(t, err.Error(), "a TaskManager of process size 512 MiB does not fit")
	assert.Contains(t, err.Error(), "a process size of at least 982 MiB fits it")
	assert.Empty(t, me.Key, "nothing explicit to name")

	// 512 MiB works with explicit, smaller sizes.
	small := memConf(keyTMManaged, "16m", keyTMTaskHeap, "32m", keyTMFrameworkHeap, "32m", keyTMFrameworkOffHeap, "32m",
		keyTMNetworkMin, "16m", keyTMNetworkMax, "16m", "taskmanager.memory.jvm-metaspace.size", "96m", "taskmanager.memory.jvm-overhead.min", "64m")
	require.NoError(t, CheckMemory(small, RoleTaskManager, 300))

	// An explicit task heap too large for the container: named, with what fits.
	err = CheckMemory(memConf(keyTMTaskHeap, "2g"), RoleTaskManager, 1024)
	require.ErrorAs(t, err, &me)
	assert.Contains(t, err.Error(), `taskmanager.memory.task.heap.size = "2g"`)
	assert.Equal(t, keyTMTaskHeap, me.Key)
	// 576 MiB of total Flink memory less 256 MiB framework, 230.4 MiB managed and 64 MiB network
	// (Flink's calculator takes 25m and refuses 26m).
	assert.Equal(t, int64(25), me.KeyToMiB)
	assert.NoError(t, CheckMemory(memConf(keyTMTaskHeap, itoa(me.KeyToMiB)+"m"), RoleTaskManager, 1024), "the top of the range fits")
	assert.Error(t, CheckMemory(memConf(keyTMTaskHeap, itoa(me.KeyToMiB+1)+"m"), RoleTaskManager, 1024), "one more does not")

	// flink.size with the process size fixed by the container: the JVM overhead left must be in range,
	// so a large container does not fit a small total Flink memory either.
	err = CheckMemory(memConf(keyTMFlinkSize, "1g"), RoleTaskManager, 4096)
	require.ErrorAs(t, err, &me)
	assert.Contains(t, err.Error(), "the JVM overhead left (2816 MiB")
	assert.Equal(t, int64(1024+256+192), me.FitFromMiB)
	assert.Equal(t, int64(1024+256+1024), me.FitToMiB)
	assert.Contains(t, err.Error(), "a process size from 1472 to 2304 MiB fits it")

	assert.ErrorContains(t, CheckMemory(memConf(keyTMManagedFraction, "1.5"), RoleTaskManager, 1024), "taskmanager.memory.managed.fraction = \"1.5\": want a fraction")
	assert.ErrorContains(t, CheckMemory(memConf(keyTMManaged, "lots"), RoleTaskManager, 1024), "taskmanager.memory.managed.size: memory size")
}

func TestCheckMemoryJobManager(t *testing.T) {
	require.NoError(t, CheckMemory(NewConfig(), RoleApplication, 768))
	require.NoError(t, CheckMemory(NewConfig(), RoleSession, 577))
	err := CheckMemory(NewConfig(), RoleApplication, 576)
	var me *MemoryError
	require.ErrorAs(t, err, &me)
	assert.Equal(t, int64(577), me.FitFromMiB, "Flink's own calculator refuses 576m and takes 577m")
	assert.Contains(t, err.Error(), "a JobManager of process size 576 MiB")

	err = CheckMemory(memConf(keyJMHeap, "1g"), RoleApplication, 768)
	require.ErrorAs(t, err, &me)
	assert.Contains(t, err.Error(), `jobmanager.memory.heap.size = "1g"`)
	assert.Equal(t, keyJMHeap, me.Key)
	assert.Equal(t, int64(768-128-256-192), me.KeyToMiB)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// The deprecated memory names Flink 1.20 and 2.x still read size what they name when the key itself
// is unset, and a minimum above its maximum is refused as Flink refuses it, naming the key set
// (TestCheckMemoryAgreesWithBashJavaUtils compares both with Flink's calculators).
func TestCheckMemoryReadsTheDeprecatedNamesFlinkReads(t *testing.T) {
	p, err := readMemParams(memConf("taskmanager.memory.size", "600m", "taskmanager.network.memory.min", "100m"), RoleTaskManager)
	if err != nil {
		t.Fatal(err)
	}
	s, err := p.derive(2048 * mib)
	if err != nil {
		t.Fatal(err)
	}
	if s.Managed != 600*mib || s.Network < 100*mib {
		t.Errorf("managed %s, network %s: want 600 MiB and at least 100 MiB", mibText(s.Managed), mibText(s.Network))
	}
	p, _ = readMemParams(memConf("taskmanager.memory.size", "600m", keyTMManaged, "100m"), RoleTaskManager)
	if s, _ := p.derive(2048 * mib); s.Managed != 100*mib {
		t.Errorf("managed %s: the key wins over its deprecated name", mibText(s.Managed))
	}
	err = CheckMemory(memConf("taskmanager.network.memory.max", "32m"), RoleTaskManager, 4096)
	if err == nil || !strings.Contains(err.Error(), `the maximum (taskmanager.network.memory.max = "32m")`) {
		t.Errorf("network max below its min: %v", err)
	}
}
