package flink

import "github.com/yarn-am/yarn-am/framework/flink/flinkdist"

// keyJITLateC2 is the [flink] key that starts the JobManager's and TaskManagers' JVMs with HotSpot's
// C2 thresholds raised (docs/flink.md#the-jit-at-start); default true.
const keyJITLateC2 = "jit-late-c2"

// jitFlags are the JIT flags of the job's Flink JVMs: flinkdist.LateC2Flags unless jit-late-c2 = false.
func jitFlags(f *flinkSpec) []string {
	if f == nil || !f.JITLateC2 {
		return nil
	}
	return flinkdist.LateC2Flags
}
