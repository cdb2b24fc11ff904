//go:build flink

package flink

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// CheckMemory agrees with Flink's own calculator (BashJavaUtils) on which process sizes fit, at the
// boundaries of each configuration (docs/flink.md#the-memory-check).
func TestCheckMemoryAgreesWithBashJavaUtils(t *testing.T) {
	env := needFlink(t)
	java, err := exec.LookPath("java")
	require.NoError(t, err)
	for _, tc := range []struct {
		role  Role
		conf  []string
		sizes []int64
	}{
		{RoleTaskManager, nil, []int64{512, 981, 982, 4096}},
		{RoleTaskManager, []string{KeyTMTaskHeap, "25m"}, []int64{1023, 1024}},
		{RoleTaskManager, []string{KeyTMTaskHeap, "26m"}, []int64{1024, 1025}},
		{RoleTaskManager, []string{KeyTMFlinkSize, "1g"}, []int64{1471, 1472, 2304, 2305}},
		{RoleTaskManager, []string{KeyTMTaskHeap, "100m", KeyTMManaged, "100m"}, []int64{700, 900, 1500}},
		{RoleApplication, nil, []int64{576, 577, 768}},
		{RoleApplication, []string{KeyJMHeap, "192m"}, []int64{767, 768, 1600, 1601}},
	} {
		for _, size := range tc.sizes {
			name := fmt.Sprintf("%s %v %dm", tc.role, tc.conf, size)
			c := memConf(tc.conf...)
			key := KeyTMProcessSize
			if tc.role != RoleTaskManager {
				key = KeyJMProcessSize
			}
			c.Set(key, fmt.Sprintf("%dm", size))
			dir := filepath.Join(t.TempDir(), "conf")
			require.NoError(t, c.WriteConfDir(dir))
			_, flinkErr := RunBashJavaUtils(context.Background(), java, env.home, dir, tc.role)
			ours := CheckMemory(c, tc.role, size)
			assert.Equal(t, flinkErr == nil, ours == nil, "%s: Flink says %v, CheckMemory says %v", name, flinkErr, ours)
		}
	}
}
