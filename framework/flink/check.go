package flink

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	dist "github.com/yarn-am/yarn-am/framework/flink/dist"
	"github.com/yarn-am/yarn-am/jobfile"
)

// checkMemory checks a [flink] job's memory before anything is staged (docs/flink.md#the-memory-check):
// each TaskManager's process size is [taskexecutor] memory and the JobManager's [am] memory less the
// AM's share; Flink's configuration is layered as the containers will (the home's conf/, when the
// home is on this machine, then the job file's Flink keys with -D), and each role must fit as Flink's
// own calculator would size it. It also refuses TLS on the JobManager's REST API, which the AM and
// the TaskManagers read over plain HTTP (dist.CheckPlainREST).
func checkMemory(job *jobfile.Job) error {
	f := specOf(job)
	conf := dist.NewConfig()
	var home *dist.Home
	if f.Home != "" {
		h, err := dist.OpenHome(f.Home)
		if err != nil {
			return fmt.Errorf("flink.home: %w", err)
		}
		if conf, _, err = h.Config(); err != nil {
			return fmt.Errorf("flink.home: %w", err)
		}
		home = h
	}
	for _, k := range slices.Sorted(maps.Keys(f.Config)) {
		conf.Set(k, f.Config[k])
	}
	errs := []error{dist.CheckPlainREST(conf)}
	// A provided home is on HDFS: its plugins are checked in the containers (loadFlinkSetup).
	if _, err := dist.DefaultGPUDriver(conf, home); err != nil {
		errs = append(errs, err)
	}
	tm := job.TaskExecutor.MemoryMB
	if err := dist.CheckMemory(conf, dist.RoleTaskManager, tm); err != nil {
		errs = append(errs, fmt.Errorf("taskexecutor.memory = %d: a [flink] job's TaskManager has the container's memory as its process size (taskmanager.memory.process.size): %w", tm, err))
	}
	jm := job.AM.MemoryMB - AMShareMB
	role := dist.RoleSession
	if f.Jar != "" {
		role = dist.RoleApplication
	}
	if err := dist.CheckMemory(conf, role, jm); err != nil {
		errs = append(errs, fmt.Errorf("am.memory = %d: the JobManager's process size (jobmanager.memory.process.size) is am.memory less the AM's %d MiB, %d MiB: %w", job.AM.MemoryMB, AMShareMB, jm, err))
	}
	return errors.Join(errs...)
}
