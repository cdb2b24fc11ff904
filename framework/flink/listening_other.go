//go:build !linux

package flink

import "errors"

// listeningPorts needs Linux's /proc: the JobManager, the AM's driver, runs on a YARN NodeManager,
// which yarn-am supports on Linux only.
func listeningPorts(int) ([]int, error) {
	return nil, errors.New("learning the JobManager's bound ports from its JVM's sockets is supported on Linux only")
}
