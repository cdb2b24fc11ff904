//go:build !linux

package flink

// endWithParent needs Linux's parent-death signal; elsewhere (a client built for another system,
// which never runs the JobManager) it does nothing.
func endWithParent() {}
