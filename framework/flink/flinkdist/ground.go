package flinkdist

import (
	"bytes"
	"strings"
)

// This file holds the names the package's files share: the roles of Flink's processes, the Flink
// keys several files read, and the bounded text of a process's output. It names nothing of the
// files above it (TestGroundNamesNothingAbove).

// Flink configuration keys yarn-am reads or sets.
const (
	keyJMProcessSize    = "jobmanager.memory.process.size"
	keyTMProcessSize    = "taskmanager.memory.process.size"
	KeyRPCAddress       = "jobmanager.rpc.address"
	keyExternalRes      = "external-resources"
	KeyShutdownOnFinish = "execution.shutdown-on-application-finish"
	KeyJavaOptsAll      = "env.java.opts.all"
	KeyJavaOptsLegacy   = "env.java.opts" // Flink's deprecated name of env.java.opts.all
	KeyJavaDefaultOpts  = "env.java.default-opts.all"
	keyJavaOptsJM       = "env.java.opts.jobmanager"
	KeyJavaOptsTM       = "env.java.opts.taskmanager"
)

// Role is the Flink process a command line starts.
type Role string

// The roles (docs/flink.md#the-processes).
const (
	// RoleApplication is the JobManager of an application cluster: it runs the user jar's main
	// (FLIP-40's driver) and ends when the job does.
	RoleApplication Role = "jobmanager-application"
	// RoleSession is the JobManager of a session cluster: it runs until stopped; jobs are submitted to
	// its REST API.
	RoleSession Role = "jobmanager-session"
	// RoleTaskManager is a TaskManager (TaskManagerRunner): one per TaskExecutor container.
	RoleTaskManager Role = "taskmanager"
)

// limitedBuffer keeps the first max bytes written to it.
type limitedBuffer struct {
	bytes.Buffer
	max int
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.Len(); room > 0 {
		if len(p) > room {
			b.Buffer.Write(p[:room])
		} else {
			b.Buffer.Write(p)
		}
	}
	return len(p), nil
}

func tail(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}
